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

#define DIAGNOSE_MAX (4 << 20)	     /* a config file read for its format */
#define SHOWN_MAX    (PATH_MAX + 16) /* a config file's name as git shows it */

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

/* The extensions git 2.55 knows; in a repository of version 1 any other
 * makes git refuse to run ("unknown repository extension found"). */
static const char *const git_known[] = {"noop",
					"noop-v1",
					"preciousobjects",
					"partialclone",
					"worktreeconfig",
					"objectformat",
					"compatobjectformat",
					"refstorage",
					"relativeworktrees",
					"submodulepathconfig"};

static int in_list(const char *ext, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(ext, list[i]))
			return 1;
	return 0;
}

/* 1 when the extension's value is one replayq handles. objectFormat is
 * compared exactly, as git compares it ("SHA1" is refused there too);
 * sha256 behind the switch RQ_REPOFMT_SHA256 (rq_repofmt.h). */
static int handled(const char *ext, const char *value)
{
	const rq_oid_algo *algo;

	if (!strcasecmp(ext, "objectformat")) {
		algo = rq_oid_algo_by_name(value);
		return algo == &rq_oid_sha1 || (RQ_REPOFMT_SHA256 && algo == &rq_oid_sha256);
	}
	if (!strcasecmp(ext, "refstorage"))
		return !strcmp(value, "files") || !strcmp(value, "reftable");
	return !strcasecmp(ext, "noop");
}

/* A value git itself cannot read, which makes it stop while it reads the
 * config, in any version: its words into out, and 1; else 0. */
static int git_refuses(const char *ext, const char *value, char *out, size_t size)
{
	int fmt = !strcmp(ext, "objectformat") || !strcmp(ext, "compatobjectformat");

	if (!fmt && strcmp(ext, "refstorage"))
		return 0;
	if (!value)
		snprintf(out, size, "missing value for 'extensions.%s'", ext);
	else if (fmt ? !rq_oid_algo_by_name(value)
		     : strcmp(value, "files") && strcmp(value, "reftable"))
		snprintf(out, size, "invalid value for 'extensions.%s': '%.100s'", ext, value);
	else
		return 0;
	return 1;
}

/* What the format check needs of a configuration: its last
 * core.repositoryformatversion, its first extension replayq does not
 * handle, the v1-only extensions it sets and the ones git does not know
 * ("\n\t<name>" each, as git lists them; nv1 and nunknown of them), and
 * git's words for the first value git cannot read (badval; stop: end the
 * reading there, for its line). */
typedef struct fmtscan {
	long long version;
	int bad, nv1, nunknown, stop;
	char ext[64], value[128], v1[256], unknown[256], badval[200];
} fmtscan;

/* "\n\t<name>" appended to a list of names, as git lists them. */
static void list_add(char *list, size_t size, const char *name)
{
	size_t used = strlen(list);

	snprintf(list + used, size - used, "\n\t%s", name);
}

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

	if (!strcmp(name, "core.repositoryformatversion")) {
		s->version = parse_version(value);
		return 0;
	}
	if (strncmp(name, "extensions.", strlen("extensions.")))
		return 0;
	ext = name + strlen("extensions.");
	if (!s->badval[0] && git_refuses(ext, value, s->badval, sizeof(s->badval)))
		return s->stop;
	if (in_list(ext, v1_only, sizeof(v1_only) / sizeof(*v1_only))) {
		list_add(s->v1, sizeof(s->v1), ext); /* as often as set, as git */
		s->nv1++;
	}
	if (!in_list(ext, git_known, sizeof(git_known) / sizeof(*git_known))) {
		list_add(s->unknown, sizeof(s->unknown), ext);
		s->nunknown++;
	}
	if (!s->bad && !handled(ext, value ? value : "")) {
		s->bad = 1;
		snprintf(s->ext, sizeof(s->ext), "%s", spelled(ext));
		snprintf(s->value, sizeof(s->value), "%s", value ? value : "");
	}
	return 0;
}

/* The verdict on what fmt_see saw, in git's order (a value git cannot
 * read stops git first): -1 with err set (RQ_E_UNSUPPORTED_REPO), or 0.
 * where: "bad config line N in file P" when known, else "". */
