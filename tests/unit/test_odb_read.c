/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_read (issue 42): objects read from replayq's database with rq_oid
 * ids, in SHA-1 and SHA-256 repositories made by upstream git 2.55: every
 * object of packs (deltas, a fast-import pack) and loose objects as `git
 * cat-file --batch` gives it, headers, presence, abbreviations (unique,
 * ambiguous across a pack and the loose objects, missing, too short) as
 * git resolves them, damaged loose and packed objects, replace refs, the
 * memory store; in SHA-1 the same bytes and errors as git_odb_read; in
 * SHA-256 libgit2's callbacks refused by name (the tripwire).
 *
 * Upstream git: RQ_UPSTREAM_GIT, or /work/shared/upstream-git/git; without
 * it every test is skipped with a notice.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_odb.h"
#include "rq_odb_mem.h"
#include "rq_odb_read.h"
#include "rq_oid.h"
#include "rq_refdb.h"

static char g_up[PATH_MAX]; /* upstream git, "" when absent */

/* One object as git gives it. */
typedef struct obj {
	rq_oid id;
	git_object_t type;
	size_t size;
	const char *data; /* into the fixture's batch output */
} obj;

/* A repository of one format, its objects, its database. */
typedef struct fx {
	tu_repo *r;
	const rq_oid_algo *algo;
	char *batch; /* `git cat-file --batch-all-objects --batch` */
	obj *objs;
	size_t n;
	git_odb *odb;
	rq_odb_read *rd;
} fx;

static fx g_fx[2]; /* SHA-1, SHA-256 */

/* History packed with deltas, blobs packed by fast-import and loose ones
 * (many: abbreviations of 4 digits collide), a loose commit on top. */
static void make_repo(tu_repo *r, const char *format)
{
	tu_git(r,
	       "rm -rf .git && '%s' init -q --template= -b main --object-format=%s . && "
	       "'%s' config maintenance.auto false && '%s' config gc.auto 0",
	       g_up, format, g_up, g_up);
	for (int i = 0; i < 5; i++)
		tu_git(r,
		       "seq 1 %d | sed 's/^/line of some length /' >f.txt && echo %d >g.txt && "
		       "'%s' add -A && '%s' commit -q -m c%d",
		       300 + i * 7, i, g_up, g_up, i);
	tu_git(r, "'%s' repack -adfq", g_up);
	tu_git(r,
	       "awk 'BEGIN{for(i=0;i<1500;i++){s=\"packed blob \" i; "
	       "printf \"blob\\ndata %%d\\n%%s\\n\", length(s), s}}' | '%s' fast-import --quiet",
	       g_up);
	tu_git(r,
	       "mkdir -p .git/L && awk 'BEGIN{for(i=0;i<300;i++) print \"loose blob \" i > "
	       "(\".git/L/\" i)}' && '%s' hash-object -w .git/L/* >/dev/null",
	       g_up);
	tu_git(r, "echo loose >h.txt && '%s' add -A && '%s' commit -q -m loose", g_up, g_up);
}

/* Parse the batch output into f->objs. */
static void load_objects(fx *f)
{
	size_t len, cap = 4096;
	char *p, *end;

	f->batch = tu_capture_raw(f->r, &len, "'%s' cat-file --batch-all-objects --batch", g_up);
	assert_non_null(f->batch);
	f->objs = calloc(cap, sizeof(*f->objs));
	assert_non_null(f->objs);
	for (p = f->batch, end = f->batch + len; p < end;) {
		obj *o = &f->objs[f->n++];
		char type[16];
		assert_true(f->n < cap);
		assert_int_equal(rq_oid_parse(&o->id, f->algo, p, f->algo->hexsz), 0);
		assert_int_equal(sscanf(p + f->algo->hexsz, " %15s %zu", type, &o->size), 2);
		o->type = git_object_string2type(type);
		o->data = strchr(p, '\n') + 1;
		p = (char *)o->data + o->size + 1;
	}
}

