/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jobrepo: a pool child's repository (worker/jobrun): the job's path
 * resolved under the root, the repository opened and held there
 * (core/base/rq_confine, its format by core/refs/rq_repofmt, its objects
 * read through core/odb/rq_odb), the committer the job replays with, and
 * messages that name the repository as the job did.
 */
#ifndef RQ_JOBREPO_H
#define RQ_JOBREPO_H

#include <git2.h>
#include <limits.h>

#include "jobrun.h"
#include "rq_error.h"
#include "rq_ident.h"
#include "rq_odb.h"

/* How long the name of a repository's objects directory in messages may
 * be (rq_jobrepo_open's shown). */
#define RQ_JOBREPO_SHOWN_MAX (PATH_MAX + RQ_JOB_REPO_MAX + 16)

/*
 * The job's repository path under the root, symlinks resolved, into out
 * (PATH_MAX): 0, or -1 with err set when it is missing or resolves outside
 * the root.
 */
int rq_jobrepo_resolve(const char *root, const char *rel, char *out, rq_error *err);

/* The job's repository opened under env's root into *repo (its resolved
 * path into path, PATH_MAX; shown: RQ_JOBREPO_SHOWN_MAX), its objects
 * read through oo: 0, or -1 with err set. */
int rq_jobrepo_open(const rq_jobrun_env *env, const rq_job *job, char *path, char *shown,
		    rq_odb_opts *oo, git_repository **repo, rq_error *err);

/* err's message with the worker's paths (path, root) named as the job's
 * repo names them. */
void rq_jobrepo_name_as_job(rq_error *err, const char *path, const char *root, const char *repo);

/* The committer task's job replays with, into *id: 0, or -1 with err set. */
int rq_jobrepo_committer(git_repository *repo, const rq_jobrun_task *task, rq_ident *id,
			 rq_error *err);

#endif
