/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_packtab: the table of the objects of a repository's small packs
 * (see the header): loaded (mapped and checked), searched, built from an
 * older table and new indexes, saved.
 */
#include "rq_odb_packtab.h"
#include "rq_fs.h"
#include "rq_oid.h"
#include "rq_odb_pack.h"
#include "rq_sha1.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEAD	  20 /* "RQPT", version, flags, packs, entries */
#define PACK_ROW  48 /* name, checksum, count, flags */
#define FANOUT	  (256 * 4)
#define ENTRY_REF 8 /* pack, offset */
#define TRAILER	  20
#define VERSION	  1
#define PACKS_MAX (1u << 20)
#define TABLE_MAX ((size_t)1 << 31)

struct rq_odb_packtab {
	const unsigned char *bytes; /* the file's bytes */
	size_t len;
	int mapped; /* bytes is a mapping (else malloc'd) */
	uint32_t flags, npacks, nr;
	const unsigned char *packs, *fanout, *ids, *refs;
};

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static size_t table_size(uint32_t npacks, uint32_t nr)
{
	return HEAD + (size_t)npacks * PACK_ROW + FANOUT + (size_t)nr * (20 + ENTRY_REF) + TRAILER;
}

/* Point t's parts into its bytes: 0, or -1 when they do not fit. */
static int parse(rq_odb_packtab *t)
{
	const unsigned char *b = t->bytes;
	unsigned char sum[20];
	rq_sha1 s;

	if (t->len < HEAD + FANOUT + TRAILER || memcmp(b, "RQPT", 4) ||
	    rq_odb_pack_be32(b + 4) != VERSION)
		return -1;
	t->flags = rq_odb_pack_be32(b + 8);
	t->npacks = rq_odb_pack_be32(b + 12);
	t->nr = rq_odb_pack_be32(b + 16);
	if (t->npacks > PACKS_MAX || t->nr > TABLE_MAX / 32 ||
	    table_size(t->npacks, t->nr) != t->len)
		return -1;
	rq_sha1_init(&s);
	rq_sha1_update(&s, b, t->len - TRAILER);
	rq_sha1_final(&s, sum);
	if (memcmp(sum, b + t->len - TRAILER, TRAILER))
		return -1;
	t->packs = b + HEAD;
	t->fanout = t->packs + (size_t)t->npacks * PACK_ROW;
	t->ids = t->fanout + FANOUT;
	t->refs = t->ids + (size_t)t->nr * 20;
	return rq_odb_pack_fanout_ok(t->fanout, t->nr) ? 0 : -1;
}

