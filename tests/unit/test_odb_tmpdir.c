/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_tmpdir: the replay's object store, its temporary directory, its
 * packfile, and stale directory clean-up.
 */
#include "testutil.h"

#include <semaphore.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include "rq_fs.h"
#include "rq_odb_mem.h"
#include "rq_odb_tmpdir.h"
#include "rq_testhook.h"

static int setup(void **state)
{
	tu_repo *r = tu_repo_new(0);
	tu_commit_file(r, "a.txt", "hello\n", "first");
	*state = r;
	return 0;
}

static int setup_bare(void **state)
{
	tu_repo *r = tu_repo_new(1);
	*state = r;
	return 0;
}

static int teardown(void **state)
{
	tu_repo_free(*state);
	*state = NULL;
	return 0;
}

static void objects_path(tu_repo *r, char *buf, size_t size, const char *sub)
{
	snprintf(buf, size, "%.3000s/objects%s%s", r->gitdir, sub ? "/" : "", sub ? sub : "");
}

/* The loose object path of id under dir. */
static void loose_path(const char *dir, const git_oid *id, char *buf, size_t size)
{
	const char *hex = tu_hex(id);
	snprintf(buf, size, "%s/%.2s/%s", dir, hex, hex + 2);
}

/* Write a blob, a tree holding it, and a commit on HEAD through the repository. */
static void write_objects(git_repository *repo, const char *content, git_oid *blob, git_oid *tree,
			  git_oid *commit)
{
	git_odb *odb;
	git_treebuilder *tb;
	git_signature *sig;
	git_commit *head;
	git_tree *t;
	git_oid head_id;

	assert_int_equal(git_repository_odb(&odb, repo), 0);
	assert_int_equal(git_odb_write(blob, odb, content, strlen(content), GIT_OBJECT_BLOB), 0);
	git_odb_free(odb);
	assert_int_equal(git_treebuilder_new(&tb, repo, NULL), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "new.txt", blob, GIT_FILEMODE_BLOB), 0);
	assert_int_equal(git_treebuilder_write(tree, tb), 0);
	git_treebuilder_free(tb);
	assert_int_equal(git_signature_new(&sig, "C O Mitter", "c@example.com", 1700000000, 0), 0);
	assert_int_equal(git_reference_name_to_id(&head_id, repo, "HEAD"), 0);
	assert_int_equal(git_commit_lookup(&head, repo, &head_id), 0);
	assert_int_equal(git_tree_lookup(&t, repo, tree), 0);
	assert_int_equal(
	    git_commit_create_v(commit, repo, NULL, sig, sig, NULL, "objdir test\n", t, 1, head),
	    0);
	git_tree_free(t);
	git_commit_free(head);
	git_signature_free(sig);
}

static int odb_has(git_repository *repo, const git_oid *id)
{
	git_odb *odb;
	int has;

	assert_int_equal(git_repository_odb(&odb, repo), 0);
	has = git_odb_exists(odb, id);
	git_odb_free(odb);
	return has;
}

