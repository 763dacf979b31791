/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * refs_layer: what reading refs costs through libgit2's ref layer and
 * without it, in one process (no start-up in the figures), for
 * bench/run-refs.
 *
 *   refs_layer REPO NREFS N
 *
 * Opens REPO as replayq does (rq_repofmt_open: files through libgit2's own
 * backend, reftable through rq_refdb_rt), then, best of 5 each:
 *   open     rq_repofmt_open and the first lookup (HEAD)
 *   lookup   N lookups of refs/heads/b<i> spread over the NREFS names
 *            b000000.., through
 *            libgit2 (git_reference_name_to_id)
 *   iterate  every ref of refs/heads/ through libgit2 (glob iterator)
 * and, for a reftable repository, the same two without libgit2 (rq_rtstack
 * directly): what replacing libgit2's ref layer would save. Prints
 * "<what> <ms>" lines (lookup: microseconds per lookup).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <git2.h>

#include "rq_repofmt.h"
#include "rq_rtstack.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void name_of(char *out, size_t size, long i)
{
	snprintf(out, size, "refs/heads/b%06ld", i);
}

static double git2_open(const char *path)
{
	git_repository *repo;
	git_oid id;
	rq_error err;
	double t = now_ms();

	if (rq_repofmt_open(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, &err) < 0) {
		fprintf(stderr, "refs_layer: %s\n", err.msg);
		exit(1);
	}
	if (git_reference_name_to_id(&id, repo, "HEAD") < 0)
		exit(1);
	t = now_ms() - t;
	git_repository_free(repo);
	return t;
}

static double git2_lookups(git_repository *repo, long n, long nrefs)
{
	char name[64];
	git_oid id;
	double t = now_ms();

	for (long i = 0; i < n; i++) {
		name_of(name, sizeof(name), i * (nrefs / n));
		if (git_reference_name_to_id(&id, repo, name) < 0)
			exit(1);
	}
	return (now_ms() - t) * 1000 / n;
}

static double git2_iterate(git_repository *repo, long *count)
{
	git_reference_iterator *it;
	git_reference *ref;
	double t = now_ms();

	*count = 0;
	if (git_reference_iterator_glob_new(&it, repo, "refs/heads/*") < 0)
		exit(1);
	while (git_reference_next(&ref, it) == 0) {
		git_reference_free(ref);
		(*count)++;
	}
	git_reference_iterator_free(it);
	return now_ms() - t;
}

static double stack_lookups(rq_rtstack *st, long n, long nrefs)
{
	rq_rtstack_ref r = {0};
	char name[64];
	rq_error err;
	double t = now_ms();

	for (long i = 0; i < n; i++) {
		name_of(name, sizeof(name), i * (nrefs / n));
		if (rq_rtstack_read(st, name, &r, &err) != 1)
			exit(1);
	}
	rq_rtstack_ref_release(&r);
	return (now_ms() - t) * 1000 / n;
}

static double stack_iterate(rq_rtstack *st)
{
	rq_rtstack_iter *it;
	const rq_rtable_ref *r;
	rq_error err;
	double t = now_ms();

	if (rq_rtstack_refs(&it, st, "refs/heads/", &err) < 0)
		exit(1);
	while (rq_rtstack_next_ref(it, &r, &err) == 0)
		;
	rq_rtstack_iter_free(it);
	return now_ms() - t;
}

#define BEST(var, expr)                                                                            \
	do {                                                                                       \
		var = 1e18;                                                                        \
		for (int k_ = 0; k_ < 5; k_++) {                                                   \
			double v_ = (expr);                                                        \
			if (v_ < var)                                                              \
				var = v_;                                                          \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	git_repository *repo;
	rq_rtstack *st;
	rq_error err;
	char dir[4096];
	double t;
	long nrefs, n, count;

	if (argc != 4 || (nrefs = atol(argv[2])) <= 0 || (n = atol(argv[3])) <= 0 || n > nrefs)
		return fprintf(stderr, "usage: refs_layer REPO NREFS N\n"), 2;
	git_libgit2_init();
	BEST(t, git2_open(argv[1]));
	printf("open %.3f\n", t);
	if (rq_repofmt_open(&repo, argv[1], GIT_REPOSITORY_OPEN_NO_SEARCH, &err) < 0)
		return 1;
	BEST(t, git2_lookups(repo, n, nrefs));
	printf("lookup %.3f\n", t);
	BEST(t, git2_iterate(repo, &count));
	printf("iterate %.3f\n", t);
	snprintf(dir, sizeof(dir), "%s/reftable", git_repository_commondir(repo));
	if (rq_rtstack_open(&st, dir, rq_repofmt_algo(repo), &err) == 0 && rq_rtstack_ntables(st)) {
		BEST(t, stack_lookups(st, n, nrefs));
		printf("direct-lookup %.3f\n", t);
		BEST(t, stack_iterate(st));
		printf("direct-iterate %.3f\n", t);
		rq_rtstack_free(st);
	}
	git_repository_free(repo);
	git_libgit2_shutdown();
	return 0;
}
