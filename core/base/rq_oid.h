/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_oid: replayq's own object id, of either of git's object formats
 * (extensions.objectFormat: sha1, the default, or sha256), and the
 * descriptor of each format's hash.
 *
 * An id is always 32 bytes; the bytes past the format's width are zero
 * (every function here that makes an id fills them), so ids compare with
 * one memcmp and no width, as git's own object_id does. The width is not
 * kept in the id: one repository has one format, and it travels with the
 * repository (or the result) that holds the ids. Text is strict: an id is
 * exactly the format's number of lower-case hex digits (a 64-digit string
 * is not a SHA-1 id, a 40-digit string is not a SHA-256 id; upper case is
 * refused: git writes ids in lower case).
 *
 * Issue 42 (SHA-256 repositories): the foundation; the engine still
 * carries libgit2's 20-byte git_oid, converted with rq_oid_from_git and
 * rq_oid_to_git where it meets this type.
 */
#ifndef RQ_OID_H
#define RQ_OID_H

#include <stddef.h>
#include <string.h>

#define RQ_OID_MAX_RAWSZ 32
#define RQ_OID_MAX_HEXSZ 64
/* the shortest abbreviation git takes (its MINIMUM_ABBREV) */
#define RQ_OID_MIN_PREFIX 4

typedef struct rq_oid {
	unsigned char id[RQ_OID_MAX_RAWSZ];
} rq_oid;

/* One object format's hash. */
typedef struct rq_oid_algo {
	const char *name;  /* "sha1", "sha256": extensions.objectFormat's value */
	size_t rawsz;	   /* 20, 32 bytes */
	size_t hexsz;	   /* 40, 64 digits */
	rq_oid empty_tree; /* the id of the tree with no entry */
	rq_oid empty_blob; /* the id of the blob of no byte */
} rq_oid_algo;

extern const rq_oid_algo rq_oid_sha1, rq_oid_sha256;

/* The format of that name ("sha1" or "sha256", compared exactly, as git
 * compares extensions.objectFormat's value), or NULL. */
const rq_oid_algo *rq_oid_algo_by_name(const char *name);

static inline int rq_oid_cmp(const rq_oid *a, const rq_oid *b)
{
	return memcmp(a->id, b->id, RQ_OID_MAX_RAWSZ);
}

static inline int rq_oid_eq(const rq_oid *a, const rq_oid *b)
{
	return !memcmp(a->id, b->id, RQ_OID_MAX_RAWSZ);
}

/* 1 when every byte is zero (git's "null" id of either format). */
int rq_oid_is_zero(const rq_oid *id);

/* The id whose first algo->rawsz bytes are raw; the rest zero. */
void rq_oid_from_raw(rq_oid *out, const rq_oid_algo *algo, const unsigned char *raw);

/* The id's algo->hexsz lower-case digits and a NUL into out; returns
 * out. */
char *rq_oid_fmt(char out[RQ_OID_MAX_HEXSZ + 1], const rq_oid *id, const rq_oid_algo *algo);

/* A hex digit's value, either case (0-15), or -1. */
int rq_oid_hex_digit(char c);

/* s[0..len) as an id of that format: exactly algo->hexsz lower-case hex
 * digits. 0, or -1 (out untouched). */
int rq_oid_parse(rq_oid *out, const rq_oid_algo *algo, const char *s, size_t len);

/* The first algo->hexsz characters of s[0..len) as an id, hex digits of
 * either case, whatever follows (git's get_oid_hex: how git reads ids in
 * objects, refs and side files). 0, or -1 (out untouched). */
int rq_oid_parse_git(rq_oid *out, const rq_oid_algo *algo, const char *s, size_t len);

/*
 * s[0..len) as an abbreviated id: RQ_OID_MIN_PREFIX to algo->hexsz
 * lower-case hex digits (a full id is a prefix of itself). The digits
 * given fill out from the front, an odd last digit the high half of its
 * byte, the rest is zero. 0, or -1 (out untouched).
 */
int rq_oid_parse_prefix(rq_oid *out, const rq_oid_algo *algo, const char *s, size_t len);

/* 1 when id's first nhex digits are prefix's (as rq_oid_parse_prefix made
 * it from nhex digits), else 0. */
int rq_oid_has_prefix(const rq_oid *id, const rq_oid *prefix, size_t nhex);

/* libgit2's 20-byte ids, for the code that still talks to libgit2: SHA-1
 * only. rq_oid_to_git: 0, or -1 when algo is not SHA-1. */
struct git_oid;
void rq_oid_from_git(rq_oid *out, const struct git_oid *id);
int rq_oid_to_git(struct git_oid *out, const rq_oid *id, const rq_oid_algo *algo);

/* libgit2's id as replayq's, by value; RQ_GIT_ID(g) the same as a
 * pointer to a temporary (for an argument: rq_oidmap_get(m,
 * RQ_GIT_ID(git_commit_id(c)), &i)), until the engine reads objects
 * itself (issue 42, wave 2). */
static inline rq_oid rq_oid_of_git(const struct git_oid *id)
{
	rq_oid o;
	rq_oid_from_git(&o, id);
	return o;
}
#define RQ_GIT_ID(g) ((const rq_oid[]){rq_oid_of_git(g)})

#endif
