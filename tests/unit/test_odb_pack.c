/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_sha1, rq_odb_pack and rq_odb_mem: checksums against sha1sum, packs and
 * deltas read back by git, part files handed between processes.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_odb_mem.h"
#include "rq_odb_part.h"
#include "rq_odb_tmpdir.h"
#include "rq_deflate.h"
#include "rq_odb_pack.h"
#include "rq_odb_packwrite.h"
#include "rq_odb_packread.h"
#include "rq_sha1.h"

static int setup(void **state)
{
	tu_repo *r = tu_repo_new(0);
	tu_commit_file(r, "a.txt", "hello\n", "first");
	*state = r;
	return 0;
}

static int teardown(void **state)
{
	tu_repo_free(*state);
	*state = NULL;
	return 0;
}

static void check_sha1(void **state);

static void test_sha1(void **state)
{
	rq_sha1_use_portable(0);
	check_sha1(state);
	rq_sha1_use_portable(1);
	check_sha1(state);
	rq_sha1_use_portable(0);
}

static void sha1_hex(const void *data, size_t n, size_t step, char out[41])
{
	rq_sha1 s;
	unsigned char d[20];
	const unsigned char *p = data;

	rq_sha1_init(&s);
	for (size_t i = 0; i < n; i += step)
		rq_sha1_update(&s, p + i, n - i < step ? n - i : step);
	rq_sha1_final(&s, d);
	for (int i = 0; i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* FIPS 180 examples, and every length around the block and padding edges
 * fed in pieces of several sizes, against sha1sum; with the CPU's SHA
 * instructions (where it has them) and with the portable code. */
static void check_sha1(void **state)
{
	char hex[41];
	unsigned char buf[300];
	tu_repo *r = *state;

	sha1_hex("abc", 3, 3, hex);
	assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
	sha1_hex("", 0, 1, hex);
	assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, 7, hex);
	assert_string_equal(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	{
		char path[PATH_MAX];
		FILE *f;
		snprintf(path, sizeof(path), "%.3000s/sha-input", r->root);
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(buf, 1, sizeof(buf), f), sizeof(buf));
		fclose(f);
		for (size_t n = 0; n <= 300; n += (n < 130 ? 1 : 17)) {
			char *want =
			    tu_capture(NULL, "head -c %zu '%s' | sha1sum | cut -c1-40", n, path);
			assert_non_null(want);
			for (size_t step = 1; step <= 65; step += 32) {
				sha1_hex(buf, n, step, hex);
				assert_string_equal(hex, want);
			}
			free(want);
		}
	}
}

/* Write a tree of n entries "f000".."f<n>" whose i-th blob id is blobs[i]. */
static void write_tree(git_odb *odb, const git_oid *blobs, int n, git_oid *out)
{
	unsigned char buf[64 * 64];
	size_t len = 0;

	assert_true(n <= 64);
	for (int i = 0; i < n; i++) {
		len += (size_t)sprintf((char *)buf + len, "100644 f%03d", i) + 1;
		memcpy(buf + len, blobs[i].id, GIT_OID_RAWSZ);
		len += GIT_OID_RAWSZ;
	}
	assert_int_equal(tu_mem_write(out, odb, buf, len, GIT_OBJECT_TREE), 0);
}

/*
 * A chain of trees that each change one entry of the previous one becomes
 * deltas, no chain longer than git's default 50; git reads every tree back
 * the same, verify-pack and fsck --strict pass.
 */
static void test_pack_deltas(void **state)
{
	tu_repo *r = *state;
	git_repository *repo = tu_repo_open(r);
	rq_odb_tmpdir *od = NULL;
	rq_odb_tmpdir_stats stats;
	git_odb *odb;
	git_oid blobs[40], trees[120];
	char packdir[PATH_MAX], *out;
	int ndelta = 0, maxchain = 0;

	assert_int_equal(rq_odb_tmpdir_open(&od, repo, NULL, NULL), 0);
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	for (int i = 0; i < 40; i++) {
		char c[32];
		int n = snprintf(c, sizeof(c), "content %d\n", i);
		assert_int_equal(tu_mem_write(&blobs[i], odb, c, (size_t)n, GIT_OBJECT_BLOB), 0);
	}
	for (int t = 0; t < 120; t++) {
		git_oid b = blobs[t % 40];
		blobs[t % 40] = blobs[(t * 7 + 1) % 40];
		blobs[(t * 7 + 1) % 40] = b;
		write_tree(odb, blobs, 40, &trees[t]);
	}
	git_odb_free(odb);
	assert_int_equal(rq_odb_tmpdir_finish(od, &stats, NULL), 0);
	rq_odb_tmpdir_free(od);
	assert_true(stats.objects >= 150);

	snprintf(packdir, sizeof(packdir), "%.3000s/objects/pack", r->gitdir);
	out = tu_capture(r, "git verify-pack -v '%s/%s.idx'", packdir, stats.pack_name);
	assert_non_null(out);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		int depth;
		char id[41], type[16];
		/* <id> <type> <size> <size-in-pack> <offset> [<depth> <base-id>] */
		if (sscanf(line, "%40s %15s %*u %*u %*u %d", id, type, &depth) == 3) {
			ndelta++;
			if (depth > maxchain)
				maxchain = depth;
		}
	}
	free(out);
	assert_true(ndelta > 50);
	assert_true(maxchain <= 50);
	for (int t = 0; t < 120; t += 7) {
		/* git reads the tree, and its content hashes to its id */
		char *a = tu_capture(r, "git cat-file tree %s | git hash-object -t tree --stdin",
				     tu_hex(&trees[t]));
		git_tree *tree;
		assert_non_null(a);
		assert_string_equal(a, tu_hex(&trees[t]));
		free(a);
		/* and so does libgit2, through the new pack */
		assert_int_equal(git_tree_lookup(&tree, repo, &trees[t]), 0);
		assert_int_equal(git_tree_entrycount(tree), 40);
		git_tree_free(tree);
	}
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);
	assert_int_equal(tu_run(r, "git verify-pack '%s/%s.idx'", packdir, stats.pack_name), 0);
	/* git's own index of the same pack is identical to ours */
	assert_int_equal(
	    tu_run(r,
		   "cp '%s/%s.pack' check.pack && git index-pack check.pack >/dev/null && "
		   "cmp check.idx '%s/%s.idx' && rm -f check.pack check.idx",
		   packdir, stats.pack_name, packdir, stats.pack_name),
	    0);
}

