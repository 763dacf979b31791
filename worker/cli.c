/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cli: the foreground commands' repository, signals and ref updates (see
 * cli.h).
 */
#include "cli.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opt.h"
#include "rq_cfgparams.h"
#include "rq_odb_repack.h"
#include "rq_odb_tmpdir.h"
#include "rq_refs.h"
#include "rq_repofmt.h"

static volatile int interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

int rq_cli_open_repo(git_repository **out, rq_error *why)
{
	const char *stale = getenv("REPLAYQ_STALE_SECONDS");
	long stale_s;
	rq_error err;

	if (rq_repofmt_open(out, NULL, GIT_REPOSITORY_OPEN_FROM_ENV, &err) < 0) {
		*out = NULL;
		if (err.code != RQ_E_UNSUPPORTED_REPO)
			rq_error_set(
			    &err, RQ_E_BAD_REPO,
			    "not a git repository (or any of the parent directories): .git");
		rq_error_set(why, err.code, "%s", err.msg);
		rq_repofmt_print(stderr, err.msg);
		return 128;
	}
	/* replayq -c name=value (git's command-line configuration) */
	if (rq_cfgparams_apply(*out, getenv("GIT_CONFIG_PARAMETERS"), &err) < 0) {
		rq_error_set(why, RQ_E_USAGE, "unable to parse command-line config: %s", err.msg);
		fprintf(stderr, "error: %s\nfatal: unable to parse command-line config\n", err.msg);
		return 128;
	}
	/* temporary object directories left by killed runs (a value that is
	 * no number is not taken as 0, which would remove running ones) */
	if (!stale || rq_opt_number(stale, 0, 365L * 86400, &stale_s) < 0)
		stale_s = 300;
	rq_odb_tmpdir_clean_stale(*out, (unsigned)stale_s, NULL);
	return 0;
}

const volatile int *rq_cli_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return &interrupted;
}

/* A kill still can interrupt the updates: the next run clears what it
 * leaves (rq_refs). */
int rq_cli_apply_refs(git_repository *repo, const rq_replay_result *res, const rq_ident *committer,
		      rq_error *err)
{
	sigset_t block, old;
	int rc;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	rc = rq_refs_apply(repo, &res->upd, committer, err) < 0 ? -1 : 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void rq_cli_consolidate(git_repository *repo)
{
	rq_error err;
	int fd;

	rq_error_clear(&err);
	if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	if (rq_odb_repack_auto(repo, rq_repofmt_algo(repo), &err) < 0)
		fprintf(stderr, "warning: consolidating replayq's packs: %s\n", err.msg);
}