static void open_db(fx *f)
{
	rq_error err;

	assert_int_equal(rq_odb_new_at(&f->odb, tu_repo_open(f->r), NULL, f->algo, &err), 0);
	assert_int_equal(rq_odb_read_open(&f->rd, f->odb), 0);
}

static int group_setup(void **state)
{
	const char *cand[2] = {getenv("RQ_UPSTREAM_GIT"), "/work/shared/upstream-git/git"};
	const char *ext[] = {"objectformat"};
	int rc = tu_group_setup(state);

	g_up[0] = '\0';
	for (int i = 0; i < 2 && !g_up[0]; i++)
		if (cand[i] && *cand[i] && realpath(cand[i], g_up) && access(g_up, X_OK))
			g_up[0] = '\0';
	if (rc || !g_up[0]) {
		fprintf(stderr, "# notice: upstream git not found (set RQ_UPSTREAM_GIT): "
				"the object reading tests are skipped\n");
		return rc;
	}
	git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, ext, 1);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0); /* as replayq runs */
	for (int i = 0; i < 2; i++) {
		g_fx[i].algo = i ? &rq_oid_sha256 : &rq_oid_sha1;
		g_fx[i].r = tu_repo_new(0);
		make_repo(g_fx[i].r, g_fx[i].algo->name);
		load_objects(&g_fx[i]);
		open_db(&g_fx[i]);
	}
	return 0;
}

static int group_teardown(void **state)
{
	for (int i = 0; i < 2; i++) {
		rq_odb_read_free(g_fx[i].rd);
		git_odb_free(g_fx[i].odb);
		free(g_fx[i].objs);
		free(g_fx[i].batch);
		tu_repo_free(g_fx[i].r);
	}
	return tu_group_teardown(state);
}

static void need_upstream(void)
{
	if (!g_up[0])
		skip();
}

static const char *hex_of(const fx *f, const rq_oid *id)
{
	static char hex[4][RQ_OID_MAX_HEXSZ + 1];
	static int k;

	k = (k + 1) % 4;
	return rq_oid_fmt(hex[k], id, f->algo);
}

/* Every object reads as git gives it; its header and presence too. */
static void read_all(fx *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const obj *o = &f->objs[i];
		rq_odb_read_obj got;
		git_object_t t;
		size_t len;
		assert_int_equal(rq_odb_read_object(f->rd, &o->id, &got), 0);
		assert_int_equal(got.type, o->type);
		assert_int_equal(got.len, o->size);
		assert_memory_equal(got.data, o->data, o->size);
		assert_int_equal(got.data[got.len], '\0');
		rq_odb_read_obj_free(&got);
		assert_int_equal(rq_odb_read_header(f->rd, &o->id, &len, &t), 0);
		assert_int_equal(t, o->type);
		assert_int_equal(len, o->size);
		assert_int_equal(rq_odb_read_exists(f->rd, &o->id), 1);
	}
}

static void test_read_all_sha1(void **state)
{
	(void)state;
	need_upstream();
	assert_true(g_fx[0].n > 1800);
	assert_ptr_equal(rq_odb_read_algo(g_fx[0].rd), &rq_oid_sha1);
	read_all(&g_fx[0]);
}

static void test_read_all_sha256(void **state)
{
	(void)state;
	need_upstream();
	assert_true(g_fx[1].n > 1800);
	assert_ptr_equal(rq_odb_read_algo(g_fx[1].rd), &rq_oid_sha256);
	read_all(&g_fx[1]);
}

/* In SHA-1, the same bytes as git_odb_read, object by object. */
static void test_same_as_libgit2(void **state)
{
	fx *f = &g_fx[0];

	(void)state;
	need_upstream();
	for (size_t i = 0; i < f->n; i++) {
		git_odb_object *lo;
		rq_odb_read_obj got;
		git_oid gid;
		assert_int_equal(rq_oid_to_git(&gid, &f->objs[i].id, f->algo), 0);
		assert_int_equal(git_odb_read(&lo, f->odb, &gid), 0);
		assert_int_equal(rq_odb_read_object(f->rd, &f->objs[i].id, &got), 0);
		assert_int_equal(got.type, git_odb_object_type(lo));
		assert_int_equal(got.len, git_odb_object_size(lo));
		assert_memory_equal(got.data, git_odb_object_data(lo), got.len);
		rq_odb_read_obj_free(&got);
		git_odb_object_free(lo);
	}
}