static void test_open_write_finish(void **state)
{
	tu_repo *r = *state;
	git_repository *repo = tu_repo_open(r);
	rq_odb_tmpdir *od = NULL;
	rq_odb_tmpdir_stats stats;
	rq_error err;
	git_oid blob, tree, commit;
	char objects[PATH_MAX], packdir[PATH_MAX + 8], prefix[64], tmp[PATH_MAX], p[2 * PATH_MAX];
	int loose_before, packs_before, idx_before;

	objects_path(r, objects, sizeof(objects), NULL);
	objects_path(r, packdir, sizeof(packdir), "pack");
	loose_before = tu_loose_count(r);
	packs_before = tu_count_entries(packdir, "pack-", ".pack");
	idx_before = tu_count_entries(packdir, "pack-", ".idx");
	assert_true(loose_before > 0);

	rq_error_clear(&err);
	assert_int_equal(rq_odb_tmpdir_open(&od, repo, NULL, &err), 0);
	assert_non_null(od);
	/* objects/replayq-tmp-<pid>@<host>.<token> */
	snprintf(prefix, sizeof(prefix), "replayq-tmp-%ld@", (long)getpid());
	snprintf(tmp, sizeof(tmp), "%s", rq_odb_tmpdir_path(od));
	assert_int_equal(strncmp(tmp, objects, strlen(objects)), 0);
	assert_int_equal(tmp[strlen(objects)], '/');
	assert_int_equal(strncmp(tmp + strlen(objects) + 1, prefix, strlen(prefix)), 0);
	/* then the host name, '.' and eight hex digits */
	assert_int_equal(strlen(strrchr(tmp, '.') + 1), 8);
	/* named, not made: a replay without children needs no directory; its
	 * owner marker (<name>.owner, flocked) is there */
	assert_false(tu_exists(tmp));
	assert_int_equal(tu_count_entries(objects, prefix, ".owner"), 1);

	/* existing objects stay readable */
	{
		git_oid head;
		git_commit *c;
		assert_int_equal(git_reference_name_to_id(&head, repo, "HEAD"), 0);
		assert_int_equal(git_commit_lookup(&c, repo, &head), 0);
		git_commit_free(c);
	}
	/* new objects are held by the replay: no loose object anywhere */
	write_objects(repo, "new content\n", &blob, &tree, &commit);
	loose_path(tmp, &blob, p, sizeof(p));
	assert_false(tu_exists(p));
	loose_path(objects, &blob, p, sizeof(p));
	assert_false(tu_exists(p));
	loose_path(objects, &commit, p, sizeof(p));
	assert_false(tu_exists(p));
	assert_int_equal(tu_loose_count(r), loose_before);
	assert_true(odb_has(repo, &blob));
	assert_true(odb_has(repo, &commit));
	assert_int_equal(rq_odb_tmpdir_mark(od), 3);
	/* git does not see them yet */
	assert_int_not_equal(tu_run(r, "git cat-file -e %s 2>/dev/null", tu_hex(&blob)), 0);

	memset(&stats, 0x5a, sizeof(stats));
	assert_int_equal(rq_odb_tmpdir_finish(od, &stats, &err), 0);
	assert_int_equal(stats.objects, 3);
	assert_int_equal(strncmp(stats.pack_name, "pack-", 5), 0);
	assert_int_equal(strlen(stats.pack_name), 5 + 40);
	assert_true(stats.pack_bytes > 0);
	/* exactly one new pack with its index, named as reported; no
	 * temporary file left, no directory made */
	assert_int_equal(tu_count_entries(objects, "replayq-tmp-", ""), 0);
	assert_int_equal(tu_count_entries(packdir, "tmp_", ""), 0);
	assert_int_equal(tu_count_entries(packdir, "pack-", ".pack"), packs_before + 1);
	assert_int_equal(tu_count_entries(packdir, "pack-", ".idx"), idx_before + 1);
	snprintf(p, sizeof(p), "%s/%s.pack", packdir, stats.pack_name);
	assert_true(tu_exists(p));
	{
		struct stat st;
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal((uint64_t)st.st_size, stats.pack_bytes);
	}
	snprintf(p, sizeof(p), "%s/%s.idx", packdir, stats.pack_name);
	assert_true(tu_exists(p));
	/* no loose object was written into the repository */
	assert_int_equal(tu_loose_count(r), loose_before);
	rq_odb_tmpdir_free(od);
	/* the temporary directory is gone */
	assert_false(tu_exists(tmp));
	assert_int_equal(tu_count_entries(objects, "replayq-tmp-", ""), 0);

	/* git sees a valid pack holding the objects */
	assert_int_equal(tu_run(r, "git cat-file -e %s && git cat-file -e %s && git cat-file -e %s",
				tu_hex(&blob), tu_hex(&tree), tu_hex(&commit)),
			 0);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>&1"), 0);
	assert_int_equal(tu_run(r, "git verify-pack '%s/%s.idx'", packdir, stats.pack_name), 0);
	{
		char *n =
		    tu_capture(r, "git show-index <'%s/%s.idx' | wc -l", packdir, stats.pack_name);
		assert_non_null(n);
		assert_string_equal(n, "3");
		free(n);
	}
	/* and so does libgit2, through the repository's own database */
	assert_true(odb_has(repo, &commit));
	{
		git_commit *c;
		assert_int_equal(git_commit_lookup(&c, repo, &commit), 0);
		assert_string_equal(git_commit_message(c), "objdir test\n");
		git_commit_free(c);
	}
}

/*
 * Compressing ahead: enough new content for the thread to start (and for
 * the picks' end to help it), versions of a file written as deltas of one
 * another, blobs read back after they gave their content up, an object
 * written twice; the pack holds every object as written (git fsck, the
 * contents compared) and is the same pack every time.
 */
static char *compress_ahead_run(tu_repo *r, git_oid *ids, size_t n, size_t size)
{
	git_repository *repo = tu_repo_open(r);
	rq_odb_tmpdir *od = NULL;
	rq_odb_tmpdir_stats stats;
	git_odb *odb;
	char *buf = malloc(size);

	assert_non_null(buf);
	assert_int_equal(rq_odb_tmpdir_open(&od, repo, NULL, NULL), 0);
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; i < size; i++)
			buf[i] = (char)('a' + (i * 7 + i / 61 + (k / 2) * (i % 997 == 0)) % 26);
		snprintf(buf, 32, "version %zu\n", k);
		/* odd k: a new version of k - 1's file */
		assert_int_equal(tu_mem_write_like(&ids[k], odb, buf, size, GIT_OBJECT_BLOB,
						   k % 2 ? &ids[k - 1] : NULL),
				 0);
		if (k % 5 == 4) { /* read back an earlier one, and write it again */
			git_odb_object *o = NULL;
			assert_int_equal(git_odb_read(&o, odb, &ids[k - 3]), 0);
			assert_int_equal(git_odb_object_size(o), size);
			assert_int_equal(tu_mem_write(&ids[k - 3], odb, git_odb_object_data(o),
						      size, GIT_OBJECT_BLOB),
					 0);
			git_odb_object_free(o);
		}
	}
	git_odb_free(odb);
	assert_int_equal(rq_odb_tmpdir_finish(od, &stats, NULL), 0);
	rq_odb_tmpdir_free(od);
	assert_int_equal(stats.objects, n);
	free(buf);
	return strdup(stats.pack_name);
}