static int fmt_verdict(const fmtscan *s, const char *where, rq_error *err)
{
	if (s->badval[0])
		return rq_error_set(err, RQ_E_UNSUPPORTED_REPO, "%s%s%s", s->badval,
				    *where ? "\n" : "", where);
	if (s->version > 1) /* git's words from here on, but for the last */
		return rq_error_set(err, RQ_E_UNSUPPORTED_REPO,
				    "Expected git repo version <= 1, found %lld", s->version);
	if (s->version == 0 && s->nv1)
		return rq_error_set(err, RQ_E_UNSUPPORTED_REPO,
				    "repo version is 0, but v1-only extension%s found:%s",
				    s->nv1 > 1 ? "s" : "", s->v1);
	if (s->version == 1 && s->nunknown)
		return rq_error_set(err, RQ_E_UNSUPPORTED_REPO,
				    "unknown repository extension%s found:%s",
				    s->nunknown > 1 ? "s" : "", s->unknown);
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
	return fmt_verdict(&s, "", err);
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

/* 1 when path is the directory of dir's first n bytes, or under it. */
static int under(const char *path, const char *dir, size_t n)
{
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* The config file's name as git shows it ("bad config line N in file P"):
 * its common directory's real path when a commondir file names it, else
 * GIT_DIR as given, ".git" when a .git directory is found from start, "."
 * when start is in the git directory, a gitfile's target's real path. */
static void shown_path(const char *start, const char *env, const char *found, const char *common,
		       int has_common, char *out, size_t size)
{
	char real[PATH_MAX], top[PATH_MAX];
	size_t n = strlen(found);

	snprintf(top, sizeof(top), "%.*s", (int)(n && found[n - 1] == '/' ? n - 1 : n), found);
	if (has_common)
		snprintf(out, size, "%s/config", realpath(common, real) ? real : common);
	else if (env)
		snprintf(out, size, "%s/config", env);
	else if (!realpath(start, real) || under(real, top, strlen(top)))
		snprintf(out, size, "./config");
	else if (n > 5 && !strcmp(top + strlen(top) - 5, "/.git") &&
		 under(real, top, strlen(top) - 5))
		snprintf(out, size, ".git/config");
	else
		snprintf(out, size, "%s/config", top);
}

/* The config file of the repository libgit2 would have opened (found as
 * it finds it, without the format checks; its common directory read the
 * one way replayq reads a commondir file, rq_confine_commondir), and its
 * name as git shows it (shown): 0, or -1. */
static int config_path(const char *path, unsigned int flags, char *out, size_t size,
		       char shown[SHOWN_MAX])
{
	const char *env = flags & GIT_REPOSITORY_OPEN_FROM_ENV ? getenv("GIT_DIR") : NULL;
	const char *ceiling =
	    flags & GIT_REPOSITORY_OPEN_FROM_ENV ? getenv("GIT_CEILING_DIRECTORIES") : NULL;
	const char *common_env =
	    flags & GIT_REPOSITORY_OPEN_FROM_ENV ? getenv("GIT_COMMON_DIR") : NULL;
	char real[PATH_MAX], parent[PATH_MAX], common[PATH_MAX];
	const char *start;
	git_buf found = {0};
	rq_error e;
	int r = 0, has_common = 0;

	if (!path || !*path)
		path = ".";
	start = path;
	if (env && *env) {
		path = env;
		flags |= GIT_REPOSITORY_OPEN_NO_SEARCH;
	} else
		env = NULL;
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
		snprintf(common, sizeof(common), "%s", common_env), has_common = 1;
	else if ((has_common = rq_confine_commondir(found.ptr, common, &e)) < 0)
		r = -1;
	if (r == 0 && snprintf(out, size, "%s/config", common) >= (int)size)
		r = -1;
	if (r == 0)
		shown_path(start, env, found.ptr, common, has_common, shown, SHOWN_MAX);
	git_buf_dispose(&found);
	return r;
}

/*
 * Why libgit2 refused to open, or what is wrong with a format that
 * check_extensions refused: an unsupported format (-1, err set), or 0
 * when it is not that. The config file is read as rq_gitconfig reads it,
 * not through libgit2: no include is followed (git reads the format
 * without them too), and nothing that is not a regular file is read. A
 * value git cannot read stops the reading, for its line.
 */
static int diagnose(const char *path, unsigned int flags, rq_error *err)
{
	char cfgpath[PATH_MAX * 2], shown[SHOWN_MAX], where[SHOWN_MAX + 64], *text;
	fmtscan s = {.stop = 1};
	const char *why;
	size_t len, line;
	int r;

	if (config_path(path, flags, cfgpath, sizeof(cfgpath), shown) < 0 ||
	    rq_fs_read_regular(cfgpath, 1, DIAGNOSE_MAX, &text, &len) <= 0)
		return 0;
	r = rq_gitconfig_parse(text, len, fmt_see, &s, &line, &why);
	free(text);
	if (r < 0)
		return 0;
	where[0] = '\0';
	if (r > 0)
		snprintf(where, sizeof(where), "bad config line %zu in file %s", line, shown);
	return fmt_verdict(&s, where, err);
}

/* A message of check_extensions for a value git cannot read. */
static int git_refused(const char *msg)
{
	return !strncmp(msg, "invalid value for '", 19) || !strncmp(msg, "missing value for '", 19);
}

void rq_repofmt_print(FILE *f, const char *msg)
{
	const char *nl = strchr(msg, '\n');

	if (git_refused(msg) && nl)
		fprintf(f, "error: %.*s\nfatal: %s\n", (int)(nl - msg), msg, nl + 1);
	else
		fprintf(f, "fatal: %s\n", msg);
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
		if (git_refused(err->msg)) /* for its line, as git says it */
			diagnose(path, flags, err);
		git_repository_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
