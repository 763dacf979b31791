/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq replay: the command-line face of the engine, a drop-in for
 * `git replay`. Parses options like git's parse-options (--opt=value and
 * --opt value, through worker/opt), runs rq_replay_run(), then prints or
 * applies the ref updates. Exit status: 0 clean, 1 conflict, 128 error,
 * 129 usage. With --keep-going (beyond git), every branch that replays
 * cleanly moves (or is printed), each conflicting or blocked one gets a
 * line on stderr, and the exit status is 1 when any did not replay.
 */
#include <jansson.h>
#include <limits.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "cli.h"
#include "opt.h"
#include "rq_commit.h"
#include "rq_trace.h"
#include "rq_odb.h"
#include "rq_odb_view.h"
#include "rq_odb_tmpdir.h"
#include "rq_parallel.h"
#include "rq_refproto.h"
#include "rq_refs.h"
#include "rq_refdb.h"
#include "rq_repofmt.h"
#include "rq_replay.h"
#include "rq_result_json.h"
#include "rq_revfilter.h"
#include "rq_testhook.h"
#include "sign_cli.h"

static const char replay_synopsis[] =
    "usage: replayq [-C <path>] replay ([--contained] --onto=<newbase> | --advance=<branch> |\n"
    "                                  --revert=<branch>) [--ref=<ref>]\n"
    "                                  [--ref-action=update|print] [--empty=drop|keep|abort]\n"
    "                                  [--format=text|json] [--jobs=<n>] [--keep-going]\n"
    "                                  [-S[<key-id>] | --gpg-sign[=<key-id>] | --no-gpg-sign]\n"
    "                                  <revision>...\n";

/* The command line: the options, and the revisions with the walk options
 * and pathspecs the engine takes (in order, "--" included). */
typedef struct replay_cli {
	const char *onto, *advance, *revert, *ref, *ref_action, *empty, *format, *jobs;
	const char *sign; /* -S: rq_sign_cli_unset, NULL, "" or a key */
	int contained, keep_going;
	rq_opt opts[12];
	rq_opt_spec spec;
	rq_opt_args revs;
} replay_cli;

/* One replay: what it runs on and with, and what came of it. */
typedef struct replay_run {
	git_repository *repo;
	rq_replay_opts opts;
	rq_odb_opts odb_opts;
	git_buf objects_dir;
	rq_ident committer, author;
	rq_sign *signer;
	rq_replay_result res;
	rq_error err;
	int json, print, applied;
} replay_run;

static void cli_init(replay_cli *c)
{
	const rq_opt opts[] = {
	    RQ_OPT_STRING("onto", &c->onto, "<revision>", "replay onto given commit"),
	    RQ_OPT_STRING("advance", &c->advance, "<branch>", "make replay advance given branch"),
	    RQ_OPT_STRING("revert", &c->revert, "<branch>",
			  "revert the commits on top of given branch"),
	    RQ_OPT_BOOL("contained", &c->contained,
			"update all branches that point at commits in the range"),
	    RQ_OPT_STRING("ref", &c->ref, "<ref>", "update this ref instead"),
	    RQ_OPT_STRING("ref-action", &c->ref_action, "<mode>",
			  "update the refs (default) or print the updates"),
	    RQ_OPT_STRING("empty", &c->empty, "<mode>",
			  "commits that become empty: drop (default), keep, abort"),
	    RQ_OPT_STRING("format", &c->format, "<fmt>", "text (default) or json"),
	    RQ_OPT_STRING("jobs", &c->jobs, "<n>",
			  "replay independent branches in n forked children\n"
			  "(default: the number of cores)"),
	    RQ_OPT_BOOL("keep-going", &c->keep_going,
			"replay every branch that replays cleanly; report the others"),
	    RQ_SIGN_CLI_OPTION(&c->sign),
	    RQ_OPT_END};

	memset(c, 0, sizeof(*c));
	_Static_assert(sizeof(opts) == sizeof(c->opts), "the table fills c->opts exactly");
	memcpy(c->opts, opts, sizeof(opts));
	c->sign = rq_sign_cli_unset;
	c->spec.usage = replay_synopsis;
	c->spec.opts = c->opts;
	/* revision-walk options go to the engine, which judges them */
	c->spec.flags = RQ_OPT_KEEP_UNKNOWN | RQ_OPT_KEEP_DASHDASH;
	c->spec.unknown_takes_value = rq_revfilter_wants_value; /* "--author Bob" */
	c->spec.help_status = 0; /* git 2.55 replay -h: the usage on stdout, exit 0 */
}

