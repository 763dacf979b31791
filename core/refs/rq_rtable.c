/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (the file format) */
/*
 * rq_rtable: one reftable, read (see rq_rtable.h). The reader checks what
 * it reads as it goes: lengths against the bytes there are, offsets
 * against the section they belong to, each key against the one before it.
 */
#include "rq_rtable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "rq_rtblock.h"

#define MAX_INDEX_DEPTH 8 /* index levels followed before giving up */

/* ---- opening ---- */

static int parse_positions(rq_rtable *t, const uint8_t *f, rq_error *err)
{
	uint64_t obj = rq_rtblock_be64(f + 8);

	t->ref_index = rq_rtblock_be64(f);
	t->obj_pos = obj >> 5;
	t->obj_id_len = (unsigned)(obj & 31);
	t->obj_index = rq_rtblock_be64(f + 16);
	t->log_pos = rq_rtblock_be64(f + 24);
	t->log_index = rq_rtblock_be64(f + 32);
	if (t->ref_index >= t->body_end || t->obj_pos >= t->body_end ||
	    t->obj_index >= t->body_end || t->log_pos >= t->body_end || t->log_index >= t->body_end)
		return rq_rtblock_damaged(err, t, t->body_end, "a section position past the end");
	if (t->obj_pos && (t->obj_id_len < 2 || t->obj_id_len > t->hash))
		return rq_rtblock_damaged(err, t, t->body_end, "object id length %u",
					  t->obj_id_len);
	return 0;
}

const char *rq_rtable_hash_id(const rq_oid_algo *algo)
{
	return algo->rawsz == rq_oid_sha256.rawsz ? "s256" : "sha1";
}

/* The format the header gives (version 1: SHA-1; version 2: its hash id)
 * is the repository's: 0, or -1 (RQ_E_BAD_REPO naming both). */
static int check_format(rq_rtable *t, rq_error *err)
{
	const uint8_t *id = t->data + 24;
	const char *has;

	if (t->version == 1)
		has = "sha1 (version 1)";
	else if (!memcmp(id, "sha1", 4))
		has = "sha1";
	else if (!memcmp(id, "s256", 4))
		has = "sha256";
	else
		return rq_rtblock_damaged(err, t, 24, "unknown hash id %02x%02x%02x%02x", id[0],
					  id[1], id[2], id[3]);
	if (t->version == 2 && !memcmp(id, rq_rtable_hash_id(t->algo), 4))
		return 0;
	if (t->version == 1 && t->hash == rq_oid_sha1.rawsz)
		return 0;
	return rq_error_set(err, RQ_E_BAD_REPO,
			    "reftable '%s' holds object ids of the format %s, but the "
			    "repository's object format is %s",
			    t->name, has, t->algo->name);
}

/* The header (first bytes) and the footer (last bytes): magic, version,
 * the hash, the footer's copy of the header, its CRC-32. */
static int parse_frame(rq_rtable *t, rq_error *err)
{
	const uint8_t *d = t->data, *f;

	if (t->size < 24 + 68 || memcmp(d, "REFT", 4) != 0)
		return rq_rtblock_damaged(err, t, 0, "no reftable header");
	t->version = d[4];
	if (t->version != 1 && t->version != 2)
		return rq_rtblock_damaged(err, t, 4, "unknown version %d", t->version);
	t->hsize = t->version == 1 ? 24 : 28;
	t->fsize = t->version == 1 ? 68 : 72;
	if (t->size < t->hsize + t->fsize)
		return rq_rtblock_damaged(err, t, 0, "too short");
	if (check_format(t, err) < 0)
		return -1;
	t->body_end = t->size - t->fsize;
	f = d + t->body_end;
	if (memcmp(f, d, t->hsize) != 0)
		return rq_rtblock_damaged(err, t, t->body_end,
					  "the footer does not repeat the header");
	if (crc32(0, f, (uInt)(t->fsize - 4)) != rq_rtblock_be32(f + t->fsize - 4))
		return rq_rtblock_damaged(err, t, t->size - 4, "footer checksum mismatch");
	t->block_size = rq_rtblock_be24(d + 5);
	t->min_ui = rq_rtblock_be64(d + 8);
	t->max_ui = rq_rtblock_be64(d + 16);
	if (t->min_ui > t->max_ui)
		return rq_rtblock_damaged(err, t, 8, "update indexes out of order");
	if (t->max_ui == UINT64_MAX)
		return rq_rtblock_damaged(err, t, 16,
					  "update index 2^64-1 (the next one would wrap)");
	if (parse_positions(t, f + t->hsize, err) < 0)
		return -1;
	t->has_refs = t->body_end > t->hsize && d[t->hsize] == 'r';
	t->has_logs = t->log_pos > 0 || (t->body_end > t->hsize && d[t->hsize] == 'g');
	return 0;
}

