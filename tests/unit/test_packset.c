/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_packset, rq_odb_packtab and rq_odb_midx over repositories of many
 * small packs made by git: every object is read through them; the set
 * maps no index at open, builds and saves its table when many packs are
 * in no index, and the next set trusts that table without a listing; a
 * pack added or removed since is found or skipped (one new listing); git's
 * multi-pack-index answers for the packs it names; a table that is wrong
 * or damaged is never believed for a read.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_error.h"
#include "rq_odb.h"
#include "rq_odb_own.h"
#include "rq_odb_packread.h"
#include "rq_odb_packset.h"
#include "rq_odb_packtab.h"

#define PACKS 30

static tu_repo *g_tmpl;

/* A repository of PACKS small packs: one commit each, packed by
 * `git repack -d` (its loose objects only), as pushes leave them. */
static int group_setup(void **state)
{
	int rc = tu_group_setup(state);

	if (rc)
		return rc;
	g_tmpl = tu_repo_new(0);
	for (int i = 0; i < PACKS; i++)
		tu_git(g_tmpl,
		       "printf 'line %d\\n' >f%d.txt && git add -A && git commit -q -m c%d && "
		       "git repack -dq",
		       i, i, i);
	return 0;
}

static int group_teardown(void **state)
{
	tu_repo_free(g_tmpl);
	return tu_group_teardown(state);
}

static int setup(void **state)
{
	return tu_copy_setup(state, g_tmpl, "@1800000000 +0000");
}

static void *test_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

static void pack_dir(tu_repo *r, char *out, size_t n)
{
	snprintf(out, n, "%.3000s/objects/pack", r->gitdir);
}

/* Every object of the repository (git's list) read through pr, right. */
static void read_all(tu_repo *r, rq_odb_packread *pr)
{
	char *ids = tu_capture(r, "git rev-list --objects --all | cut -c1-40");
	size_t n = 0;

	assert_non_null(ids);
	for (char *line = strtok(ids, "\n"); line; line = strtok(NULL, "\n"), n++) {
		git_oid id, got;
		void *data = NULL;
		size_t len = 0;
		git_object_t type;
		assert_int_equal(git_oid_fromstr(&id, line), 0);
		assert_int_equal(
		    rq_odb_packread_read(pr, tu_rq_oid(&id), test_alloc, NULL, &data, &len, &type),
		    1);
		assert_int_equal(git_odb_hash(&got, data, len, type), 0);
		assert_true(git_oid_equal(&got, &id));
		assert_int_equal(rq_odb_packread_has(pr, tu_rq_oid(&id)), 1);
		free(data);
	}
	assert_true(n >= PACKS * 3);
	free(ids);
}

static rq_odb_packread *open_set(tu_repo *r)
{
	char dir[PATH_MAX];
	rq_odb_packread *pr;

	pack_dir(r, dir, sizeof(dir));
	assert_non_null(pr = rq_odb_packread_open_set(dir, NULL, NULL, RQ_ODB_PACKSET_WRITE));
	return pr;
}

static rq_odb_packset_stats stats_of(rq_odb_packread *pr)
{
	rq_odb_packset_stats st;

	rq_odb_packset_stats_get(rq_odb_packread_set(pr), &st);
	return st;
}

static int table_exists(tu_repo *r)
{
	char p[PATH_MAX + 64];
	struct stat st;

	snprintf(p, sizeof(p), "%.3000s/objects/" RQ_ODB_OWN_DIR "/" RQ_ODB_PACKTAB_FILE,
		 r->gitdir);
	return stat(p, &st) == 0;
}

/* Opening maps nothing; many packs in no index: the table is built, saved,
 * and the next set trusts it (no listing) and maps one index a read. */
static void test_table(void **state)
{
	tu_repo *r = *state;
	rq_odb_packread *pr = open_set(r);
	rq_odb_packset_stats st = stats_of(pr);
	git_oid missing;

	assert_int_equal(st.listed, PACKS);
	assert_true(st.table_built);
	assert_int_equal(st.table, PACKS);
	assert_int_equal(st.direct, 0);
	assert_true(table_exists(r));
	read_all(r, pr);
	memset(&missing, 0x5a, sizeof(missing));
	assert_int_equal(rq_odb_packread_has(pr, tu_rq_oid(&missing)), 0);
	rq_odb_packread_free(pr);

	pr = open_set(r);
	st = stats_of(pr);
	assert_true(st.trusted);
	assert_false(st.table_built);
	assert_int_equal(st.idx_maps, 0); /* nothing mapped to know where things are */
	assert_int_equal(rq_odb_packread_has(pr, tu_rq_oid(&missing)), 0);
	assert_int_equal(stats_of(pr).idx_maps, 0);
	read_all(r, pr);
	rq_odb_packread_free(pr);
}

/* A pack added after the table: its objects read (a read that misses lists
 * the directory again); packs removed (`git repack -ad`): skipped, the
 * objects read from the new pack, the table rebuilt. */
static void test_added_and_removed(void **state)
{
	tu_repo *r = *state;
	rq_odb_packread *pr = open_set(r);

	read_all(r, pr);
	rq_odb_packread_free(pr);
	tu_git(r, "echo more >g.txt && git add -A && git commit -q -m more && git repack -dq");
	pr = open_set(r);
	assert_true(stats_of(pr).trusted);
	read_all(r, pr);
	rq_odb_packread_free(pr);

	/* a set that listed the packs before they went */
	pr = open_set(r);
	assert_true(stats_of(pr).listed >= PACKS); /* the table's, taken to be there */
	tu_git(r, "git repack -adq");
	read_all(r, pr);
	rq_odb_packread_free(pr);
	pr = open_set(r);
	read_all(r, pr);
	rq_odb_packread_free(pr);
	pr = open_set(r);
	assert_int_equal(stats_of(pr).listed, 1); /* the table made again, of the one pack */
	rq_odb_packread_free(pr);
}