/* A usage error (129): git's text on stderr, and run->err for the JSON. */
static int usage_error(const replay_cli *c, replay_run *run, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int usage_error(const replay_cli *c, replay_run *run, const char *fmt, ...)
{
	char msg[RQ_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rq_error_set(&run->err, RQ_E_USAGE, "%s", msg);
	return rq_opt_usage_error(&c->spec, "%s", msg);
}

/* An error before the replay (128): "fatal: <msg>", and run->err. */
static int fatal_error(replay_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fatal_error(replay_run *run, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(run->err.msg, sizeof(run->err.msg), fmt, ap);
	va_end(ap);
	run->err.code = RQ_E_USAGE;
	fprintf(stderr, "fatal: %s\n", run->err.msg);
	return 128;
}

/* --empty's value: its rq_empty, or -1 when it names none. */
static int empty_of(const char *v)
{
	for (int i = 0; rq_replay_empty_names[i]; i++)
		if (!strcmp(v, rq_replay_empty_names[i]))
			return i;
	return -1;
}

/* The option values that need no repository: 0, or an exit status. */
static int cli_check(const replay_cli *c, replay_run *run)
{
	int modes = !!c->onto + !!c->advance + !!c->revert;

	if (!modes)
		return usage_error(c, run, "%s",
				   "exactly one of --onto, --advance, or --revert is required");
	if (modes > 1)
		return fatal_error(run, "options '%s' and '%s' cannot be used together",
				   c->onto ? "--onto" : "--advance",
				   c->revert ? "--revert" : "--advance");
	if (c->format && strcmp(c->format, "text") && strcmp(c->format, "json"))
		return usage_error(c, run, "invalid --format value '%s' (text or json)", c->format);
	if (c->empty && empty_of(c->empty) < 0)
		return usage_error(c, run, "invalid --empty value '%s' (drop, keep or abort)",
				   c->empty);
	if (c->ref_action && strcmp(c->ref_action, "update") && strcmp(c->ref_action, "print"))
		return fatal_error(run, "invalid --ref-action value: '%s'",
				   c->ref_action); /* as git */
	return 0;
}

/* git's warnings for the walk options a replay overrides */
static void warn_overridden(const replay_cli *c)
{
	static const char *const what[] = {"reverse", "sort_order"};
	int seen[2] = {0, 0};

	for (size_t i = 0; i < c->revs.n; i++) {
		seen[0] |= !strcmp(c->revs.v[i], "--reverse");
		seen[1] |= !strcmp(c->revs.v[i], "--date-order") ||
			   !strcmp(c->revs.v[i], "--author-date-order");
	}
	for (int k = 0; k < 2; k++)
		if (seen[k])
			fprintf(stderr,
				"warning: some rev walking options will be overridden as '%s' bit "
				"in 'struct rev_info' will be forced\n",
				what[k]);
}

/* How messages name the objects directory: relative to the current
 * directory when it is below it, as git does (else NULL: its path). */
static const char *objects_shown(git_repository *repo, git_buf *dir)
{
	char cwd[PATH_MAX];
	size_t cl;

	if (git_repository_item_path(dir, repo, GIT_REPOSITORY_ITEM_OBJECTS) < 0)
		return NULL;
	if (dir->size > 1 && dir->ptr[dir->size - 1] == '/')
		dir->ptr[--dir->size] = '\0';
	if (getcwd(cwd, sizeof(cwd)) && (cl = strlen(cwd)) > 1 && !strncmp(dir->ptr, cwd, cl) &&
	    dir->ptr[cl] == '/')
		return dir->ptr + cl + 1;
	return NULL;
}

/* replay.refAction from the repository's config: 0 (*out NULL when
 * unset), -1 when it is too long to be a value. */
static int config_ref_action(git_repository *repo, const char **out)
{
	git_config *cfg = NULL, *snap = NULL;
	const char *v = NULL;
	static char buf[32];
	int rc = 0;

	*out = NULL;
	if (git_repository_config(&cfg, repo) == 0 && git_config_snapshot(&snap, cfg) == 0 &&
	    git_config_get_string(&v, snap, "replay.refAction") == 0 && v) {
		if (strlen(v) >= sizeof(buf))
			rc = -1;
		else
			*out = strcpy(buf, v);
	}
	git_config_free(snap);
	git_config_free(cfg);
	return rc;
}

/* Open the repository (as git finds it) and settle the ref action: 0 or
 * 128 (said). */
static int open_repository(replay_cli *c, replay_run *run)
{
	int status = rq_cli_open_repo(&run->repo, &run->err);

	if (status)
		return status;
	if (!c->ref_action &&
	    (config_ref_action(run->repo, &c->ref_action) < 0 ||
	     (c->ref_action && strcmp(c->ref_action, "update") && strcmp(c->ref_action, "print"))))
		return fatal_error(run, "invalid replay.refAction value: '%s'",
				   c->ref_action ? c->ref_action : "(too long)");
	run->print = c->ref_action && !strcmp(c->ref_action, "print");
	return 0;
}

/* --jobs, or the number of cores: 0 or 129 (said). */
static int jobs_option(const replay_cli *c, replay_run *run)
{
	rq_replay_opts *o = &run->opts;
	long j;

	if (!c->jobs) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o->jobs = n < 1 ? 1 : n > RQ_MAX_JOBS ? RQ_MAX_JOBS : (int)n;
		o->jobs_auto = 1;
		return 0;
	}
	if (rq_opt_number(c->jobs, 1, RQ_MAX_JOBS, &j) < 0)
		return usage_error(c, run, "--jobs takes a number from 1 to 64, not '%s'", c->jobs);
	o->jobs = (int)j;
	return 0;
}

/* The engine's options from the command line, the identities included:
 * 0, or -1 with run->err set. */
static int replay_setup(const replay_cli *c, replay_run *run)
{
	rq_replay_opts *o = &run->opts;
	o->mode = c->onto ? RQ_MODE_ONTO : c->advance ? RQ_MODE_ADVANCE : RQ_MODE_REVERT;
	o->target = c->onto ? c->onto : c->advance ? c->advance : c->revert;
	o->contained = c->contained;
	o->keep_going = c->keep_going;
	o->ref = c->ref;
	o->revisions = c->revs.v;
	o->nrevisions = c->revs.n;
	o->empty = c->empty ? (rq_empty)empty_of(c->empty) : RQ_EMPTY_DROP;
	if (rq_ident_default(run->repo, &run->committer, &run->err) < 0)
		return -1;
	o->committer = &run->committer;
	/* the current author: a revert's (as git revert), and a pick's whose
	 * original has no author line git can read (git's commit_tree) */
	if (rq_ident_author_default(run->repo, &run->author, &run->err) == 0)
		o->author = &run->author;
	else if (o->mode == RQ_MODE_REVERT)
		return -1;
	rq_error_clear(&run->err);
	run->odb_opts.objects_shown = objects_shown(run->repo, &run->objects_dir);
	run->odb_opts.algo = rq_repofmt_algo(run->repo);
	run->odb_opts.refs = rq_refdb_odb_refs;
	run->odb_opts.refs_arg = run->repo;
	/* the pack is kept from git's repack and gc until its refs moved */
	run->odb_opts.keep_pack = !run->print;
	o->objects = &run->odb_opts;
	if (rq_sign_cli_open(c->sign, &run->signer, &run->err) < 0)
		return -1;
	o->sign = run->signer;
	return 0;
}

static int emit_json(const replay_run *run, int rc)
{
	json_t *o = rq_result_to_json(&run->res, rc, &run->err, run->applied);
	char *s = o && (!run->signer || rq_result_set_signed(o) == 0)
		      ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6))
		      : NULL;

	json_decref(o);
	if (!s) {
		fputs("fatal: out of memory\n", stderr);
		return -1;
	}
	rq_testhook_doc("result", "ok", s, strlen(s), NULL); /* the suite's schemas */
	puts(s);
	free(s);
	return 0;
}

