/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_packread against hostile packs: a pack made by git, its copies
 * damaged in targeted ways (truncated, offsets out of the pack or the
 * 64-bit table, OFS_DELTA bases before the pack, fan-outs that decrease,
 * counts that differ), packs written entry by entry (deltas that copy past
 * their base, lie about their sizes, refer to themselves; entries that
 * announce huge sizes), and a fixed-seed loop of random byte changes. A
 * damaged object is answered 0, RQ_ODB_PACKREAD_DAMAGED or, when the pair
 * fails git's checks, RQ_ODB_PACKREAD_BADPACK; an object that is returned
 * hashes to the id asked for. Under ASan: nothing read out of
 * bounds, nothing leaked.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rq_error.h"
#include "rq_odb.h"
#include "rq_odb_pack.h"
#include "rq_odb_packwrite.h"
#include "rq_odb_packread.h"

typedef struct bytes {
	unsigned char *p;
	size_t n;
} bytes;

/* The pack git made, its index, the ids (index order) and their offsets. */
static tu_repo *g_repo;
static bytes g_pack, g_idx;
static uint32_t g_nr;
static git_oid *g_ids;
static uint64_t *g_offs;
static char g_dir[PATH_MAX + 16]; /* where damaged copies are read */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static bytes load(const char *path)
{
	bytes b = {NULL, 0};
	FILE *f = fopen(path, "rb");
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	assert_true((n = ftell(f)) > 0);
	rewind(f);
	assert_non_null(b.p = malloc((size_t)n));
	assert_int_equal(fread(b.p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b.n = (size_t)n;
	return b;
}

static void store(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static bytes dup_bytes(bytes b)
{
	bytes c = {malloc(b.n + 64), b.n};

	assert_non_null(c.p);
	memcpy(c.p, b.p, b.n);
	return c;
}

/* The pair as the reader's directory holds it. */
static void put_pair(bytes pack, bytes idx)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/pack-test.pack", g_dir);
	store(path, pack.p, pack.n);
	snprintf(path, sizeof(path), "%s/pack-test.idx", g_dir);
	store(path, idx.p, idx.n);
}

static void *test_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

/* Objects read whose type was not theirs (see read_with). */
static unsigned g_type_flips;

/* 1 when the content is id's under another type. */
static int other_type(const void *data, size_t len, git_object_t type, const git_oid *id)
{
	git_oid got;

	for (int t = GIT_OBJECT_COMMIT; t <= GIT_OBJECT_TAG; t++)
		if (t != (int)type && git_odb_hash(&got, data, len, (git_object_t)t) == 0 &&
		    git_oid_equal(&got, id))
			return 1;
	return 0;
}

/* Read id with pr: 0 or 1 (-1 fails: nothing here runs out of memory);
 * what is returned must hash to id. The type bits of an entry's header are
 * under no checksum (git reads them as they are too): with g_lenient, the
 * right content under another type is counted in g_type_flips. */
static int g_lenient;
/* What the last read_with's read returned (RQ_ODB_PACKREAD_DAMAGED and
 * _BADPACK, a pair that fails git's checks, count as 0 for the callers:
 * not read). */
static int g_code;

static int read_with(rq_odb_packread *pr, const git_oid *id)
{
	void *data = NULL;
	size_t len = 0;
	git_object_t type = GIT_OBJECT_INVALID;
	git_oid got;
	int r = rq_odb_packread_read(pr, tu_rq_oid(id), test_alloc, NULL, &data, &len, &type);

	g_code = r;
	if (r == RQ_ODB_PACKREAD_DAMAGED || r == RQ_ODB_PACKREAD_BADPACK)
		return 0;
	assert_in_range(r, 0, 1);
	if (r == 1) {
		assert_int_equal(((char *)data)[len], '\0');
		assert_int_equal(git_odb_hash(&got, data, len, type), 0);
		if (g_lenient && !git_oid_equal(&got, id) && other_type(data, len, type, id))
			g_type_flips++;
		else if (!git_oid_equal(&got, id))
			fail_msg("read %s, got an object that hashes to %s", tu_hex(id),
				 tu_hex(&got));
		free(data);
	}
	return r;
}

/* Read id from the pair in dir with a fresh reader. */
static int read_in(const char *dir, const git_oid *id)
{
	rq_odb_packread *pr = rq_odb_packread_open(dir);
	int r;

	assert_non_null(pr);
	r = read_with(pr, id);
	rq_odb_packread_free(pr);
	return r;
}

/* How many of the pack's objects read (each one right) from the pair. */
static uint32_t read_all(void)
{
	rq_odb_packread *pr = rq_odb_packread_open(g_dir);
	uint32_t ok = 0;

	assert_non_null(pr);
	for (uint32_t k = 0; k < g_nr; k++)
		ok += (uint32_t)read_with(pr, &g_ids[k]);
	/* backwards: from the cache of delta bases this time */
	for (uint32_t k = g_nr; k > 0; k--)
		read_with(pr, &g_ids[k - 1]);
	rq_odb_packread_free(pr);
	return ok;
}

/* ---- the pack git made ---- */

static void load_pack(void)
{
	char dir[PATH_MAX + 16], *name, path[PATH_MAX * 2];
	const unsigned char *off32;

	snprintf(dir, sizeof(dir), "%s/objects/pack", g_repo->gitdir);
	assert_non_null(name = tu_capture(NULL, "cd '%s' && ls pack-*.idx", dir));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	g_idx = load(path);
	snprintf(path, sizeof(path), "%s/%.*s.pack", dir, (int)(strlen(name) - 4), name);
	g_pack = load(path);
	free(name);
	g_nr = be32(g_idx.p + 8 + 255 * 4);
	assert_non_null(g_ids = calloc(g_nr, sizeof(*g_ids)));
	assert_non_null(g_offs = calloc(g_nr, sizeof(*g_offs)));
	off32 = g_idx.p + 8 + 1024 + (size_t)g_nr * 24;
	for (uint32_t k = 0; k < g_nr; k++) {
		git_oid_fromraw(&g_ids[k], g_idx.p + 8 + 1024 + (size_t)k * 20);
		g_offs[k] = be32(off32 + (size_t)k * 4);
		assert_true(g_offs[k] < 0x80000000u);
	}
}

/* The entry's type code at off in the pack; *hlen its header's length. */
static unsigned entry_code(const bytes *pack, uint64_t off, size_t *hlen)
{
	size_t n = 1;

	while (pack->p[off + n - 1] & 0x80)
		n++;
	*hlen = n;
	return (pack->p[off] >> 4) & 7;
}

/* An object whose entry has this code (first in index order). */
static uint32_t with_code(unsigned code)
{
	size_t hlen;

	for (uint32_t k = 0; k < g_nr; k++)
		if (entry_code(&g_pack, g_offs[k], &hlen) == code)
			return k;
	fail_msg("no entry of code %u in the pack", code);
	return 0;
}

static unsigned char *off32_of(bytes idx, uint32_t k)
{
	return idx.p + 8 + 1024 + (size_t)g_nr * 24 + (size_t)k * 4;
}

/* The pair as git wrote it reads every object right. */
/* Every object's header (a delta's size from its delta's first bytes)
 * is what a read of it gives. */
static void headers_match_reads(void)
{
	rq_odb_packread *pr = rq_odb_packread_open(g_dir);

	assert_non_null(pr);
	for (uint32_t k = 0; k < g_nr; k++) {
		void *data = NULL;
		size_t len = 0, hlen = 0;
		git_object_t type = GIT_OBJECT_INVALID, htype = GIT_OBJECT_INVALID;
		assert_int_equal(
		    rq_odb_packread_read_header(pr, tu_rq_oid(&g_ids[k]), &hlen, &htype), 1);
		assert_int_equal(rq_odb_packread_read(pr, tu_rq_oid(&g_ids[k]), test_alloc, NULL,
						      &data, &len, &type),
				 1);
		assert_int_equal(hlen, len);
		assert_int_equal(htype, type);
		free(data);
	}
	rq_odb_packread_free(pr);
}

static void test_intact(void **state)
{
	(void)state;
	assert_true(g_nr > 40);
	with_code(6); /* the chains are there */
	put_pair(g_pack, g_idx);
	assert_int_equal(read_all(), g_nr);
	headers_match_reads();
}

/* Cut short: without its trailer the pair is not taken; with a trailer
 * again, the entries past the cut are not read. */
static void test_truncated_pack(void **state)
{
	bytes p = dup_bytes(g_pack);
	size_t cut = g_pack.n / 2;
	uint32_t past = 0;
	rq_odb_packread *pr;

	(void)state;
	p.n = cut;
	put_pair(p, g_idx);
	assert_int_equal(read_all(), 0);
	assert_int_equal(g_code, RQ_ODB_PACKREAD_BADPACK); /* git's check */
	memcpy(p.p + cut - 20, g_pack.p + g_pack.n - 20, 20);
	put_pair(p, g_idx);
	assert_non_null(pr = rq_odb_packread_open(g_dir));
	for (uint32_t k = 0; k < g_nr; k++)
		if (g_offs[k] >= cut - 20) {
			assert_int_equal(read_with(pr, &g_ids[k]), 0);
			past++;
		}
	rq_odb_packread_free(pr);
	assert_true(past > 0 && past < g_nr);
	assert_true(read_all() > 0);
	free(p.p);
}

/* An index cut short, or longer than its count says. */
static void test_truncated_idx(void **state)
{
	bytes i = dup_bytes(g_idx);

	(void)state;
	i.n = g_idx.n - 8;
	memcpy(i.p + i.n - 40, g_idx.p + g_idx.n - 40, 40);
	put_pair(g_pack, i);
	assert_int_equal(read_all(), 0);
	assert_int_equal(g_code, RQ_ODB_PACKREAD_BADPACK);
	i.n = 8 + 1024 + 100;
	put_pair(g_pack, i);
	assert_int_equal(read_all(), 0);
	i.n = g_idx.n + 4; /* not a whole 64-bit offset more */
	memcpy(i.p + i.n - 40, g_idx.p + g_idx.n - 40, 40);
	put_pair(g_pack, i);
	assert_int_equal(read_all(), 0);
	free(i.p);
}

/* The index with one 64-bit offset, value v, that entry k points to. */
static bytes with_large(uint32_t k, uint32_t slot, uint64_t v)
{
	bytes i = dup_bytes(g_idx);
	unsigned char *t = i.p + g_idx.n - 40;

	i.n = g_idx.n + 8;
	memcpy(t + 8, g_idx.p + g_idx.n - 40, 40);
	put_be32(t, (uint32_t)(v >> 32));
	put_be32(t + 4, (uint32_t)v);
	put_be32(off32_of(i, k), 0x80000000u | slot);
	return i;
}

/* 64-bit offsets: an index into the table past its end, offsets past the
 * pack, into its header, at its trailer; the right one reads. */
static void test_large_offsets(void **state)
{
	uint32_t k = with_code(3);
	const struct {
		uint32_t slot;
		uint64_t v;
		int want;
	} cases[] = {
	    {0, g_offs[k], 1},	       {1, g_offs[k], 0},  {0x7fffffffu, g_offs[k], 0},
	    {0, (uint64_t)1 << 40, 0}, {0, UINT64_MAX, 0}, {0, 4, 0},
	    {0, g_pack.n - 20, 0},     {0, g_pack.n, 0},   {0, g_offs[k] + ((uint64_t)1 << 32), 0},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		bytes i = with_large(k, cases[c].slot, cases[c].v);
		put_pair(g_pack, i);
		if (read_in(g_dir, &g_ids[k]) != cases[c].want)
			fail_msg("64-bit offset case %zu", c);
		free(i.p);
	}
}

/* 31-bit offsets out of the entries: the header, the trailer, past the
 * end, the middle of another entry. */
static void test_bad_offsets(void **state)
{
	uint32_t k = with_code(1);
	const uint32_t offs[] = {0,
				 4,
				 11,
				 (uint32_t)g_pack.n - 20,
				 (uint32_t)g_pack.n - 1,
				 (uint32_t)g_pack.n,
				 0x7fffffffu,
				 (uint32_t)g_offs[k] + 3};
	bytes i = dup_bytes(g_idx);

	(void)state;
	for (size_t c = 0; c < sizeof(offs) / sizeof(offs[0]); c++) {
		put_be32(off32_of(i, k), offs[c]);
		put_pair(g_pack, i);
		if (read_in(g_dir, &g_ids[k]) != 0)
			fail_msg("offset case %zu (%u)", c, offs[c]);
	}
	free(i.p);
}

/* Fan-outs that decrease or pass the count: the ids they cover are not
 * found (nothing read outside the table). */
static void test_fanout(void **state)
{
	bytes i = dup_bytes(g_idx);
	uint32_t k = 0;
	unsigned char *fan = i.p + 8;
	unsigned b;

	(void)state;
	while (k < g_nr && g_ids[k].id[0] == 0)
		k++;
	b = g_ids[k].id[0];
	put_be32(fan + b * 4, be32(fan + (b - 1) * 4) - 1);
	put_pair(g_pack, i);
	assert_int_equal(read_in(g_dir, &g_ids[k]), 0);
	put_be32(fan + b * 4, g_nr + 1);
	put_pair(g_pack, i);
	assert_int_equal(read_in(g_dir, &g_ids[k]), 0);
	put_be32(fan + (b - 1) * 4, 0xffffffffu);
	put_be32(fan + b * 4, 0xffffffffu);
	put_pair(g_pack, i);
	assert_int_equal(read_in(g_dir, &g_ids[k]), 0);
	memcpy(i.p, g_idx.p, g_idx.n);
	put_pair(g_pack, i);
	assert_int_equal(read_in(g_dir, &g_ids[k]), 1);
	free(i.p);
}

/* The pack's count, version, magic, or the index's count disagree. */
static void test_header_mismatch(void **state)
{
	bytes p = dup_bytes(g_pack), i = dup_bytes(g_idx);

	(void)state;
	put_be32(p.p + 8, g_nr + 1);
	put_pair(p, g_idx);
	assert_int_equal(read_all(), 0);
	put_be32(p.p + 8, g_nr);
	put_be32(p.p + 4, 4);
	put_pair(p, g_idx);
	assert_int_equal(read_all(), 0);
	put_be32(p.p + 4, 2);
	p.p[0] = 'X';
	put_pair(p, g_idx);
	assert_int_equal(read_all(), 0);
	put_be32(i.p + 8 + 255 * 4, g_nr - 1);
	put_pair(g_pack, i);
	assert_int_equal(read_all(), 0);
	put_be32(i.p + 8 + 255 * 4, 0xffffffffu);
	put_pair(g_pack, i);
	assert_int_equal(read_all(), 0);
	free(p.p);
	free(i.p);
}

/* An OFS_DELTA of git's pack sent before the pack's start, into its
 * header, into the entry before it. */
static void test_ofs_base_real(void **state)
{
	uint32_t k = with_code(6);
	size_t hlen, n = 1;
	unsigned char *d;
	bytes p = dup_bytes(g_pack);

	(void)state;
	entry_code(&p, g_offs[k], &hlen);
	d = p.p + g_offs[k] + hlen;
	while (d[n - 1] & 0x80)
		n++;
	memset(d, 0xff, n - 1); /* the largest distance of n bytes */
	d[n - 1] = 0x7f;
	assert_true(n > 1 || g_offs[k] < 127);
	put_pair(p, g_idx);
	assert_int_equal(read_in(g_dir, &g_ids[k]), 0);
	assert_true(n <= 2);
	memset(d, 0x80, n - 1); /* the smallest of n bytes: into the entry before */
	d[n - 1] = n > 1 ? 0 : 1;
	for (uint32_t j = 0; j < g_nr; j++) /* not an entry's start */
		assert_true(g_offs[j] != g_offs[k] - (n > 1 ? 128 : 1));
	put_pair(p, g_idx);
	assert_int_equal(read_in(g_dir, &g_ids[k]), 0);
	memcpy(p.p, g_pack.p, g_pack.n);
	put_pair(p, g_idx);
	assert_int_equal(read_in(g_dir, &g_ids[k]), 1);
	free(p.p);
}

/* ---- packs written entry by entry ---- */

/* The base blob the crafted deltas apply to, its entry and id; the
 * target a good delta makes, and its id. */
static char g_base[512], g_target[600];
static size_t g_base_len, g_target_len;
static bytes g_base_entry;
static git_oid g_base_id, g_target_id;

/* The zlib stream of payload: an entry encoded without its header. */
static bytes zlib_of(const void *payload, size_t len)
{
	rq_odb_pack_encoder *enc = rq_odb_pack_encoder_new();
	unsigned char *e = NULL;
	size_t elen = 0, h = 1;
	uint32_t crc;
	bytes z;

	assert_non_null(enc);
	assert_int_equal(rq_odb_pack_encode(enc, GIT_OBJECT_BLOB, payload, len, &e, &elen, &crc),
			 0);
	while (e[h - 1] & 0x80)
		h++;
	z.n = elen - h;
	assert_non_null(z.p = malloc(z.n));
	memcpy(z.p, e + h, z.n);
	free(e);
	rq_odb_pack_encoder_free(enc);
	return z;
}

/* An entry: the header (code, size), extra bytes (an OFS_DELTA's distance,
 * a REF_DELTA's base id), the zlib stream of payload. */
static bytes entry_of(unsigned code, uint64_t size, const void *extra, size_t nextra,
		      const void *payload, size_t plen)
{
	bytes z = zlib_of(payload, plen), e;
	size_t n = 0;

	assert_non_null(e.p = malloc(16 + nextra + z.n));
	e.p[n] = (unsigned char)(code << 4 | (size & 15));
	for (size >>= 4; size; size >>= 7) {
		e.p[n++] |= 0x80;
		e.p[n] = (unsigned char)(size & 0x7f);
	}
	n++;
	if (nextra)
		memcpy(e.p + n, extra, nextra);
	memcpy(e.p + n + nextra, z.p, z.n);
	e.n = n + nextra + z.n;
	free(z.p);
	return e;
}

/* An OFS_DELTA distance as git writes it. Its length. */
static size_t ofs_encode(uint64_t d, unsigned char out[16])
{
	unsigned char tmp[16];
	size_t pos = sizeof(tmp) - 1;

	tmp[pos] = d & 127;
	while (d >>= 7)
		tmp[--pos] = (unsigned char)(128 | (--d & 127));
	memcpy(out, tmp + pos, sizeof(tmp) - pos);
	return sizeof(tmp) - pos;
}

static size_t put_size(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			p[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

/* A delta: the base's size, the result's, the instructions. */
static bytes delta_of(uint64_t src, uint64_t dst, const void *ops, size_t nops)
{
	bytes d;

	assert_non_null(d.p = malloc(20 + nops));
	d.n = put_size(d.p, src);
	d.n += put_size(d.p + d.n, dst);
	memcpy(d.p + d.n, ops, nops);
	d.n += nops;
	return d;
}

/* The instructions of the good delta: the base's first 100 bytes, an
 * insert, the rest of the base. */
static size_t good_ops(unsigned char *ops)
{
	size_t n = 0, rest = g_base_len - 100;

	ops[n++] = 0x90; /* copy from 0, one size byte */
	ops[n++] = 100;
	ops[n++] = 5;
	memcpy(ops + n, "EDIT\n", 5);
	n += 5;
	ops[n++] = 0x93; /* offset 2 bytes, size 1 byte */
	ops[n++] = 100;
	ops[n++] = 0;
	ops[n++] = (unsigned char)rest;
	return n;
}

static void make_base(void)
{
	size_t n = 0;

	for (int i = 1; n < 300; i++)
		n += (size_t)snprintf(g_base + n, sizeof(g_base) - n, "base line %d\n", i);
	g_base_len = n;
	assert_true(g_base_len - 100 < 256);
	memcpy(g_target, g_base, 100);
	memcpy(g_target + 100, "EDIT\n", 5);
	memcpy(g_target + 105, g_base + 100, g_base_len - 100);
	g_target_len = g_base_len + 5;
	assert_int_equal(git_odb_hash(&g_base_id, g_base, g_base_len, GIT_OBJECT_BLOB), 0);
	assert_int_equal(git_odb_hash(&g_target_id, g_target, g_target_len, GIT_OBJECT_BLOB), 0);
	g_base_entry = entry_of(3, g_base_len, NULL, 0, g_base, g_base_len);
}

/* Write the entries (with these ids) as the one pack of the directory
 * crafted/ (emptied first). */
static void write_crafted(const bytes *e, const git_oid *ids, size_t n, char *dir, size_t dirlen)
{
	rq_odb_pack_entry v[4];
	rq_error err;
	char name[RQ_ODB_PACK_NAME_MAX];
	uint64_t len;

	assert_true(n <= 4);
	snprintf(dir, dirlen, "%s/crafted", g_repo->root);
	tu_rmrf(dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	for (size_t i = 0; i < n; i++) {
		v[i] = (rq_odb_pack_entry){
		    .data = e[i].p, .len = e[i].n, .crc = rq_odb_pack_crc32(e[i].p, e[i].n)};
		rq_oid_from_git(&v[i].id, &ids[i]);
	}
	rq_error_clear(&err);
	assert_int_equal(rq_odb_packwrite(dir, NULL, NULL, v, n, name, &len, &err), 0);
}

/* A pack of the base blob and entry (under the target's id): the base
 * reads right, the target's read is returned. The entry is freed. */
static int crafted(bytes entry)
{
	char dir[PATH_MAX + 16];
	bytes e[2] = {g_base_entry, entry};
	git_oid ids[2] = {g_base_id, g_target_id};
	int r;

	write_crafted(e, ids, 2, dir, sizeof(dir));
	assert_int_equal(read_in(dir, &g_base_id), 1);
	r = read_in(dir, &g_target_id);
	free(entry.p);
	return r;
}

/* A delta of ops against a base of src bytes, announcing dst: an
 * OFS_DELTA at distance ofs, or (ofs REF) a REF_DELTA against the base. */
#define REF UINT64_MAX

static bytes delta_entry(uint64_t src, uint64_t dst, const void *ops, size_t nops, uint64_t ofs)
{
	bytes d = delta_of(src, dst, ops, nops), e;
	unsigned char extra[20];
	size_t nx = ofs == REF ? 20 : ofs_encode(ofs, extra);

	if (ofs == REF)
		memcpy(extra, g_base_id.id, 20);
	e = entry_of(ofs == REF ? 7 : 6, d.n, extra, nx, d.p, d.n);
	free(d.p);
	return e;
}

/* The good deltas read; OFS_DELTA distances that are zero (the entry
 * itself), reach the pack's header, pass its start, overflow, or land in
 * the base's zlib stream, do not. */
static void test_ofs_base(void **state)
{
	unsigned char ops[32], big[16];
	size_t n = good_ops(ops), d = g_base_entry.n;

	(void)state;
	assert_int_equal(crafted(delta_entry(g_base_len, g_target_len, ops, n, d)), 1);
	assert_int_equal(crafted(delta_entry(g_base_len, g_target_len, ops, n, REF)), 1);
	assert_int_equal(crafted(delta_entry(g_base_len, g_target_len, ops, n, 0)), 0);
	assert_int_equal(crafted(delta_entry(g_base_len, g_target_len, ops, n, d + 8)), 0);
	assert_int_equal(crafted(delta_entry(g_base_len, g_target_len, ops, n, d + 12)), 0);
	assert_int_equal(crafted(delta_entry(g_base_len, g_target_len, ops, n, d + 13)), 0);
	assert_int_equal(crafted(delta_entry(g_base_len, g_target_len, ops, n, d - 3)), 0);
	assert_int_equal(crafted(delta_entry(g_base_len, g_target_len, ops, n, UINT64_MAX - 1)), 0);
	/* eleven continuation bytes: more than 64 bits */
	memset(big, 0xff, 11);
	big[11] = 0x7f;
	assert_int_equal(crafted(entry_of(6, 4, big, 12, "\x01\x01\x01x", 4)), 0);
}

/* Deltas whose instructions leave the base or the delta, or use the
 * reserved code 0; whose sizes disagree with the base or their result. */
static void test_delta_ops(void **state)
{
	unsigned char ops[32];
	size_t n = good_ops(ops), d = g_base_entry.n, bl = g_base_len, tl = g_target_len;
	const unsigned char past[] = {0x93, (unsigned char)(bl - 2), (unsigned char)((bl - 2) >> 8),
				      4},
			    after[] = {0x93, (unsigned char)(bl + 1),
				       (unsigned char)((bl + 1) >> 8), 1},
			    far[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			    whole[] = {0x80}, /* 0x10000 bytes from 0 */
	    insert[] = {0x10, 'a'}, zero[] = {0x04, 'a', 'b', 'c', 'd', 0x00}, cut[] = {0x93, 0x10};

	(void)state;
	assert_int_equal(crafted(delta_entry(bl, 4, past, sizeof(past), d)), 0);
	assert_int_equal(crafted(delta_entry(bl, 1, after, sizeof(after), d)), 0);
	assert_int_equal(crafted(delta_entry(bl, 0xffffff, far, sizeof(far), d)), 0);
	assert_int_equal(crafted(delta_entry(bl, 0x10000, whole, sizeof(whole), REF)), 0);
	assert_int_equal(crafted(delta_entry(bl, 16, insert, sizeof(insert), d)), 0);
	assert_int_equal(crafted(delta_entry(bl, 4, zero, sizeof(zero), d)), 0);
	assert_int_equal(crafted(delta_entry(bl, 4, cut, sizeof(cut), d)), 0);
	/* the base's size, the result's: one more, one less, huge */
	assert_int_equal(crafted(delta_entry(bl + 1, tl, ops, n, d)), 0);
	assert_int_equal(crafted(delta_entry(bl - 1, tl, ops, n, REF)), 0);
	assert_int_equal(crafted(delta_entry(bl, tl + 1, ops, n, d)), 0);
	assert_int_equal(crafted(delta_entry(bl, tl - 1, ops, n, d)), 0);
	assert_int_equal(crafted(delta_entry(bl, (uint64_t)1 << 60, ops, n, d)), 0);
	assert_int_equal(crafted(delta_entry(bl, ((uint64_t)1 << 63) - 1, ops, n, d)), 0);
	assert_int_equal(crafted(delta_entry(bl, UINT64_MAX, ops, n, REF)), 0);
	assert_int_equal(crafted(delta_entry(UINT64_MAX, tl, ops, n, d)), 0);
	/* no instructions at all, and a delta cut inside its sizes */
	assert_int_equal(crafted(delta_entry(bl, tl, ops, 0, d)), 0);
	assert_int_equal(crafted(entry_of(6, 1, "\x01", 1, "\x80", 1)), 0);
	assert_int_equal(crafted(entry_of(6, 0, "\x01", 1, "", 0)), 0);
}

/* Entries whose header lies: sizes one off, huge sizes, type codes 0
 * and 5, a REF_DELTA base the pack does not have. */
static void test_entry_sizes(void **state)
{
	unsigned char ops[32], other[20];
	size_t n = good_ops(ops), bl = g_base_len;
	bytes dl = delta_of(bl, g_target_len, ops, n);
	unsigned char ofs[16];
	size_t no = ofs_encode(g_base_entry.n, ofs);

	(void)state;
	assert_int_equal(crafted(entry_of(3, g_target_len, NULL, 0, g_target, g_target_len)), 1);
	assert_int_equal(crafted(entry_of(3, g_target_len + 1, NULL, 0, g_target, g_target_len)),
			 0);
	assert_int_equal(crafted(entry_of(3, g_target_len - 1, NULL, 0, g_target, g_target_len)),
			 0);
	assert_int_equal(crafted(entry_of(3, (uint64_t)1 << 59, NULL, 0, g_target, g_target_len)),
			 0);
	assert_int_equal(crafted(entry_of(3, (uint64_t)1 << 62, NULL, 0, g_target, g_target_len)),
			 0);
	assert_int_equal(crafted(entry_of(3, 1u << 30, NULL, 0, g_target, g_target_len)), 0);
	assert_int_equal(crafted(entry_of(0, g_target_len, NULL, 0, g_target, g_target_len)), 0);
	assert_int_equal(crafted(entry_of(5, g_target_len, NULL, 0, g_target, g_target_len)), 0);
	assert_int_equal(crafted(entry_of(6, dl.n + 1, ofs, no, dl.p, dl.n)), 0);
	assert_int_equal(crafted(entry_of(6, dl.n - 1, ofs, no, dl.p, dl.n)), 0);
	assert_int_equal(crafted(entry_of(6, (uint64_t)1 << 40, ofs, no, dl.p, dl.n)), 0);
	memset(other, 0x42, sizeof(other));
	assert_int_equal(crafted(entry_of(7, dl.n, other, 20, dl.p, dl.n)), 0);
	free(dl.p);
}

/* The crafted pack in dir, whose target is its own base, as a repository's
 * only pack behind rq_odb: reading the target, its header or its
 * abbreviated id fails as damaged ("is corrupt") at once, instead of going
 * to libgit2, which follows the chain for ever. */
static void cycle_through_odb(const char *dir)
{
	tu_repo *r = tu_repo_new(1);
	git_repository *repo;
	git_odb *odb;
	git_odb_object *obj = NULL;
	git_object_t type;
	size_t len;
	rq_error err;

	assert_int_equal(tu_run(r, "cp '%s'/pack-* objects/pack/", dir), 0);
	repo = tu_repo_open(r);
	rq_error_clear(&err);
	assert_int_equal(rq_odb_install(repo, NULL, &err), 0);
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	assert_int_equal(git_odb_read(&obj, odb, &g_target_id), GIT_ERROR);
	assert_int_equal(git_error_last()->klass, RQ_ERROR_GIT_CORRUPT);
	assert_non_null(strstr(git_error_last()->message, "is corrupt"));
	assert_int_equal(git_odb_read_header(&len, &type, odb, &g_target_id), GIT_ERROR);
	assert_int_equal(git_error_last()->klass, RQ_ERROR_GIT_CORRUPT);
	assert_int_equal(git_odb_read_prefix(&obj, odb, &g_target_id, 12), GIT_ERROR);
	assert_int_equal(git_error_last()->klass, RQ_ERROR_GIT_CORRUPT);
	assert_int_equal(git_odb_read_header(&len, &type, odb, &g_base_id), 0);
	assert_int_equal(len, g_base_len);
	assert_int_equal(type, GIT_OBJECT_BLOB);
	git_odb_free(odb);
	tu_repo_free(r); /* and repo */
}

/* REF_DELTA chains that never reach a whole object: an entry its own
 * base, two entries each other's, an OFS_DELTA onto a REF_DELTA onto it. */
static void test_ref_cycles(void **state)
{
	unsigned char ops[32], ofs[16];
	size_t n = good_ops(ops);
	bytes d = delta_of(g_base_len, g_target_len, ops, n), e[3];
	git_oid ids[3] = {g_base_id, g_target_id, g_target_id};
	char dir[PATH_MAX + 16];

	(void)state;
	memset(ids[2].id, 0x77, 20);
	e[0] = g_base_entry;
	e[1] = entry_of(7, d.n, g_target_id.id, 20, d.p, d.n);
	write_crafted(e, ids, 2, dir, sizeof(dir));
	assert_int_equal(read_in(dir, &g_base_id), 1);
	assert_int_equal(read_in(dir, &g_target_id), 0);
	assert_int_equal(g_code, RQ_ODB_PACKREAD_DAMAGED);
	cycle_through_odb(dir);
	free(e[1].p);
	e[1] = entry_of(7, d.n, ids[2].id, 20, d.p, d.n);
	e[2] = entry_of(7, d.n, g_target_id.id, 20, d.p, d.n);
	write_crafted(e, ids, 3, dir, sizeof(dir));
	assert_int_equal(read_in(dir, &g_target_id), 0);
	assert_int_equal(read_in(dir, &ids[2]), 0);
	free(e[2].p);
	/* the third an OFS_DELTA onto the second, a REF_DELTA onto the third */
	e[2] = entry_of(6, d.n, ofs, ofs_encode(e[1].n, ofs), d.p, d.n);
	write_crafted(e, ids, 3, dir, sizeof(dir));
	assert_int_equal(read_in(dir, &g_target_id), 0);
	assert_int_equal(read_in(dir, &ids[2]), 0);
	assert_int_equal(read_in(dir, &g_base_id), 1);
	free(e[1].p);
	free(e[2].p);
	free(d.p);
}

/* The last entry of a pack: a header whose size runs into the trailer, a
 * zlib stream cut short. */
static void test_last_entry(void **state)
{
	bytes e = {malloc(8), 5};

	(void)state;
	assert_non_null(e.p);
	memcpy(e.p, "\xb0\x80\x80\x80\x80", 5);
	assert_int_equal(crafted(e), 0);
	e = entry_of(3, g_target_len, NULL, 0, g_target, g_target_len);
	e.n -= 4; /* without its Adler-32 */
	assert_int_equal(crafted(e), 0);
	e = entry_of(3, g_target_len, NULL, 0, g_target, g_target_len);
	e.n /= 2;
	assert_int_equal(crafted(e), 0);
	e = entry_of(6, 5, "\x01", 1, "", 0);
	e.n = 2; /* no stream at all */
	assert_int_equal(crafted(e), 0);
}

/* ---- random damage ---- */

static uint64_t g_rng = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

/* One to four bytes of b in [from, to) changed: a random value, a bit
 * flipped, or the top bit (the continuation of git's numbers). */
static void mutate(bytes b, size_t from, size_t to)
{
	for (int m = (int)(rnd() % 4); m >= 0; m--) {
		size_t at = from + (size_t)(rnd() % (to - from));
		switch (rnd() % 3) {
		case 0:
			b.p[at] = (unsigned char)rnd();
			break;
		case 1:
			b.p[at] ^= (unsigned char)(1u << (rnd() % 8));
			break;
		default:
			b.p[at] ^= 0x80;
		}
	}
}

/* A few hundred damaged copies of the pack (its trailer kept, so the pair
 * is taken): every object reads right or not at all. */
static void test_random_pack(void **state)
{
	bytes p = dup_bytes(g_pack);
	uint32_t total = 0;

	(void)state;
	g_lenient = 1;
	for (int it = 0; it < 300; it++) {
		memcpy(p.p, g_pack.p, g_pack.n);
		mutate(p, 12, g_pack.n - 20);
		put_pair(p, g_idx);
		total += read_all();
	}
	g_lenient = 0;
	assert_true(g_type_flips < 5);
	/* most objects survive a few changed bytes */
	assert_true(total > 300 * (g_nr / 2));
	assert_true(total < 300 * g_nr);
	free(p.p);
}

/* Damaged copies of the index (the fan-out, the ids, the offsets): an
 * object read is the one asked for (its content hashes to its id), or it
 * is damaged, not found, or its index refused (a fan-out that goes down);
 * never another one, never a crash. */
static void test_random_idx(void **state)
{
	bytes i = dup_bytes(g_idx);

	(void)state;
	for (int it = 0; it < 150; it++) {
		rq_odb_packread *pr;
		memcpy(i.p, g_idx.p, g_idx.n);
		mutate(i, 8, g_idx.n - 40);
		put_pair(g_pack, i);
		assert_non_null(pr = rq_odb_packread_open(g_dir));
		for (uint32_t k = 0; k < g_nr; k++) {
			void *data = NULL;
			size_t len;
			git_object_t type;
			int r = rq_odb_packread_read(pr, tu_rq_oid(&g_ids[k]), test_alloc, NULL,
						     &data, &len, &type);
			assert_true(r == RQ_ODB_PACKREAD_DAMAGED || r == RQ_ODB_PACKREAD_BADPACK ||
				    r == 0 || r == 1);
			if (r == 1) {
				git_oid got;
				assert_int_equal(git_odb_hash(&got, data, len, type), 0);
				assert_true(git_oid_equal(&got, &g_ids[k]));
			}
			free(data);
		}
		rq_odb_packread_free(pr);
	}
	free(i.p);
}

static int group_setup(void **state)
{
	if (tu_group_setup(state) < 0)
		return -1;
	g_repo = tu_repo_new(0);
	/* one file in 16 versions (OFS_DELTA chains), another rewritten */
	tu_git(g_repo, "for i in $(seq 1 16); do seq 1 300 | sed \"s/^$((i * 15))$/edit $i/\" "
		       ">f.txt; seq $i 60 >g.txt; git add f.txt g.txt; git commit -qm v$i; done && "
		       "git repack -adq --depth=50 --window=50");
	load_pack();
	make_base();
	snprintf(g_dir, sizeof(g_dir), "%s/damaged", g_repo->root);
	if (mkdir(g_dir, 0700) < 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	free(g_pack.p);
	free(g_idx.p);
	free(g_ids);
	free(g_offs);
	free(g_base_entry.p);
	tu_repo_free(g_repo);
	return tu_group_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_intact),	    cmocka_unit_test(test_truncated_pack),
	    cmocka_unit_test(test_truncated_idx),   cmocka_unit_test(test_large_offsets),
	    cmocka_unit_test(test_bad_offsets),	    cmocka_unit_test(test_fanout),
	    cmocka_unit_test(test_header_mismatch), cmocka_unit_test(test_ofs_base_real),
	    cmocka_unit_test(test_ofs_base),	    cmocka_unit_test(test_delta_ops),
	    cmocka_unit_test(test_entry_sizes),	    cmocka_unit_test(test_ref_cycles),
	    cmocka_unit_test(test_last_entry),	    cmocka_unit_test(test_random_pack),
	    cmocka_unit_test(test_random_idx),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