static void test_compress_ahead(void **state)
{
	tu_repo *r = *state;
	size_t n = 60, size = 20000;
	git_oid ids[60];
	char *first, *again, *out;

	first = compress_ahead_run(r, ids, n, size);
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>/dev/null"), 0);
	out = tu_capture(r, "git cat-file blob %s | head -1", tu_hex(&ids[41]));
	assert_non_null(out);
	assert_string_equal(out, "version 41");
	free(out);
	/* deltas were made: the pack is far smaller than its blobs */
	out = tu_capture(r, "git verify-pack -v .git/objects/pack/%s.idx | grep -c ' 1 '", first);
	assert_non_null(out);
	assert_true(atoi(out) >= 20);
	free(out);
	tu_git(r, "rm -f .git/objects/pack/%s.*", first);
	again = compress_ahead_run(r, ids, n, size);
	assert_string_equal(first, again);
	free(first);
	free(again);
}

/* 40 KB of numbered lines, every word seeded by `seed`. */
static char *lines_of(unsigned seed, size_t *len)
{
	char *b = malloc(48 * 1024);
	size_t n = 0;

	assert_non_null(b);
	for (unsigned i = 0; n < 40000; i++)
		n += (size_t)sprintf(b + n, "line %u word %u\n", i, (i * 2654435761u) ^ seed);
	*len = n;
	return b;
}

/* One blob written against a blob the repository's pack holds whole: the
 * pack the replay writes, as verify-pack lists it. */
static char *write_against(tu_repo *r, const git_oid *side, const char *content, size_t len,
			   git_oid *id, rq_odb_tmpdir_stats *stats)
{
	git_repository *repo = tu_repo_open(r);
	rq_odb_tmpdir *od = NULL;
	git_odb *odb;
	char *out;

	assert_int_equal(rq_odb_tmpdir_open(&od, repo, NULL, NULL), 0);
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	assert_int_equal(tu_mem_write_like(id, odb, content, len, GIT_OBJECT_BLOB, side), 0);
	git_odb_free(odb);
	assert_int_equal(rq_odb_tmpdir_finish(od, stats, NULL), 0);
	rq_odb_tmpdir_free(od);
	out = tu_capture(r, "git verify-pack -v .git/objects/pack/%s.idx | grep blob",
			 stats->pack_name);
	assert_non_null(out);
	return out;
}

/* A large blob against a side the packs hold whole: the side's entry is
 * copied into the pack and the blob is a delta against it; when the delta
 * is not worth it (a rewrite), the copy stays out of the pack. */
static void test_borrowed_base(void **state)
{
	tu_repo *r = *state;
	rq_odb_tmpdir_stats stats;
	git_oid side, id;
	size_t len, len2;
	char *a = lines_of(1, &len), *b, *out;

	tu_commit_file(r, "big.txt", a, "big");
	tu_git(r, "git repack -q -a -d -f");
	out = tu_capture(r, "git rev-parse HEAD:big.txt");
	assert_non_null(out);
	assert_int_equal(git_oid_fromstr(&side, out), 0);
	free(out);
	/* another version: a few words changed */
	b = malloc(len + 1);
	memcpy(b, a, len + 1);
	memcpy(b + 1000, "CHANGED", 7);
	memcpy(b + 30000, "CHANGED", 7);
	out = write_against(r, &side, b, len, &id, &stats);
	assert_int_equal(stats.objects, 2);
	assert_non_null(strstr(out, tu_hex(&side)));
	assert_non_null(strstr(out, tu_hex(&id)));
	/* the new blob is a delta against the side, which is whole */
	{
		char *d = tu_capture(
		    r,
		    "git verify-pack -v .git/objects/pack/%s.idx | awk '$1 == \"%s\" { print $7 }'",
		    stats.pack_name, tu_hex(&id));
		assert_non_null(d);
		assert_string_equal(d, tu_hex(&side));
		free(d);
	}
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>/dev/null"), 0);
	{
		char path[PATH_MAX + 16];
		FILE *f;
		snprintf(path, sizeof(path), "%.3000s/expected", r->root);
		f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fwrite(b, 1, len, f), len);
		fclose(f);
		assert_int_equal(
		    tu_run(r, "git cat-file blob %s | cmp -s - '%s'", tu_hex(&id), path), 0);
	}
	free(out);
	free(b);
	/* a rewrite of the same size: no delta, the copy left out */
	b = lines_of(99, &len2);
	out = write_against(r, &side, b, len2, &id, &stats);
	assert_int_equal(stats.objects, 1);
	assert_null(strstr(out, tu_hex(&side)));
	assert_non_null(strstr(out, tu_hex(&id)));
	assert_int_equal(tu_run(r, "git fsck --strict --no-dangling 2>/dev/null"), 0);
	free(out);
	free(b);
	free(a);
}