/* Tree number k of a chain: 40 entries, entry k % 40 changed at each step. */
static size_t chain_tree(int k, unsigned char *buf)
{
	size_t len = 0;
	for (int i = 0; i < 40; i++) {
		unsigned char id[GIT_OID_RAWSZ];
		/* entry i carries the number of the last step that changed it */
		int last = k - ((k - i) % 40 + 40) % 40;
		memset(id, 0, sizeof(id));
		memcpy(id, &last, sizeof(last));
		id[19] = (unsigned char)i;
		len += (size_t)sprintf((char *)buf + len, "100644 f%03d", i) + 1;
		memcpy(buf + len, id, GIT_OID_RAWSZ);
		len += GIT_OID_RAWSZ;
	}
	return len;
}

static void put_tree(git_odb_backend *b, int k, git_oid *id)
{
	unsigned char buf[64 * 64];
	size_t len = chain_tree(k, buf);
	assert_int_equal(git_odb_hash(id, buf, len, GIT_OBJECT_TREE), 0);
	assert_int_equal(b->write(b, id, buf, len, GIT_OBJECT_TREE), 0);
}

/*
 * Part files carry no content. A handed-over delta is read back through
 * its base; a delta whose chain grows too deep across processes (its base
 * is an object the parent already had, deeper in its own chain) is
 * encoded again whole from its inflated content; git reads the pack.
 */
static void test_parts_deltas(void **state)
{
	tu_repo *r = *state;
	git_odb_backend *parent, *child;
	rq_odb_pack_encoder *enc = rq_odb_pack_encoder_new();
	rq_odb_pack_entry *e;
	rq_error err;
	git_oid ids[70];
	char path[PATH_MAX], packdir[PATH_MAX], name[RQ_ODB_PACK_NAME_MAX];
	uint64_t bytes = 0;
	size_t n;
	int whole_after = 0;

	assert_non_null(enc);
	assert_int_equal(rq_odb_mem_new(&parent), 0);
	assert_int_equal(rq_odb_mem_new(&child), 0);
	/* the parent: trees 0..49, a chain of deltas 49 deep */
	for (int k = 0; k < 50; k++)
		put_tree(parent, k, &ids[k]);
	assert_int_equal(rq_odb_mem_encode(parent, enc, 0), 0);
	/* the child: tree 49 again (whole there), then 50..69 on top of it */
	for (int k = 49; k < 70; k++)
		put_tree(child, k, &ids[k]);
	assert_int_equal(rq_odb_mem_encode(child, enc, 0), 0);
	snprintf(path, sizeof(path), "%.3000s/part-deltas", r->root);
	rq_error_clear(&err);
	assert_int_equal(rq_odb_part_save(child, 0, path, &err), 0);
	child->free(child);
	assert_int_equal(rq_odb_part_load(parent, path, &err), 0);
	assert_int_equal(rq_odb_mem_count(parent), 70);

	/* read back through the chain: the content hashes to the id */
	for (int k = 50; k < 70; k += 6) {
		void *data;
		size_t len;
		git_object_t type;
		git_oid back;
		assert_int_equal(parent->read(&data, &len, &type, parent, &ids[k]), 0);
		assert_int_equal(type, GIT_OBJECT_TREE);
		assert_int_equal(git_odb_hash(&back, data, len, GIT_OBJECT_TREE), 0);
		assert_true(git_oid_equal(&back, &ids[k]));
		git_odb_backend_data_free(parent, data);
	}
	/* too deep: re-encoded whole, and every chain is at most 50 again */
	assert_int_equal(rq_odb_mem_check_deltas(parent, enc), 0);
	n = rq_odb_mem_count(parent);
	e = calloc(n, sizeof(*e));
	assert_non_null(e);
	for (size_t i = 0; i < n; i++) {
		rq_odb_pack_entry_info info;
		assert_int_equal(rq_odb_mem_entry(parent, i, &e[i]), 0);
		assert_int_equal(rq_odb_pack_entry_parse(e[i].data, e[i].len, 20, &info), 0);
		if (i >= 51 && info.code != 7)
			whole_after++;
	}
	assert_true(whole_after >= 1);
	snprintf(packdir, sizeof(packdir), "%.3000s/objects/pack", r->gitdir);
	assert_int_equal(rq_odb_packwrite(packdir, NULL, NULL, e, n, name, &bytes, &err), 0);
	free(e);
	{
		char *out =
		    tu_capture(r,
			       "git verify-pack -v '%s/%s.idx' | awk 'NF == 7 { print $6 }' "
			       "| sort -n | tail -1",
			       packdir, name);
		assert_non_null(out);
		assert_true(atoi(out) <= 50);
		free(out);
	}
	for (int k = 0; k < 70; k += 3) {
		char *a = tu_capture(r, "git cat-file tree %s | git hash-object -t tree --stdin",
				     tu_hex(&ids[k]));
		assert_non_null(a);
		assert_string_equal(a, tu_hex(&ids[k]));
		free(a);
	}
	parent->free(parent);
	rq_odb_pack_encoder_free(enc);
}

