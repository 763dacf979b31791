/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_repofmt: opening a repository, with its format checked (see
 * rq_repofmt.h).
 */
#include "rq_repofmt.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "rq_confine.h"
#include "rq_fs.h"
#include "rq_gitconfig.h"
#include "rq_oid.h"
#include "rq_refdb.h"
#include "rq_refdb_rt.h"

#define DIAGNOSE_MAX (4 << 20) /* a config file read for its format */

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

/* The extensions git 2.55 honours only in a repository of version 1: in
 * one of version 0 it refuses to run ("repo version is 0, but v1-only
 * extension found"), where libgit2 1.5 opens it and reads it as SHA-1 with
 * files refs. (Version 0 ignores every other extension, as git does.) */
static const char *const v1_only[] = {"noop-v1",    "objectformat",	 "compatobjectformat",
				      "refstorage", "relativeworktrees", "submodulepathconfig"};

static int is_v1_only(const char *ext)
{
	for (size_t i = 0; i < sizeof(v1_only) / sizeof(*v1_only); i++)
		if (!strcmp(ext, v1_only[i]))
			return 1;
	return 0;
}

/* 1 when the extension's value is one replayq handles. objectFormat is
 * compared exactly, as git compares it ("SHA1" is refused there too). */
static int handled(const char *ext, const char *value)
{
	if (!strcasecmp(ext, "objectformat"))
		return rq_oid_algo_by_name(value) == &rq_oid_sha1;
	if (!strcasecmp(ext, "refstorage"))
		return !strcmp(value, "files") || !strcmp(value, "reftable");
	return !strcasecmp(ext, "noop");
}

/* What the format check needs of a configuration: its last
 * core.repositoryformatversion, its first extension replayq does not
 * handle, and the v1-only extensions it sets ("\n\t<name>" each, as git
 * lists them; nv1 of them). */
typedef struct fmtscan {
	long long version;
	int bad, nv1;
	char ext[64], value[128], v1[256];
} fmtscan;

/* A version as libgit2 reads an integer (git_config_parse_int64: base 0,
 * then k, m or g); what it cannot read counts as 0, as before. */
static long long parse_version(const char *v)
{
	char *end;
	long long n;

	if (!v)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 0);
	if (end == v || errno)
		return 0;
	switch (*end) {
	case 'k':
	case 'K':
		n *= 1024, end++;
		break;
	case 'm':
	case 'M':
		n *= 1024 * 1024, end++;
		break;
	case 'g':
	case 'G':
		n *= 1024 * 1024 * 1024, end++;
		break;
	}
	return *end || n < INT32_MIN || n > INT32_MAX ? 0 : n;
}

/* One variable (name as libgit2 gives it: section and key in lower case). */
static int fmt_see(const char *name, const char *value, void *arg)
{
	fmtscan *s = arg;
	const char *ext;
	size_t used;

	if (!strcmp(name, "core.repositoryformatversion")) {
		s->version = parse_version(value);
		return 0;
	}
	if (strncmp(name, "extensions.", strlen("extensions.")))
		return 0;
	ext = name + strlen("extensions.");
	if (is_v1_only(ext)) { /* listed as often as set, as git lists them */
		used = strlen(s->v1);
		snprintf(s->v1 + used, sizeof(s->v1) - used, "\n\t%s", ext);
		s->nv1++;
	}
	if (!s->bad && !handled(ext, value ? value : "")) {
		s->bad = 1;
		snprintf(s->ext, sizeof(s->ext), "%s", spelled(ext));
		snprintf(s->value, sizeof(s->value), "%s", value ? value : "");
	}
	return 0;
}

/* The verdict on what fmt_see saw: -1 with err set (RQ_E_UNSUPPORTED_REPO),
 * or 0. */
static int fmt_verdict(const fmtscan *s, rq_error *err)
{
	if (s->version > 1)
		return rq_error_set(
		    err, RQ_E_UNSUPPORTED_REPO,
		    "unsupported repository format: core.repositoryformatversion=%lld", s->version);
	if (s->version == 0 && s->nv1) /* git's words */
		return rq_error_set(err, RQ_E_UNSUPPORTED_REPO,
				    "repo version is 0, but v1-only extension%s found:%s",
				    s->nv1 > 1 ? "s" : "", s->v1);
	if (s->version == 1 && s->bad)
		return rq_error_set(err, RQ_E_UNSUPPORTED_REPO,
				    "unsupported repository format: extensions.%s=%s", s->ext,
				    s->value);
	return 0;
}

/* The first extension of cfg replayq does not handle: -1 with err set
 * (RQ_E_UNSUPPORTED_REPO), or 0. */