/*
 * The end of a replay: this thread checks version 1 of a file while the
 * compressor encodes it, takes version 2 and starts its delta against
 * version 1's content. The check ending must not free that content under
 * the compressor (it did: a use-after-free ASan reports). The hook makes
 * the interleaving happen: the compressor waits, before version 0, until
 * the check of version 1 has begun, and before version 2's delta until it
 * has ended; the check waits until the compressor is at version 2.
 */
static sem_t g_checking, g_at_v2, g_check_done;

static void race_hook(const char *point, size_t k)
{
	if (!strcmp(point, "thread-encode") && k == 0) {
		sem_wait(&g_checking);
	} else if (!strcmp(point, "thread-encode") && k == 2) {
		sem_post(&g_at_v2);
		sem_wait(&g_check_done);
	} else if (!strcmp(point, "help-unlocked") && k == 1) {
		sem_post(&g_checking);
		sem_wait(&g_at_v2);
	} else if (!strcmp(point, "help-done") && k == 1) {
		sem_post(&g_check_done);
	}
}

static void test_check_and_delta_race(void **state)
{
	enum { LEN = 200000 };
	git_odb *odb;
	git_odb_backend *mem;
	rq_odb_pack_encoder *enc = rq_odb_pack_encoder_new_level(1);
	char *v = malloc(LEN + 3);
	git_oid id[3];
	git_odb_object *obj;

	(void)state;
	assert_non_null(enc);
	assert_non_null(v);
	sem_init(&g_checking, 0, 0);
	sem_init(&g_at_v2, 0, 0);
	sem_init(&g_check_done, 0, 0);
	rq_testhook_set_fn(race_hook);
	assert_int_equal(git_odb_new(&odb), 0);
	assert_int_equal(rq_odb_mem_new(&mem), 0);
	assert_int_equal(git_odb_add_backend(odb, mem, 10), 0);
	rq_odb_mem_compress_ahead(mem, enc);
	for (size_t i = 0; i < LEN + 3; i++)
		v[i] = "abcdefgh \n"[(i * 2654435761u >> 7) % 10];
	for (int k = 0; k < 3; k++) {
		v[1000 + 7000 * k] ^= 1; /* version k: another byte changed */
		assert_int_equal(tu_mem_write_like(&id[k], odb, v, LEN + (size_t)k, GIT_OBJECT_BLOB,
						   k ? &id[k - 1] : NULL),
				 0);
	}
	assert_int_equal(rq_odb_mem_encode(mem, enc, 0), 0);
	rq_testhook_set_fn(NULL);
	/* version 2 reads back whole (from its entry, through version 1) */
	assert_int_equal(git_odb_read(&obj, odb, &id[2]), 0);
	assert_int_equal(git_odb_object_size(obj), LEN + 2);
	assert_memory_equal(git_odb_object_data(obj), v, LEN + 2);
	git_odb_object_free(obj);
	git_odb_free(odb);
	rq_odb_pack_encoder_free(enc);
	free(v);
	sem_destroy(&g_checking);
	sem_destroy(&g_at_v2);
	sem_destroy(&g_check_done);
}

static void test_finish_nothing_written(void **state)
{
	tu_repo *r = *state;
	rq_odb_tmpdir *od = NULL;
	rq_odb_tmpdir_stats stats;
	char packdir[PATH_MAX + 8], tmp[PATH_MAX];
	int packs_before;

	objects_path(r, packdir, sizeof(packdir), "pack");
	packs_before = tu_count_entries(packdir, "pack-", ".pack");
	assert_int_equal(rq_odb_tmpdir_open(&od, tu_repo_open(r), NULL, NULL), 0);
	snprintf(tmp, sizeof(tmp), "%s", rq_odb_tmpdir_path(od));
	memset(&stats, 0x5a, sizeof(stats));
	assert_int_equal(rq_odb_tmpdir_finish(od, &stats, NULL), 0);
	assert_int_equal(stats.objects, 0);
	assert_string_equal(stats.pack_name, "");
	assert_int_equal(stats.pack_bytes, 0);
	rq_odb_tmpdir_free(od);
	assert_false(tu_exists(tmp));
	assert_int_equal(tu_count_entries(packdir, "pack-", ".pack"), packs_before);
}

