/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core/odb in SHA-256 repositories (issue 42): packs (with REF_DELTA
 * entries), their indexes, a multi-pack-index and loose objects made by
 * upstream git 2.55 in a repository of `git init --object-format=sha256`
 * are read and checked with 32-byte ids; a pack written by replayq is
 * named by its 64 hex digits and its index is byte for byte what `git
 * index-pack` makes of it, and git's verify-pack and fsck --strict take
 * it; an index of the other format (SHA-1 in a SHA-256 repository and the
 * reverse) is refused with git's words, as git refuses it.
 *
 * Upstream git: RQ_UPSTREAM_GIT, or /work/shared/upstream-git/git; without
 * it every test is skipped with a notice.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rq_hash.h"
#include "rq_odb.h"
#include "rq_odb_loose.h"
#include "rq_odb_mem.h"
#include "rq_odb_pack.h"
#include "rq_odb_packread.h"
#include "rq_odb_packset.h"
#include "rq_odb_packwrite.h"
#include "rq_odb_read.h"
#include "rq_odb_tmpdir.h"
#include "rq_oid.h"

static char g_up[PATH_MAX]; /* upstream git, "" when absent */
static tu_repo *g_s256;	    /* packed history, a loose commit on top */
static tu_repo *g_s1;	    /* a SHA-1 repository, packed */
static char g_pack256[PATH_MAX + 32], g_pack1[PATH_MAX + 32];

/* One object as git lists it. */
typedef struct obj {
	rq_oid id;
	git_object_t type;
	size_t size;
} obj;

/* A history whose blobs are deltas of each other, packed with REF_DELTA
 * entries (repack.useDeltaBaseOffset off), then one commit left loose. */
static void make_history(tu_repo *r, const char *format)
{
	tu_git(r,
	       "rm -rf .git && '%s' init -q --template= -b main --object-format=%s . && "
	       "'%s' config repack.usedeltabaseoffset false && '%s' config maintenance.auto false",
	       g_up, format, g_up, g_up);
	for (int i = 0; i < 6; i++)
		tu_git(r,
		       "seq 1 %d | sed 's/^/line of some length /' >f.txt && echo %d >g.txt && "
		       "'%s' add -A && '%s' commit -q -m c%d",
		       300 + i * 7, i, g_up, g_up, i);
	tu_git(r, "'%s' repack -adfq --window=10 --depth=10", g_up);
}

static int group_setup(void **state)
{
	const char *cand[2] = {getenv("RQ_UPSTREAM_GIT"), "/work/shared/upstream-git/git"};
	int rc = tu_group_setup(state);

	g_up[0] = '\0';
	for (int i = 0; i < 2 && !g_up[0]; i++)
		if (cand[i] && *cand[i] && realpath(cand[i], g_up) && access(g_up, X_OK))
			g_up[0] = '\0';
	if (rc || !g_up[0]) {
		fprintf(stderr, "# notice: upstream git not found (set RQ_UPSTREAM_GIT): "
				"the SHA-256 object tests are skipped\n");
		return rc;
	}
	g_s256 = tu_repo_new(0);
	make_history(g_s256, "sha256");
	tu_git(g_s256, "echo loose >h.txt && '%s' add -A && '%s' commit -q -m loose", g_up, g_up);
	g_s1 = tu_repo_new(0);
	make_history(g_s1, "sha1");
	snprintf(g_pack256, sizeof(g_pack256), "%s/objects/pack", g_s256->gitdir);
	snprintf(g_pack1, sizeof(g_pack1), "%s/objects/pack", g_s1->gitdir);
	return 0;
}

static int group_teardown(void **state)
{
	tu_repo_free(g_s256);
	tu_repo_free(g_s1);
	return tu_group_teardown(state);
}

static void need_upstream(void)
{
	if (!g_up[0])
		skip();
}

static void *test_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

/* Every object of r as `git cat-file --batch-all-objects` lists it, only
 * the packed ones (packed 1) or the loose ones (0). *n objects. */
