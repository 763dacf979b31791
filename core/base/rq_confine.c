/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_confine: every path of a repository resolves inside the root.
 */
#include "rq_confine.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define WALK_DEPTH 64 /* deeper ref hierarchies are refused */

typedef struct confine {
	const char *root;
	size_t rootlen;
	const char *base; /* the directory messages name paths relative to */
	rq_error *err;
} confine;

static int inside(const confine *c, const char *real)
{
	return !strncmp(real, c->root, c->rootlen) &&
	       (real[c->rootlen] == '/' || real[c->rootlen] == '\0');
}

static const char *shown(const confine *c, const char *path)
{
	size_t bl = strlen(c->base);

	if (!strncmp(path, c->base, bl) && path[bl] == '/')
		return path + bl + 1;
	return path;
}

/* A path that does not exist is inside (nothing is read from it). */
static int check_path(const confine *c, const char *path)
{
	char real[PATH_MAX];

	if (!realpath(path, real))
		return errno == ENOENT || errno == ENOTDIR
			   ? 0
			   : rq_error_set(c->err, RQ_E_BAD_REPO, "cannot resolve '%s': %s",
					  shown(c, path), strerror(errno));
	if (!inside(c, real))
		return rq_error_set(c->err, RQ_E_BAD_REPO, "'%s' leads outside the repository root",
				    shown(c, path));
	return 0;
}

/* Every symbolic link under dir (down to depth) stays inside. */
static int check_tree(const confine *c, const char *dir, int depth)
{
	struct dirent *d;
	DIR *dh = opendir(dir);
	int rc = 0;

	if (!dh)
		return 0;
	while (rc == 0 && (d = readdir(dh))) {
		char p[PATH_MAX];
		struct stat st;
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		/* the entry's type from readdir: no stat per loose ref */
		if (d->d_type == DT_REG)
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, d->d_name) >= (int)sizeof(p))
			rc = rq_error_set(c->err, RQ_E_BAD_REPO, "a path under '%s' is too long",
					  shown(c, dir));
		else if (lstat(p, &st) < 0)
			continue; /* gone meanwhile */
		else if (S_ISLNK(st.st_mode))
			rc = check_path(c, p);
		else if (S_ISDIR(st.st_mode) && depth <= 0)
			rc = rq_error_set(c->err, RQ_E_BAD_REPO, "'%s' is nested too deep",
					  shown(c, p));
		else if (S_ISDIR(st.st_mode) && depth > 1)
			rc = check_tree(c, p, depth - 1);
	}
	closedir(dh);
	return rc;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	if (e - s >= 2 && *s == '"' && e[-1] == '"') {
		e[-1] = '\0';
		s++;
	}
	return s;
}

/* One `path = <file>` of an [include] or [includeIf] section. */
static int check_include(const confine *c, const char *cfgdir, const char *val)
{
	char p[PATH_MAX * 2];

	if (val[0] == '~')
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "config includes '%.200s', outside the repository root", val);
	snprintf(p, sizeof(p), "%s%s%s", val[0] == '/' ? "" : cfgdir, val[0] == '/' ? "" : "/",
		 val);
	if (check_path(c, p) < 0)
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "config includes '%.200s', outside the repository root", val);
	return 0;
}

/*
 * The files a config file includes stay inside. A plain line reader (not
 * libgit2's parser, which would read the included files to check them):
 * sections, `key = value`, comments; what it cannot read as an include is
 * not one.
 */
static int check_config(const confine *c, const char *dir, const char *file)
{
	char path[PATH_MAX * 2], line[4096];
	int in_include = 0, rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (check_path(c, path) < 0)
		return -1;
	if (!(f = fopen(path, "re")))
		return 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq;
		if (*s == '[') {
			in_include = !strncasecmp(s + 1, "include", 7) &&
				     (s[8] == ']' || s[8] == ' ' || !strncasecmp(s + 8, "if", 2));
			if (!(s = strchr(s, ']')))
				continue;
			s = trim(s + 1);
		}
		if (!in_include || !(eq = strchr(s, '=')))
			continue;
		*eq = '\0';
		if (!strcasecmp(trim(s), "path"))
			rc = check_include(c, dir, trim(eq + 1));
	}
	fclose(f);
	return rc;
}