static void test_free_without_finish(void **state)
{
	tu_repo *r = *state;
	git_repository *repo = tu_repo_open(r);
	rq_odb_tmpdir *od = NULL;
	git_oid blob, tree, commit;
	char objects[PATH_MAX], packdir[PATH_MAX + 8], tmp[PATH_MAX];
	int loose_before, packs_before;

	objects_path(r, objects, sizeof(objects), NULL);
	objects_path(r, packdir, sizeof(packdir), "pack");
	loose_before = tu_loose_count(r);
	packs_before = tu_count_entries(packdir, "pack-", "");
	assert_int_equal(rq_odb_tmpdir_open(&od, repo, NULL, NULL), 0);
	snprintf(tmp, sizeof(tmp), "%s", rq_odb_tmpdir_path(od));
	write_objects(repo, "discarded\n", &blob, &tree, &commit);
	assert_true(odb_has(repo, &commit));
	rq_odb_tmpdir_free(od);
	/* everything removed, nothing left in the repository */
	assert_false(tu_exists(tmp));
	assert_int_equal(tu_count_entries(objects, "replayq-tmp-", ""), 0);
	assert_int_equal(tu_loose_count(r), loose_before);
	assert_int_equal(tu_count_entries(packdir, "pack-", ""), packs_before);
	assert_false(odb_has(repo, &blob));
	assert_false(odb_has(repo, &commit));
	assert_int_not_equal(tu_run(r, "git cat-file -e %s 2>/dev/null", tu_hex(&commit)), 0);
	/* writing again goes to the repository's own database */
	{
		git_odb *odb;
		git_oid id;
		char p[2 * PATH_MAX];
		assert_int_equal(git_repository_odb(&odb, repo), 0);
		assert_int_equal(git_odb_write(&id, odb, "after\n", 6, GIT_OBJECT_BLOB), 0);
		git_odb_free(odb);
		loose_path(objects, &id, p, sizeof(p));
		assert_true(tu_exists(p));
	}
	/* free(NULL) is fine */
	rq_odb_tmpdir_free(NULL);
}

/* Two at once in the same repository get different directories. */
static void test_two_dirs(void **state)
{
	tu_repo *r = *state;
	git_repository *other;
	rq_odb_tmpdir *a = NULL, *b = NULL;
	char objects[PATH_MAX];

	objects_path(r, objects, sizeof(objects), NULL);
	assert_int_equal(git_repository_open(&other, r->path), 0);
	assert_int_equal(rq_odb_tmpdir_open(&a, tu_repo_open(r), NULL, NULL), 0);
	assert_int_equal(rq_odb_tmpdir_open(&b, other, NULL, NULL), 0);
	assert_int_equal(tu_count_entries(objects, "replayq-tmp-", ""), 2); /* their markers */
	assert_int_equal(rq_odb_tmpdir_make(a, NULL), 0);
	assert_int_equal(rq_odb_tmpdir_make(b, NULL), 0);
	assert_int_equal(rq_odb_tmpdir_make(b, NULL), 0); /* made once */
	assert_string_not_equal(rq_odb_tmpdir_path(a), rq_odb_tmpdir_path(b));
	assert_int_equal(tu_count_entries(objects, "replayq-tmp-", ""), 4);
	rq_odb_tmpdir_free(a);
	rq_odb_tmpdir_free(b);
	assert_int_equal(tu_count_entries(objects, "replayq-tmp-", ""), 0);
	git_repository_free(other);
}

static void make_dir(const char *objects, const char *name, long age)
{
	char p[2 * PATH_MAX], f[3 * PATH_MAX];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", objects, name);
	assert_int_equal(mkdir(p, 0755), 0);
	/* with some content, as a killed replay leaves it */
	snprintf(f, sizeof(f), "%s/ab", p);
	assert_int_equal(mkdir(f, 0755), 0);
	snprintf(f, sizeof(f), "%s/ab/cdef", p);
	fp = fopen(f, "w");
	assert_non_null(fp);
	fputs("x", fp);
	fclose(fp);
	if (age) {
		struct utimbuf t;
		t.actime = t.modtime = time(NULL) - age;
		assert_int_equal(utime(p, &t), 0);
	}
}

static long dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	/* reaped: no process has this id now (barring immediate reuse) */
	assert_int_equal(kill(pid, 0), -1);
	return (long)pid;
}

