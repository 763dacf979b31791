/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_part: a replay's new objects in a part file (see the header):
 * written whole by a forked child, mapped and taken by its parent.
 */
#include "rq_odb_part.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rq_odb_mem.h"
#include "rq_odb_store.h"

#define PART_MAGIC     "RQPART3\n"
#define PART_MAGIC_LEN 8
#define PART_WIDTH     (PART_MAGIC_LEN + 8) /* the ids' width: 20 or 32 */
#define PART_HEAD      (PART_WIDTH + 1)
/* A part file's record of an object, field by field (see the header); ids
 * take 32 bytes whatever the width, the rest zero */
#define REC_TYPE      0
#define REC_ID	      1
#define REC_LEN	      (REC_ID + RQ_OID_MAX_RAWSZ)
#define REC_ENTRY_LEN (REC_LEN + 8)
#define REC_CRC	      (REC_ENTRY_LEN + 8)
#define REC_DEPTH     (REC_CRC + 4)
#define REC_BASE      (REC_DEPTH + 4)
#define REC_SIZE      (REC_BASE + RQ_OID_MAX_RAWSZ)

static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Write the pieces with as few system calls as the kernel allows. */
typedef struct iobatch {
	int fd, bad;
	struct iovec v[64];
	int n;
} iobatch;

static void io_flush(iobatch *io)
{
	int first = 0;
	while (!io->bad && first < io->n) {
		ssize_t w = writev(io->fd, io->v + first, io->n - first);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			io->bad = 1;
			break;
		}
		while (first < io->n && (size_t)w >= io->v[first].iov_len)
			w -= (ssize_t)io->v[first++].iov_len;
		if (first < io->n) {
			io->v[first].iov_base = (char *)io->v[first].iov_base + w;
			io->v[first].iov_len -= (size_t)w;
		}
	}
	io->n = 0;
}

static void io_add(iobatch *io, const void *p, size_t len)
{
	if (!len)
		return;
	if (io->n == (int)(sizeof(io->v) / sizeof(io->v[0])))
		io_flush(io);
	io->v[io->n].iov_base = (void *)(uintptr_t)p;
	io->v[io->n].iov_len = len;
	io->n++;
}

/* An object's record in a part file (REC_SIZE bytes at r). */
static void put_record(unsigned char *r, const rq_odb_store_obj *o)
{
	r[REC_TYPE] = (unsigned char)o->type;
	memcpy(r + REC_ID, o->id.id, RQ_OID_MAX_RAWSZ);
	put_le(r + REC_LEN, o->len, 8);
	put_le(r + REC_ENTRY_LEN, o->entry ? o->entry_len : 0, 8);
	put_le(r + REC_CRC, o->entry ? o->crc : 0, 4);
	put_le(r + REC_DEPTH, o->entry ? o->depth : 0, 4);
	memcpy(r + REC_BASE, o->base.id, RQ_OID_MAX_RAWSZ);
}

/*
 * The part file: the magic, the object count (8 bytes), a record per
 * object, then every encoded form, in object order. No content: the
 * parent only copies the encoded forms into the pack, and an object it
 * must read or encode again is inflated (rq_odb_store_materialize).
 */