int rq_confine_repo(git_repository *repo, const char *root, rq_error *err)
{
	static const char *const common[] = {"objects", "objects/pack", "objects/info", "refs",
					     "logs",	"packed-refs",	"info",		"reftable"};
	static const char *const own[] = {"HEAD", "logs/HEAD", "index", "reftable"};
	char gitdir[PATH_MAX], commondir[PATH_MAX], p[PATH_MAX * 2];
	confine c = {root, strlen(root), gitdir, err};
	size_t i;

	snprintf(gitdir, sizeof(gitdir), "%s", git_repository_path(repo));
	snprintf(commondir, sizeof(commondir), "%s", git_repository_commondir(repo));
	for (char *d = gitdir; strlen(d) > 1 && d[strlen(d) - 1] == '/';)
		d[strlen(d) - 1] = '\0';
	for (char *d = commondir; strlen(d) > 1 && d[strlen(d) - 1] == '/';)
		d[strlen(d) - 1] = '\0';
	if (check_path(&c, gitdir) < 0 || check_path(&c, commondir) < 0)
		return rq_error_set(err, RQ_E_BAD_REPO,
				    "the git directory leads outside the repository root");
	for (i = 0; i < sizeof(common) / sizeof(*common); i++) {
		snprintf(p, sizeof(p), "%s/%s", commondir, common[i]);
		if (check_path(&c, p) < 0)
			return -1;
	}
	for (i = 0; i < sizeof(own) / sizeof(*own); i++) {
		snprintf(p, sizeof(p), "%s/%s", gitdir, own[i]);
		if (check_path(&c, p) < 0)
			return -1;
	}
	c.base = commondir;
	if (check_config(&c, commondir, "config") < 0 ||
	    (strcmp(gitdir, commondir) && check_config(&c, gitdir, "config.worktree") < 0))
		return -1;
	/* objects/xx, objects/pack/ *, objects/info/ *; not the loose files
	 * (their reader does not follow links) */
	for (i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", commondir, common[i]);
		if (check_tree(&c, p, 1) < 0)
			return -1;
	}
	snprintf(p, sizeof(p), "%s/refs", commondir);
	if (check_tree(&c, p, WALK_DEPTH) < 0)
		return -1;
	/* reftable/ * (the tables and tables.list) */
	snprintf(p, sizeof(p), "%s/reftable", commondir);
	if (check_tree(&c, p, 1) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/logs", commondir);
	return check_tree(&c, p, WALK_DEPTH);
}

/* No component of base/name, from base down, is a symbolic link. */
static int no_link_below(const char *base, const char *name, const char *what, rq_error *err)
{
	char p[PATH_MAX];
	size_t bl = strlen(base);
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%s", base, name) >= (int)sizeof(p))
		return rq_error_set(err, RQ_E_BAD_REF, "ref '%s' is too long", name);
	for (char *s = p + bl + 1;; s++) {
		char keep = *s;
		if (keep != '/' && keep != '\0')
			continue;
		*s = '\0';
		if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode))
			return rq_error_set(err, RQ_E_BAD_REPO,
					    "%s '%s' is reached through a symbolic link ('%s'); "
					    "refusing to write through it",
					    what, name, p + bl + 1);
		*s = keep;
		if (!keep)
			return 0;
	}
}

int rq_confine_ref(git_repository *repo, const char *name, rq_error *err)
{
	char logs[PATH_MAX];
	/* HEAD and the per-worktree refs live in the git directory */
	int own = !strncmp(name, "refs/", 5)
		      ? !strncmp(name, "refs/worktree/", 14) || !strncmp(name, "refs/bisect/", 12)
		      : 1;
	const char *base = own ? git_repository_path(repo) : git_repository_commondir(repo);
	char b[PATH_MAX];

	snprintf(b, sizeof(b), "%s", base);
	while (strlen(b) > 1 && b[strlen(b) - 1] == '/')
		b[strlen(b) - 1] = '\0';
	if (no_link_below(b, name, "ref", err) < 0)
		return -1;
	snprintf(logs, sizeof(logs), "logs/%s", name);
	if (no_link_below(b, logs, "reflog", err) < 0)
		return -1;
	return 0;
}
