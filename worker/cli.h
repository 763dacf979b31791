/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cli: what the commands that run the engine in the foreground (replay,
 * train) share: the repository as git finds it with the command-line
 * configuration laid over it, the signals that stop a replay between
 * picks, and ref updates no signal interrupts.
 */
#ifndef RQ_CLI_H
#define RQ_CLI_H

#include <git2.h>

#include "rq_error.h"
#include "rq_ident.h"
#include "rq_replay.h"

/*
 * Open the repository as git finds it (GIT_DIR, the working directory and
 * its parents), lay `-c` / GIT_CONFIG_PARAMETERS over its configuration and
 * remove temporary object directories killed runs left (older than
 * REPLAYQ_STALE_SECONDS, default 300). 0, or 128 with git's message
 * printed (and in why, when not NULL: bad_repo, or usage for `-c`).
 */
int rq_cli_open_repo(git_repository **out, rq_error *why);

/*
 * Catch SIGINT, SIGTERM and SIGHUP once each: the first sets the flag this
 * returns (the engine's cancel: it stops between picks and cleans up), a
 * second one ends the process at once.
 */
const volatile int *rq_cli_catch_signals(void);

/* rq_refs_apply with those signals blocked: 0, or -1 with err set. */
int rq_cli_apply_refs(git_repository *repo, const rq_replay_result *res, const rq_ident *committer,
		      rq_error *err);

/*
 * After a replay that wrote a pack, its output flushed: consolidate
 * replayq's packs when they are due (rq_odb_repack_auto; the setting
 * replayq.consolidate=false turns it off). Standard output is closed
 * first (a reader of the updates does not wait for it); a failure is a
 * warning on standard error, the exit status stays.
 */
void rq_cli_consolidate(git_repository *repo);

#endif