/* A blob delta (another version of a file) reads back to the target: edits
 * at the start, in the middle and at the end, a moved block, the first and
 * last bytes changed; a target unlike its base is not worth a delta. */
static void blob_delta_round_trip(rq_odb_pack_encoder *enc, const char *base, size_t blen,
				  const char *target, size_t tlen)
{
	rq_oid base_id = {{0}};
	unsigned char *e = NULL, *raw = NULL, *full = NULL;
	size_t elen = 0, flen = 0;
	uint32_t crc = 0;
	rq_odb_pack_entry_info info;

	memset(base_id.id, 7, 20); /* a SHA-1 id: the encoder's default width */
	assert_int_equal(
	    rq_odb_pack_encode_blob_delta(enc, &base_id, base, blen, target, tlen, &e, &elen, &crc),
	    1);
	assert_true(elen < tlen / 2);
	assert_int_equal(crc, rq_odb_pack_crc32(e, elen));
	assert_int_equal(rq_odb_pack_entry_parse(e, elen, 20, &info), 0);
	assert_int_equal(info.code, 7);
	assert_true(rq_oid_eq(&info.base, &base_id));
	assert_int_equal(rq_odb_pack_inflate(info.zdata, info.zlen, info.size, &raw), 0);
	assert_int_equal(rq_odb_pack_apply_delta((const unsigned char *)base, blen, raw, info.size,
						 &full, &flen),
			 0);
	assert_int_equal(flen, tlen);
	assert_memory_equal(full, target, tlen);
	free(e);
	free(raw);
	free(full);
}

static void test_blob_delta(void **state)
{
	rq_odb_pack_encoder *enc = rq_odb_pack_encoder_new();
	size_t n = 64 * 1024;
	char *base = malloc(n), *t = malloc(n + 100);
	unsigned x = 1;
	rq_oid id = {{0}};
	unsigned char *e = NULL;
	size_t elen = 0;
	uint32_t crc;

	(void)state;
	assert_non_null(enc);
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		base[i] = (char)('a' + (x >> 16) % 26);
	}
	memcpy(t, base, n);
	t[0] ^= 1;
	memcpy(t + 1000, "an edit", 7);
	memcpy(t + 30000, base + 50000, 4096); /* a block moved */
	t[n - 1] ^= 1;
	blob_delta_round_trip(enc, base, n, t, n);
	memcpy(t, "inserted at the start", 21);
	memcpy(t + 21, base, n);
	memcpy(t + 21 + n, "appended", 8);
	blob_delta_round_trip(enc, base, n, t, n + 29);
	for (size_t i = 0; i < n; i++)
		t[i] = (char)('A' + i % 7);
	memset(&id, 1, sizeof(id));
	assert_int_equal(rq_odb_pack_encode_blob_delta(enc, &id, base, n, t, n, &e, &elen, &crc),
			 0);
	assert_null(e);
	free(base);
	free(t);
	rq_odb_pack_encoder_free(enc);
}

/* What libgit2 reads, rq_odb_packread reads the same, for every object. */
typedef struct compare_ctx {
	git_odb *odb;
	rq_odb_packread *pr;
	size_t read;
} compare_ctx;

static void *test_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

