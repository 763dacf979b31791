/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_cfgparams: configuration given on the command line (`replayq -c
 * <name>=<value>`), carried as git carries it, in the environment variable
 * GIT_CONFIG_PARAMETERS, and laid over a repository's configuration at the
 * highest priority, as git's "command" scope.
 *
 * The variable holds single-quoted items separated by spaces, as git
 * writes it: 'name'='value', 'name' (a boolean true), or the older
 * 'name=value'; a quote inside is written '\''. A name is
 * section[.subsection].variable; section and variable are
 * case-insensitive, as in git.
 */
#ifndef RQ_CFGPARAMS_H
#define RQ_CFGPARAMS_H

#include <git2.h>

#include "rq_error.h"

/*
 * Check one `-c` argument ("name=value" or "name") as git checks it:
 * 0, or -1 with RQ_E_USAGE and git's message ("key does not contain a
 * section: foo", "empty config key", "key does not contain variable name:
 * a.b.", "invalid key: ...").
 */
int rq_cfgparams_check(const char *arg, rq_error *err);

/*
 * The environment value with arg added at its end, in git's quoting
 * (prev may be NULL or empty). Returns a malloc'ed string, or NULL out of
 * memory.
 */
char *rq_cfgparams_append(const char *prev, const char *arg);

/*
 * Lay the items of params (GIT_CONFIG_PARAMETERS's value; NULL or empty:
 * nothing to do) over repo's configuration, above every file, for every
 * later read through repo. 0, or -1 with RQ_E_USAGE (a value that does not
 * parse) or RQ_E_NOMEM.
 */
int rq_cfgparams_apply(git_repository *repo, const char *params, rq_error *err);

/* The same over any configuration cfg (repo, for its conditional includes,
 * may be NULL). */
int rq_cfgparams_add(git_config *cfg, git_repository *repo, const char *params, rq_error *err);

#endif