int rq_odb_packtab_load(rq_odb_packtab **out, int dirfd)
{
	int fd = openat(dirfd, RQ_ODB_PACKTAB_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	rq_odb_packtab *t;
	struct stat st;
	void *m;

	*out = NULL;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > TABLE_MAX) {
		close(fd);
		return 0;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	if (!(t = calloc(1, sizeof(*t)))) {
		munmap(m, (size_t)st.st_size);
		return -1;
	}
	*t = (rq_odb_packtab){.bytes = m, .len = (size_t)st.st_size, .mapped = 1};
	if (parse(t) < 0) {
		rq_odb_packtab_free(t);
		return 0;
	}
	*out = t;
	return 1;
}

void rq_odb_packtab_free(rq_odb_packtab *t)
{
	if (!t)
		return;
	if (t->mapped)
		munmap((void *)(uintptr_t)t->bytes, t->len);
	else
		free((void *)(uintptr_t)t->bytes);
	free(t);
}

uint32_t rq_odb_packtab_flags(const rq_odb_packtab *t)
{
	return t->flags;
}

size_t rq_odb_packtab_npacks(const rq_odb_packtab *t)
{
	return t->npacks;
}

void rq_odb_packtab_pack_at(const rq_odb_packtab *t, size_t k, rq_odb_packtab_pack *out)
{
	const unsigned char *row = t->packs + k * PACK_ROW;

	memcpy(out->name, row, 20);
	memcpy(out->sum, row + 20, 20);
	out->nr = rq_odb_pack_be32(row + 40);
	out->flags = rq_odb_pack_be32(row + 44);
}

int rq_odb_packtab_find(const rq_odb_packtab *t, const unsigned char *id,
			int (*usable)(void *ctx, uint32_t pack), void *ctx, uint32_t *pack,
			uint64_t *off)
{
	uint32_t pos;

	if (!rq_odb_pack_fanout_find(t->fanout, t->ids, 20, t->nr, id, 20, &pos))
		return 0;
	for (; pos < t->nr && !memcmp(t->ids + (size_t)pos * 20, id, 20); pos++) {
		const unsigned char *ref = t->refs + (size_t)pos * ENTRY_REF;
		uint32_t p = rq_odb_pack_be32(ref);
		if (p < t->npacks && usable(ctx, p)) {
			*pack = p;
			*off = rq_odb_pack_be32(ref + 4);
			return 1;
		}
	}
	return 0;
}

/* ---- pack names ---- */

int rq_odb_packtab_name_bytes(const char *name, unsigned char out[20])
{
	rq_oid id;

	if (strncmp(name, "pack-", 5) || strlen(name) != 45 ||
	    rq_oid_parse(&id, &rq_oid_sha1, name + 5, 40) < 0)
		return 0;
	memcpy(out, id.id, 20);
	return 1;
}

void rq_odb_packtab_name(const unsigned char *hex, char *name)
{
	static const char digits[] = "0123456789abcdef";

	memcpy(name, "pack-", 5);
	for (int i = 0; i < 20; i++) {
		name[5 + 2 * i] = digits[hex[i] >> 4];
		name[6 + 2 * i] = digits[hex[i] & 15];
	}
	name[45] = '\0';
}

/* ---- building ---- */

typedef struct entry {
	const unsigned char *id;
	uint32_t pack, off;
} entry;

static int cmp_entry(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	int c = memcmp(x->id, y->id, 20);

	if (c)
		return c;
	return x->pack < y->pack ? -1 : x->pack > y->pack;
}

/* The entries of a new pack's index, numbered pack, after *n in v; 0, or
 * 1 when an offset does not fit 32 bits (then the pack is listed large). */
static int add_index(entry *v, size_t *n, const rq_odb_packtab_new *a, uint32_t pack)
{
	rq_odb_pack_idx ix;
	size_t at = *n;

	if (rq_odb_pack_idx_parse(a->idx, a->idx_len, 20, &ix) < 0)
		return 1;
	for (uint32_t k = 0; k < ix.nr; k++) {
		uint64_t off;
		if (rq_odb_pack_idx_offset(&ix, k, &off) < 0 || off > UINT32_MAX) {
			*n = at;
			return 1;
		}
		v[(*n)++] = (entry){ix.ids + (size_t)k * 20, pack, (uint32_t)off};
	}
	return 0;
}

/* The kept entries of old, renumbered (map: old number -> new, or
 * UINT32_MAX for a pack not kept). */
static void add_old(entry *v, size_t *n, const rq_odb_packtab *old, const uint32_t *map)
{
	for (uint32_t k = 0; k < old->nr; k++) {
		const unsigned char *ref = old->refs + (size_t)k * ENTRY_REF;
		uint32_t p = rq_odb_pack_be32(ref);
		if (p < old->npacks && map[p] != UINT32_MAX)
			v[(*n)++] =
			    (entry){old->ids + (size_t)k * 20, map[p], rq_odb_pack_be32(ref + 4)};
	}
}

static void put_pack(unsigned char *row, const rq_odb_packtab_pack *p)
{
	memcpy(row, p->name, 20);
	memcpy(row + 20, p->sum, 20);
	put_be32(row + 40, p->nr);
	put_be32(row + 44, p->flags);
}

/* The file's bytes from the packs' rows and the sorted entries. */
static unsigned char *serialise(uint32_t flags, const unsigned char *rows, uint32_t npacks,
				const entry *v, uint32_t n, size_t *len)
{
	unsigned char *b, *p;
	size_t k = 0;
	rq_sha1 s;

	*len = table_size(npacks, n);
	if (!(b = malloc(*len)))
		return NULL;
	memcpy(b, "RQPT", 4);
	put_be32(b + 4, VERSION);
	put_be32(b + 8, flags);
	put_be32(b + 12, npacks);
	put_be32(b + 16, n);
	memcpy(b + HEAD, rows, (size_t)npacks * PACK_ROW);
	p = b + HEAD + (size_t)npacks * PACK_ROW;
	for (unsigned c = 0; c < 256; c++, p += 4) {
		while (k < n && v[k].id[0] <= c)
			k++;
		put_be32(p, (uint32_t)k);
	}
	for (k = 0; k < n; k++, p += 20)
		memcpy(p, v[k].id, 20);
	for (k = 0; k < n; k++, p += ENTRY_REF) {
		put_be32(p, v[k].pack);
		put_be32(p + 4, v[k].off);
	}
	rq_sha1_init(&s);
	rq_sha1_update(&s, b, *len - TRAILER);
	rq_sha1_final(&s, p);
	return b;
}

/* The packs' rows: old's kept ones, then the new ones. */
static uint32_t pack_rows(unsigned char *rows, const rq_odb_packtab *old, const unsigned char *keep,
			  const rq_odb_packtab_new *add, size_t nadd, const unsigned char *large)
{
	uint32_t np = 0;

	for (uint32_t k = 0; old && k < old->npacks; k++) {
		if (keep[k])
			memcpy(rows + (size_t)np++ * PACK_ROW, old->packs + (size_t)k * PACK_ROW,
			       PACK_ROW);
	}
	for (size_t k = 0; k < nadd; k++, np++) {
		rq_odb_packtab_pack p = add[k].pack;
		if (large[k])
			p.flags |= RQ_ODB_PACKTAB_LARGE;
		put_pack(rows + (size_t)np * PACK_ROW, &p);
	}
	return np;
}

/* The entries of old's kept packs and of the new small ones. */
static size_t gather(entry *v, const rq_odb_packtab *old, const uint32_t *map,
		     const rq_odb_packtab_new *add, size_t nadd, uint32_t first,
		     unsigned char *large)
{
	size_t n = 0;

	if (old)
		add_old(v, &n, old, map);
	for (size_t k = 0; k < nadd; k++)
		large[k] = !add[k].idx || (add[k].pack.flags & RQ_ODB_PACKTAB_LARGE) ||
			   add_index(v, &n, &add[k], first + (uint32_t)k);
	return n;
}

int rq_odb_packtab_build(rq_odb_packtab **out, const rq_odb_packtab *old, const unsigned char *keep,
			 const rq_odb_packtab_new *add, size_t nadd, uint32_t flags)
{
	size_t cap = old ? old->nr : 0, npacks = (old ? old->npacks : 0) + nadd, n, len;
	unsigned char *rows = NULL, *large = calloc(nadd + 1, 1), *bytes = NULL;
	uint32_t *map = calloc((old ? old->npacks : 0) + 1, sizeof(*map)), first = 0;
	rq_odb_packtab *t = calloc(1, sizeof(*t));
	entry *v = NULL;

	*out = NULL;
	for (size_t k = 0; k < nadd; k++)
		cap += add[k].idx ? add[k].pack.nr : 0;
	if (t && large && map && npacks <= PACKS_MAX && cap <= TABLE_MAX / 32 &&
	    (rows = malloc(npacks * PACK_ROW + 1)) && (v = malloc((cap + 1) * sizeof(*v)))) {
		for (uint32_t k = 0; old && k < old->npacks; k++) /* old numbers to new */
			map[k] = keep[k] ? first++ : UINT32_MAX;
		n = gather(v, old, map, add, nadd, first, large);
		npacks = pack_rows(rows, old, keep, add, nadd, large);
		qsort(v, n, sizeof(*v), cmp_entry);
		bytes = serialise(flags, rows, (uint32_t)npacks, v, (uint32_t)n, &len);
	}
	if (bytes) {
		*t = (rq_odb_packtab){.bytes = bytes, .len = len};
		if (parse(t) == 0) {
			*out = t;
			t = NULL;
		}
	}
	rq_odb_packtab_free(t);
	free(rows);
	free(large);
	free(map);
	free(v);
	return *out ? 1 : -1;
}

/* ---- saving ---- */

int rq_odb_packtab_save(const rq_odb_packtab *t, int dirfd)
{
	char tmp[64];
	unsigned char r[8] = {0};
	int fd, rc = -1;

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) < 0)
		r[0] = (unsigned char)getpid();
	snprintf(tmp, sizeof(tmp), "tmp_" RQ_ODB_PACKTAB_FILE "_%02x%02x%02x%02x%02x%02x%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
	/* not through a symbolic link, never over another file */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return -1;
	if (rq_fs_write_all(fd, t->bytes, t->len) == 0 && close(fd) == 0) {
		fd = -1;
		/* derived data: no sync (a torn table fails its checksum) */
		rc = renameat(dirfd, tmp, dirfd, RQ_ODB_PACKTAB_FILE);
	}
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlinkat(dirfd, tmp, 0);
	return rc < 0 ? -1 : 0;
}