static int compare_one(const git_oid *id, void *payload)
{
	compare_ctx *c = payload;
	git_odb_object *o = NULL;
	void *data = NULL;
	size_t len = 0;
	git_object_t type = GIT_OBJECT_INVALID;
	rq_oid rid;

	rq_oid_from_git(&rid, id);
	assert_int_equal(git_odb_read(&o, c->odb, id), 0);
	assert_int_equal(rq_odb_packread_read(c->pr, &rid, test_alloc, NULL, &data, &len, &type),
			 1);
	assert_int_equal(type, git_odb_object_type(o));
	assert_int_equal(len, git_odb_object_size(o));
	assert_memory_equal(data, git_odb_object_data(o), len);
	assert_int_equal(((char *)data)[len], '\0');
	free(data);
	git_odb_object_free(o);
	c->read++;
	return 0;
}

static void compare_all(tu_repo *r)
{
	git_repository *repo = NULL;
	char dir[PATH_MAX * 2];
	compare_ctx c = {NULL, NULL, 0};
	rq_oid missing;

	assert_int_equal(git_repository_open(&repo, r->path), 0);
	assert_int_equal(git_repository_odb(&c.odb, repo), 0);
	snprintf(dir, sizeof(dir), "%s/objects/pack", r->gitdir);
	assert_non_null(c.pr = rq_odb_packread_open(dir));
	/* twice: the second time through the cache of delta bases */
	assert_int_equal(git_odb_foreach(c.odb, compare_one, &c), 0);
	assert_int_equal(git_odb_foreach(c.odb, compare_one, &c), 0);
	assert_true(c.read > 100);
	memset(&missing, 0xab, sizeof(missing));
	assert_int_equal(rq_odb_packread_read(c.pr, &missing, test_alloc, NULL, NULL, NULL, NULL),
			 0);
	rq_odb_packread_free(c.pr);
	git_odb_free(c.odb);
	git_repository_free(repo);
}

/* A file of 40 versions, packed with deep delta chains: OFS_DELTA, then
 * REF_DELTA entries, read back equal to libgit2's reading. */
static void test_packread(void **state)
{
	tu_repo *r = *state;

	tu_git(r,
	       "for i in $(seq 1 40); do seq 1 4000 | sed \"s/^$((i * 50))$/edit $i/\" >big.txt; "
	       "seq $i 300 >small.txt; git add big.txt small.txt; "
	       "git commit -qm v$i; done && git gc -q --aggressive");
	compare_all(r);
	tu_git(r, "git -c repack.useDeltaBaseOffset=false repack -adfq --depth=50 --window=50");
	compare_all(r);
}

/* Malformed entries and deltas are refused, never read past their end. */
static void test_decode_bad(void **state)
{
	rq_odb_pack_entry_info info;
	unsigned char *out = NULL;
	size_t outlen = 0;
	const unsigned char base[] = "0123456789";
	/* header continuation bytes running off the end; type 0; type 6 */
	const unsigned char e1[] = {0xb5, 0x80}, e2[] = {0x05}, e3[] = {0x65};
	/* delta: source size 10, target 4, copy 4 bytes from offset 8 (past
	 * the end); an insert longer than the delta; target size not reached
	 * (each -2: damaged, not out of memory) */
	const unsigned char d1[] = {10, 4, 0x91, 8, 4}, d2[] = {10, 4, 9, 'a'},
			    d3[] = {10, 4, 0x90, 2}, d4[] = {9, 2, 0x90, 2},
			    ok[] = {10, 3, 0x91, 2, 3};

	(void)state;
	assert_int_equal(rq_odb_pack_entry_parse(e1, sizeof(e1), 20, &info), -1);
	assert_int_equal(rq_odb_pack_entry_parse(e2, sizeof(e2), 20, &info), -1);
	assert_int_equal(rq_odb_pack_entry_parse(e3, sizeof(e3), 20, &info), -1);
	assert_int_equal(rq_odb_pack_entry_parse(e1, 0, 20, &info), -1);
	assert_int_equal(rq_odb_pack_apply_delta(base, 10, d1, sizeof(d1), &out, &outlen), -2);
	assert_int_equal(rq_odb_pack_apply_delta(base, 10, d2, sizeof(d2), &out, &outlen), -2);
	assert_int_equal(rq_odb_pack_apply_delta(base, 10, d3, sizeof(d3), &out, &outlen), -2);
	assert_int_equal(rq_odb_pack_apply_delta(base, 10, d4, sizeof(d4), &out, &outlen), -2);
	assert_null(out);
	assert_int_equal(rq_odb_pack_apply_delta(base, 10, ok, sizeof(ok), &out, &outlen), 0);
	assert_int_equal(outlen, 3);
	assert_memory_equal(out, "234", 3);
	free(out);
	/* the size a delta makes, from its header alone */
	outlen = 0;
	assert_int_equal(rq_odb_pack_delta_size(ok, sizeof(ok), &outlen), 0);
	assert_int_equal(outlen, 3);
	assert_int_equal(rq_odb_pack_delta_size(ok, 1, &outlen), -1);
	/* a zlib stream that gives more or fewer bytes than announced */
	{
		unsigned char *z, *raw;
		size_t zlen;
		uint32_t crc;
		rq_odb_pack_encoder *enc = rq_odb_pack_encoder_new();
		assert_int_equal(
		    rq_odb_pack_encode(enc, GIT_OBJECT_BLOB, "hello", 5, &z, &zlen, &crc), 0);
		assert_int_equal(rq_odb_pack_entry_parse(z, zlen, 20, &info), 0);
		assert_int_equal(info.code, 3);
		assert_int_equal(info.size, 5);
		assert_int_equal(rq_odb_pack_inflate(info.zdata, info.zlen, 5, &raw), 0);
		assert_memory_equal(raw, "hello", 5);
		free(raw);
		assert_int_equal(rq_odb_pack_inflate(info.zdata, info.zlen, 4, &raw), -1);
		assert_int_equal(rq_odb_pack_inflate(info.zdata, info.zlen, 6, &raw), -1);
		assert_int_equal(rq_odb_pack_inflate(info.zdata, info.zlen - 2, 5, &raw), -1);
		free(z);
		rq_odb_pack_encoder_free(enc);
	}
}