static obj *list_objects(tu_repo *r, int packed, size_t *n)
{
	char *out = tu_capture(
	    r,
	    "cat %s/*.idx | '%s' show-index | cut -d' ' -f2 >%s/packed.txt && "
	    "'%s' cat-file --batch-all-objects --batch-check='%%(objectname) %%(objecttype) "
	    "%%(objectsize)' | while read id t s; do if grep -qx $id %s/packed.txt; then p=1; "
	    "else p=0; fi; if [ $p = %d ]; then echo $id $t $s; fi; done",
	    g_pack256, g_up, r->root, g_up, r->root, packed);
	obj *v = calloc(256, sizeof(*v));
	char *line, *save = NULL;

	assert_non_null(out);
	assert_non_null(v);
	*n = 0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char type[16];
		assert_true(*n < 256);
		assert_int_equal(rq_oid_parse(&v[*n].id, &rq_oid_sha256, line, 64), 0);
		assert_int_equal(sscanf(line + 65, "%15s %zu", type, &v[*n].size), 2);
		v[*n].type = git_object_string2type(type);
		(*n)++;
	}
	free(out);
	return v;
}

/* The content git gives for id. */
static char *git_content(tu_repo *r, const obj *o, size_t *len)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];

	return tu_capture_raw(r, len, "'%s' cat-file %s %s", g_up, git_object_type2string(o->type),
			      rq_oid_fmt(hex, &o->id, &rq_oid_sha256));
}

/* Every packed object reads as git reads it: type, size, content (each
 * checked against its SHA-256 id by the reader too), REF_DELTA bases of
 * 32 bytes included; an id no pack holds is not found. */
static void test_read_packs(void **state)
{
	rq_odb_packread *pr;
	size_t n, deltas = 0;
	obj *v;
	rq_oid missing;
	char *vp;

	(void)state;
	need_upstream();
	v = list_objects(g_s256, 1, &n);
	assert_true(n >= 18);
	vp = tu_capture(g_s256, "'%s' verify-pack -v %s/*.idx | awk 'NF == 7' | wc -l", g_up,
			g_pack256);
	assert_non_null(vp);
	deltas = (size_t)atoi(vp);
	free(vp);
	assert_true(deltas >= 3); /* the fixture has REF_DELTA entries */
	assert_non_null(pr = rq_odb_packread_open_set(g_pack256, NULL, &rq_oid_sha256, 0));
	for (size_t k = 0; k < n; k++) {
		void *data = NULL;
		size_t len = 0, hlen = 0, glen = 0;
		git_object_t type = GIT_OBJECT_INVALID, htype = GIT_OBJECT_INVALID;
		char *want = git_content(g_s256, &v[k], &glen);
		assert_int_equal(
		    rq_odb_packread_read(pr, &v[k].id, test_alloc, NULL, &data, &len, &type), 1);
		assert_int_equal(rq_odb_packread_read_header(pr, &v[k].id, &hlen, &htype), 1);
		assert_int_equal(type, v[k].type);
		assert_int_equal(htype, v[k].type);
		assert_int_equal(len, v[k].size);
		assert_int_equal(hlen, v[k].size);
		assert_int_equal(glen, len);
		assert_memory_equal(data, want, len);
		assert_int_equal(rq_odb_packread_has(pr, &v[k].id), 1);
		free(data);
		free(want);
	}
	memset(&missing, 0xab, sizeof(missing));
	assert_int_equal(rq_odb_packread_has(pr, &missing), 0);
	assert_int_equal(rq_odb_packread_read(pr, &missing, test_alloc, NULL, NULL, NULL, NULL), 0);
	rq_odb_packread_free(pr);
	free(v);
}

/* git's multi-pack-index of a SHA-256 repository (hash version 2) answers
 * for its packs; a SHA-1 reader does not use it. */
