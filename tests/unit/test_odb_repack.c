/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_repack on packs made by git and marked as replayq's (git's packs
 * hold OFS_DELTA entries, which a merge must re-aim; replayq's own hold
 * REF_DELTA ones): the merged pack is one git verifies, holds every object
 * once, and git fsck is clean; the geometric split leaves a progression
 * alone and merges what breaks it; a damaged pack stops the merge with
 * nothing removed; leftovers of killed runs go; a live lock is waited for
 * or reported busy; packs that are not replayq's to merge stay. In a
 * SHA-256 repository made by upstream git 2.55 (RQ_UPSTREAM_GIT, or
 * /work/shared/upstream-git/git; without it that test is skipped), the
 * same at 32-byte ids and 64-digit names, upstream git satisfied.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_error.h"
#include "rq_odb_own.h"
#include "rq_odb_repack.h"

static tu_repo *g_tmpl;
static char g_up[3 * PATH_MAX]; /* the command of upstream git, "" when absent */
static tu_repo *g_s256;		/* a SHA-256 repository of upstream git's packs */

/* n commits, each changing one line of a 30 KB file (deltas between its
 * versions), packed by `git repack -d` every two commits: packs that hold
 * OFS_DELTA entries. */
static void add_packs(tu_repo *r, int from, int n)
{
	for (int i = from; i < from + n; i++)
		tu_git(r,
		       "seq 1 4000 | sed 's/^1%d$/changed %d/' >big.txt && echo %d >>small.txt && "
		       "git add -A && git commit -q -m c%d %s",
		       i % 10, i, i, i, i % 2 ? "&& git repack -dq" : "");
}

/* The same in a SHA-256 repository, by upstream git: n commits, a pack
 * every two, the odd packs' deltas REF_DELTA (as replayq's packs hold
 * them), the others' OFS_DELTA. */
static void add_packs256(tu_repo *r, int from, int n)
{
	for (int i = from; i < from + n; i++)
		tu_git(r,
		       "seq 1 4000 | sed 's/^1%d$/changed %d/' >big.txt && echo %d >>small.txt && "
		       "%s add -A && %s commit -q -m c%d && if [ %d = 1 ]; then %s -c "
		       "repack.usedeltabaseoffset=%s repack -dq; fi",
		       i % 10, i, i, g_up, g_up, i, i % 2, g_up, i % 4 == 1 ? "false" : "true");
}

/* Upstream git as g_up runs it: with its own exec path (its fsck runs
 * `git refs verify`), a directory of the scratch space with a link to it. */
static void find_upstream(void)
{
	const char *cand[2] = {getenv("RQ_UPSTREAM_GIT"), "/work/shared/upstream-git/git"};
	char path[PATH_MAX], bin[PATH_MAX + 8];

	g_up[0] = '\0';
	for (int i = 0; i < 2 && !g_up[0]; i++)
		if (cand[i] && *cand[i] && realpath(cand[i], path) && !access(path, X_OK)) {
			snprintf(bin, sizeof(bin), "%.*s/ubin", PATH_MAX - 8, tu_scratch());
			if ((mkdir(bin, 0700) == 0 || errno == EEXIST) &&
			    snprintf(g_up, sizeof(g_up), "%s/git", bin) < (int)sizeof(g_up) &&
			    (symlink(path, g_up) == 0 || errno == EEXIST))
				snprintf(g_up, sizeof(g_up), "GIT_EXEC_PATH='%s' '%s/git'", bin,
					 bin);
			else
				g_up[0] = '\0';
		}
	if (!g_up[0])
		fprintf(stderr, "# notice: upstream git not found (set RQ_UPSTREAM_GIT): "
				"the SHA-256 repack test is skipped\n");
}

static int group_setup(void **state)
{
	int rc = tu_group_setup(state);

	if (rc)
		return rc;
	g_tmpl = tu_repo_new(0);
	add_packs(g_tmpl, 0, 28); /* 14 packs */
	find_upstream();
	if (g_up[0]) {
		g_s256 = tu_repo_new(0);
		tu_git(g_s256,
		       "rm -rf .git && %s init -q --template= -b main --object-format=sha256 . "
		       "&& %s config maintenance.auto false && %s config gc.auto 0",
		       g_up, g_up, g_up);
		add_packs256(g_s256, 0, 12); /* 6 packs */
	}
	return 0;
}