/* A commit's entry as rq_odb_pack_encode makes it: its zlib stream (the
 * encoder's, made), which must inflate to the commit. */
static void commit_entry(rq_odb_pack_encoder *enc, const char *commit, unsigned char *z,
			 size_t *zlen)
{
	unsigned char *e, *raw;
	size_t elen, n = strlen(commit);
	uint32_t crc;
	rq_odb_pack_entry_info info;

	assert_int_equal(rq_odb_pack_encode(enc, GIT_OBJECT_COMMIT, commit, n, &e, &elen, &crc), 0);
	assert_int_equal(rq_odb_pack_entry_parse(e, elen, 20, &info), 0);
	assert_int_equal(info.code, 1);
	assert_int_equal(rq_odb_pack_inflate(info.zdata, info.zlen, n, &raw), 0);
	assert_memory_equal(raw, commit, n);
	memcpy(z, info.zdata, info.zlen);
	*zlen = info.zlen;
	free(raw);
	free(e);
}

/*
 * A signed commit: the base64 lines of its signature (between the
 * armour's first and last lines) are compressed as literals, unsearched,
 * and the rest as usual; commits without such lines as before.
 */
static void test_signed_commit(void **state)
{
	static const char head[] = "tree 47b37e5773a067d92ddb6cc90b2dfa023221c3fc\n"
				   "parent 0d2f6976aa755849ec714e2dde79cae407fbc6d6\n"
				   "author A U Thor <a@example.com> 1700100780 +0000\n"
				   "committer C O Mitter <c@example.com> 1796553487 +0000\n";
	static const char sig[] =
	    "gpgsig -----BEGIN SSH SIGNATURE-----\n"
	    " U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgA6P1VsmmJMrzAZCO2akxJdnjn9\n"
	    " +Jlylh21EXE1supZoAAAADZ2l0AAAAAAAAAAZzaGE1MTIAAABTAAAAC3NzaC1lZDI1NTE5\n"
	    " AAAAQDxELAD0bVbczUYwbjj3ZHv6M/826nj011vUvkVkRH3xGTOvHwFSDoFPQOceMLby4g\n"
	    " 7fWy4PUznXGp2piVgQEgM=\n"
	    " -----END SSH SIGNATURE-----\n";
	static const char msg[] = "\nb1 3: small change\n\nGenerated by bench/gen/corpus.\n";
	char commit[1024], other[1024];
	unsigned char z[1100], want[1100];
	size_t zlen, zwhole, from, to;
	rq_odb_pack_encoder *enc = rq_odb_pack_encoder_new();

	(void)state;
	assert_non_null(enc);
	snprintf(commit, sizeof(commit), "%s%s%s", head, sig, msg);
	commit_entry(enc, commit, z, &zlen);
	from = strlen(head) + strlen("gpgsig -----BEGIN SSH SIGNATURE-----\n");
	to = strlen(head) + strlen(sig) - strlen(" -----END SSH SIGNATURE-----\n");
	assert_int_equal(
	    rq_deflate_small_span((const unsigned char *)commit, strlen(commit), from, to, want),
	    zlen);
	assert_memory_equal(z, want, zlen);
	/* not the stream a search throughout makes */
	zwhole = rq_deflate_small((const unsigned char *)commit, strlen(commit), want);
	assert_true(zwhole != zlen || memcmp(z, want, zlen));
	/* gpgsig-sha256 too */
	snprintf(commit, sizeof(commit), "%sgpgsig-sha256%s%s", head, sig + 6, msg);
	commit_entry(enc, commit, z, &zlen);
	assert_int_equal(rq_deflate_small_span((const unsigned char *)commit, strlen(commit),
					       from + 7, to + 7, want),
			 zlen);
	assert_memory_equal(z, want, zlen);
	/* no continuation lines, or a signature in the message only: whole */
	snprintf(other, sizeof(other), "%sgpgsig x\n%s", head, msg);
	snprintf(commit, sizeof(commit), "%s%s%s", head, msg, sig);
	for (int k = 0; k < 2; k++) {
		const char *c = k ? commit : other;
		commit_entry(enc, c, z, &zlen);
		assert_int_equal(rq_deflate_small((const unsigned char *)c, strlen(c), want), zlen);
		assert_memory_equal(z, want, zlen);
	}
	/* no header end: the commit still round-trips */
	commit_entry(enc, "tree x\ngpgsig a\n b\n c", z, &zlen);
	rq_odb_pack_encoder_free(enc);
}