static void test_midx(void **state)
{
	tu_repo *r;
	rq_odb_packset *ps;
	rq_odb_packset_stats st;
	char dir[PATH_MAX + 32];
	size_t n;
	obj *v;

	(void)state;
	need_upstream();
	r = tu_repo_copy(g_s256);
	tu_git(r, "'%s' multi-pack-index write", g_up);
	snprintf(dir, sizeof(dir), "%s/objects/pack", r->gitdir);
	v = list_objects(g_s256, 1, &n);
	assert_non_null(ps = rq_odb_packset_open(dir, NULL, &rq_oid_sha256, 0));
	for (size_t k = 0; k < n; k++)
		assert_int_equal(rq_odb_packset_has(ps, v[k].id.id), 1);
	rq_odb_packset_stats_get(ps, &st);
	assert_int_equal(st.midx, 1);
	assert_int_equal(st.idx_maps, 0); /* the midx answered */
	rq_odb_packset_free(ps);
	assert_non_null(ps = rq_odb_packset_open(dir, NULL, &rq_oid_sha1, 0));
	rq_odb_packset_stats_get(ps, &st);
	assert_int_equal(st.midx, 0);
	rq_odb_packset_free(ps);
	free(v);
	tu_repo_free(r);
}

/* Loose objects: files of 2 + 62 digits, read and checked with SHA-256;
 * an abbreviation resolves; a file holding another object is corrupt; a
 * SHA-1 reader finds none of them. */
static void test_loose(void **state)
{
	git_odb_backend *b, *b1;
	char objects[PATH_MAX + 16], hex[RQ_OID_MAX_HEXSZ + 1], from[PATH_MAX * 2],
	    to[PATH_MAX * 2];
	rq_oid prefix, full;
	size_t n, len, glen;
	git_object_t type;
	void *data;
	obj *v;
	tu_repo *r;

	(void)state;
	need_upstream();
	v = list_objects(g_s256, 0, &n);
	assert_int_equal(n, 3); /* the last commit, its tree, its new blob */
	snprintf(objects, sizeof(objects), "%s/objects", g_s256->gitdir);
	assert_int_equal(rq_odb_loose_open(&b, objects, NULL, &rq_oid_sha256), 0);
	assert_int_equal(rq_odb_loose_open(&b1, objects, NULL, &rq_oid_sha1), 0);
	for (size_t k = 0; k < n; k++) {
		char *want = git_content(g_s256, &v[k], &glen);
		assert_int_equal(rq_odb_loose_read(b, &v[k].id, &data, &len, &type), 0);
		assert_int_equal(type, v[k].type);
		assert_int_equal(len, glen);
		assert_memory_equal(data, want, len);
		git_odb_backend_data_free(b, data);
		free(want);
		assert_int_equal(rq_odb_loose_exists(b, &v[k].id), 1);
		rq_oid_fmt(hex, &v[k].id, &rq_oid_sha256);
		assert_int_equal(rq_oid_parse_prefix(&prefix, &rq_oid_sha256, hex, 10), 0);
		assert_int_equal(rq_odb_loose_find_prefix(b, &prefix, 10, &full), 0);
		assert_true(rq_oid_eq(&full, &v[k].id));
		assert_int_equal(rq_odb_loose_find_prefix(b1, &prefix, 10, &full), GIT_ENOTFOUND);
	}
	b->free(b);
	b1->free(b1);
	/* the first object's file holding the second's content */
	r = tu_repo_copy(g_s256);
	snprintf(objects, sizeof(objects), "%s/objects", r->gitdir);
	rq_oid_fmt(hex, &v[1].id, &rq_oid_sha256);
	snprintf(from, sizeof(from), "%s/%.2s/%s", objects, hex, hex + 2);
	rq_oid_fmt(hex, &v[0].id, &rq_oid_sha256);
	snprintf(to, sizeof(to), "%s/%.2s/%s", objects, hex, hex + 2);
	assert_int_equal(tu_run(r, "chmod u+w '%s' && cp '%s' '%s'", to, from, to), 0);
	assert_int_equal(rq_odb_loose_open(&b, objects, "OBJ", &rq_oid_sha256), 0);
	assert_int_equal(rq_odb_loose_read(b, &v[0].id, &data, &len, &type), GIT_ERROR);
	assert_non_null(strstr(git_error_last()->message, hex));
	assert_non_null(strstr(git_error_last()->message, "is corrupt"));
	b->free(b);
	tu_repo_free(r);
	free(v);
}