/* The messages git prints as an error rather than as a fatal one. */
static int git_says_error(const rq_error *err)
{
	return !strncmp(err->msg, "'--ref' cannot be used", 22) ||
	       !strncmp(err->msg, "failed to commit ref transaction: ", 34) ||
	       !strncmp(err->msg, "unrecognized argument: ", 23) ||
	       (err->code == RQ_E_BAD_REF && strstr(err->msg, "is not a valid refname"));
}

/* A failed replay, in git's words: 128, or 130 when interrupted. As git's
 * messages do, control characters (a DEL in a ref name) show as '?'. */
static int report_error(const rq_error *err)
{
	char msg[RQ_ERROR_MSG_MAX];

	snprintf(msg, sizeof(msg), "%s", err->msg);
	for (char *p = msg; *p; p++)
		if (iscntrl((unsigned char)*p) && *p != '\t' && *p != '\n')
			*p = '?';
	fprintf(stderr, "%s: %s\n", git_says_error(err) ? "error" : "fatal", msg);
	if (err->code == RQ_E_BAD_REVISION &&
	    strstr(err->msg, ": no such path in the working tree."))
		fputs("Use 'git <command> -- <path>...' to specify paths that do not exist "
		      "locally.\n",
		      stderr); /* git's hint, word for word */
	if (err->code == RQ_E_BAD_REVISION && !strncmp(err->msg, "ambiguous argument", 18))
		fputs("Use '--' to separate paths from revisions, like this:\n"
		      "'git <command> [<revision>...] -- [<file>...]'\n",
		      stderr); /* git's hint, word for word */
	return err->code == RQ_E_INTERRUPTED ? 130 : 128;
}