static int group_teardown(void **state)
{
	tu_repo_free(g_tmpl);
	tu_repo_free(g_s256);
	return tu_group_teardown(state);
}

static int setup256(void **state)
{
	if (!g_s256) {
		*state = NULL;
		return 0;
	}
	return tu_copy_setup(state, g_s256, "@1800000000 +0000");
}

static int teardown256(void **state)
{
	return *state ? tu_copy_teardown(state) : 0;
}

static int setup(void **state)
{
	return tu_copy_setup(state, g_tmpl, "@1800000000 +0000");
}

static void objects_of(tu_repo *r, char *out, size_t n)
{
	snprintf(out, n, "%.3000s/objects", r->gitdir);
}

/* Mark every pack (or those that match the shell glob) as replayq's. */
static void mark(tu_repo *r, const char *glob)
{
	tu_git(r,
	       "mkdir -p .git/objects/replayq && for i in .git/objects/pack/%s.idx; do "
	       "n=$(basename $i .idx); touch .git/objects/replayq/$n.own; done",
	       glob);
}

static int count(tu_repo *r, const char *cmd)
{
	char *s = tu_capture(r, "%s", cmd);
	int n;

	assert_non_null(s);
	n = atoi(s);
	free(s);
	return n;
}

/* Every object git listed before is still there, fsck clean, each pack
 * verifies. */
static void all_there(tu_repo *r, const char *before)
{
	char *now = tu_capture(r, "git cat-file --batch-all-objects --batch-check | sort");

	assert_non_null(now);
	assert_string_equal(before, now);
	free(now);
	assert_int_equal(
	    tu_run(r, "git fsck --strict --no-dangling 2>&1 | grep . && exit 1; "
		      "for i in .git/objects/pack/*.idx; do git verify-pack $i || exit 1; "
		      "done"),
	    0);
}

static char *objects_now(tu_repo *r)
{
	char *s = tu_capture(r, "git cat-file --batch-all-objects --batch-check | sort");

	assert_non_null(s);
	return s;
}

/* 14 packs with OFS_DELTA entries merged into one, git satisfied. */
static void test_merge_git_packs(void **state)
{
	tu_repo *r = *state;
	char objects[PATH_MAX], *before = objects_now(r);
	rq_odb_repack_opts o = {0, 0, 0, NULL};
	rq_odb_repack_stats st;
	rq_error err;

	assert_true(
	    count(r, "git verify-pack -v .git/objects/pack/*.idx | grep -c 'chain length'") > 0);
	mark(r, "*");
	objects_of(r, objects, sizeof(objects));
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_int_equal(st.own_before, 14);
	assert_int_equal(st.merged, 14); /* equal packs: no progression */
	assert_int_equal(st.own_after, 1);
	assert_int_equal(count(r, "ls .git/objects/pack/*.idx | wc -l"), 1);
	assert_int_equal(count(r, "ls .git/objects/replayq/*.own | wc -l"), 1);
	assert_int_equal(st.objects, (size_t)count(r, "git cat-file --batch-all-objects "
						      "--batch-check | wc -l"));
	all_there(r, before);
	/* the deltas stay deltas: nothing was compressed again */
	assert_true(
	    count(r, "git verify-pack -v .git/objects/pack/*.idx | grep -c 'chain length'") > 0);
	free(before);
}

/* Packs that hold the same objects: the merged pack holds each once. */
static void test_duplicates(void **state)
{
	tu_repo *r = *state;
	char objects[PATH_MAX], *before;
	rq_odb_repack_opts o = {0, 1, 0, NULL};
	rq_odb_repack_stats st;
	rq_error err;

	/* a pack of everything beside the small ones */
	tu_git(r, "git rev-list --objects --all | git pack-objects -q .git/objects/pack/pack");
	before = objects_now(r);
	mark(r, "*");
	objects_of(r, objects, sizeof(objects));
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_true(st.merged >= 14);
	assert_int_equal(st.objects, (size_t)count(r, "git cat-file --batch-all-objects "
						      "--batch-check | wc -l"));
	all_there(r, before);
	free(before);
}