/*
 * rq_odb_mem_write: an object the repository has in a pack is not written
 * again (its pack is freshened); one it has only as a loose file is not
 * looked for (no system call per new object) and goes into the replay's
 * pack, which does no harm; one the replay wrote already is not stored twice.
 */
/* The compression level follows git's config: pack.compression, then
 * core.compression, else zlib's default (a value out of range too). */
static int level_of(tu_repo *r)
{
	git_repository *repo = NULL;
	int level;

	assert_int_equal(git_repository_open(&repo, r->path), 0);
	level = rq_odb_pack_compression_level(repo);
	git_repository_free(repo);
	return level;
}

static void test_compression_level(void **state)
{
	tu_repo *r = *state;

	assert_int_equal(level_of(r), -1);
	tu_git(r, "git config core.compression 3");
	assert_int_equal(level_of(r), 3);
	tu_git(r, "git config pack.compression 0");
	assert_int_equal(level_of(r), 0);
	tu_git(r, "git config pack.compression 42");
	assert_int_equal(level_of(r), -1);
}

static void test_odb_write_existing(void **state)
{
	tu_repo *r = *state;
	git_repository *repo = tu_repo_open(r);
	rq_odb_tmpdir *od = NULL;
	rq_odb_tmpdir_stats stats;
	git_odb *odb;
	git_oid id;
	char *loose;

	/* one packed blob, one loose blob */
	tu_git(r, "git repack -adq && echo packed | git hash-object -w --stdin | "
		  "git pack-objects -q \"$(git rev-parse --git-path objects/pack)/pack\" && "
		  "git prune-packed && echo loose | git hash-object -w --stdin");
	loose = tu_capture(r, "git count-objects | cut -d' ' -f1");
	assert_non_null(loose);
	assert_string_equal(loose, "1");
	free(loose);
	assert_int_equal(rq_odb_tmpdir_open(&od, repo, NULL, NULL), 0);
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	assert_int_equal(tu_mem_write(&id, odb, "packed\n", 7, GIT_OBJECT_BLOB), 0);
	assert_int_equal(rq_odb_tmpdir_mark(od), 0);
	assert_int_equal(tu_mem_write(&id, odb, "loose\n", 6, GIT_OBJECT_BLOB), 0);
	assert_int_equal(rq_odb_tmpdir_mark(od), 1);
	assert_int_equal(tu_mem_write(&id, odb, "loose\n", 6, GIT_OBJECT_BLOB), 0);
	assert_int_equal(tu_mem_write(&id, odb, "new\n", 4, GIT_OBJECT_BLOB), 0);
	assert_int_equal(rq_odb_tmpdir_mark(od), 2);
	git_odb_free(odb);
	assert_int_equal(rq_odb_tmpdir_finish(od, &stats, NULL), 0);
	rq_odb_tmpdir_free(od);
	assert_int_equal(stats.objects, 2);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>/dev/null"), 0);
	assert_int_equal(tu_run(r,
				"echo loose | git hash-object --stdin | git cat-file --batch-check "
				"| grep -q blob"),
			 0);
}

/* Objects saved from one store load into another; a damaged or truncated
 * file is refused with an error, never a crash. */