static int check_extensions(git_config *cfg, rq_error *err)
{
	git_config_iterator *it;
	git_config_entry *e;
	fmtscan s = {0};

	/* every entry, not a glob: libgit2 1.5 leaks each regex match */
	if (git_config_iterator_new(&it, cfg) < 0) {
		git_error_clear();
		return 0;
	}
	while (git_config_next(&e, it) == 0)
		fmt_see(e->name, e->value, &s);
	git_config_iterator_free(it);
	git_error_clear();
	return fmt_verdict(&s, err);
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

/*
 * The repository's own configuration file (a snapshot of it): git reads
 * a repository's format from that file alone, so an extensions.* or
 * core.repositoryformatversion in the global or system configuration is
 * no repository's format. 0, or -1 with libgit2's error.
 */
static int own_config(git_config **out, git_repository *repo)
{
	git_config *all;
	int r;

	*out = NULL;
	if (git_repository_config_snapshot(&all, repo) < 0)
		return -1;
	r = git_config_open_level(out, all, GIT_CONFIG_LEVEL_LOCAL);
	git_config_free(all);
	return r < 0 ? -1 : 0;
}

int rq_repofmt_reftable(git_repository *repo)
{
	git_config *cfg;
	int r;

	if (own_config(&cfg, repo) < 0) {
		git_error_clear();
		return 0;
	}
	r = reftable_refs(cfg);
	git_config_free(cfg);
	return r;
}

/* extensions.objectFormat of a repository of version 1 (git reads it
 * there only), as handled() accepted it; SHA-1 when unset. */
static const rq_oid_algo *object_format(git_config *cfg)
{
	const rq_oid_algo *algo = &rq_oid_sha1;
	const char *v;
	int32_t version = 0;

	if (git_config_get_int32(&version, cfg, "core.repositoryformatversion") == 0 &&
	    version >= 1 && git_config_get_string(&v, cfg, "extensions.objectformat") == 0 &&
	    handled("objectformat", v))
		algo = rq_oid_algo_by_name(v);
	git_error_clear();
	return algo;
}

const rq_oid_algo *rq_repofmt_algo(git_repository *repo)
{
	const rq_oid_algo *algo;
	git_config *cfg;

	if (own_config(&cfg, repo) < 0) {
		git_error_clear();
		return &rq_oid_sha1;
	}
	algo = object_format(cfg);
	git_config_free(cfg);
	return algo;
}

/* The format of an opened repository: checked, and its refs set up. */
static int check_open(git_repository *repo, rq_error *err)
{
	git_config *cfg;
	int rc;

	if (own_config(&cfg, repo) < 0)
		return rq_error_git(err, "cannot read the repository's config");
	rc = check_extensions(cfg, err);
	if (rc == 0 && reftable_refs(cfg))
		rc = rq_refdb_rt_install(repo, object_format(cfg), err);
	else if (rc == 0 && object_format(cfg) != &rq_oid_sha1)
		rc = rq_refdb_tripwire_install(repo, err);
	git_config_free(cfg);
	return rc;
}

/* The config file of the repository libgit2 would have opened (found as
 * it finds it, without the format checks; its common directory read the
 * one way replayq reads a commondir file, rq_confine_commondir): 0, or
 * -1. */
static int config_path(const char *path, unsigned int flags, char *out, size_t size)
{
	const char *env = flags & GIT_REPOSITORY_OPEN_FROM_ENV ? getenv("GIT_DIR") : NULL;
	const char *ceiling =
	    flags & GIT_REPOSITORY_OPEN_FROM_ENV ? getenv("GIT_CEILING_DIRECTORIES") : NULL;
	const char *common_env =
	    flags & GIT_REPOSITORY_OPEN_FROM_ENV ? getenv("GIT_COMMON_DIR") : NULL;
	char real[PATH_MAX], parent[PATH_MAX], common[PATH_MAX];
	git_buf found = {0};
	rq_error e;
	int r = 0;

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
	if (common_env && *common_env) /* libgit2 takes it before the file */
		snprintf(common, sizeof(common), "%s", common_env);
	else if (rq_confine_commondir(found.ptr, common, &e) < 0)
		r = -1;
	if (r == 0 && snprintf(out, size, "%s/config", common) >= (int)size)
		r = -1;
	git_buf_dispose(&found);
	return r;
}

/*
 * Why libgit2 refused to open: an unsupported format (-1, err set), or 0
 * when it is not that. The config file is read as rq_gitconfig reads it,
 * not through libgit2: no include is followed (git reads the format
 * without them too), and nothing that is not a regular file is read.
 */
static int diagnose(const char *path, unsigned int flags, rq_error *err)
{
	char cfgpath[PATH_MAX * 2], *text;
	fmtscan s = {0};
	const char *why;
	size_t len, line;
	int r;

	if (config_path(path, flags, cfgpath, sizeof(cfgpath)) < 0 ||
	    rq_fs_read_regular(cfgpath, 1, DIAGNOSE_MAX, &text, &len) <= 0)
		return 0;
	r = rq_gitconfig_parse(text, len, fmt_see, &s, &line, &why);
	free(text);
	return r == 0 ? fmt_verdict(&s, err) : 0;
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