/* The second large blob of v (a version of f.txt) as a REF_DELTA against
 * the first: its entry e[k] replaced, the base's 32-byte id in it. */
static void delta_one(rq_odb_pack_encoder *enc, const obj *v, size_t n, rq_odb_pack_entry *e,
		      unsigned char **bufs)
{
	size_t b = SIZE_MAX, t = SIZE_MAX, blen, tlen;
	char *base, *target;
	rq_odb_pack_entry_info info;

	for (size_t k = 0; k < n && t == SIZE_MAX; k++)
		if (v[k].type == GIT_OBJECT_BLOB && v[k].size > 4096)
			*(b == SIZE_MAX ? &b : &t) = k;
	assert_true(t != SIZE_MAX);
	base = git_content(g_s256, &v[b], &blen);
	target = git_content(g_s256, &v[t], &tlen);
	free(bufs[t]);
	bufs[t] = NULL;
	rq_odb_pack_encoder_set_algo(enc, &rq_oid_sha256);
	assert_int_equal(rq_odb_pack_encode_blob_delta(enc, &v[b].id, base, blen, target, tlen,
						       &bufs[t], &e[t].len, &e[t].crc),
			 1);
	e[t].data = bufs[t];
	assert_int_equal(rq_odb_pack_entry_parse(e[t].data, e[t].len, 32, &info), 0);
	assert_int_equal(info.code, 7);
	assert_true(rq_oid_eq(&info.base, &v[b].id));
	free(base);
	free(target);
}

/* The objects of g_s256 as whole entries of a pack in dir, written by
 * rq_odb_packwrite in SHA-256: its name. */
static void write_pack(const char *dir, char name[RQ_ODB_PACK_NAME_MAX])
{
	rq_odb_pack_encoder *enc = rq_odb_pack_encoder_new();
	rq_odb_pack_entry *e;
	unsigned char **bufs;
	size_t n, np, nl;
	obj *packed = list_objects(g_s256, 1, &np), *loose = list_objects(g_s256, 0, &nl);
	rq_error err;
	uint64_t bytes;

	n = np + nl;
	assert_non_null(e = calloc(n, sizeof(*e)));
	assert_non_null(bufs = calloc(n, sizeof(*bufs)));
	for (size_t k = 0; k < n; k++) {
		const obj *o = k < np ? &packed[k] : &loose[k - np];
		size_t len;
		char *content = git_content(g_s256, o, &len);
		rq_oid id;
		assert_int_equal(rq_hash_object(&rq_oid_sha256, o->type, content, len, &id), 0);
		assert_true(rq_oid_eq(&id, &o->id));
		e[k].id = id;
		assert_int_equal(
		    rq_odb_pack_encode(enc, o->type, content, len, &bufs[k], &e[k].len, &e[k].crc),
		    0);
		e[k].data = bufs[k];
		free(content);
	}
	delta_one(enc, packed, np, e, bufs);
	rq_error_clear(&err);
	assert_int_equal(rq_odb_packwrite(dir, NULL, &rq_oid_sha256, e, n, name, &bytes, &err), 0);
	for (size_t k = 0; k < n; k++)
		free(bufs[k]);
	free(bufs);
	free(e);
	free(packed);
	free(loose);
	rq_odb_pack_encoder_free(enc);
}

/* A SHA-256 pack written by replayq (one entry a REF_DELTA with a 32-byte
 * base): named by 64 hex digits, its index
 * what `git index-pack` writes for it, byte for byte; verify-pack and
 * fsck --strict (in a repository holding only it) accept it. */