static void test_clean_stale(void **state)
{
	tu_repo *r = *state;
	char objects[PATH_MAX], name[128], p[2 * PATH_MAX];
	long dead = dead_pid(), live = (long)getppid();
	rq_error err;

	objects_path(r, objects, sizeof(objects), NULL);
	snprintf(name, sizeof(name), "replayq-tmp-%ld-oldone", dead);
	make_dir(objects, name, 7200);
	snprintf(name, sizeof(name), "replayq-tmp-%ld-fresh1", dead);
	make_dir(objects, name, 0);
	snprintf(name, sizeof(name), "replayq-tmp-%ld-oldliv", live);
	make_dir(objects, name, 7200);
	make_dir(objects, "replayq-tmp-garbage", 7200);
	make_dir(objects, "other-dir", 7200);
	/* a file with the prefix is not a directory: left alone */
	snprintf(p, sizeof(p), "%s/replayq-tmp-1-file", objects);
	{
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fclose(f);
		struct utimbuf t;
		t.actime = t.modtime = time(NULL) - 7200;
		assert_int_equal(utime(p, &t), 0);
	}

	rq_error_clear(&err);
	/* old dead-owner and ownerless dirs go; fresh, live-owned and others stay */
	assert_int_equal(rq_odb_tmpdir_clean_stale(tu_repo_open(r), 3600, &err), 2);
	snprintf(p, sizeof(p), "%s/replayq-tmp-%ld-oldone", objects, dead);
	assert_false(tu_exists(p));
	snprintf(p, sizeof(p), "%s/replayq-tmp-garbage", objects);
	assert_false(tu_exists(p));
	snprintf(p, sizeof(p), "%s/replayq-tmp-%ld-fresh1", objects, dead);
	assert_true(tu_exists(p));
	snprintf(p, sizeof(p), "%s/replayq-tmp-%ld-oldliv", objects, live);
	assert_true(tu_exists(p));
	snprintf(p, sizeof(p), "%s/other-dir", objects);
	assert_true(tu_exists(p));
	snprintf(p, sizeof(p), "%s/replayq-tmp-1-file", objects);
	assert_true(tu_exists(p));
	/* nothing more to do */
	assert_int_equal(rq_odb_tmpdir_clean_stale(tu_repo_open(r), 3600, &err), 0);
	/* max_age 0: the fresh one too, once its owner is dead */
	assert_int_equal(rq_odb_tmpdir_clean_stale(tu_repo_open(r), 0, &err), 1);
	snprintf(p, sizeof(p), "%s/replayq-tmp-%ld-fresh1", objects, dead);
	assert_false(tu_exists(p));
	snprintf(p, sizeof(p), "%s/replayq-tmp-%ld-oldliv", objects, live);
	assert_true(tu_exists(p));
	/* git is happy with what is left */
	assert_int_equal(tu_run(r, "git fsck --no-dangling 2>/dev/null"), 0);
}

static void make_file(const char *dir, const char *name, long age)
{
	char p[2 * PATH_MAX];
	struct utimbuf t;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("PACK", f);
	fclose(f);
	t.actime = t.modtime = time(NULL) - age;
	assert_int_equal(utime(p, &t), 0);
}

/* The temporary pack files a killed replay leaves in objects/pack go
 * with their owner; git's own and a live process's stay. */
static void test_clean_stale_pack_temps(void **state)
{
	tu_repo *r = *state;
	char pack[PATH_MAX], host[300], name[512], dead_name[512], live_name[512], p[2 * PATH_MAX];
	char objects[PATH_MAX];
	long dead = dead_pid(), live = (long)getppid();
	char *h = tu_capture(r, "hostname | tr -d '\\n' | tr -c 'A-Za-z0-9._-' _ | cut -c1-64");

	assert_non_null(h);
	snprintf(host, sizeof(host), "%s", h);
	free(h);
	objects_path(r, pack, sizeof(pack), "pack");
	assert_int_equal(tu_run(r, "mkdir -p '%s'", pack), 0);
	snprintf(dead_name, sizeof(dead_name), "tmp_replayq-tmp-%ld@%s-a1b2c3-pack_Q1w2E3", dead,
		 host);
	make_file(pack, dead_name, 0);
	snprintf(live_name, sizeof(live_name), "tmp_replayq-tmp-%ld@%s-a1b2c3-idx_Q1w2E3", live,
		 host);
	make_file(pack, live_name, 7200);
	make_file(pack, "tmp_pack_Zx9Yw8", 7200);
	snprintf(name, sizeof(name), "tmp_replayq-tmp-%ld@elsewhere.example-d4e5f6-pack_aaaaaa",
		 dead);
	make_file(pack, name, 7200);

	/* not by the clean-up at a replay's start (the pack directory is the
	 * replay's listing's to sweep: see test_scan_sweeps) */
	assert_int_equal(rq_odb_tmpdir_clean_stale(tu_repo_open(r), 3600, NULL), 0);
	/* the whole clean-up: the dead owner's at once; the other machine's by age */
	objects_path(r, objects, sizeof(objects), NULL);
	assert_int_equal(rq_odb_tmpdir_clean_stale_dir(objects, 3600), 2);
	{
		const char *gone[] = {dead_name, name}, *kept[] = {live_name, "tmp_pack_Zx9Yw8"};
		for (int i = 0; i < 2; i++) {
			snprintf(p, sizeof(p), "%s/%s", pack, gone[i]);
			assert_false(tu_exists(p));
			snprintf(p, sizeof(p), "%s/%s", pack, kept[i]);
			assert_true(tu_exists(p));
		}
	}
	assert_int_equal(rq_odb_tmpdir_clean_stale_dir(objects, 0), 0);
}