int rq_odb_part_save(git_odb_backend *b, size_t since, const char *path, rq_error *err)
{
	int failed;
	rq_odb_store *s = rq_odb_mem_settle(b, &failed);
	size_t count = since < s->n ? s->n - since : 0;
	unsigned char head[PART_HEAD], *recs = malloc(count * REC_SIZE + 1);
	iobatch io = {.fd = -1};

	if (!recs || failed < 0) {
		free(recs);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	io.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (io.fd < 0) {
		free(recs);
		return rq_error_set(err, RQ_E_IO, "cannot create %s: %s", path, strerror(errno));
	}
	memcpy(head, PART_MAGIC, PART_MAGIC_LEN);
	put_le(head + PART_MAGIC_LEN, count, 8);
	head[PART_WIDTH] = (unsigned char)rq_odb_store_algo(s)->rawsz;
	for (size_t k = 0; k < count; k++)
		put_record(recs + k * REC_SIZE, &s->objs[since + k]);
	io_add(&io, head, sizeof(head));
	io_add(&io, recs, count * REC_SIZE);
	for (size_t k = since; k < s->n; k++) {
		if (!s->objs[k].entry) {
			free(recs);
			close(io.fd);
			unlink(path);
			return rq_error_set(err, RQ_E_INTERNAL, "an object was not encoded");
		}
		io_add(&io, s->objs[k].entry, s->objs[k].entry_len);
	}
	io_flush(&io);
	free(recs);
	if (close(io.fd) != 0)
		io.bad = 1;
	if (io.bad) {
		unlink(path);
		return rq_error_set(err, RQ_E_IO, "cannot write %s", path);
	}
	return 0;
}

/*
 * The file stays mapped and its objects point into it. Part files come
 * from this process's own children through its private directory, written
 * whole and renamed; the load checks their structure and the CRC-32 of each
 * encoded object, not the object ids.
 */
/* Map a part file and keep it mapped with the store (the objects loaded
 * from it point into it). */
static int map_part(rq_odb_store *s, const char *path, const unsigned char **buf, size_t *len,
		    rq_error *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *map;

	if (fd < 0)
		return rq_error_set(err, RQ_E_IO, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || st.st_size < PART_HEAD || (uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return rq_error_set(err, RQ_E_INTERNAL, "%s: not an object part file", path);
	}
	*len = (size_t)st.st_size;
	map = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return rq_error_set(err, RQ_E_IO, "cannot map %s: %s", path, strerror(errno));
	if (rq_odb_store_keep_map(s, map, *len) < 0) {
		munmap(map, *len);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	*buf = map;
	return 0;
}

/* The magic and the sizes, before any object is taken: the file must be
 * exactly the header, count records and their entries. */
static int check_part(const unsigned char *buf, size_t len, size_t rawsz, const char *path,
		      size_t *count, rq_error *err)
{
	size_t sum = 0;

	if (memcmp(buf, PART_MAGIC, PART_MAGIC_LEN) != 0)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: not an object part file", path);
	if (buf[PART_WIDTH] != rawsz) /* a child of another object format */
		return rq_error_set(err, RQ_E_INTERNAL, "%s: ids of %u bytes, not %zu", path,
				    (unsigned)buf[PART_WIDTH], rawsz);
	*count = (size_t)get_le(buf + PART_MAGIC_LEN, 8);
	if (*count > (len - PART_HEAD) / REC_SIZE)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: truncated", path);
	for (size_t k = 0; k < *count; k++) {
		uint64_t entry_len = get_le(buf + PART_HEAD + k * REC_SIZE + REC_ENTRY_LEN, 8);
		if (!entry_len || entry_len > len)
			return rq_error_set(err, RQ_E_INTERNAL, "%s: bad object header", path);
		sum += (size_t)entry_len;
		if (sum > len)
			return rq_error_set(err, RQ_E_INTERNAL, "%s: truncated", path);
	}
	if (PART_HEAD + *count * REC_SIZE + sum != len)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: truncated or too long", path);
	return 0;
}

/* The object of record r, whose entry is at entry, unless it is held: no
 * content (rq_odb_store_materialize inflates it if it is ever needed). */
static int add_part_object(rq_odb_store *s, const unsigned char *r, const unsigned char *entry,
			   const char *path, rq_error *err)
{
	git_object_t type = (git_object_t)r[REC_TYPE];
	uint64_t len = get_le(r + REC_LEN, 8);
	size_t entry_len = (size_t)get_le(r + REC_ENTRY_LEN, 8);
	uint32_t crc = (uint32_t)get_le(r + REC_CRC, 4), depth = (uint32_t)get_le(r + REC_DEPTH, 4);
	rq_oid id;
	rq_odb_store_obj *o;

	if (type < GIT_OBJECT_COMMIT || type > GIT_OBJECT_TAG || len > SIZE_MAX / 2)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: bad object header", path);
	if (rq_odb_pack_crc32(entry, entry_len) != crc)
		return rq_error_set(err, RQ_E_INTERNAL, "%s: damaged object", path);
	rq_oid_from_raw(&id, rq_odb_store_algo(s), r + REC_ID);
	if (rq_odb_store_find(s, &id))
		return 0;
	if (rq_odb_store_add(s, &id, NULL, (size_t)len, type, 1, 0, 0) < 0)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	o = &s->objs[s->n - 1];
	o->entry = (unsigned char *)(uintptr_t)entry;
	o->entry_len = entry_len;
	o->crc = crc;
	if (depth) {
		o->depth = depth;
		rq_oid_from_raw(&o->base, rq_odb_store_algo(s), r + REC_BASE);
	}
	return 0;
}

int rq_odb_part_load(git_odb_backend *b, const char *path, rq_error *err)
{
	int failed; /* a failure stays for rq_odb_mem_encode to report */
	rq_odb_store *s = rq_odb_mem_settle(b, &failed);
	const unsigned char *buf = NULL, *entry;
	size_t len = 0, count = 0;

	if (map_part(s, path, &buf, &len, err) < 0 ||
	    check_part(buf, len, rq_odb_store_algo(s)->rawsz, path, &count, err) < 0)
		return -1;
	entry = buf + PART_HEAD + count * REC_SIZE;
	for (size_t k = 0; k < count; k++) {
		const unsigned char *r = buf + PART_HEAD + k * REC_SIZE;
		if (add_part_object(s, r, entry, path, err) < 0)
			return -1;
		entry += (size_t)get_le(r + REC_ENTRY_LEN, 8);
	}
	return 0;
}
