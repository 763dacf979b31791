/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq maintain [<repo>]: consolidate the packs replayq wrote in a
 * repository, on demand (core/odb/rq_odb_repack, the same consolidation a
 * replay runs when its packs reach the threshold, here below it too), and
 * sweep what killed replays left (temporary files, .keep files). Reports
 * the packs and bytes before and after, as text or as the "maintain"
 * object of a maintenance job's result (--format=json). Exit status: 0, or
 * 128 with the error.
 */
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"
#include "opt.h"
#include "rq_odb_repack.h"
#include "rq_odb_tmpdir.h"
#include "rq_repofmt.h"
#include "rq_result_json.h"
#include "rq_testhook.h"

static const char maintain_synopsis[] = "usage: replayq maintain [--format=text|json] [<repo>]\n";

static const char maintain_footer[] =
    "Consolidates the packs replayq wrote in the repository (<repo>, or the one\n"
    "git finds from here), as `git repack --geometric=2` would, and reports the\n"
    "packs and bytes before and after.\n";

/* The repository: <repo> when given, else as git finds it. 0 or 128. */
static int open_repo(const rq_opt_args *args, git_repository **repo)
{
	rq_error err;

	if (args->n > 1) {
		fprintf(stderr, "fatal: one repository at most\n");
		return 128;
	}
	if (!args->n)
		return rq_cli_open_repo(repo, NULL);
	/* its format checked (reftables; an unsupported one named) */
	if (rq_repofmt_open(repo, args->v[0], GIT_REPOSITORY_OPEN_NO_SEARCH, &err) < 0) {
		*repo = NULL;
		if (err.code == RQ_E_UNSUPPORTED_REPO)
			rq_repofmt_print(stderr, err.msg);
		else
			fprintf(stderr, "fatal: '%s' is not a git repository\n", args->v[0]);
		return 128;
	}
	return 0;
}

static void print_text(const rq_odb_repack_stats *st, int swept)
{
	printf("packs: %zu -> %zu (replayq's: %zu -> %zu)\n", st->packs_before, st->packs_after,
	       st->own_before, st->own_after);
	printf("bytes: %llu -> %llu\n", (unsigned long long)st->bytes_before,
	       (unsigned long long)st->bytes_after);
	if (st->busy)
		printf("another process is consolidating: nothing done\n");
	else if (st->merged)
		printf("merged %zu of replayq's packs into %s (%zu objects, %llu bytes)\n",
		       st->merged, st->pack_name, st->objects, (unsigned long long)st->pack_bytes);
	else
		printf("nothing to merge\n");
	if (swept)
		printf("removed %d files left by killed replays\n", swept);
}

static int print_json(const rq_odb_repack_stats *st)
{
	json_t *o = rq_result_maintain_to_json(st, 0, NULL);
	json_t *m = json_object_get(o, "maintain");
	char *s = m ? json_dumps(m, JSON_COMPACT) : NULL;

	json_decref(o);
	if (!s) {
		fputs("fatal: out of memory\n", stderr);
		return 128;
	}
	/* the suite's schemas: the "maintain" member of a result */
	rq_testhook_doc("maintain", "ok", s, strlen(s), NULL);
	puts(s);
	free(s);
	return 0;
}

/* Sweep and consolidate repo's objects directory: the exit status. */
static int maintain(git_repository *repo, int json)
{
	rq_odb_repack_opts o = {0, 1, 0, rq_repofmt_algo(repo)};
	rq_odb_repack_stats st;
	git_buf dir = GIT_BUF_INIT;
	rq_error err;
	int swept;

	rq_error_clear(&err);
	if (git_repository_item_path(&dir, repo, GIT_REPOSITORY_ITEM_OBJECTS) < 0) {
		fprintf(stderr, "fatal: cannot find the objects directory\n");
		return 128;
	}
	while (dir.size > 1 && dir.ptr[dir.size - 1] == '/')
		dir.ptr[--dir.size] = '\0';
	swept = rq_odb_tmpdir_clean_stale_dir(dir.ptr, 300);
	if (rq_odb_repack_run(dir.ptr, &o, &st, &err) < 0) {
		git_buf_dispose(&dir);
		fprintf(stderr, "fatal: %s\n", err.msg);
		return 128;
	}
	git_buf_dispose(&dir);
	if (json)
		return print_json(&st);
	print_text(&st, swept > 0 ? swept : 0);
	return 0;
}

int cmd_maintain(int argc, char **argv)
{
	const char *format = NULL;
	const rq_opt opts[] = {RQ_OPT_STRING("format", &format, "<fmt>", "text (default) or json"),
			       RQ_OPT_END};
	const rq_opt_spec spec = {
	    .usage = maintain_synopsis, .footer = maintain_footer, .opts = opts};
	git_repository *repo = NULL;
	rq_opt_args args;
	int status;

	if (rq_opt_parse(&spec, argc, argv, &args, &status) < 0)
		return status;
	if (format && strcmp(format, "text") && strcmp(format, "json"))
		status =
		    rq_opt_usage_error(&spec, "invalid --format value '%s' (text or json)", format);
	else if ((status = open_repo(&args, &repo)) == 0)
		status = maintain(repo, format && !strcmp(format, "json"));
	git_repository_free(repo);
	rq_opt_args_free(&args);
	if (fflush(stdout) != 0 && status == 0)
		status = 128;
	return status;
}
