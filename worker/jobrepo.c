/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jobrepo: a pool child's repository (see jobrepo.h).
 */
#include "jobrepo.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_confine.h"
#include "rq_refdb.h"
#include "rq_repofmt.h"

int rq_jobrepo_resolve(const char *root, const char *rel, char *out, rq_error *err)
{
	char joined[PATH_MAX * 2];
	size_t rl = strlen(root);

	snprintf(joined, sizeof(joined), "%s/%s", root, rel);
	if (!realpath(joined, out))
		return rq_error_set(err, RQ_E_BAD_REPO,
				    "repository '%s' not found under the root: %s", rel,
				    strerror(errno));
	if (strncmp(out, root, rl) != 0 || (out[rl] != '/' && out[rl] != '\0'))
		return rq_error_set(err, RQ_E_BAD_REPO,
				    "repository '%s' resolves outside the repository root", rel);
	return 0;
}

/* How messages name the repository's objects directory: as the job's
 * repo names it, not by the worker's path, into shown (RQ_JOBREPO_SHOWN_MAX). */
static int objects_shown(git_repository *repo, const char *path, const char *rel, char *shown,
			 rq_error *err)
{
	git_buf objects = GIT_BUF_INIT;
	size_t pl = strlen(path);

	if (git_repository_item_path(&objects, repo, GIT_REPOSITORY_ITEM_OBJECTS) < 0) {
		git_buf_dispose(&objects);
		return rq_error_git(err, "cannot find the objects directory");
	}
	while (objects.size > 1 && objects.ptr[objects.size - 1] == '/')
		objects.ptr[--objects.size] = '\0';
	if (!strncmp(objects.ptr, path, pl) && objects.ptr[pl] == '/')
		snprintf(shown, RQ_JOBREPO_SHOWN_MAX, "%s/%s", rel, objects.ptr + pl + 1);
	else
		snprintf(shown, RQ_JOBREPO_SHOWN_MAX, "%s/objects", rel);
	git_buf_dispose(&objects);
	return 0;
}

/* rq_confine_open's opener: the repository's format decides how it is
 * opened (rq_repofmt: a reftable ref database, an unsupported format
 * named). */
static int open_format(git_repository **out, const char *path, rq_error *err)
{
	return rq_repofmt_open(out, path, GIT_REPOSITORY_OPEN_NO_SEARCH, err);
}

/*
 * Open the job's repository and hold it to the root: every path its files
 * name resolves inside (rq_confine), and its objects are read through
 * rq_odb with the root's alternates policy (oo, whose objects_shown points
 * into shown).
 */
int rq_jobrepo_open(const rq_jobrun_env *env, const rq_job *job, char *path, char *shown,
		    rq_odb_opts *oo, git_repository **repo, rq_error *err)
{
	const char *rel = job->repo;

	path[0] = '\0';
	if (rq_jobrepo_resolve(env->root, rel, path, err) < 0)
		return -1;
	/* nothing outside the root is opened, libgit2's own reading included;
	 * the repository's format decides how (rq_repofmt: reftable refs) */
	if (rq_confine_open(repo, path, env->root, env->confine_flags, open_format, err) < 0 ||
	    objects_shown(*repo, path, rel, shown, err) < 0)
		return -1;
	oo->root = env->root;
	oo->alternates_anywhere = env->alternates_anywhere;
	oo->objects_shown = shown;
	/* the pack is kept from git's repack and gc until its refs moved */
	oo->keep_pack = job->ref_update;
	oo->algo = rq_repofmt_algo(*repo);
	oo->refs = rq_refdb_odb_refs;
	oo->refs_arg = *repo;
	return rq_odb_install(*repo, oo, err);
}

/* Messages name the repository as the job did: the worker's paths (the
 * resolved repository, then the root) become the job's repo. */
void rq_jobrepo_name_as_job(rq_error *err, const char *path, const char *root, const char *repo)
{
	const char *from[2] = {path, root};
	char out[RQ_ERROR_MSG_MAX];

	for (int k = 0; k < 2; k++) {
		size_t fl = strlen(from[k]), o = 0;
		const char *m = err->msg, *hit;
		if (fl < 2 || !strstr(m, from[k]))
			continue;
		while ((hit = strstr(m, from[k])) && o < sizeof(out) - 1) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s%s", (int)(hit - m), m,
					      k ? "<root>" : repo);
			m = hit + fl;
		}
		if (o < sizeof(out) - 1)
			snprintf(out + o, sizeof(out) - o, "%s", m);
		memcpy(err->msg, out, sizeof(out));
	}
}

/* The committer: the job's, else REPLAYQ_COMMITTER_NAME/EMAIL, else the
 * repository's; the job's time, else the default time. */
int rq_jobrepo_committer(git_repository *repo, const rq_jobrun_task *task, rq_ident *id,
			 rq_error *err)
{
	const char *n = getenv("REPLAYQ_COMMITTER_NAME"), *e = getenv("REPLAYQ_COMMITTER_EMAIL");
	const rq_job *job = task->job;

	if (job->has_name) {
		*id = job->committer;
	} else if (n && e) {
		if (rq_ident_set(id, n, e, err) < 0)
			return -1;
	} else if (rq_ident_default(repo, id, err) < 0) {
		return -1;
	}
	id->time = job->has_time ? job->committer.time : task->default_time;
	id->tz = job->has_time ? job->committer.tz : 0;
	return 0;
}