static void test_parts(void **state)
{
	tu_repo *r = *state;
	git_odb_backend *a, *b;
	rq_odb_pack_encoder *enc = rq_odb_pack_encoder_new();
	rq_error err;
	git_oid ids[20];
	char path[PATH_MAX], cmd[2 * PATH_MAX];

	assert_non_null(enc);
	assert_int_equal(rq_odb_mem_new(&a), 0);
	assert_int_equal(rq_odb_mem_new(&b), 0);
	for (int i = 0; i < 20; i++) {
		char c[64];
		int n = snprintf(c, sizeof(c), "object number %d\n", i);
		assert_int_equal(git_odb_hash(&ids[i], c, (size_t)n, GIT_OBJECT_BLOB), 0);
		assert_int_equal(a->write(a, &ids[i], c, (size_t)n, GIT_OBJECT_BLOB), 0);
	}
	assert_int_equal(rq_odb_mem_count(a), 20);
	/* a duplicate write is a no-op */
	assert_int_equal(a->write(a, &ids[3], "object number 3\n", 16, GIT_OBJECT_BLOB), 0);
	assert_int_equal(rq_odb_mem_count(a), 20);
	assert_int_equal(rq_odb_mem_encode(a, enc, 5), 0);

	snprintf(path, sizeof(path), "%.3000s/part", r->root);
	rq_error_clear(&err);
	assert_int_equal(rq_odb_part_save(a, 5, path, &err), 0);
	assert_int_equal(rq_odb_part_load(b, path, &err), 0);
	assert_int_equal(rq_odb_mem_count(b), 15);
	for (int i = 0; i < 20; i++) {
		void *data = NULL;
		size_t len = 0;
		git_object_t type;
		int rc = b->read(&data, &len, &type, b, &ids[i]);
		if (i < 5) {
			assert_int_equal(rc, GIT_ENOTFOUND);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(type, GIT_OBJECT_BLOB);
		{
			char want[64];
			int n = snprintf(want, sizeof(want), "object number %d\n", i);
			assert_int_equal(len, (size_t)n);
			assert_memory_equal(data, want, len);
		}
		git_odb_backend_data_free(b, data);
		/* loaded with their encoded form */
		{
			rq_odb_pack_entry e;
			assert_int_equal(rq_odb_mem_entry(b, (size_t)i - 5, &e), 0);
			rq_oid want_id;
			rq_oid_from_git(&want_id, &ids[i]);
			assert_true(rq_oid_eq(&e.id, &want_id));
		}
	}
	/* loading the same file again adds nothing */
	assert_int_equal(rq_odb_part_load(b, path, &err), 0);
	assert_int_equal(rq_odb_mem_count(b), 15);

	/* one byte too many: refused */
	assert_int_equal(
	    tu_run(NULL, "cp '%s' '%s.long' && printf x >> '%s.long'", path, path, path), 0);
	{
		git_odb_backend *c;
		char longer[PATH_MAX + 8];
		snprintf(longer, sizeof(longer), "%s.long", path);
		assert_int_equal(rq_odb_mem_new(&c), 0);
		rq_error_clear(&err);
		assert_int_equal(rq_odb_part_load(c, longer, &err), -1);
		assert_int_equal(err.code, RQ_E_INTERNAL);
		assert_non_null(strstr(err.msg, "too long"));
		c->free(c);
	}
	/* a child of another object format: its width byte says 32 */
	assert_int_equal(
	    tu_run(NULL, "printf '\\040' | dd of='%s' bs=1 seek=16 conv=notrunc 2>/dev/null", path),
	    0);
	{
		git_odb_backend *c;
		assert_int_equal(rq_odb_mem_new(&c), 0);
		rq_error_clear(&err);
		assert_int_equal(rq_odb_part_load(c, path, &err), -1);
		assert_non_null(strstr(err.msg, "ids of 32 bytes, not 20"));
		assert_int_equal(rq_odb_mem_count(c), 0);
		c->free(c);
	}
	assert_int_equal(
	    tu_run(NULL, "printf '\\024' | dd of='%s' bs=1 seek=16 conv=notrunc 2>/dev/null", path),
	    0);
	/* damaged: a byte of the first object's encoded form flipped (the
	 * forms follow the 17-byte head and 15 records of 89 bytes) */
	snprintf(cmd, sizeof(cmd),
		 "f='%s'; printf '\\377' | dd of=\"$f\" bs=1 "
		 "seek=$((17 + 15 * 89 + 4)) conv=notrunc 2>/dev/null",
		 path);
	assert_int_equal(tu_run(NULL, "%s", cmd), 0);
	{
		git_odb_backend *c;
		assert_int_equal(rq_odb_mem_new(&c), 0);
		rq_error_clear(&err);
		assert_int_equal(rq_odb_part_load(c, path, &err), -1);
		assert_int_equal(err.code, RQ_E_INTERNAL);
		assert_non_null(strstr(err.msg, "damaged"));
		c->free(c);
	}
	/* truncated in the middle of a record */
	assert_int_equal(tu_run(NULL, "truncate -s 100 '%s'", path), 0);
	{
		git_odb_backend *c;
		assert_int_equal(rq_odb_mem_new(&c), 0);
		assert_int_equal(rq_odb_part_load(c, path, &err), -1);
		c->free(c);
	}
	/* not a part file at all; a missing one */
	assert_int_equal(tu_run(NULL, "echo hello > '%s'", path), 0);
	assert_int_equal(rq_odb_part_load(b, path, &err), -1);
	assert_non_null(strstr(err.msg, "not an object part file"));
	assert_int_equal(rq_odb_part_load(b, "/nonexistent/part", &err), -1);
	assert_int_equal(err.code, RQ_E_IO);
	assert_int_equal(rq_odb_mem_count(b), 15);

	a->free(a);
	b->free(b);
	rq_odb_pack_encoder_free(enc);
}

/* Abbreviated ids resolve through the store; two matches are ambiguous. */
static void test_prefix(void **state)
{
	git_odb_backend *m;
	git_oid ids[300], out, prefix;
	void *data;
	size_t len;
	git_object_t type;
	int found_pair = 0;

	(void)state;
	assert_int_equal(rq_odb_mem_new(&m), 0);
	for (int i = 0; i < 300; i++) {
		char c[32];
		int n = snprintf(c, sizeof(c), "p%d", i);
		assert_int_equal(git_odb_hash(&ids[i], c, (size_t)n, GIT_OBJECT_BLOB), 0);
		assert_int_equal(m->write(m, &ids[i], c, (size_t)n, GIT_OBJECT_BLOB), 0);
	}
	/* a unique 12-digit prefix */
	memset(&prefix, 0, sizeof(prefix));
	memcpy(prefix.id, ids[17].id, 6);
	assert_int_equal(m->read_prefix(&out, &data, &len, &type, m, &prefix, 12), 0);
	assert_true(git_oid_equal(&out, &ids[17]));
	git_odb_backend_data_free(m, data);
	assert_int_equal(m->exists_prefix(&out, m, &prefix, 12), 0);
	/* one hex digit is shared by many of 300 ids */
	memset(&prefix, 0, sizeof(prefix));
	prefix.id[0] = ids[0].id[0] & 0xf0;
	for (int i = 1; i < 300; i++)
		if ((ids[i].id[0] & 0xf0) == prefix.id[0])
			found_pair = 1;
	assert_true(found_pair);
	assert_int_equal(m->exists_prefix(&out, m, &prefix, 1), GIT_EAMBIGUOUS);
	/* nothing starts with this */
	memset(&prefix, 0, sizeof(prefix));
	memcpy(prefix.id, "\x12\x34\x56\x78\x9a\xbc\xde\xf0\x12\x34", 10);
	assert_int_equal(m->exists_prefix(&out, m, &prefix, 20), GIT_ENOTFOUND);
	assert_int_equal(m->exists(m, &ids[299]), 1);
	m->free(m);
}

/* One blob as a pack in dir: its name. */
static void write_one(rq_odb_pack_encoder *enc, const char *dir, const char *text, int ok,
		      char name[RQ_ODB_PACK_NAME_MAX])
{
	rq_odb_pack_entry e;
	unsigned char *data = NULL;
	uint64_t bytes;
	rq_error err;
	git_oid id;

	assert_int_equal(git_odb_hash(&id, text, strlen(text), GIT_OBJECT_BLOB), 0);
	rq_oid_from_git(&e.id, &id);
	assert_int_equal(
	    rq_odb_pack_encode(enc, GIT_OBJECT_BLOB, text, strlen(text), &data, &e.len, &e.crc), 0);
	e.data = data;
	rq_error_clear(&err);
	assert_int_equal(rq_odb_packwrite(dir, "tmp_test-", NULL, &e, 1, name, &bytes, &err),
			 ok ? 0 : -1);
	if (!ok)
		assert_non_null(strstr(err.msg, "cannot rename"));
	free(data);
}

/* The index cannot be renamed into place: the pack renamed before it goes
 * too, unless a pack of that name was there already (the same objects,
 * written before), which stays. No temporary file is left either way. */
static void test_write_index_rename_fails(void **state)
{
	tu_repo *r = *state;
	rq_odb_pack_encoder *enc = rq_odb_pack_encoder_new_level(1);
	char dir[PATH_MAX], name[RQ_ODB_PACK_NAME_MAX], again[RQ_ODB_PACK_NAME_MAX],
	    p[PATH_MAX + 128];

	assert_non_null(enc);
	snprintf(dir, sizeof(dir), "%.3000s/packs", r->root);
	assert_int_equal(mkdir(dir, 0755), 0);
	write_one(enc, dir, "one blob\n", 1, name);
	assert_int_equal(tu_count_entries(dir, "pack-", ""), 2);
	/* the index's name taken by a directory */
	snprintf(p, sizeof(p), "%s/%s.idx", dir, name);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/%s.idx/x", dir, name);
	assert_int_equal(mkdir(p, 0755), 0);
	/* the pack was there: it stays */
	write_one(enc, dir, "one blob\n", 0, again);
	snprintf(p, sizeof(p), "%s/%s.pack", dir, name);
	assert_true(tu_exists(p));
	/* it was not: it goes */
	assert_int_equal(unlink(p), 0);
	write_one(enc, dir, "one blob\n", 0, again);
	assert_false(tu_exists(p));
	assert_int_equal(tu_count_entries(dir, "tmp_", ""), 0);
	assert_int_equal(tu_count_entries(dir, "pack-", ".pack"), 0);
	rq_odb_pack_encoder_free(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_sha1, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pack_deltas, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_parts, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_parts_deltas, setup, teardown),
	    cmocka_unit_test(test_decode_bad),
	    cmocka_unit_test(test_blob_delta),
	    cmocka_unit_test(test_signed_commit),
	    cmocka_unit_test_setup_teardown(test_packread, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_odb_write_existing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_compression_level, setup, teardown),
	    cmocka_unit_test(test_prefix),
	    cmocka_unit_test_setup_teardown(test_write_index_rename_fails, setup, teardown),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
