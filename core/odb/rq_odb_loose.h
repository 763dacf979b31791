/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_loose: the loose objects of one objects directory, read and
 * checked: a backend of rq_odb's database (core/odb, see rq_odb.h for the
 * family).
 *
 * Why a loose backend of our own: libgit2 1.5's loose reader spins forever
 * on a truncated loose object (its inflate loop makes no progress and never
 * gives up), and with hash verification off (replayq turns it off so that
 * packed objects are not re-hashed) it hands out whatever a loose file
 * holds. git checks a loose object's id on every read; so do we. The file
 * is opened without following a symbolic link and read as it is inflated
 * (64 KiB at a time), its header "<type> <size>\0" parsed with git's limit
 * of 32 bytes, its size bounded by the file's (deflate expands at most
 * 1032 times); the stream must end exactly at <size> bytes with nothing
 * after it, and the hash of header and content (SHA-1, or SHA-256 in a
 * SHA-256 repository) must give the id. zlib
 * counts in 32 bits: input and output are handed to it in steps of at
 * most 1 GiB, so an object of more than 4 GiB reads like any other.
 * Anything else is "loose object <id> (stored in <path>) is corrupt",
 * git's words; memory that cannot be had is out of memory, never damage.
 *
 * A read holds the content (its size, and nothing else that grows with
 * it). A header (type and size) is checked the same way, the object
 * inflated through a small buffer, when the object is no larger than
 * RQ_SHA1_CHECK_MAX (64 KiB); a larger object's header is believed as git
 * believes it (its content is checked when it is read).
 */
#ifndef RQ_ODB_LOOSE_H
#define RQ_ODB_LOOSE_H

#include <git2.h>
#include <git2/sys/odb_backend.h>

#include "rq_oid.h"

/* A backend over the loose objects of the objects directory dir, messages
 * naming it as shown says (NULL: dir), SHA-1. 0, or -1 out of memory
 * (set). */
int rq_odb_loose_new(git_odb_backend **out, const char *dir, const char *shown);

/*
 * The same in the object format algo (NULL: SHA-1): files named by the
 * first 2 digits of an id and its other hexsz - 2, the content hashed with
 * the format's hash. libgit2 can use it as a backend in SHA-1 only (its
 * ids are 20 bytes); in SHA-256 it is read through the functions below,
 * which take ids of either format.
 */
int rq_odb_loose_open(git_odb_backend **out, const char *dir, const char *shown,
		      const rq_oid_algo *algo);
const rq_oid_algo *rq_odb_loose_algo(const git_odb_backend *b);

/* Object id, read and checked as above: 0 with *data (the content and a
 * NUL; free with git_odb_backend_data_free), *len and *type;
 * GIT_ENOTFOUND; GIT_ERROR with "loose object <id> (stored in <path>) is
 * corrupt" or out of memory set. */
int rq_odb_loose_read(git_odb_backend *b, const rq_oid *id, void **data, size_t *len,
		      git_object_t *type);
/* Its type and size, as a read would give them (checked the same way up
 * to RQ_SHA1_CHECK_MAX bytes). 0, GIT_ENOTFOUND or GIT_ERROR. */
int rq_odb_loose_read_header(git_odb_backend *b, const rq_oid *id, size_t *len, git_object_t *type);
/* 1 when its file is there (a regular file), else 0. */
int rq_odb_loose_exists(git_odb_backend *b, const rq_oid *id);
/* The one loose object whose id starts with the first hexlen digits of
 * prefix (2 to hexsz): 0 with *full, GIT_ENOTFOUND, or GIT_EAMBIGUOUS
 * with git's "short object ID <p> is ambiguous" set. */
int rq_odb_loose_find_prefix(git_odb_backend *b, const rq_oid *prefix, size_t hexlen, rq_oid *full);

/* 1 if b is such a backend. */
int rq_odb_loose_is(const git_odb_backend *b);

#endif