/* A missing id: libgit2's code and words (in SHA-1 exactly git_odb_read's). */
static void missing(fx *f)
{
	rq_odb_read_obj got;
	rq_oid id, zero;
	git_object_t t;
	size_t len;
	char want[200];

	memset(&id, 0, sizeof(id));
	memset(&zero, 0, sizeof(zero));
	memset(id.id, 0xab, f->algo->rawsz);
	assert_int_equal(rq_odb_read_object(f->rd, &id, &got), GIT_ENOTFOUND);
	snprintf(want, sizeof(want), "object not found - no match for id (%s)", hex_of(f, &id));
	assert_string_equal(git_error_last()->message, want);
	assert_int_equal(rq_odb_read_header(f->rd, &id, &len, &t), GIT_ENOTFOUND);
	assert_int_equal(rq_odb_read_exists(f->rd, &id), 0);
	assert_int_equal(rq_odb_read_exists(f->rd, &zero), 0);
	if (f->algo == &rq_oid_sha1) {
		git_odb_object *lo;
		git_oid gid;
		rq_oid_to_git(&gid, &id, f->algo);
		assert_int_equal(git_odb_read(&lo, f->odb, &gid), GIT_ENOTFOUND);
		assert_string_equal(git_error_last()->message, want);
		assert_int_equal(git_odb_exists(f->odb, &gid), 0);
	}
}

static void test_missing(void **state)
{
	(void)state;
	need_upstream();
	missing(&g_fx[0]);
	missing(&g_fx[1]);
}

/* The empty tree is there without being stored, as in git and libgit2. */
static void test_empty_tree(void **state)
{
	(void)state;
	need_upstream();
	for (int i = 0; i < 2; i++) {
		rq_odb_read_obj got;
		assert_int_equal(rq_odb_read_object(g_fx[i].rd, &g_fx[i].algo->empty_tree, &got),
				 0);
		assert_int_equal(got.type, GIT_OBJECT_TREE);
		assert_int_equal(got.len, 0);
		rq_odb_read_obj_free(&got);
		assert_int_equal(tu_run(g_fx[i].r, "'%s' cat-file -e %s", g_up,
					hex_of(&g_fx[i], &g_fx[i].algo->empty_tree)),
				 0);
	}
}

/* Two objects whose ids share their first n >= 4 digits, one packed and
 * one loose (the fixture's 1,500 packed and 300 loose blobs): 1 with the
 * digits in hex, else 0. */
static int shared_prefix(fx *f, char *hex, size_t *n)
{
	for (size_t i = 0; i < f->n; i++)
		for (size_t j = i + 1; j < f->n; j++) {
			const char *a = hex_of(f, &f->objs[i].id), *b = hex_of(f, &f->objs[j].id);
			size_t k = 0;
			while (a[k] == b[k])
				k++;
			if (k >= 4 && k < 8) {
				memcpy(hex, a, k);
				hex[k] = '\0';
				*n = k;
				return 1;
			}
		}
	return 0;
}