static int open_common(rq_rtable *t, const char *name, const rq_oid_algo *algo, rq_error *err)
{
	t->algo = algo ? algo : &rq_oid_sha1;
	t->hash = t->algo->rawsz;
	if (!(t->name = strdup(name))) {
		rq_rtable_free(t);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	if (parse_frame(t, err) < 0) {
		rq_rtable_free(t);
		return -1;
	}
	return 0;
}

int rq_rtable_open(rq_rtable **out, const char *path, const char *name, const rq_oid_algo *algo,
		   rq_error *err)
{
	rq_rtable *t;
	struct stat st;
	int fd, e;
	void *m;

	*out = NULL;
	/* (O_NONBLOCK: a FIFO never blocks; it is refused below) */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0) {
		e = errno;
		if (e == ELOOP)
			rq_error_set(err, RQ_E_BAD_REPO, "reftable '%s' is a symbolic link", name);
		else
			rq_error_set(err, RQ_E_IO, "cannot open reftable '%s': %s", name,
				     strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 24 + 68) {
		close(fd);
		return rq_error_set(err, RQ_E_BAD_REPO, "reftable '%s' is damaged: %s", name,
				    S_ISREG(st.st_mode) ? "too short" : "not a regular file");
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return rq_error_set(err, RQ_E_IO, "cannot map reftable '%s': %s", name,
				    strerror(errno));
	if (!(t = calloc(1, sizeof(*t)))) {
		munmap(m, (size_t)st.st_size);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	t->data = m;
	t->size = (size_t)st.st_size;
	t->mapped = 1;
	if (open_common(t, name, algo, err) < 0)
		return -1;
	*out = t;
	return 0;
}

int rq_rtable_open_mem(rq_rtable **out, const void *data, size_t len, const char *name,
		       const rq_oid_algo *algo, rq_error *err)
{
	rq_rtable *t = calloc(1, sizeof(*t));
	uint8_t *copy = malloc(len ? len : 1);

	*out = NULL;
	if (!t || !copy) {
		free(t);
		free(copy);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	if (len)
		memcpy(copy, data, len);
	t->data = copy;
	t->size = len;
	if (open_common(t, name, algo, err) < 0)
		return -1;
	*out = t;
	return 0;
}

void rq_rtable_free(rq_rtable *t)
{
	if (!t)
		return;
	if (t->mapped)
		munmap((void *)t->data, t->size);
	else
		free((void *)t->data);
	free(t->name);
	free(t);
}

const char *rq_rtable_name(const rq_rtable *t)
{
	return t->name;
}

const rq_oid_algo *rq_rtable_algo(const rq_rtable *t)
{
	return t->algo;
}

uint64_t rq_rtable_min_update_index(const rq_rtable *t)
{
	return t->min_ui;
}

uint64_t rq_rtable_max_update_index(const rq_rtable *t)
{
	return t->max_ui;
}

uint64_t rq_rtable_size(const rq_rtable *t)
{
	return t->size;
}
/* ---- iterators ---- */

void rq_rtable_iter_init(rq_rtable_iter *it)
{
	memset(it, 0, sizeof(*it));
	it->ended = 1;
}

void rq_rtable_iter_release(rq_rtable_iter *it)
{
	free(it->zbuf);
	free(it->key.p);
	free(it->val.p);
	free(it->obj_pos);
	rq_rtable_iter_init(it);
}

/* ---- seeking ---- */

/* Seek within the blocks of a section from off on, block after block. */
static int section_seek(rq_rtable_iter *it, size_t off, const void *want, size_t wlen,
			rq_error *err)
{
	for (;;) {
		int r = rq_rtblock_load(it, off, err);
		it->ended = r != 0;
		if (r)
			return r < 0 ? -1 : 0;
		if ((r = rq_rtblock_seek(it, want, wlen, err)) != 0)
			return r < 0 ? -1 : 0;
		off = it->next_off; /* every key of this block is smaller */
	}
}

/* The type of the block at off, or -1. */
static int block_type_at(const rq_rtable *t, uint64_t off)
{
	size_t hoff = off == 0 ? t->hsize : 0;

	if (off >= t->body_end || t->body_end - off <= hoff)
		return -1;
	return t->data[off + hoff];
}

/* Seek through the index whose root is at index_off: down its levels to
 * the block of it->typ that holds the first key >= want. */
static int indexed_seek(rq_rtable_iter *it, uint64_t index_off, const void *want, size_t wlen,
			rq_error *err)
{
	rq_rtable_iter ix;
	uint64_t off = index_off;
	int r = 0, depth;

	rq_rtable_iter_init(&ix);
	ix.t = it->t;
	ix.typ = 'i';
	for (depth = 0; depth < MAX_INDEX_DEPTH && block_type_at(it->t, off) == 'i'; depth++) {
		if (section_seek(&ix, (size_t)off, want, wlen, err) < 0 ||
		    (r = rq_rtblock_step(&ix, err)) < 0)
			break;
		if (r == 1)
			break; /* every key is smaller than want */
		off = ix.idx_pos;
	}
	it->nread += ix.nread;
	rq_rtable_iter_release(&ix);
	if (r < 0)
		return -1;
	if (r == 1) {
		it->ended = 1;
		return 0;
	}
	if (block_type_at(it->t, off) != it->typ)
		return rq_rtblock_damaged(err, it->t, (size_t)off,
					  "the index leads to no block of type '%c'", it->typ);
	return section_seek(it, (size_t)off, want, wlen, err);
}

static void iter_start(rq_rtable_iter *it, const rq_rtable *t, uint8_t typ)
{
	it->t = t;
	it->typ = typ;
	it->ended = 1;
	it->pos = it->rend = 0;
	it->have_prev = it->reread = 0;
}

int rq_rtable_seek_ref(rq_rtable_iter *it, const rq_rtable *t, const char *name, rq_error *err)
{
	size_t n = strlen(name);

	iter_start(it, t, 'r');
	if (!t->has_refs)
		return 0;
	if (t->ref_index)
		return indexed_seek(it, t->ref_index, name, n, err);
	return section_seek(it, 0, name, n, err);
}

int rq_rtable_next_ref(rq_rtable_iter *it, rq_rtable_ref *out, rq_error *err)
{
	int r = rq_rtblock_step(it, err);

	if (r == 0)
		*out = it->ref;
	return r;
}

int rq_rtable_seek_log(rq_rtable_iter *it, const rq_rtable *t, const char *refname,
		       uint64_t update_index, rq_error *err)
{
	size_t n = strlen(refname), wlen = 0;
	uint64_t rev = UINT64_MAX - update_index;
	uint8_t *want = malloc(n + 9);
	int r = 0;

	if (!want)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (n) {
		memcpy(want, refname, n + 1);
		for (int i = 0; i < 8; i++)
			want[n + 1 + i] = (uint8_t)(rev >> (56 - 8 * i));
		wlen = n + 9;
	}
	iter_start(it, t, 'g');
	if (t->has_logs)
		r = t->log_index ? indexed_seek(it, t->log_index, want, wlen, err)
				 : section_seek(it, (size_t)t->log_pos, want, wlen, err);
	free(want);
	return r;
}

int rq_rtable_next_log(rq_rtable_iter *it, rq_rtable_log *out, rq_error *err)
{
	int r = rq_rtblock_step(it, err);

	if (r == 0)
		*out = it->log;
	return r;
}

/* ---- refs by object id ---- */

static int ref_matches(const rq_rtable_ref *r, const rq_oid *id)
{
	return (r->type == RQ_RTABLE_VAL1 || r->type == RQ_RTABLE_VAL2) &&
	       (rq_oid_eq(&r->value, id) ||
		(r->type == RQ_RTABLE_VAL2 && rq_oid_eq(&r->peeled, id)));
}

/* Every ref of the table: the answer without obj blocks. */
static int refs_for_all(const rq_rtable *t, const rq_oid *id,
			int (*fn)(void *arg, const rq_rtable_ref *ref), void *arg, rq_error *err)
{
	rq_rtable_iter it;
	rq_rtable_ref ref;
	int r, rc = 0;

	rq_rtable_iter_init(&it);
	r = rq_rtable_seek_ref(&it, t, "", err);
	while (r == 0 && rc == 0 && (r = rq_rtable_next_ref(&it, &ref, err)) == 0)
		if (ref_matches(&ref, id))
			rc = fn(arg, &ref);
	rq_rtable_iter_release(&it);
	return r < 0 ? -1 : rc;
}

/* The refs of the one ref block at off. */
static int refs_in_block(const rq_rtable *t, uint64_t off, const rq_oid *id,
			 int (*fn)(void *arg, const rq_rtable_ref *ref), void *arg, rq_error *err)
{
	rq_rtable_iter it;
	int r, rc = 0;

	rq_rtable_iter_init(&it);
	iter_start(&it, t, 'r');
	if ((r = rq_rtblock_load(&it, (size_t)off, err)) > 0)
		r = rq_rtblock_damaged(err, t, (size_t)off, "an obj record names no ref block");
	while (r == 0 && rc == 0 && it.pos < it.rend) {
		if ((r = rq_rtblock_record(&it, err)) == 0 && ref_matches(&it.ref, id))
			rc = fn(arg, &it.ref);
	}
	rq_rtable_iter_release(&it);
	return r < 0 ? -1 : rc;
}

static int refs_for_positions(const rq_rtable *t, const uint64_t *pos, size_t n, const rq_oid *id,
			      int (*fn)(void *arg, const rq_rtable_ref *ref), void *arg,
			      rq_error *err)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = refs_in_block(t, pos[i], id, fn, arg, err);
	return rc;
}

/* The positions the obj record of id lists: *found 0 when there is no
 * such record, *n 0 when it lists none (too many refs to list). */
static int obj_lookup(const rq_rtable *t, const rq_oid *id, int *found, uint64_t **pos, size_t *n,
		      rq_error *err)
{
	rq_rtable_iter it;
	int r;

	*found = 0;
	rq_rtable_iter_init(&it);
	iter_start(&it, t, 'o');
	r = t->obj_index ? indexed_seek(&it, t->obj_index, id->id, t->obj_id_len, err)
			 : section_seek(&it, (size_t)t->obj_pos, id->id, t->obj_id_len, err);
	if (r == 0 && (r = rq_rtblock_step(&it, err)) == 0 &&
	    rq_rtblock_keycmp(it.key.p, it.key.len, id->id, t->obj_id_len) == 0) {
		*found = 1;
		*pos = it.obj_pos; /* taken over */
		*n = it.nobj;
		it.obj_pos = NULL;
	}
	rq_rtable_iter_release(&it);
	return r < 0 ? -1 : 0;
}

int rq_rtable_refs_for(const rq_rtable *t, const rq_oid *id,
		       int (*fn)(void *arg, const rq_rtable_ref *ref), void *arg, rq_error *err)
{
	uint64_t *pos = NULL;
	size_t n = 0;
	int found, rc;

	if (!t->obj_pos)
		return refs_for_all(t, id, fn, arg, err);
	if (obj_lookup(t, id, &found, &pos, &n, err) < 0)
		return -1;
	if (!found)
		return 0;
	rc =
	    n ? refs_for_positions(t, pos, n, id, fn, arg, err) : refs_for_all(t, id, fn, arg, err);
	free(pos);
	return rc;
}

/* ---- verification ---- */

/* Every record of the section of typ from off; index records must lead
 * to a block of leaf type or to another index block. */
static int verify_section(const rq_rtable *t, uint8_t typ, uint64_t off, int leaf, rq_error *err)
{
	rq_rtable_iter it;
	int r;

	rq_rtable_iter_init(&it);
	iter_start(&it, t, typ);
	r = rq_rtblock_load(&it, (size_t)off, err);
	it.ended = r != 0;
	if (r > 0)
		r = rq_rtblock_damaged(err, t, (size_t)off,
				       "no block of type '%c' where the footer says", typ);
	while (r == 0 && (r = rq_rtblock_step(&it, err)) == 0) {
		int at = typ == 'i' ? block_type_at(t, it.idx_pos) : leaf;
		if (at != leaf && at != 'i')
			r = rq_rtblock_damaged(err, t, (size_t)it.idx_pos,
					       "index record leads nowhere");
	}
	rq_rtable_iter_release(&it);
	return r < 0 ? -1 : 0;
}

int rq_rtable_verify(const rq_rtable *t, rq_error *err)
{
	if ((t->has_refs && verify_section(t, 'r', 0, 'r', err) < 0) ||
	    (t->ref_index && verify_section(t, 'i', t->ref_index, 'r', err) < 0) ||
	    (t->obj_pos && verify_section(t, 'o', t->obj_pos, 'o', err) < 0) ||
	    (t->obj_index && verify_section(t, 'i', t->obj_index, 'o', err) < 0) ||
	    (t->has_logs && verify_section(t, 'g', t->log_pos, 'g', err) < 0) ||
	    (t->log_index && verify_section(t, 'i', t->log_index, 'g', err) < 0))
		return -1;
	return 0;
}