/* A .keep file saying "replayq <pid>@<host>", its flock held when hold
 * is set (the descriptor to close then), as a live replay holds it. */
static int make_keep(const char *pack, const char *name, long pid, const char *host, int hold)
{
	char p[2 * PATH_MAX], text[400];
	int fd, n;

	snprintf(p, sizeof(p), "%s/%s.keep", pack, name);
	assert_true((fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0444)) >= 0);
	n = snprintf(text, sizeof(text), "replayq %ld@%s\n", pid, host);
	assert_int_equal(write(fd, text, (size_t)n), n);
	if (!hold) {
		close(fd);
		return -1;
	}
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	return fd;
}

/* The listing a replay makes of objects/pack sweeps what killed replays
 * left: temporary files, their .keep files and a pack moved in without
 * its index; a live process's keep, git's own and another tool's stay. */
static void test_scan_sweeps(void **state)
{
	tu_repo *r = *state;
	char pack[PATH_MAX], objects[PATH_MAX], host[300], name[512], p[2 * PATH_MAX];
	char owned[2][512];
	char *h = tu_capture(r, "hostname | tr -d '\\n' | tr -c 'A-Za-z0-9._-' _ | cut -c1-64");
	long dead = dead_pid(), live = (long)getppid();
	int held, marker;
	git_odb *odb;
	git_oid zero;

	assert_non_null(h);
	snprintf(host, sizeof(host), "%s", h);
	free(h);
	objects_path(r, pack, sizeof(pack), "pack");
	assert_int_equal(tu_run(r, "mkdir -p '%s'", pack), 0);
	snprintf(name, sizeof(name), "tmp_replayq-tmp-%ld@%s-a1b2c3-pack_Q1w2E3", dead, host);
	make_file(pack, name, 0);
	/* a dead owner's: its flock free, whatever its pid */
	make_keep(pack, "pack-1111111111111111111111111111111111111111", live, host, 0);
	make_file(pack, "pack-1111111111111111111111111111111111111111.pack", 0);
	/* a live owner's: held, whatever its pid (one no process has here) */
	held = make_keep(pack, "pack-2222222222222222222222222222222222222222", dead, host, 1);
	make_file(pack, "pack-2222222222222222222222222222222222222222.pack", 0);
	make_file(pack, "pack-3333333333333333333333333333333333333333.keep", 0);
	/* temporary files named after owner markers: by the marker's flock, not
	 * by pid or age (a held one's, old and of a dead pid, stays; a free
	 * one's, new and of a live pid, goes) */
	objects_path(r, objects, sizeof(objects), NULL);
	snprintf(p, sizeof(p), "%s/replayq-tmp-%ld@%s.0000000a.owner", objects, dead, host);
	assert_true((marker = open(p, O_RDWR | O_CREAT | O_EXCL, 0644)) >= 0);
	assert_int_equal(flock(marker, LOCK_EX | LOCK_NB), 0);
	snprintf(p, sizeof(p), "%s/replayq-tmp-%ld@%s.0000000b.owner", objects, live, host);
	make_file(objects, strrchr(p, '/') + 1, 0);
	snprintf(owned[0], sizeof(owned[0]), "tmp_replayq-tmp-%ld@%s.0000000a-pack_AAAAAA", dead,
		 host);
	make_file(pack, owned[0], 7200);
	snprintf(owned[1], sizeof(owned[1]), "tmp_replayq-tmp-%ld@%s.0000000b-idx_BBBBBB", live,
		 host);
	make_file(pack, owned[1], 0);
	assert_int_equal(rq_odb_new(&odb, tu_repo_open(r), NULL, NULL), 0);
	memset(&zero, 1, sizeof(zero));
	assert_false(git_odb_exists(odb, &zero)); /* the packs listed */
	git_odb_free(odb);
	const char *gone[] = {name, "pack-1111111111111111111111111111111111111111.keep",
			      "pack-1111111111111111111111111111111111111111.pack", owned[1]};
	const char *kept[] = {"pack-2222222222222222222222222222222222222222.keep",
			      "pack-2222222222222222222222222222222222222222.pack",
			      "pack-3333333333333333333333333333333333333333.keep", owned[0]};
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", pack, gone[i]);
		assert_false(tu_exists(p));
		snprintf(p, sizeof(p), "%s/%s", pack, kept[i]);
		assert_true(tu_exists(p));
	}
	close(held);
	close(marker);
}

/* A live replay's own directory is not removed by a clean-up with a long max_age. */
static void test_clean_stale_keeps_open(void **state)
{
	tu_repo *r = *state;
	rq_odb_tmpdir *od = NULL;
	char tmp[PATH_MAX];

	assert_int_equal(rq_odb_tmpdir_open(&od, tu_repo_open(r), NULL, NULL), 0);
	assert_int_equal(rq_odb_tmpdir_make(od, NULL), 0);
	snprintf(tmp, sizeof(tmp), "%s", rq_odb_tmpdir_path(od));
	assert_int_equal(rq_odb_tmpdir_clean_stale(tu_repo_open(r), 3600, NULL), 0);
	assert_true(tu_exists(tmp));
	rq_odb_tmpdir_free(od);
	assert_false(tu_exists(tmp));
}