static void prefixes(fx *f)
{
	rq_oid p, full;
	char hex[RQ_OID_MAX_HEXSZ + 1], *git;
	size_t n;
	char want[160];

	/* unique: as git rev-parse resolves it */
	for (size_t i = 0; i < f->n; i += 97) {
		memcpy(hex, hex_of(f, &f->objs[i].id), 12);
		assert_int_equal(rq_oid_parse_prefix(&p, f->algo, hex, 12), 0);
		assert_int_equal(rq_odb_read_prefix(f->rd, &p, 12, &full), 0);
		git = tu_capture(f->r, "'%s' rev-parse --verify -q %.12s", g_up, hex);
		assert_non_null(git);
		assert_string_equal(hex_of(f, &full), git);
		free(git);
	}
	/* the whole id */
	assert_int_equal(rq_odb_read_prefix(f->rd, &f->objs[0].id, f->algo->hexsz, &full), 0);
	assert_true(rq_oid_eq(&full, &f->objs[0].id));
	/* ambiguous, as git says it */
	assert_true(shared_prefix(f, hex, &n));
	assert_int_equal(rq_oid_parse_prefix(&p, f->algo, hex, n), 0);
	assert_int_equal(rq_odb_read_prefix(f->rd, &p, n, &full), GIT_EAMBIGUOUS);
	snprintf(want, sizeof(want), "short object ID %s is ambiguous", hex);
	assert_string_equal(git_error_last()->message, want);
	assert_int_not_equal(tu_run(f->r, "'%s' rev-parse --verify -q %s 2>/dev/null", g_up, hex),
			     0);
	/* too short */
	assert_int_equal(rq_oid_parse_prefix(&p, f->algo, "abcd", 4), 0);
	assert_int_equal(rq_odb_read_prefix(f->rd, &p, 3, &full), GIT_EAMBIGUOUS);
	/* missing: 12 digits no object has */
	memset(&p, 0, sizeof(p));
	memset(p.id, 0xab, 6);
	assert_int_equal(rq_odb_read_prefix(f->rd, &p, 12, &full), GIT_ENOTFOUND);
	assert_string_equal(git_error_last()->message,
			    "object not found - no match for id prefix (abababababab)");
}

static void test_prefix_sha1(void **state)
{
	(void)state;
	need_upstream();
	prefixes(&g_fx[0]);
}

static void test_prefix_sha256(void **state)
{
	(void)state;
	need_upstream();
	prefixes(&g_fx[1]);
}

/* rq_odb_read_into: the content in the caller's buffer. */
static void *bump(void *ctx, size_t n)
{
	char **p = ctx;
	void *r = *p;
	*p += n;
	return r;
}

static void test_read_into(void **state)
{
	fx *f = &g_fx[1];
	char *arena, *at;

	(void)state;
	need_upstream();
	arena = at = malloc(1 << 20);
	assert_non_null(arena);
	for (size_t i = 0; i < f->n && at < arena + (1 << 19); i++) {
		rq_odb_read_obj got;
		assert_int_equal(rq_odb_read_into(f->rd, &f->objs[i].id, bump, &at, &got), 0);
		assert_ptr_equal((char *)got.data + got.len + 1, at);
		assert_memory_equal(got.data, f->objs[i].data, f->objs[i].size);
	}
	free(arena);
}

/* A copy of fixture f's repository with its own database and reader. */
typedef struct copy {
	tu_repo *r;
	git_odb *odb;
	rq_odb_read *rd;
} copy;

static void copy_open(copy *c, const fx *f)
{
	rq_error err;

	c->r = tu_repo_copy(f->r);
	assert_int_equal(rq_odb_new_at(&c->odb, tu_repo_open(c->r), NULL, f->algo, &err), 0);
	assert_int_equal(rq_odb_read_open(&c->rd, c->odb), 0);
}

static void copy_free(copy *c)
{
	rq_odb_read_free(c->rd);
	git_odb_free(c->odb);
	tu_repo_free(c->r);
}

/* The id git gives a file's content as a blob. */
static void blob_id(const fx *f, tu_repo *r, const char *path, rq_oid *id)
{
	char *hex = tu_capture(r, "'%s' hash-object %s", g_up, path);

	assert_non_null(hex);
	assert_int_equal(rq_oid_parse(id, f->algo, hex, strlen(hex)), 0);
	free(hex);
}

/* A damaged object: a read fails as a damaged one (RQ_ERROR_GIT_CORRUPT,
 * starting with want), in SHA-1 exactly as git_odb_read fails. */