/* git's multi-pack-index over the packs: it answers, no table is made. */
static void test_midx(void **state)
{
	tu_repo *r = *state;
	rq_odb_packread *pr;
	rq_odb_packset_stats st;

	tu_git(r, "git multi-pack-index write");
	pr = open_set(r);
	st = stats_of(pr);
	assert_int_equal(st.midx, PACKS);
	assert_int_equal(st.table, 0);
	assert_false(st.table_built);
	read_all(r, pr);
	rq_odb_packread_free(pr);
	assert_false(table_exists(r));
	/* a multi-pack-index that names a pack gone is not used */
	tu_git(r, "rm -f $(ls .git/objects/pack/*.idx | head -1)");
	pr = open_set(r);
	assert_int_equal(stats_of(pr).midx, 0);
	rq_odb_packread_free(pr);
}

/* A table whose entries name another pack than the one holding them (it
 * checksums: only its content is wrong): never believed for a read, and a
 * damaged table file is not used at all. */
static void test_wrong_table(void **state)
{
	tu_repo *r = *state;
	char dir[PATH_MAX], *a, *b, path[2 * PATH_MAX];
	rq_odb_packread *pr = open_set(r);
	rq_odb_packtab *t = NULL, *bad = NULL;
	rq_odb_packtab_new add[2];
	unsigned char *idx;
	size_t n;
	FILE *f;
	int fd;

	read_all(r, pr);
	rq_odb_packread_free(pr);
	pack_dir(r, dir, sizeof(dir));
	a = tu_capture(r, "ls .git/objects/pack/*.idx | sed -n 1p | sed 's|.*pack-||; s|.idx||'");
	b = tu_capture(r, "ls .git/objects/pack/*.idx | sed -n 2p | sed 's|.*pack-||; s|.idx||'");
	assert_non_null(a);
	assert_non_null(b);
	snprintf(path, sizeof(path), "%s/pack-%s.idx", dir, a);
	assert_non_null(f = fopen(path, "rb"));
	assert_non_null(idx = malloc(1 << 16));
	n = fread(idx, 1, 1 << 16, f);
	fclose(f);
	/* pack a's entries, said to be in pack b */
	memset(add, 0, sizeof(add));
	for (int i = 0; i < 20; i++)
		sscanf(b + 2 * i, "%2hhx", &add[0].pack.name[i]);
	add[0].pack.nr = rq_odb_pack_be32(idx + 8 + 255 * 4);
	add[0].idx = idx;
	add[0].idx_len = n;
	assert_int_equal(rq_odb_packtab_build(&bad, NULL, NULL, add, 1, 0), 1);
	assert_true((fd = rq_odb_own_dir(dir, 0)) < 0); /* dir is the pack dir: no own dir */
	snprintf(path, sizeof(path), "%.3000s/objects", r->gitdir);
	assert_true((fd = rq_odb_own_dir(path, 1)) >= 0);
	assert_int_equal(rq_odb_packtab_save(bad, fd), 0);
	assert_int_equal(rq_odb_packtab_load(&t, fd), 1);
	close(fd);
	pr = open_set(r);
	read_all(r, pr);
	rq_odb_packread_free(pr);
	/* damaged: a byte flipped */
	tu_git(r, "f=.git/objects/replayq/pack-table; chmod u+w $f; "
		  "printf '\\377' | dd of=$f bs=1 seek=30 conv=notrunc 2>/dev/null");
	pr = open_set(r);
	assert_false(stats_of(pr).trusted);
	read_all(r, pr);
	rq_odb_packread_free(pr);
	rq_odb_packtab_free(t);
	rq_odb_packtab_free(bad);
	free(idx);
	free(a);
	free(b);
}

/* Freshening touches the pack that holds the object, once. */
static void test_freshen(void **state)
{
	tu_repo *r = *state;
	char *head = tu_capture(r, "git rev-parse HEAD"), *pack;
	rq_odb_packread *pr = open_set(r);
	struct stat st;
	git_oid id;

	assert_non_null(head);
	assert_int_equal(git_oid_fromstr(&id, head), 0);
	pack = tu_capture(r,
			  "for i in .git/objects/pack/*.idx; do git show-index <$i | grep -q %s "
			  "&& echo ${i%%.idx}.pack; done; true",
			  head);
	assert_non_null(pack);
	tu_git(r, "touch -d @1000000000 %s", pack);
	assert_int_equal(rq_odb_packread_freshen(pr, tu_rq_oid(&id)), 1);
	{
		char full[2 * PATH_MAX];
		snprintf(full, sizeof(full), "%s/%s", r->path, pack);
		assert_int_equal(stat(full, &st), 0);
		assert_true(st.st_mtime > 1000000000);
	}
	memset(&id, 0x5a, sizeof(id));
	assert_int_equal(rq_odb_packread_freshen(pr, tu_rq_oid(&id)), 0);
	rq_odb_packread_free(pr);
	free(head);
	free(pack);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_table, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_added_and_removed, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_midx, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_wrong_table, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_freshen, setup, tu_copy_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
