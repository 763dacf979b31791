/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_repack: replayq's packs consolidated geometrically (see the
 * header): the lock, the packs replayq marked and which of them may be
 * merged, git's geometric split, the merged pack, the old ones removed.
 */
#include "rq_odb_repack.h"
#include "rq_mem.h"
#include "rq_odb_midx.h"
#include "rq_odb_own.h"
#include "rq_odb_pack.h"
#include "rq_odb_packwrite.h"
#include "rq_oidmap.h"
#include "rq_testhook.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FACTOR 2

/* One of replayq's packs. */
typedef struct own_pack {
	char name[RQ_ODB_PACK_NAME_MAX]; /* "pack-<hex>" */
	uint32_t nr;			 /* its objects */
	int usable;			 /* may be merged */
} own_pack;

typedef struct own_list {
	own_pack *v;
	size_t n, cap;
} own_list;

/* The descriptors of the repository's directories a consolidation uses. */
typedef struct dirs {
	const char *objects;
	const rq_oid_algo *algo; /* the repository's object format */
	char pack[PATH_MAX];
	int own_fd, pack_fd;
} dirs;

/* ---- replayq's packs ---- */

static int exists_at(int fd, const char *name, const char *ext)
{
	char file[NAME_MAX + 1];
	struct stat st;

	snprintf(file, sizeof(file), "%s%s", name, ext);
	return fstatat(fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The object count of pack name's index (0: none, or not an index). */
static uint32_t index_count(int pack_fd, const char *name)
{
	char file[NAME_MAX + 1];
	unsigned char head[8 + 256 * 4];
	int fd;
	ssize_t r;

	snprintf(file, sizeof(file), "%s.idx", name);
	if ((fd = openat(pack_fd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	r = pread(fd, head, sizeof(head), 0);
	close(fd);
	if (r != (ssize_t)sizeof(head) || memcmp(head, "\377tOc\0\0\0\2", 8))
		return 0;
	return rq_odb_pack_be32(head + 8 + 255 * 4);
}

/* 1 when git's multi-pack-index names pack name. */
static int in_midx(const rq_odb_midx *m, const char *name)
{
	size_t n = strlen(name);

	for (uint32_t k = 0; m && k < rq_odb_midx_npacks(m); k++) {
		const char *p = rq_odb_midx_pack(m, k);
		if (!strncmp(p, name, n) && !strcmp(p + n, ".idx"))
			return 1;
	}
	return 0;
}

/* What is left of a pack whose writer or consolidation was killed: its
 * mark without the pack, or the pack without its index (never seen by a
 * reader; its objects are elsewhere). 1 when it was removed. */
static int remove_leftover(dirs *d, const char *name, int has_idx, int has_pack, int kept)
{
	char file[NAME_MAX + 1];

	if (has_idx || kept)
		return 0;
	if (has_pack) {
		snprintf(file, sizeof(file), "%s.pack", name);
		if (unlinkat(d->pack_fd, file, 0) < 0)
			return 0;
	}
	snprintf(file, sizeof(file), "%s" RQ_ODB_OWN_MARK, name);
	unlinkat(d->own_fd, file, 0);
	return 1;
}

/* A stale .keep of ours on pack name goes (its owner is gone). */
static int kept_now(dirs *d, const char *name)
{
	char file[NAME_MAX + 1];

	snprintf(file, sizeof(file), "%s.keep", name);
	if (!exists_at(d->pack_fd, name, ".keep"))
		return 0;
	return !rq_odb_own_keep_drop_stale(d->pack_fd, file);
}

/* Pack name, marked as replayq's: in the list (usable or not), or its
 * leftovers removed. 0, or -1 out of memory. */
static int add_own(dirs *d, own_list *l, const rq_odb_midx *m, const char *name)
{
	int kept = kept_now(d, name), idx = exists_at(d->pack_fd, name, ".idx");
	own_pack *v;

	if (remove_leftover(d, name, idx, exists_at(d->pack_fd, name, ".pack"), kept))
		return 0;
	if (!(v = rq_mem_grow(l->v, &l->cap, l->n + 1, sizeof(*v), 16)))
		return -1;
	l->v = v;
	memset(&v[l->n], 0, sizeof(*v));
	snprintf(v[l->n].name, sizeof(v[l->n].name), "%s", name);
	v[l->n].nr = idx ? index_count(d->pack_fd, name) : 0;
	v[l->n].usable = idx && !kept && v[l->n].nr && !exists_at(d->pack_fd, name, ".promisor") &&
			 !exists_at(d->pack_fd, name, ".mtimes") &&
			 !exists_at(d->pack_fd, name, ".bitmap") && !in_midx(m, name);
	l->n++;
	return 0;
}

/* replayq's packs, from the marks in objects/replayq. 0 or -1. */
static int list_own(dirs *d, own_list *l)
{
	rq_odb_midx *m = NULL;
	struct dirent *e;
	int fd = dup(d->own_fd), rc = 0;
	DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dh) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(dh); /* the descriptor is a copy: its offset is shared */
	if (rq_odb_midx_open(&m, d->pack, d->algo->rawsz) < 0)
		rc = -1;
	while (rc == 0 && (e = readdir(dh))) {
		/* "pack-" and the hex of the format's width: another width's
		 * name is no pack of this repository's */
		size_t n = strlen(e->d_name), ml = strlen(RQ_ODB_OWN_MARK), nl = 5 + d->algo->hexsz;
		char name[RQ_ODB_PACK_NAME_MAX];
		if (n != nl + ml || strncmp(e->d_name, "pack-", 5) ||
		    strcmp(e->d_name + nl, RQ_ODB_OWN_MARK))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)nl, e->d_name);
		rc = add_own(d, l, m, name);
	}
	closedir(dh);
	rq_odb_midx_free(m);
	return rc;
}

/* ---- git's geometric split ---- */

static int by_count(const void *a, const void *b)
{
	const own_pack *x = a, *y = b;

	if (x->nr != y->nr)
		return x->nr < y->nr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The usable packs (moved to the front of l, sorted by object count):
 * how many of the smallest to merge so that the rest, with the merged
 * one, form a progression of factor FACTOR (git's split_pack_geometry).
 */
static size_t geometric_split(own_list *l, size_t *usable)
{
	size_t n = 0, split, i;
	uint64_t total = 0;

	for (i = 0; i < l->n; i++)
		if (l->v[i].usable) {
			own_pack t = l->v[n];
			l->v[n++] = l->v[i];
			l->v[i] = t;
		}
	*usable = n;
	if (n > 1) /* none: l->v may be NULL, which qsort must not get */
		qsort(l->v, n, sizeof(*l->v), by_count);
	/* the largest pack that is not at least FACTOR times the one before it */
	for (i = n ? n - 1 : 0; i > 0; i--)
		if ((uint64_t)l->v[i].nr < (uint64_t)l->v[i - 1].nr * FACTOR)
			break;
	split = i ? i + 1 : 0;
	for (i = 0; i < split; i++)
		total += l->v[i].nr;
	/* the merged pack may be too large for the progression above it */
	for (; split < n && total * FACTOR > l->v[split].nr; split++)
		total += l->v[split].nr;
	return split;
}

/* ---- the merged pack ---- */

/* An entry of a source pack: where it is, its index position, where it
 * went in the new pack. */
typedef struct src_entry {
	uint64_t off, new_off;
	uint32_t pos;
} src_entry;

/* A source pack mapped, its entries in the order of their offsets. */
typedef struct source {
	const unsigned char *pack, *idx;
	size_t pack_len, idx_len;
	rq_odb_pack_idx ix;
	src_entry *e;
} source;

static void source_free(source *s)
{
	if (s->pack)
		munmap((void *)(uintptr_t)s->pack, s->pack_len);
	if (s->idx)
		munmap((void *)(uintptr_t)s->idx, s->idx_len);
	free(s->e);
}

static int map_at(int dirfd, const char *file, const unsigned char **p, size_t *len)
{
	int fd = openat(dirfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	void *m;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return -1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	*p = m;
	*len = (size_t)st.st_size;
	return 0;
}

static int by_offset(const void *a, const void *b)
{
	const src_entry *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Pack name mapped with its index (ids and trailer of the format's width),
 * checked as git checks a pair, its entries sorted by offset. 0, or -1
 * with err set. */
static int source_open(const dirs *d, const char *name, source *s, rq_error *err)
{
	char file[NAME_MAX + 1];
	const unsigned char *h;
	size_t sz = d->algo->rawsz;

	snprintf(file, sizeof(file), "%s.idx", name);
	if (map_at(d->pack_fd, file, &s->idx, &s->idx_len) < 0 ||
	    rq_odb_pack_idx_parse(s->idx, s->idx_len, sz, &s->ix) < 0)
		return rq_error_set(err, RQ_E_CORRUPT_OBJECT, "index file %s/%s.idx is corrupt",
				    d->pack, name);
	snprintf(file, sizeof(file), "%s.pack", name);
	if (map_at(d->pack_fd, file, &s->pack, &s->pack_len) < 0 || s->pack_len < 12 + sz ||
	    memcmp((h = s->pack), "PACK", 4) || rq_odb_pack_be32(h + 8) != s->ix.nr ||
	    memcmp(s->ix.pack_sum, h + s->pack_len - sz, sz))
		return rq_error_set(err, RQ_E_CORRUPT_OBJECT,
				    "packfile %s/%s.pack does not match index", d->pack, name);
	if (!(s->e = calloc(s->ix.nr + 1, sizeof(*s->e))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (uint32_t k = 0; k < s->ix.nr; k++) {
		s->e[k].pos = k;
		if (rq_odb_pack_idx_offset(&s->ix, k, &s->e[k].off) < 0 || s->e[k].off < 12 ||
		    s->e[k].off >= s->pack_len - sz)
			return rq_error_set(err, RQ_E_CORRUPT_OBJECT,
					    "index file %s/%s.idx is corrupt", d->pack, name);
	}
	qsort(s->e, s->ix.nr, sizeof(*s->e), by_offset);
	return 0;
}

/* The entry that starts at off in source s: its place in s->e, or -1. */
static long entry_at(const source *s, uint64_t off)
{
	size_t lo = 0, hi = s->ix.nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->e[mid].off == off)
			return (long)mid;
		if (s->e[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The new pack's entries, growing. */
typedef struct merged {
	const rq_oid_algo *algo; /* the ids' format */
	rq_odb_pack_entry *v;
	size_t n, cap;
	uint64_t *at; /* each entry's offset */
	size_t atcap;
	rq_oidmap ids;	     /* id -> its entry */
	uint64_t next;	     /* the offset of the next entry */
	unsigned char **own; /* rewritten entries (ours to free) */
	size_t nown, owncap;
} merged;

/* An OFS_DELTA's header with its base at distance dist: *out (malloc'd),
 * the type-and-size bytes as they were, the distance re-encoded, the
 * zlib stream as it was. 0 or -1. */
static int rewrite_ofs(const unsigned char *e, size_t hlen, const unsigned char *z, size_t zlen,
		       uint64_t dist, unsigned char **out, size_t *len)
{
	unsigned char ofs[16];
	size_t n = sizeof(ofs);

	/* git's offset encoding: base-128, most significant first, each
	 * continuation adding one */
	ofs[--n] = dist & 127;
	while (dist >>= 7)
		ofs[--n] = 128 | (--dist & 127);
	if (!(*out = malloc(hlen + (sizeof(ofs) - n) + zlen)))
		return -1;
	memcpy(*out, e, hlen);
	memcpy(*out + hlen, ofs + n, sizeof(ofs) - n);
	memcpy(*out + hlen + (sizeof(ofs) - n), z, zlen);
	*len = hlen + (sizeof(ofs) - n) + zlen;
	return 0;
}

static int merged_grow(merged *m)
{
	rq_odb_pack_entry *v = rq_mem_grow(m->v, &m->cap, m->n + 1, sizeof(*v), 64);

	if (!v)
		return -1;
	m->v = v;
	if (m->n + 1 > m->atcap) {
		uint64_t *a = realloc(m->at, m->cap * sizeof(*a));
		if (!a)
			return -1;
		m->at = a;
		m->atcap = m->cap;
	}
	return 0;
}

/* Keep a rewritten entry's bytes for freeing. */
static int merged_own(merged *m, unsigned char *p)
{
	unsigned char **v = rq_mem_grow(m->own, &m->owncap, m->nown + 1, sizeof(*v), 16);

	if (!v) {
		free(p);
		return -1;
	}
	m->own = v;
	m->own[m->nown++] = p;
	return 0;
}

/* The length of an entry's type-and-size header, or 0 (it runs past end). */
static size_t header_len(const unsigned char *p, size_t len)
{
	size_t n = 1;

	while (n <= len && (p[n - 1] & 0x80))
		if (++n > 10)
			return 0;
	return n <= len ? n : 0;
}

/* An OFS_DELTA entry with its base's distance from where it goes now:
 * *data (ours in m) and *len. 0, or -1 (damaged: err, or memory). */
static int moved_delta(merged *m, const source *s, size_t i, const unsigned char *p, size_t hl,
		       const unsigned char **data, size_t *len)
{
	const unsigned char *q = p + hl, *end = p + *len;
	uint64_t dist, base;
	long j;
	unsigned char c, *out;

	if (q >= end)
		return -1;
	c = *q++;
	dist = c & 127;
	while (c & 128) {
		if (q >= end || dist > (UINT64_MAX >> 8))
			return -1;
		c = *q++;
		dist = ((dist + 1) << 7) | (c & 127);
	}
	if (!dist || dist > s->e[i].off || (j = entry_at(s, s->e[i].off - dist)) < 0 ||
	    (size_t)j >= i)
		return -1;
	base = s->e[j].new_off;
	if (rewrite_ofs(p, hl, q, (size_t)(end - q), m->next - base, &out, len) < 0 ||
	    merged_own(m, out) < 0)
		return -1;
	*data = out;
	return 0;
}

/* Entry i of source s into the new pack, as it is (an OFS_DELTA's
 * distance rewritten); an object already there is not written again. 0,
 * or -1 with err set. */
static int add_entry(merged *m, source *s, size_t i, const char *name, rq_error *err)
{
	src_entry *se = &s->e[i];
	size_t sz = m->algo->rawsz;
	uint64_t end = i + 1 < s->ix.nr ? s->e[i + 1].off : s->pack_len - sz;
	const unsigned char *p = s->pack + se->off, *data = p;
	size_t len = (size_t)(end - se->off), hl = header_len(p, len), have;
	uint32_t crc = rq_odb_pack_be32(s->ix.crcs + (size_t)se->pos * 4);
	unsigned code = (p[0] >> 4) & 7;
	char hex[RQ_OID_MAX_HEXSZ + 1];
	rq_oid rid;

	rq_oid_from_raw(&rid, m->algo, s->ix.ids + (size_t)se->pos * sz);
	if (rq_oidmap_get(&m->ids, &rid, &have)) {
		se->new_off = m->at[have];
		return 0;
	}
	if (!hl || code == 0 || code == 5 || rq_odb_pack_crc32(p, len) != crc ||
	    (code == 6 && moved_delta(m, s, i, p, hl, &data, &len) < 0))
		return rq_error_set(err, RQ_E_CORRUPT_OBJECT,
				    "packed object %s (stored in %s) is corrupt",
				    rq_oid_fmt(hex, &rid, m->algo), name);
	if (merged_grow(m) < 0 || rq_oidmap_put(&m->ids, &rid, m->n) < 0)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	m->v[m->n] = (rq_odb_pack_entry){
	    .data = data, .len = len, .crc = data == p ? crc : rq_odb_pack_crc32(data, len)};
	m->v[m->n].id = rid;
	m->at[m->n++] = se->new_off = m->next;
	m->next += len;
	return 0;
}

/* Every REF_DELTA's base is in the new pack (a pack of replayq's holds its
 * bases: a merged one must not be thin). */
static int bases_inside(const merged *m)
{
	for (size_t k = 0; k < m->n; k++) {
		const rq_odb_pack_entry *e = &m->v[k];
		size_t hl = header_len(e->data, e->len), at;
		rq_oid base;
		if (((e->data[0] >> 4) & 7) != 7)
			continue;
		if (!hl || e->len < hl + m->algo->rawsz)
			return 0;
		rq_oid_from_raw(&base, m->algo, e->data + hl);
		if (!rq_oidmap_get(&m->ids, &base, &at))
			return 0;
	}
	return 1;
}

static void merged_free(merged *m)
{
	for (size_t k = 0; k < m->nown; k++)
		free(m->own[k]);
	free(m->own);
	free(m->v);
	free(m->at);
	rq_oidmap_free(&m->ids);
}

/* Before the new pack moves in: kept (a reader's consolidation must not
 * take it before it is whole) and marked as replayq's. */
static int before_move(void *ctx, const char *name, rq_error *err)
{
	dirs *d = ctx;
	int r = rq_odb_own_keep(d->objects, name);

	if (r < 0)
		return rq_error_set(err, RQ_E_IO, "cannot keep %s/%s: %s", d->pack, name,
				    strerror(errno));
	if (rq_odb_own_mark(d->objects, name) < 0) {
		if (r == 0)
			rq_odb_own_unkeep(d->objects, name);
		return rq_error_set(err, RQ_E_IO, "cannot mark %s/%s: %s", d->pack, name,
				    strerror(errno));
	}
	rq_testhook_hold("repack-kept");
	return 0;
}

static int after_fail(void *ctx, const char *name, rq_error *err)
{
	(void)err;
	rq_odb_own_unkeep(((dirs *)ctx)->objects, name);
	return 0;
}

/* The first n packs of v merged into one, in place (kept: the caller
 * removes the .keep). 0, or -1 with err set. */
static int write_merged(dirs *d, const own_pack *v, size_t n, rq_odb_repack_stats *st,
			rq_error *err)
{
	source *src = calloc(n, sizeof(*src));
	merged m = {.algo = d->algo, .next = 12};
	char prefix[NAME_MAX + 8], base[NAME_MAX + 1];
	rq_owner owner = {.fd = -1};
	int rc = src ? 0 : rq_error_set(err, RQ_E_NOMEM, "out of memory");

	rq_oidmap_init(&m.ids);
	for (size_t k = 0; rc == 0 && k < n; k++) {
		rc = source_open(d, v[k].name, &src[k], err);
		for (size_t i = 0; rc == 0 && i < src[k].ix.nr; i++)
			rc = add_entry(&m, &src[k], i, d->pack, err);
	}
	if (rc == 0 && !bases_inside(&m))
		rc = rq_error_set(err, RQ_E_CORRUPT_OBJECT,
				  "a delta's base is in none of the packs to merge");
	/* its temporary files named after an owner marker, as a replay's are:
	 * one rule says when they are a killed process's */
	if (rc == 0 &&
	    (rc = rq_odb_own_tmp_begin(&owner, d->objects, base, sizeof(base), err)) == 0)
		snprintf(prefix, sizeof(prefix), "tmp_%s-", base);
	if (rc == 0)
		rc = rq_odb_packwrite_hooked(d->pack, prefix, d->algo, m.v, m.n, before_move,
					     after_fail, d, st->pack_name, &st->pack_bytes, err);
	rq_odb_own_tmp_end(&owner);
	st->objects = rc == 0 ? m.n : 0;
	for (size_t k = 0; src && k < n; k++)
		source_free(&src[k]);
	free(src);
	merged_free(&m);
	return rc;
}

/* ---- the old packs removed ---- */

/* Pack name, merged into new_name, removed: its index first (a reader
 * lists packs by their index), then its reverse index and pack, then its
 * mark. Left alone when it is the new pack itself (the same bytes) or was
 * kept since it was chosen. */
static void remove_merged(dirs *d, const char *name, const char *new_name)
{
	static const char *const exts[] = {".rev", ".pack"};
	char file[NAME_MAX + 1];

	if (!strcmp(name, new_name) || exists_at(d->pack_fd, name, ".keep"))
		return;
	snprintf(file, sizeof(file), "%s.idx", name);
	if (unlinkat(d->pack_fd, file, 0) < 0 && errno != ENOENT)
		return;
	rq_testhook_hold("repack-deleting");
	for (int k = 0; k < 2; k++) {
		snprintf(file, sizeof(file), "%s%s", name, exts[k]);
		unlinkat(d->pack_fd, file, 0);
	}
	snprintf(file, sizeof(file), "%s" RQ_ODB_OWN_MARK, name);
	unlinkat(d->own_fd, file, 0);
}

/* The packs of the directory and their bytes. */
static void count_packs(dirs *d, size_t *packs, uint64_t *bytes)
{
	int fd = dup(d->pack_fd);
	DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	*packs = 0;
	*bytes = 0;
	if (!dh) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dh);
	while ((e = readdir(dh))) {
		size_t n = strlen(e->d_name);
		char pack[NAME_MAX + 1];
		struct stat st;
		if (n < 9 || strncmp(e->d_name, "pack-", 5) || strcmp(e->d_name + n - 4, ".idx"))
			continue;
		snprintf(pack, sizeof(pack), "%.*s.pack", (int)(n - 4), e->d_name);
		if (fstatat(d->pack_fd, pack, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		(*packs)++;
		*bytes += (uint64_t)st.st_size;
	}
	closedir(dh);
}

/* ---- running it ---- */

static void dirs_close(dirs *d)
{
	if (d->own_fd >= 0)
		close(d->own_fd);
	if (d->pack_fd >= 0)
		close(d->pack_fd);
}

static int dirs_open(dirs *d, const char *objects, const rq_oid_algo *algo, rq_error *err)
{
	d->objects = objects;
	d->algo = algo ? algo : &rq_oid_sha1;
	d->own_fd = d->pack_fd = -1;
	if (snprintf(d->pack, sizeof(d->pack), "%s/pack", objects) >= (int)sizeof(d->pack))
		return rq_error_set(err, RQ_E_IO, "objects directory path too long");
	d->own_fd = rq_odb_own_dir(objects, 1);
	d->pack_fd = open(d->pack, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->own_fd < 0 || d->pack_fd < 0)
		return rq_error_set(err, RQ_E_IO, "cannot open %s: %s",
				    d->own_fd < 0 ? objects : d->pack, strerror(errno));
	return 0;
}

/* Merge the first split packs of l, then remove them. 0 or -1. */
static int consolidate(dirs *d, own_list *l, size_t split, rq_odb_repack_stats *st, rq_error *err)
{
	rq_testhook_hold("repack-selected");
	if (write_merged(d, l->v, split, st, err) < 0)
		return -1;
	rq_testhook_hold("repack-written");
	/* the new pack's names on disk before any old pack goes */
	if (fsync(d->pack_fd) < 0) {
		rq_odb_own_unkeep(d->objects, st->pack_name);
		return rq_error_set(err, RQ_E_IO, "cannot sync %s: %s", d->pack, strerror(errno));
	}
	for (size_t k = 0; k < split; k++)
		remove_merged(d, l->v[k].name, st->pack_name);
	rq_testhook_hold("repack-deleted");
	rq_odb_own_unkeep(d->objects, st->pack_name);
	st->merged = split;
	rq_testhook_hold("repack-done");
	return 0;
}

/* Under the lock: what to merge, and the merge. 0 or -1. */
static int locked_run(dirs *d, const rq_odb_repack_opts *o, rq_odb_repack_stats *st, rq_error *err)
{
	own_list l = {0};
	unsigned threshold = o->threshold ? o->threshold : RQ_ODB_REPACK_THRESHOLD;
	size_t usable, split;
	int rc = 0;

	rq_testhook_hold("repack-locked");
	if (list_own(d, &l) < 0) {
		free(l.v);
		return rq_error_set(err, RQ_E_IO, "cannot list %s/" RQ_ODB_OWN_DIR ": %s",
				    d->objects, strerror(errno));
	}
	st->own_before = st->own_after = l.n;
	split = geometric_split(&l, &usable);
	if (split >= 2 && (o->all || usable >= threshold)) {
		rc = consolidate(d, &l, split, st, err);
		if (rc == 0)
			st->own_after = l.n - split + 1;
	}
	free(l.v);
	return rc;
}

int rq_odb_repack_run(const char *objects, const rq_odb_repack_opts *opts, rq_odb_repack_stats *st,
		      rq_error *err)
{
	rq_odb_repack_opts none = {0, 0, 0, NULL};
	dirs d;
	int rc = -1, r, lock = -1;

	memset(st, 0, sizeof(*st));
	if (!opts)
		opts = &none;
	if (dirs_open(&d, objects, opts->algo, err) < 0)
		goto out;
	if (opts->all)
		count_packs(&d, &st->packs_before, &st->bytes_before);
	if ((r = rq_odb_own_lock(d.own_fd, opts->wait_ms, &lock)) < 0) {
		rq_error_set(err, RQ_E_IO,
			     "cannot lock %s/" RQ_ODB_OWN_DIR "/" RQ_ODB_OWN_LOCK ": %s", objects,
			     strerror(errno));
		goto out;
	}
	st->busy = r == 0;
	rc = r ? locked_run(&d, opts, st, err) : 0;
	if (r)
		rq_odb_own_unlock(d.own_fd, lock);
	if (opts->all)
		count_packs(&d, &st->packs_after, &st->bytes_after);
out:
	dirs_close(&d);
	return rc;
}

/* ---- after a replay ---- */

int rq_odb_repack_enabled(git_repository *repo, unsigned *threshold)
{
	git_config *cfg = NULL;
	int on = 1;
	int32_t at = RQ_ODB_REPACK_THRESHOLD;

	if (git_repository_config_snapshot(&cfg, repo) == 0) {
		if (git_config_get_bool(&on, cfg, "replayq.consolidate") < 0)
			on = 1;
		if (git_config_get_int32(&at, cfg, "replayq.consolidateAt") < 0 || at < 2)
			at = RQ_ODB_REPACK_THRESHOLD;
	}
	git_config_free(cfg);
	git_error_clear();
	*threshold = (unsigned)at;
	return on;
}

int rq_odb_repack_due(git_repository *repo, char *objects, size_t n, unsigned *threshold)
{
	git_buf dir = GIT_BUF_INIT;
	int due = 0;

	if (!rq_odb_repack_enabled(repo, threshold))
		return 0;
	if (git_repository_item_path(&dir, repo, GIT_REPOSITORY_ITEM_OBJECTS) < 0) {
		git_error_clear();
		return 0;
	}
	while (dir.size > 1 && dir.ptr[dir.size - 1] == '/')
		dir.ptr[--dir.size] = '\0';
	if (dir.size < n && rq_odb_own_count(dir.ptr) >= *threshold) {
		memcpy(objects, dir.ptr, dir.size + 1);
		due = 1;
	}
	git_buf_dispose(&dir);
	return due;
}

int rq_odb_repack_auto(git_repository *repo, const rq_oid_algo *algo, rq_error *err)
{
	rq_odb_repack_opts o = {0, 0, RQ_ODB_REPACK_WAIT_MS, algo};
	rq_odb_repack_stats st;
	char objects[PATH_MAX];

	if (!rq_odb_repack_due(repo, objects, sizeof(objects), &o.threshold))
		return 0;
	if (rq_odb_repack_run(objects, &o, &st, err) < 0)
		return -1;
	return st.merged > 0;
}