static void test_write_pack(void **state)
{
	char name[RQ_ODB_PACK_NAME_MAX], dir[PATH_MAX + 32], *out, *tip;
	tu_repo *r;

	(void)state;
	need_upstream();
	r = tu_repo_new(0);
	tu_git(r, "rm -rf .git && '%s' init -q --template= -b main --object-format=sha256 .", g_up);
	snprintf(dir, sizeof(dir), "%s/objects/pack", r->gitdir);
	write_pack(dir, name);
	assert_int_equal(strlen(name), 5 + 64);
	assert_int_equal(strncmp(name, "pack-", 5), 0);
	out = tu_capture(r, "'%s' index-pack -o %s/check.idx %s/%s.pack", g_up, r->root, dir, name);
	assert_non_null(out);
	assert_string_equal(out, name + 5);
	free(out);
	assert_int_equal(tu_run(r, "cmp %s/check.idx %s/%s.idx", r->root, dir, name), 0);
	assert_int_equal(tu_run(r, "'%s' verify-pack %s/%s.idx", g_up, dir, name), 0);
	tip = tu_capture(g_s256, "'%s' rev-parse HEAD", g_up);
	assert_non_null(tip);
	/* fsck runs `git refs verify`: upstream's git as its exec path */
	tu_git(r,
	       "'%s' update-ref refs/heads/main %s && mkdir -p %s/bin && ln -sf '%s' %s/bin/git && "
	       "GIT_EXEC_PATH=%s/bin '%s' fsck --strict --no-dangling",
	       g_up, tip, r->root, g_up, r->root, r->root, g_up);
	free(tip);
	tu_repo_free(r);
}

/* Read one id through a reader of that format over dir: the pack error. */
static void refused(const char *dir, const rq_oid_algo *algo, const char *want)
{
	rq_odb_packread *pr = rq_odb_packread_open_set(dir, NULL, algo, 0);
	rq_oid id;

	assert_non_null(pr);
	memset(&id, 0x11, sizeof(id));
	assert_int_equal(rq_odb_packread_read(pr, &id, test_alloc, NULL, NULL, NULL, NULL),
			 RQ_ODB_PACKREAD_BADPACK);
	assert_string_equal(rq_odb_packread_error(pr), want);
	rq_odb_packread_free(pr);
}

/* An index of the other object format: "wrong index v2 file size in <p>",
 * what git says of it (asked here too), both ways. */
static void test_other_format_refused(void **state)
{
	char *idx1, *idx256, want[PATH_MAX * 2], *err;
	tu_repo *r;

	(void)state;
	need_upstream();
	idx1 = tu_capture(g_s1, "cd %s && ls pack-*.idx", g_pack1);
	idx256 = tu_capture(g_s256, "cd %s && ls pack-*.idx", g_pack256);
	assert_non_null(idx1);
	assert_non_null(idx256);
	snprintf(want, sizeof(want), "wrong index v2 file size in %s/%s", g_pack1, idx1);
	refused(g_pack1, &rq_oid_sha256, want);
	snprintf(want, sizeof(want), "wrong index v2 file size in %s/%s", g_pack256, idx256);
	refused(g_pack256, &rq_oid_sha1, want);
	/* git's own words for the SHA-1 pack in a SHA-256 repository */
	r = tu_repo_copy(g_s256);
	err = tu_capture(
	    r,
	    "cp %s/%.45s.* .git/objects/pack/ && '%s' verify-pack .git/objects/pack/%s 2>&1; true",
	    g_pack1, idx1, g_up, idx1);
	assert_non_null(err);
	snprintf(want, sizeof(want), "wrong index v2 file size in .git/objects/pack/%s", idx1);
	assert_non_null(strstr(err, want));
	free(err);
	tu_repo_free(r);
	free(idx1);
	free(idx256);
}

/* ---- the memory store of a replay in SHA-256 (rq_odb_mem, rq_odb_tmpdir) ---- */

/* A tree of five files f0..f4: blob ids[i] each (raw entries, 32 bytes). */
static size_t tree_of(unsigned char *buf, const rq_oid *const ids[5])
{
	size_t n = 0;

	for (int i = 0; i < 5; i++) {
		n += (size_t)sprintf((char *)buf + n, "100644 file-%d.txt", i) + 1;
		memcpy(buf + n, ids[i]->id, 32);
		n += 32;
	}
	return n;
}

