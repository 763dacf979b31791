/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq replay: the command-line face of the engine, a drop-in for
 * `git replay`. Parses options like git's parse-options (--opt=value and
 * --opt value), runs rq_replay_run(), then prints or applies the ref
 * updates. Exit status: 0 clean, 1 conflict, 128 error, 129 usage.
 */
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "opts.h"
#include "rq_objdir.h"
#include "rq_odb.h"
#include "rq_refs.h"
#include "rq_replay.h"
#include "rq_result_json.h"
#include "rq_revfilter.h"

static volatile int interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
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

static const char replay_usage[] =
    "usage: replayq [-C <path>] replay ([--contained] --onto=<newbase> | --advance=<branch> |\n"
    "                                  --revert=<branch>) [--ref=<ref>]\n"
    "                                  [--ref-action=update|print] [--empty=drop|keep|abort]\n"
    "                                  [--format=text|json] <revision>...\n"
    "\n"
    "    --onto <revision>     replay onto given commit\n"
    "    --advance <branch>    make replay advance given branch\n"
    "    --revert <branch>     revert the commits on top of given branch\n"
    "    --contained           update all branches that point at commits in the range\n"
    "    --ref <ref>           update this ref instead\n"
    "    --ref-action <mode>   update the refs (default) or print the updates\n"
    "    --empty <mode>        commits that become empty: drop (default), keep, abort\n"
    "    --format <fmt>        text (default) or json\n"
    "    --jobs <n>            replay independent branches in n forked children\n"
    "                          (default: the number of cores)\n";

static int usage_error(const char *fmt, const char *arg)
{
	fputs("error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\n\n", stderr);
	fputs(replay_usage, stderr);
	return 129;
}

typedef struct cli {
	const char *onto, *advance, *revert, *ref, *ref_action, *empty, *format, *jobs;
	int contained;
	const char **revs;
	char **joined; /* option values joined to their option */
	size_t njoined;
	size_t nrevs;
} cli;

/* The messages git prints as an error rather than as a fatal one. */
static int git_says_error(const rq_error *err)
{
	return !strncmp(err->msg, "'--ref' cannot be used", 22) ||
	       !strncmp(err->msg, "unrecognized argument: ", 23) ||
	       (err->code == RQ_E_BAD_REF && strstr(err->msg, "is not a valid refname"));
}

/* git's warnings for the walk options a replay overrides */
static void warn_overridden(const cli *c)
{
	static const char *const what[] = {"reverse", "sort_order"};
	int seen[2] = {0, 0};

	for (size_t i = 0; i < c->nrevs; i++) {
		seen[0] |= !strcmp(c->revs[i], "--reverse");
		seen[1] |= !strcmp(c->revs[i], "--date-order") ||
			   !strcmp(c->revs[i], "--author-date-order");
	}
	for (int k = 0; k < 2; k++)
		if (seen[k])
			fprintf(stderr,
				"warning: some rev walking options will be overridden as '%s' bit "
				"in 'struct rev_info' will be forced\n",
				what[k]);
}

/* "<opt>=<value>" as one more revision argument, kept for freeing. */
static int join_value(cli *c, const char *opt, const char *value)
{
	size_t n = strlen(opt) + strlen(value) + 2;
	char *j = malloc(n), **nv = realloc(c->joined, (c->njoined + 1) * sizeof(*nv));

	if (nv)
		c->joined = nv;
	if (!j || !nv) {
		free(j);
		fputs("fatal: out of memory\n", stderr);
		return -1;
	}
	snprintf(j, n, "%s%s%s", opt, strcmp(opt, "-n") ? "=" : "", value);
	c->joined[c->njoined++] = j;
	c->revs[c->nrevs++] = j;
	return 0;
}