/* A progression is left alone; small packs that break it are merged. */
static void test_geometric(void **state)
{
	tu_repo *r = *state;
	char objects[PATH_MAX], *before;
	rq_odb_repack_opts o = {0, 1, 0, NULL};
	rq_odb_repack_stats st;
	rq_error err;

	mark(r, "*");
	objects_of(r, objects, sizeof(objects));
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_int_equal(st.own_after, 1);
	/* one more small pack: much smaller than the big one, nothing to do */
	add_packs(r, 100, 2);
	mark(r, "*");
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_int_equal(st.merged, 0);
	assert_int_equal(st.own_after, 2);
	/* three more: the small ones are merged, the big one stays */
	add_packs(r, 200, 6);
	mark(r, "*");
	before = objects_now(r);
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_int_equal(st.merged, 4);
	assert_int_equal(st.own_after, 2);
	all_there(r, before);
	/* below the threshold and not asked for all: nothing */
	add_packs(r, 300, 6);
	mark(r, "*");
	o.all = 0;
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_int_equal(st.merged, 0);
	free(before);
}

/* A pack whose entry does not match its index's CRC-32: an error, nothing
 * removed, nothing left. */
static void test_damaged(void **state)
{
	tu_repo *r = *state;
	char objects[PATH_MAX];
	rq_odb_repack_opts o = {0, 1, 0, NULL};
	rq_odb_repack_stats st;
	rq_error err;

	mark(r, "*");
	tu_git(r, "p=$(ls .git/objects/pack/*.pack | sed -n 3p) && chmod u+w $p && "
		  "printf '\\377\\377' | dd of=$p bs=1 seek=40 conv=notrunc 2>/dev/null");
	objects_of(r, objects, sizeof(objects));
	rq_error_clear(&err);
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), -1);
	assert_int_equal(err.code, RQ_E_CORRUPT_OBJECT);
	assert_non_null(strstr(err.msg, "is corrupt"));
	assert_int_equal(count(r, "ls .git/objects/pack/*.idx | wc -l"), 14);
	assert_int_equal(count(r, "ls .git/objects/pack | grep -c tmp_ || true"), 0);
	assert_int_equal(count(r, "ls .git/objects/pack | grep -c keep || true"), 0);
	assert_int_equal(count(r, "ls .git/objects/replayq | grep -c lock || true"), 0);
}

/* What is not replayq's to merge stays: unmarked packs, kept, promisor,
 * cruft (.mtimes) and bitmapped packs. */
static void test_left_alone(void **state)
{
	tu_repo *r = *state;
	char objects[PATH_MAX], *kept;
	rq_odb_repack_opts o = {0, 1, 0, NULL};
	rq_odb_repack_stats st;
	rq_error err;

	mark(r, "*");
	tu_git(r, "cd .git/objects/pack && ls *.idx | sed -n 1p | sed 's/idx$/keep/' | xargs touch "
		  "&& ls *.idx | sed -n 2p | sed 's/idx$/promisor/' | xargs touch "
		  "&& ls *.idx | sed -n 3p | sed 's/idx$/mtimes/' | xargs touch "
		  "&& ls *.idx | sed -n 4p | sed 's/idx$/bitmap/' | xargs touch "
		  "&& rm ../replayq/$(ls *.idx | sed -n 5p | sed 's/idx$/own/')");
	kept = tu_capture(r, "cd .git/objects/pack && ls *.idx | sed -n 1,5p | tr '\\n' ' '");
	assert_non_null(kept);
	objects_of(r, objects, sizeof(objects));
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_int_equal(st.merged, 9);
	assert_int_equal(tu_run(r,
				"cd .git/objects/pack && for i in %s; do test -e $i || exit 1; "
				"done",
				kept),
			 0);
	free(kept);
}

/* Leftovers of killed runs go: a mark without its pack, a marked pack
 * without its index, a lock whose owner is gone. A live owner's lock:
 * busy, after waiting for it as long as asked. */