static void read_damaged(const fx *f, copy *c, const rq_oid *id, const char *want)
{
	rq_odb_read_obj got;
	char msg[1024];

	assert_int_equal(rq_odb_read_object(c->rd, id, &got), GIT_ERROR);
	assert_int_equal(git_error_last()->klass, RQ_ERROR_GIT_CORRUPT);
	snprintf(msg, sizeof(msg), "%s", git_error_last()->message);
	assert_memory_equal(msg, want, strlen(want));
	assert_non_null(strstr(msg, "is corrupt"));
	if (f->algo == &rq_oid_sha1) {
		git_odb_object *lo;
		git_oid gid;
		rq_oid_to_git(&gid, id, f->algo);
		assert_int_equal(git_odb_read(&lo, c->odb, &gid), GIT_ERROR);
		assert_int_equal(git_error_last()->klass, RQ_ERROR_GIT_CORRUPT);
		assert_string_equal(git_error_last()->message, msg);
	}
}

static void damaged(const fx *f)
{
	char hex[RQ_OID_MAX_HEXSZ + 1], want[RQ_OID_MAX_HEXSZ + 64];
	rq_oid id;
	copy c;

	copy_open(&c, f);
	/* a loose object cut short */
	blob_id(f, c.r, ".git/L/5", &id);
	rq_oid_fmt(hex, &id, f->algo);
	tu_git(c.r, "o=.git/objects/%.2s/%s && head -c 12 $o >t && rm -f $o && mv t $o", hex,
	       hex + 2);
	snprintf(want, sizeof(want), "loose object %s (stored in ", hex);
	read_damaged(f, &c, &id, want);
	/* a packed blob whose deflated bytes are overwritten */
	tu_git(c.r, "printf 'packed blob 7' >.git/p7");
	blob_id(f, c.r, ".git/p7", &id);
	rq_oid_fmt(hex, &id, f->algo);
	tu_git(c.r,
	       "for i in .git/objects/pack/*.idx; do off=$('%s' show-index <$i | grep ' %s' | "
	       "cut -d' ' -f1); if [ -n \"$off\" ]; then p=${i%%.idx}.pack; chmod u+w $p; "
	       "printf '\\000\\377\\000\\377\\000' | dd of=$p bs=1 seek=$((off + 3)) conv=notrunc "
	       "2>/dev/null; fi; done",
	       g_up, hex);
	snprintf(want, sizeof(want), "packed object %s (stored in ", hex);
	read_damaged(f, &c, &id, want);
	copy_free(&c);
}

static void test_damaged_sha1(void **state)
{
	(void)state;
	need_upstream();
	damaged(&g_fx[0]);
}

static void test_damaged_sha256(void **state)
{
	(void)state;
	need_upstream();
	damaged(&g_fx[1]);
}

/* A replace ref: the replacement's bytes under the replaced id, as git
 * cat-file and git_odb_read give them. */
static void test_replace_ref(void **state)
{
	const fx *f = &g_fx[0];
	rq_odb_read_obj got;
	git_odb_object *lo;
	rq_oid a;
	git_oid ga;
	copy c;
	char hex[RQ_OID_MAX_HEXSZ + 1], *git;
	size_t len;

	(void)state;
	need_upstream();
	c.r = tu_repo_copy(f->r);
	blob_id(f, c.r, ".git/L/1", &a);
	rq_oid_fmt(hex, &a, f->algo);
	tu_git(c.r, "'%s' replace %s $('%s' hash-object .git/L/2)", g_up, hex, g_up);
	git_repository_free(c.r->repo);
	c.r->repo = NULL;
	{
		rq_error err;
		/* the view's replace refs come from core/refs' reader */
		rq_odb_opts o = {.refs = rq_refdb_odb_refs, .refs_arg = tu_repo_open(c.r)};
		assert_int_equal(rq_odb_new_at(&c.odb, tu_repo_open(c.r), &o, NULL, &err), 0);
		assert_int_equal(rq_odb_read_open(&c.rd, c.odb), 0);
	}
	git = tu_capture_raw(c.r, &len, "'%s' cat-file blob %s", g_up, hex);
	assert_non_null(git);
	assert_int_equal(rq_odb_read_object(c.rd, &a, &got), 0);
	assert_int_equal(got.len, len);
	assert_memory_equal(got.data, git, len);
	assert_string_equal((char *)got.data, "loose blob 2\n");
	rq_oid_to_git(&ga, &a, f->algo);
	assert_int_equal(git_odb_read(&lo, c.odb, &ga), 0);
	assert_memory_equal(git_odb_object_data(lo), got.data, got.len);
	git_odb_object_free(lo);
	rq_odb_read_obj_free(&got);
	free(git);
	copy_free(&c);
}