static int parse_args(int argc, char **argv, cli *c)
{
	static const char *const names[] = {"onto",	  "advance", "revert", "ref",
					    "ref-action", "empty",   "format", "jobs"};
	c->revs = calloc((size_t)argc + 1, sizeof(*c->revs));
	if (!c->revs) {
		fputs("fatal: out of memory\n", stderr);
		return 128;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int matched = 0;

		if (!strcmp(a, "--")) { /* pathspecs follow: the engine takes them */
			while (i < argc)
				c->revs[c->nrevs++] = argv[i++];
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(replay_usage, stdout);
			return 129;
		}
		if (a[0] != '-') {
			c->revs[c->nrevs++] = a;
			continue;
		}
		if (!strcmp(a, "--contained")) {
			c->contained = 1;
			continue;
		}
		if (!strcmp(a, "--no-contained")) {
			c->contained = 0;
			continue;
		}
		if (a[1] == '-') {
			const char **slots[] = {&c->onto,	&c->advance, &c->revert, &c->ref,
						&c->ref_action, &c->empty,   &c->format, &c->jobs};
			for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && !matched; k++) {
				int r = rq_opt_value(argc, argv, &i, names[k], slots[k]);
				if (r < 0)
					return usage_error("option `%s' requires a value",
							   names[k]);
				matched = r;
			}
		}
		if (!matched && rq_revfilter_wants_value(a) && i + 1 < argc) {
			/* "--author Bob": the engine takes "--author=Bob" */
			if (join_value(c, a, argv[++i]) < 0)
				return 128;
			continue;
		}
		if (!matched) /* a revision-walk option: the engine judges it */
			c->revs[c->nrevs++] = a;
	}
	return 0;
}

static int emit_json(const rq_replay_result *res, int rc, const rq_error *err, int applied)
{
	json_t *o = rq_result_to_json(res, rc, err, applied);
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
	json_decref(o);
	if (!s) {
		fputs("fatal: out of memory\n", stderr);
		return -1;
	}
	puts(s);
	free(s);
	return 0;
}

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

