/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_repofmt: opening a repository, with its format checked (see
 * rq_repofmt.h).
 */
#include "rq_repofmt.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "rq_refdb_rt.h"

/* The extensions replayq declares to libgit2 (which then leaves their
 * values to it), and the one libgit2 1.5 knows itself. */
static const char *const declared[] = {"refstorage", "objectformat"};

/* git's spelling of a setting libgit2 gives in lower case. */
static const char *spelled(const char *ext)
{
	static const char *const names[] = {
	    "objectFormat", "compatObjectFormat", "refStorage",		"worktreeConfig",
	    "partialClone", "preciousObjects",	  "submodulePathConfig"};

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcasecmp(ext, names[i]))
			return names[i];
	return ext;
}

/* 1 when the extension's value is one replayq handles. */
static int handled(const char *ext, const char *value)
{
	if (!strcasecmp(ext, "objectformat"))
		return !strcasecmp(value, "sha1");
	if (!strcasecmp(ext, "refstorage"))
		return !strcmp(value, "files") || !strcmp(value, "reftable");
	return !strcasecmp(ext, "noop");
}

/* The first extension of cfg replayq does not handle: -1 with err set
 * (RQ_E_UNSUPPORTED_REPO), or 0. */
static int check_extensions(git_config *cfg, rq_error *err)
{
	git_config_iterator *it;
	git_config_entry *e;
	int32_t version = 0;
	int rc = 0;

	if (git_config_get_int32(&version, cfg, "core.repositoryformatversion") < 0)
		version = 0;
	git_error_clear();
	if (version > 1)
		return rq_error_set(
		    err, RQ_E_UNSUPPORTED_REPO,
		    "unsupported repository format: core.repositoryformatversion=%d", (int)version);
	/* every entry, not a glob: libgit2 1.5 leaks each regex match */
	if (version < 1 || git_config_iterator_new(&it, cfg) < 0)
		return 0;
	while (rc == 0 && git_config_next(&e, it) == 0) {
		const char *ext = e->name + strlen("extensions.");
		if (strncmp(e->name, "extensions.", strlen("extensions.")) != 0)
			continue;
		if (!handled(ext, e->value ? e->value : ""))
			rc = rq_error_set(err, RQ_E_UNSUPPORTED_REPO,
					  "unsupported repository format: extensions.%s=%s",
					  spelled(ext), e->value ? e->value : "");
	}
	git_config_iterator_free(it);
	git_error_clear();
	return rc;
}

static int reftable_refs(git_config *cfg)
{
	const char *v;
	int32_t version = 0;
	int r;

	if (git_config_get_int32(&version, cfg, "core.repositoryformatversion") < 0 ||
	    version < 1) {
		git_error_clear();
		return 0;
	}
	r = git_config_get_string(&v, cfg, "extensions.refstorage") == 0 && !strcmp(v, "reftable");
	git_error_clear();
	return r;
}

int rq_repofmt_reftable(git_repository *repo)
{
	git_config *cfg;
	int r;

	if (git_repository_config_snapshot(&cfg, repo) < 0) {
		git_error_clear();
		return 0;
	}
	r = reftable_refs(cfg);
	git_config_free(cfg);
	return r;
}

/* The format of an opened repository: checked, and its refs set up. */
static int check_open(git_repository *repo, rq_error *err)
{
	git_config *cfg;
	int rc;

	if (git_repository_config_snapshot(&cfg, repo) < 0)
		return rq_error_git(err, "cannot read the repository's config");
	rc = check_extensions(cfg, err);
	if (rc == 0 && reftable_refs(cfg))
		rc = rq_refdb_rt_install(repo, err);
	git_config_free(cfg);
	return rc;
}

/* The config file of the repository libgit2 would have opened (found as
 * it finds it, without the format checks): 0, or -1. */
static int config_path(const char *path, unsigned int flags, char *out, size_t size)
{
	const char *env = flags & GIT_REPOSITORY_OPEN_FROM_ENV ? getenv("GIT_DIR") : NULL;
	const char *ceiling =
	    flags & GIT_REPOSITORY_OPEN_FROM_ENV ? getenv("GIT_CEILING_DIRECTORIES") : NULL;
	char real[PATH_MAX], parent[PATH_MAX], common[PATH_MAX] = "";
	git_buf found = {0};
	FILE *f;

	if (!path || !*path)
		path = ".";
	if (env && *env) {
		path = env;
		flags |= GIT_REPOSITORY_OPEN_NO_SEARCH;
	}
	if ((flags & GIT_REPOSITORY_OPEN_NO_SEARCH) && realpath(path, real)) {
		snprintf(parent, sizeof(parent), "%s", real);
		*(strrchr(parent, '/') == parent ? parent + 1 : strrchr(parent, '/')) = '\0';
		ceiling = parent;
	}
	if (git_repository_discover(&found, path, 0, ceiling) < 0) {
		git_error_clear();
		return -1;
	}
	snprintf(out, size, "%scommondir", found.ptr);
	if ((f = fopen(out, "re"))) { /* a linked worktree: the config is the common one */
		if (fgets(common, sizeof(common), f))
			common[strcspn(common, "\n")] = '\0';
		fclose(f);
	}
	if (!*common)
		snprintf(out, size, "%sconfig", found.ptr);
	else
		snprintf(out, size, "%s%s/config", common[0] == '/' ? "" : found.ptr, common);
	git_buf_dispose(&found);
	return 0;
}

/* Why libgit2 refused to open: an unsupported format (-1, err set), or 0
 * when it is not that. */
static int diagnose(const char *path, unsigned int flags, rq_error *err)
{
	char cfgpath[PATH_MAX * 2];
	git_config *cfg;
	int rc;

	if (config_path(path, flags, cfgpath, sizeof(cfgpath)) < 0 ||
	    git_config_open_ondisk(&cfg, cfgpath) < 0) {
		git_error_clear();
		return 0;
	}
	rc = check_extensions(cfg, err);
	git_config_free(cfg);
	return rc;
}

int rq_repofmt_open(git_repository **out, const char *path, unsigned int flags, rq_error *err)
{
	const git_error *e;
	char why[RQ_ERROR_MSG_MAX];

	*out = NULL;
	if (git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, declared,
			     sizeof(declared) / sizeof(*declared)) < 0)
		return rq_error_git(err, "cannot declare the repository extensions");
	if (git_repository_open_ext(out, path, flags, NULL) < 0) {
		*out = NULL;
		e = git_error_last();
		snprintf(why, sizeof(why), "%s", e && e->message ? e->message : "not found");
		if (diagnose(path, flags, err) < 0)
			return -1;
		return rq_error_set(err, RQ_E_BAD_REPO, "not a git repository: %s", why);
	}
	if (check_open(*out, err) < 0) {
		git_repository_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