/* A conflicting merge commit: git's command that shows what its author did
 * by hand (the remerge diff), which the replay could not carry. */
static void merge_hint(const rq_oid *commit, const rq_oid_algo *algo)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];

	rq_oid_fmt(hex, commit, algo);
	fprintf(stderr,
		"hint: %s is a merge; 'git show --remerge-diff %s' shows what its author "
		"did by hand\n",
		hex, hex);
}

/* --keep-going: a line on stderr for each ref that did not move:
 * "conflict <ref> at <commit>: <path> (<kind>), ..." or
 * "blocked <ref> by <ref> at <commit>". */
static void report_refs(const rq_replay_result *res)
{
	for (size_t i = 0; i < res->nrefs; i++) {
		const rq_ref_outcome *r = &res->refs[i];
		const rq_pick_conflict *f = &res->failed[r->failed];
		char hex[RQ_OID_MAX_HEXSZ + 1];
		if (r->status == RQ_REF_OK)
			continue;
		rq_oid_fmt(hex, &f->commit, rq_ref_updates_algo(&res->upd));
		if (r->status == RQ_REF_BLOCKED) {
			fprintf(stderr, "blocked %s by %s at %s\n", r->ref, r->blocked_by, hex);
			continue;
		}
		fprintf(stderr, "conflict %s at %s:", r->ref, hex);
		for (size_t k = 0; k < f->conflicts.n; k++)
			fprintf(stderr, "%s %s (%s)", k ? "," : "", f->conflicts.v[k].path,
				rq_conflict_kind_name(f->conflicts.v[k].kind));
		fputc('\n', stderr);
		if (f->merge)
			merge_hint(&f->commit, rq_ref_updates_algo(&res->upd));
	}
}

/* The outcome (rc from the replay) on stdout and stderr: the exit status. */
static int report(const replay_run *run, int rc)
{
	int kept = rc == 1 && run->res.keep_going; /* the clean refs count */
	char *lines;

	if (run->json && emit_json(run, rc) < 0)
		rc = -1;
	if (rc < 0)
		return report_error(&run->err);
	if (kept && !run->json)
		report_refs(&run->res);
	if (rc == 1 && !kept) { /* as git replay: exit 1 and not a word (--format=json
				 * has the commit, the paths and their kinds); git
				 * replay cannot replay a merge: for one, a hint */
		if (run->res.conflict_merge && !run->json)
			merge_hint(&run->res.conflict_commit, rq_ref_updates_algo(&run->res.upd));
		return 1;
	}
	if (!run->print || run->json)
		return rc;
	if (!(lines = rq_refs_format_updates(&run->res.upd))) {
		fputs("fatal: out of memory\n", stderr);
		return 128;
	}
	fputs(lines, stdout);
	free(lines);
	return rc;
}