static void test_leftovers_and_lock(void **state)
{
	tu_repo *r = *state;
	char objects[PATH_MAX], lock[PATH_MAX + 32];
	rq_odb_repack_opts o = {0, 1, 0, NULL};
	rq_odb_repack_stats st;
	rq_error err;
	int fd;
	char *host = tu_capture(r, "hostname | tr -d '\\n' | tr -c 'A-Za-z0-9._-' _ | cut -c1-64");

	assert_non_null(host);
	mark(r, "*");
	tu_git(r,
	       "cd .git/objects && touch replayq/pack-1111111111111111111111111111111111111111.own "
	       "&& p=$(ls pack/*.idx | sed -n 1p) && rm $p && echo replayq %ld@%s >"
	       "replayq/consolidate.lock",
	       (long)getppid(), host);
	objects_of(r, objects, sizeof(objects));
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_false(st.busy);
	assert_int_equal(st.own_before, 13); /* the leftovers were not counted */
	assert_int_equal(count(r, "ls .git/objects/replayq | grep -c 1111 || true"), 0);
	assert_int_equal(count(r, "ls .git/objects/pack/*.pack | wc -l"), 1);
	assert_int_equal(tu_run(r, "test ! -e .git/objects/replayq/consolidate.lock"), 0);
	/* a live owner: one that holds its flock, whatever pid it names */
	tu_git(r, "echo replayq 999999999@%s >.git/objects/replayq/consolidate.lock", host);
	snprintf(lock, sizeof(lock), "%s/replayq/consolidate.lock", objects);
	assert_true((fd = open(lock, O_RDONLY)) >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	o.wait_ms = 20;
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_true(st.busy);
	assert_int_equal(tu_run(r, "test -e .git/objects/replayq/consolidate.lock"), 0);
	/* its owner gone: taken over */
	close(fd);
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_false(st.busy);
	assert_int_equal(tu_run(r, "test ! -e .git/objects/replayq/consolidate.lock"), 0);
	free(host);
}

/* What upstream git reads of every object: ids, types, sizes and a
 * checksum of the contents. */
static char *contents256(tu_repo *r)
{
	char *s = tu_capture(r,
			     "%s cat-file --batch-all-objects --batch-check | sort && "
			     "%s cat-file --batch-all-objects --batch | cksum",
			     g_up, g_up);

	assert_non_null(s);
	return s;
}

/* A SHA-256 repository: nothing of replayq's yet is nothing to do (and no
 * sort of an empty list); then its packs, named by 64 digits, their
 * OFS_DELTA and REF_DELTA entries with 32-byte ids, are merged at that
 * width, the one upstream's multi-pack-index names left alone; every
 * object reads as before, and upstream git's fsck and verify-pack are
 * satisfied. */
static void test_sha256(void **state)
{
	tu_repo *r = *state;
	char objects[PATH_MAX], cmd[4 * PATH_MAX], *before, *after;
	rq_odb_repack_opts o = {0, 1, 0, &rq_oid_sha256};
	rq_odb_repack_stats st;
	rq_error err;

	if (!r)
		skip();
	objects_of(r, objects, sizeof(objects));
	rq_error_clear(&err);
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_int_equal(st.own_before, 0);
	assert_int_equal(st.merged, 0);
	mark(r, "*");
	tu_git(r,
	       "ls .git/objects/pack/*.idx | sed -n 1p | xargs -n1 basename | "
	       "%s multi-pack-index write --stdin-packs",
	       g_up);
	before = contents256(r);
	assert_int_equal(rq_odb_repack_run(objects, &o, &st, &err), 0);
	assert_int_equal(st.own_before, 6);
	assert_int_equal(st.merged, 5);
	assert_int_equal(st.own_after, 2);
	assert_int_equal(strlen(st.pack_name), 5 + 64);
	assert_int_equal(count(r, "ls .git/objects/pack/*.idx | wc -l"), 2);
	after = contents256(r);
	assert_string_equal(before, after);
	assert_int_equal(
	    tu_run(r,
		   "%s fsck --strict --no-dangling 2>&1 | grep . && exit 1; "
		   "%s multi-pack-index verify || exit 1; for i in .git/objects/pack/*.idx; do "
		   "%s verify-pack $i || exit 1; done",
		   g_up, g_up, g_up),
	    0);
	/* the deltas stay deltas */
	snprintf(cmd, sizeof(cmd), "%s verify-pack -v .git/objects/pack/%s.idx | grep -c 'chain'",
		 g_up, st.pack_name);
	assert_true(count(r, cmd) > 0);
	free(before);
	free(after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_merge_git_packs, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_duplicates, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_geometric, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_damaged, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_left_alone, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_leftovers_and_lock, setup, tu_copy_teardown),
	    cmocka_unit_test_setup_teardown(test_sha256, setup256, teardown256),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