/* A running replay keeps its directory's modification time recent, which
 * is what another machine's clean-up looks at; not more often than asked. */
static void test_keepalive(void **state)
{
	tu_repo *r = *state;
	rq_odb_tmpdir *od = NULL;
	char tmp[2 * PATH_MAX], objects[PATH_MAX], name[160];
	struct utimbuf old;
	struct stat st;
	time_t now = time(NULL);

	assert_int_equal(rq_odb_tmpdir_open(&od, tu_repo_open(r), NULL, NULL), 0);
	assert_int_equal(rq_odb_tmpdir_make(od, NULL), 0);
	snprintf(tmp, sizeof(tmp), "%s", rq_odb_tmpdir_path(od));
	old.actime = old.modtime = now - 7200;
	assert_int_equal(utime(tmp, &old), 0);
	/* made just now: not yet */
	rq_odb_tmpdir_keepalive(od, 3600);
	assert_int_equal(stat(tmp, &st), 0);
	assert_true(st.st_mtime <= now - 7000);
	rq_odb_tmpdir_keepalive(od, 0);
	assert_int_equal(stat(tmp, &st), 0);
	assert_true(st.st_mtime >= now - 5);
	rq_odb_tmpdir_keepalive(NULL, 0); /* fine */
	rq_odb_tmpdir_free(od);

	/* another machine's directories: by age only */
	objects_path(r, objects, sizeof(objects), NULL);
	snprintf(name, sizeof(name), "replayq-tmp-%ld@elsewhere.example-abcdef", dead_pid());
	make_dir(objects, name, 7200);
	snprintf(name, sizeof(name), "replayq-tmp-%ld@elsewhere.example-ghijkl", dead_pid());
	make_dir(objects, name, 60);
	assert_int_equal(rq_odb_tmpdir_clean_stale(tu_repo_open(r), 300, NULL), 1);
	snprintf(tmp, sizeof(tmp), "%s/%s", objects, name);
	assert_true(tu_exists(tmp));
}

static void test_bare_repository(void **state)
{
	tu_repo *r = *state;
	git_repository *repo;
	rq_odb_tmpdir *od = NULL;
	rq_odb_tmpdir_stats stats;
	git_oid blob;
	git_odb *odb;
	char objects[PATH_MAX], tmp[PATH_MAX];

	repo = tu_repo_open(r);
	objects_path(r, objects, sizeof(objects), NULL);
	assert_int_equal(rq_odb_tmpdir_open(&od, repo, NULL, NULL), 0);
	snprintf(tmp, sizeof(tmp), "%s", rq_odb_tmpdir_path(od));
	assert_int_equal(strncmp(tmp, objects, strlen(objects)), 0);
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	assert_int_equal(git_odb_write(&blob, odb, "bare\n", 5, GIT_OBJECT_BLOB), 0);
	git_odb_free(odb);
	assert_int_equal(rq_odb_tmpdir_finish(od, &stats, NULL), 0);
	assert_int_equal(stats.objects, 1);
	rq_odb_tmpdir_free(od);
	assert_false(tu_exists(tmp));
	assert_int_equal(tu_run(r, "git cat-file -e %s", tu_hex(&blob)), 0);
	assert_int_equal(tu_loose_count(r), 0);
}

static void test_rmtree(void **state)
{
	tu_repo *r = *state;
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/tree", r->root);
	tu_git(r, "mkdir -p ../tree/a/b ../tree/c ../outside && echo x >../tree/a/b/f && "
		  "echo y >../outside/keep && ln -s ../../outside ../tree/c/link && "
		  "chmod 444 ../tree/a/b/f");
	assert_int_equal(rq_fs_rmtree(p), 0);
	assert_false(tu_exists(p));
	/* the symlink was removed, not followed */
	snprintf(p, sizeof(p), "%s/outside/keep", r->root);
	assert_true(tu_exists(p));
	/* a missing path is fine */
	snprintf(p, sizeof(p), "%s/missing", r->root);
	assert_int_equal(rq_fs_rmtree(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_open_write_finish, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_finish_nothing_written, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_borrowed_base, setup, teardown),
	    cmocka_unit_test(test_check_and_delta_race),
	    cmocka_unit_test_setup_teardown(test_compress_ahead, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_free_without_finish, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_two_dirs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_clean_stale, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_clean_stale_pack_temps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_scan_sweeps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_clean_stale_keeps_open, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_keepalive, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bare_repository, setup_bare, teardown),
	    cmocka_unit_test_setup_teardown(test_rmtree, setup, teardown),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