static void say_stderr(void *arg, const char *text)
{
	(void)arg;
	fputs(text, stderr);
}

/* What git says as it reads a graft file (its deprecation hint, the lines
 * it skips), once the replay read commits: git reads the file at its
 * first commit, so not when a revision did not resolve. */
static void graft_notes(const replay_run *run, int rc)
{
	rq_error err;

	if (rc < 0 && run->err.code == RQ_E_BAD_REVISION)
		return;
	rq_error_clear(&err);
	(void)rq_odb_view_graft_notes(run->repo, run->odb_opts.root, run->odb_opts.algo, say_stderr,
				      NULL, &err);
}

/* Everything after the command line: the exit status. */
static int replay(replay_cli *c, replay_run *run)
{
	int status, rc;

	run->json = c->format && !strcmp(c->format, "json");
	if ((status = cli_check(c, run)) != 0 || (status = open_repository(c, run)) != 0 ||
	    (status = jobs_option(c, run)) != 0) {
		/* the JSON object on stdout too, whatever the outcome */
		if (run->json)
			emit_json(run, -1);
		return status;
	}
	RQ_TRACE_AT("repository open");
	run->opts.cancel = rq_cli_catch_signals();
	rc = replay_setup(c, run);
	if (rc == 0) {
		warn_overridden(c);
		rc = rq_replay_run(run->repo, &run->opts, &run->res, &run->err);
		graft_notes(run, rc);
		/* git warns as it writes each commit that was not UTF-8 */
		for (size_t i = 0; i < run->res.stats.not_utf8; i++)
			fputs(rq_commit_utf8_warning, stderr);
	}
	/* keep-going: the clean refs move even when others conflicted */
	if (rq_refproto_applies(rc, &run->res, run->res.keep_going) && !run->print) {
		if (rq_cli_apply_refs(run->repo, &run->res, &run->committer, &run->err) < 0)
			rc = -1;
		else
			run->applied = 1;
	}
	rq_odb_tmpdir_release(run->repo, run->res.stats.pack_name);
	RQ_TRACE_AT("replayed");
	rc = report(run, rc);
	RQ_TRACE_AT("reported");
	return rc;
}

/* git's warnings about the refs a name met (rq_refdb_set_warn) */
static void warn_stderr(const char *msg)
{
	fprintf(stderr, "warning: %s\n", msg);
}

/* Does the command line ask for JSON? Its last --format before any "--"
 * (for an error that stopped the parse before it reached it). */
static int asks_json(int argc, char **argv)
{
	const char *f = NULL;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strncmp(argv[i], "--format=", 9))
			f = argv[i] + 9;
		else if (!strcmp(argv[i], "--format") && i + 1 < argc)
			f = argv[++i];
	}
	return f && !strcmp(f, "json");
}

int cmd_replay(int argc, char **argv)
{
	replay_cli c;
	replay_run run;
	int status;

	cli_init(&c);
	rq_refdb_set_warn(warn_stderr);
	memset(&run, 0, sizeof(run));
	rq_error_clear(&run.err);
	if (rq_opt_parse(&c.spec, argc, argv, &c.revs, &status) == 0) {
		status = replay(&c, &run);
		rq_opt_args_free(&c.revs);
	} else if (status == RQ_OPT_USAGE_STATUS && asks_json(argc, argv)) {
		rq_error_set(&run.err, RQ_E_USAGE, "%s", rq_opt_last_error());
		emit_json(&run, -1);
	}
	if (fflush(stdout) != 0 && status == 0)
		status = 128;
	/* the output is out: replayq's packs consolidated when they are due */
	if (run.res.stats.pack_name[0])
		rq_cli_consolidate(run.repo);
	rq_replay_result_free(&run.res);
	rq_sign_free(run.signer);
	git_buf_dispose(&run.objects_dir);
	git_repository_free(run.repo);
	RQ_TRACE_AT("freed");
	return status;
}