int cmd_replay(int argc, char **argv)
{
	cli c;
	rq_replay_opts o;
	rq_replay_result res;
	rq_error err;
	rq_odb_opts odb_opts = {0};
	rq_ident author;
	git_buf objects_dir = GIT_BUF_INIT;
	rq_ident ident;
	git_repository *repo = NULL;
	int rc, json = 0, print = 0, applied = 0, modes, status;

	memset(&c, 0, sizeof(c));
	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	rq_error_clear(&err);

	if ((status = parse_args(argc, argv, &c)) != 0)
		goto out;
	status = 129;
	modes = !!c.onto + !!c.advance + !!c.revert;
	if (!modes) {
		usage_error("%s", "exactly one of --onto, --advance, or --revert is required");
		goto out;
	}
	status = 128;
	if (modes > 1) {
		fprintf(stderr, "fatal: options '%s' and '%s' cannot be used together\n",
			c.onto ? "--onto" : "--advance", c.revert ? "--revert" : "--advance");
		goto out;
	}
	if (c.format && strcmp(c.format, "text") && strcmp(c.format, "json")) {
		status = usage_error("invalid --format value '%s' (text or json)", c.format);
		goto out;
	}
	json = c.format && !strcmp(c.format, "json");
	if (c.empty && strcmp(c.empty, "drop") && strcmp(c.empty, "keep") &&
	    strcmp(c.empty, "abort")) {
		status = usage_error("invalid --empty value '%s' (drop, keep or abort)", c.empty);
		goto out;
	}
	if (c.ref_action && strcmp(c.ref_action, "update") && strcmp(c.ref_action, "print")) {
		fprintf(stderr, "fatal: invalid --ref-action value: '%s'\n", c.ref_action);
		goto out; /* 128, as git */
	}

	if (git_repository_open_ext(&repo, NULL, GIT_REPOSITORY_OPEN_FROM_ENV, NULL) < 0) {
		fputs("fatal: not a git repository (or any of the parent directories): .git\n",
		      stderr);
		goto out;
	}
	if (!c.ref_action) {
		if (config_ref_action(repo, &c.ref_action) < 0 ||
		    (c.ref_action && strcmp(c.ref_action, "update") &&
		     strcmp(c.ref_action, "print"))) {
			fprintf(stderr, "fatal: invalid replay.refAction value: '%s'\n",
				c.ref_action ? c.ref_action : "(too long)");
			goto out;
		}
	}
	print = c.ref_action && !strcmp(c.ref_action, "print");
	if (c.jobs) {
		char *end;
		long j = strtol(c.jobs, &end, 10);
		if (!*c.jobs || *end || j < 1 || j > RQ_MAX_JOBS) {
			status =
			    usage_error("--jobs takes a number from 1 to 64, not '%s'", c.jobs);
			goto out;
		}
		o.jobs = (int)j;
	} else {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.jobs = n < 1 ? 1 : n > RQ_MAX_JOBS ? RQ_MAX_JOBS : (int)n;
		o.jobs_auto = 1;
	}
	{
		/* a signal stops the replay between picks and the engine cleans
		 * up; a second one stops it at once (its temporary objects are
		 * then cleaned by the next run) */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sa.sa_flags = SA_RESETHAND;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		o.cancel = &interrupted;
	}
	/* temporary object directories left by killed runs */
	rq_objdir_clean_stale(repo,
			      (unsigned)atoi(getenv("REPLAYQ_STALE_SECONDS")
						 ? getenv("REPLAYQ_STALE_SECONDS")
						 : "300"),
			      NULL);

	o.mode = c.onto ? RQ_MODE_ONTO : c.advance ? RQ_MODE_ADVANCE : RQ_MODE_REVERT;
	o.target = c.onto ? c.onto : c.advance ? c.advance : c.revert;
	o.contained = c.contained;
	o.ref = c.ref;
	o.revisions = c.revs;
	o.nrevisions = c.nrevs;
	o.empty = !c.empty || !strcmp(c.empty, "drop") ? RQ_EMPTY_DROP
		  : !strcmp(c.empty, "keep")	       ? RQ_EMPTY_KEEP
						       : RQ_EMPTY_ABORT;
	if (rq_ident_default(repo, &ident, &err) < 0) {
		rc = -1;
		goto report;
	}
	o.committer = &ident;
	if (o.mode == RQ_MODE_REVERT) { /* git revert's author: the current one */
		if (rq_ident_author_default(repo, &author, &err) < 0) {
			rc = -1;
			goto report;
		}
		o.author = &author;
	}
	odb_opts.objects_shown = objects_shown(repo, &objects_dir);
	o.objects = &odb_opts;

	warn_overridden(&c);
	rc = rq_replay_run(repo, &o, &res, &err);
	if (rc == 0 && !print) {
		/* no signal interrupts the ref update (a kill still can: the
		 * next run clears what it leaves, rq_refs) */
		sigset_t block, old;
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGHUP);
		sigprocmask(SIG_BLOCK, &block, &old);
		if (rq_refs_apply(repo, &res, &ident, &err) < 0)
			rc = -1;
		else
			applied = 1;
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
report:
	if (json && emit_json(&res, rc, &err, applied) < 0)
		rc = -1;
	if (rc < 0) {
		/* git says these as an error, not as a fatal one */
		fprintf(stderr, "%s: %s\n", git_says_error(&err) ? "error" : "fatal", err.msg);
		if (err.code == RQ_E_BAD_REVISION &&
		    strstr(err.msg, ": no such path in the working tree."))
			fputs("Use 'git <command> -- <path>...' to specify paths that do not exist "
			      "locally.\n",
			      stderr); /* git's hint, word for word */
		if (err.code == RQ_E_BAD_REVISION && !strncmp(err.msg, "ambiguous argument", 18))
			fputs("Use '--' to separate paths from revisions, like this:\n"
			      "'git <command> [<revision>...] -- [<file>...]'\n",
			      stderr); /* git's hint, word for word */
		status = err.code == RQ_E_INTERRUPTED ? 130 : 128;
	} else if (rc == 1) {
		/* as git replay: exit 1 and not a word (--format=json has the
		 * commit, the paths and their kinds) */
		status = 1;
	} else {
		if (print && !json) {
			char *lines = rq_refs_format_updates(&res);
			if (!lines) {
				fputs("fatal: out of memory\n", stderr);
				status = 128;
				goto out;
			}
			fputs(lines, stdout);
			free(lines);
		}
		status = 0;
	}
out:
	rq_replay_result_free(&res);
	git_buf_dispose(&objects_dir);
	git_repository_free(repo);
	free(c.revs);
	for (size_t k = 0; k < c.njoined; k++)
		free(c.joined[k]);
	free(c.joined);
	if (fflush(stdout) != 0 && status == 0)
		status = 128;
	return status;
}
