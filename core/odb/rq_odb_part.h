/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_part: the part files a forked child of a parallel replay hands
 * its new objects to its parent in (core/odb, see rq_odb.h for the
 * family), written from and loaded into a memory store (rq_odb_mem).
 *
 * Format: "RQPART3\n", the object count (8 bytes, little-endian), the
 * width of its ids (1 byte: 20 SHA-1, 32 SHA-256; a file of another width
 * than the loading store's is refused), then a record per object: the
 * type (1 byte), the raw id (32 bytes, zero past the width), the length (8
 * bytes), the encoded length (8 bytes, never 0: only encoded objects are
 * saved), the encoded form's CRC-32 (4 bytes), its delta depth (4 bytes;
 * 0: whole), its delta base's raw id (32 bytes). Then every encoded form
 * (a pack entry), in object order. No contents: the loader maps the file,
 * and an object that must be read or encoded again is inflated from its
 * entry (through its delta base).
 */
#ifndef RQ_ODB_PART_H
#define RQ_ODB_PART_H

#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <stddef.h>

#include "rq_error.h"

/* Write the objects [since, count) of the memory store b, every one
 * encoded (rq_odb_mem_encode), to the part file `path` (created,
 * replaced; removed on failure). 0, or -1 with err set. */
int rq_odb_part_save(git_odb_backend *b, size_t since, const char *path, rq_error *err);

/* Add the objects of a file written by rq_odb_part_save to the memory
 * store b (ones already held are skipped). The file stays mapped until
 * the store is freed. A malformed file or a damaged encoded form is an
 * error; the objects read before it stay. 0, or -1 with err set. */
int rq_odb_part_load(git_odb_backend *b, const char *path, rq_error *err);

#endif