/* A 24 KiB text, version v (a line changed per version). */
static char *big_text(int v, size_t *len)
{
	char *t = malloc(30000);
	size_t n = 0;

	assert_non_null(t);
	for (int i = 0; i < 800; i++)
		n += (size_t)sprintf(t + n, "line %d of a large file%s\n", i,
				     i == 100 + v ? " (changed)" : "");
	*len = n;
	return t;
}

/* The objects one side writes: a small blob, a large blob as a new version
 * of `like` (borrowed from the packs, or the store's), two trees (the
 * second a delta of the first) and a commit on parent: ids[0..5). */
static void write_side(git_odb *odb, int side, const rq_oid *like, const char *parent,
		       rq_oid ids[5])
{
	unsigned char tree[512];
	const rq_oid *ent[5];
	char small[64], msg[512], hex[RQ_OID_MAX_HEXSZ + 1];
	size_t len, n;
	char *big = big_text(side + 1, &len);

	assert_int_equal(
	    rq_odb_mem_write_like(&ids[0], odb, big, len, GIT_OBJECT_BLOB, like, NULL, 0), 0);
	free(big);
	n = (size_t)sprintf(small, "a small file of side %d\n", side);
	assert_int_equal(rq_odb_mem_write(&ids[1], odb, small, n, GIT_OBJECT_BLOB), 0);
	for (int i = 0; i < 5; i++)
		ent[i] = i == 2 ? &ids[0] : &ids[1];
	n = tree_of(tree, ent);
	assert_int_equal(rq_odb_mem_write(&ids[2], odb, tree, n, GIT_OBJECT_TREE), 0);
	ent[4] = &ids[0];
	n = tree_of(tree, ent);
	assert_int_equal(rq_odb_mem_write(&ids[3], odb, tree, n, GIT_OBJECT_TREE), 0);
	n = (size_t)snprintf(msg, sizeof(msg),
			     "tree %s\nparent %s\nauthor A <a@x> 1700000000 +0000\n"
			     "committer A <a@x> 1700000000 +0000\n\nside %d\n",
			     rq_oid_fmt(hex, &ids[3], &rq_oid_sha256), parent, side);
	assert_int_equal(rq_odb_mem_write(&ids[4], odb, msg, n, GIT_OBJECT_COMMIT), 0);
}

/* Every object of ids reads back through rq_odb_read from odb, its
 * content hashing to its id; with r, as `git cat-file` gives it too. */
static void read_back(git_odb *odb, const rq_oid *ids, size_t n, tu_repo *r)
{
	rq_odb_read *rd;

	assert_int_equal(rq_odb_read_open(&rd, odb), 0);
	assert_ptr_equal(rq_odb_read_algo(rd), &rq_oid_sha256);
	for (size_t i = 0; i < n; i++) {
		rq_odb_read_obj o;
		rq_oid again;
		char hex[RQ_OID_MAX_HEXSZ + 1], *git;
		size_t len;
		assert_int_equal(rq_odb_read_object(rd, &ids[i], &o), 0);
		assert_int_equal(rq_hash_object(&rq_oid_sha256, o.type, o.data, o.len, &again), 0);
		assert_true(rq_oid_eq(&again, &ids[i]));
		if (r) {
			git = tu_capture_raw(r, &len, "'%s' cat-file %s %s", g_up,
					     git_object_type2string(o.type),
					     rq_oid_fmt(hex, &ids[i], &rq_oid_sha256));
			assert_non_null(git);
			assert_int_equal(len, o.len);
			assert_memory_equal(git, o.data, len);
			free(git);
		}
		rq_odb_read_obj_free(&o);
	}
	rq_odb_read_free(rd);
}

/* The new pack: `git index-pack` makes the same index of it, and
 * verify-pack takes it. */