/* The memory store (above everything, added after the reader opened). */
static void test_memory_store(void **state)
{
	const fx *f = &g_fx[0];
	git_odb_backend *mem;
	rq_odb_read_obj got;
	rq_oid id, full;
	copy c;

	(void)state;
	need_upstream();
	copy_open(&c, f);
	assert_int_equal(rq_odb_mem_new(&mem), 0);
	assert_int_equal(git_odb_add_backend(c.odb, mem, 10), 0);
	assert_int_equal(rq_odb_mem_write(&id, c.odb, "a new object\n", 13, GIT_OBJECT_BLOB), 0);
	assert_int_equal(rq_odb_read_object(c.rd, &id, &got), 0);
	assert_int_equal(got.len, 13);
	assert_int_equal(got.type, GIT_OBJECT_BLOB);
	assert_memory_equal(got.data, "a new object\n", 13);
	rq_odb_read_obj_free(&got);
	assert_int_equal(rq_odb_read_exists(c.rd, &id), 1);
	assert_int_equal(rq_odb_read_prefix(c.rd, &id, 10, &full), 0);
	assert_true(rq_oid_eq(&full, &id));
	/* an object the packs hold too is read as before */
	assert_int_equal(rq_odb_read_object(c.rd, &f->objs[3].id, &got), 0);
	assert_memory_equal(got.data, f->objs[3].data, f->objs[3].size);
	rq_odb_read_obj_free(&got);
	copy_free(&c);
}

/* SHA-256: libgit2's calls through replayq's backends fail by name. */
static void test_tripwire(void **state)
{
	const fx *f = &g_fx[1];
	git_odb_object *lo = NULL;
	git_object_t t;
	size_t len;
	git_oid gid;

	(void)state;
	need_upstream();
	memcpy(gid.id, f->objs[0].id.id, GIT_OID_RAWSZ);
	assert_true(git_odb_read(&lo, f->odb, &gid) < 0);
	assert_null(lo);
	assert_string_equal(git_error_last()->message,
			    "libgit2 has no SHA-256: read of a packed object");
	assert_true(git_odb_read_header(&len, &t, f->odb, &gid) < 0);
	assert_string_equal(git_error_last()->message,
			    "libgit2 has no SHA-256: read_header of a packed object");
	git_error_clear();
	assert_int_equal(git_odb_exists(f->odb, &gid), 0);
	assert_non_null(git_error_last());
	assert_non_null(strstr(git_error_last()->message, "libgit2 has no SHA-256: exists"));
	assert_true(git_odb_exists_prefix(&gid, f->odb, &gid, 10) < 0);
	assert_non_null(strstr(git_error_last()->message, "libgit2 has no SHA-256"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_all_sha1),   cmocka_unit_test(test_read_all_sha256),
	    cmocka_unit_test(test_same_as_libgit2), cmocka_unit_test(test_missing),
	    cmocka_unit_test(test_empty_tree),	    cmocka_unit_test(test_prefix_sha1),
	    cmocka_unit_test(test_prefix_sha256),   cmocka_unit_test(test_read_into),
	    cmocka_unit_test(test_damaged_sha1),    cmocka_unit_test(test_damaged_sha256),
	    cmocka_unit_test(test_replace_ref),	    cmocka_unit_test(test_memory_store),
	    cmocka_unit_test(test_tripwire),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