static void check_pack(tu_repo *r, const char *name)
{
	char dir[PATH_MAX + 32], *out;

	assert_int_equal(strlen(name), 5 + 64);
	snprintf(dir, sizeof(dir), "%s/objects/pack", r->gitdir);
	out = tu_capture(r, "'%s' index-pack --object-format=sha256 -o %s/check.idx %s/%s.pack",
			 g_up, r->root, dir, name);
	assert_non_null(out);
	assert_string_equal(out, name + 5);
	free(out);
	assert_int_equal(tu_run(r, "cmp %s/check.idx %s/%s.idx", r->root, dir, name), 0);
	assert_int_equal(tu_run(r, "'%s' verify-pack %s/%s.idx", g_up, dir, name), 0);
}

/*
 * A replay's objects in a SHA-256 repository: the tmpdir's memory store
 * gives git's SHA-256 ids, a forked child's objects come over in a part
 * file (RQPART3 of width 32), everything reads back through rq_odb_read,
 * and the one pack (REF_DELTA bases of 32 bytes: a blob borrowed from the
 * packs, tree deltas, a blob delta against a loaded object) is what `git
 * index-pack` makes of it, and `git cat-file` gives the bytes written.
 */
static void test_memory_store(void **state)
{
	const char *ext[] = {"objectformat"};
	rq_odb_opts opts = {.algo = &rq_oid_sha256};
	rq_odb_tmpdir_stats st;
	rq_odb_tmpdir *od;
	git_odb *odb;
	rq_oid ids[10], packed;
	rq_error err;
	char *hex;
	int status;
	size_t mark;
	pid_t pid;
	tu_repo *r;

	(void)state;
	need_upstream();
	git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, ext, 1);
	r = tu_repo_new(0);
	tu_git(r,
	       "rm -rf .git && '%s' init -q --template= -b main --object-format=sha256 . && "
	       "awk 'BEGIN{for(i=0;i<800;i++) print \"line \" i \" of a large file\"}' >big && "
	       "'%s' add big && '%s' commit -q -m big && '%s' repack -adq",
	       g_up, g_up, g_up, g_up);
	hex = tu_capture(r, "'%s' rev-parse HEAD:big", g_up);
	assert_int_equal(rq_oid_parse(&packed, &rq_oid_sha256, hex, strlen(hex)), 0);
	free(hex);
	hex = tu_capture(r, "'%s' rev-parse HEAD", g_up);
	assert_int_equal(rq_odb_tmpdir_open(&od, tu_repo_open(r), &opts, &err), 0);
	assert_int_equal(rq_odb_tmpdir_make(od, &err), 0);
	assert_int_equal(git_repository_odb(&odb, tu_repo_open(r)), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) { /* a worker: its objects into part 0 */
		write_side(odb, 1, &packed, hex, ids);
		_exit(rq_odb_tmpdir_save_part(od, 0, 0, &err) == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(rq_odb_tmpdir_load_part(od, 0, &err), 0);
	mark = rq_odb_tmpdir_mark(od);
	assert_true(mark >= 5);
	/* the child's objects, held already: the same ids, nothing added */
	write_side(odb, 1, &packed, hex, ids);
	assert_int_equal(rq_odb_tmpdir_mark(od), mark);
	write_side(odb, 2, &ids[0], hex, ids + 5);
	assert_int_equal(rq_odb_tmpdir_mark(od), mark + 5);
	read_back(odb, ids, 10, NULL);
	git_odb_free(odb);
	assert_int_equal(rq_odb_tmpdir_finish(od, &st, &err), 0);
	rq_odb_tmpdir_free(od);
	check_pack(r, st.pack_name);
	/* the pack as replayq and git read it */
	assert_int_equal(rq_odb_new_at(&odb, tu_repo_open(r), NULL, &rq_oid_sha256, &err), 0);
	read_back(odb, ids, 10, r);
	git_odb_free(odb);
	free(hex);
	tu_repo_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_packs),
	    cmocka_unit_test(test_midx),
	    cmocka_unit_test(test_loose),
	    cmocka_unit_test(test_write_pack),
	    cmocka_unit_test(test_other_format_refused),
	    cmocka_unit_test(test_memory_store),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
