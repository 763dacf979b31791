/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_confine_scope: one path judged for rq_confine (see rq_confine_scope.h).
 */
#include "rq_confine_scope.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_fs.h"

int rq_confine_scope_under(const char *dir, size_t len, const char *real)
{
	if (len == 1 && dir[0] == '/')
		return real[0] == '/';
	return !strncmp(real, dir, len) && (real[len] == '/' || real[len] == '\0');
}

static int inside(const rq_confine_scope *c, const char *real)
{
	return rq_confine_scope_under(c->root, c->rootlen, real);
}

const char *rq_confine_scope_name(const rq_confine_scope *c)
{
	return c->scope == c->root ? "the repository root" : "the repository";
}

const char *rq_confine_scope_shown(const rq_confine_scope *c, const char *path)
{
	size_t bl = strlen(c->base);

	if (!strncmp(path, c->base, bl) && path[bl] == '/')
		return path + bl + 1;
	return path;
}

/* A path that does not exist is inside (nothing is read from it). */
int rq_confine_scope_check(const rq_confine_scope *c, const char *path)
{
	char real[PATH_MAX];

	if (!realpath(path, real))
		return errno == ENOENT || errno == ENOTDIR
			   ? 0
			   : rq_error_set(c->err, RQ_E_BAD_REPO, "cannot resolve '%s': %s",
					  rq_confine_scope_shown(c, path), strerror(errno));
	if (!rq_confine_scope_under(c->scope, c->scopelen, real))
		return rq_error_set(c->err, RQ_E_BAD_REPO, "'%s' leads outside %s",
				    rq_confine_scope_shown(c, path), rq_confine_scope_name(c));
	return 0;
}

/* A path that does not exist yet: its nearest existing directory is
 * inside (nothing outside is reached through it). */
int rq_confine_scope_check_maybe(const rq_confine_scope *c, const char *path, const char *what)
{
	char p[PATH_MAX], real[PATH_MAX], *slash;

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return rq_error_set(c->err, RQ_E_BAD_REPO, "%s '%.200s' is too long", what, path);
	while (!realpath(p, real)) {
		if ((errno != ENOENT && errno != ENOTDIR) || !(slash = strrchr(p, '/')) ||
		    slash == p)
			return rq_error_set(c->err, RQ_E_BAD_REPO, "cannot resolve %s '%.200s'",
					    what, rq_confine_scope_shown(c, path));
		*slash = '\0';
	}
	if (!inside(c, real))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "%s '%.200s' leads outside the repository root", what,
				    rq_confine_scope_shown(c, path));
	return 0;
}

/*
 * A file libgit2 reads, read here first: it resolves inside the root and
 * is a regular file (a FIFO would block the reader, a device never ends).
 * Its content (at most max bytes) into *out (malloc'ed, NUL-terminated,
 * *len bytes); 1 read, 0 it does not exist, -1 err set.
 */
int rq_confine_scope_read(const rq_confine_scope *c, const char *path, size_t max, char **out,
			  size_t *len, const char *what)
{
	char real[PATH_MAX];
	int r;

	*out = NULL;
	if (!realpath(path, real))
		return errno == ENOENT || errno == ENOTDIR
			   ? rq_confine_scope_check_maybe(c, path, what)
			   : rq_error_set(c->err, RQ_E_BAD_REPO, "cannot resolve %s '%.200s': %s",
					  what, rq_confine_scope_shown(c, path), strerror(errno));
	if (!inside(c, real))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "%s '%.200s' leads outside the repository root", what,
				    rq_confine_scope_shown(c, path));
	if ((r = rq_fs_read_regular(real, 0, max, out, len)) >= 0)
		return r;
	if (errno == ENOMEM)
		return rq_error_set(c->err, RQ_E_NOMEM, "out of memory");
	return rq_error_set(c->err, RQ_E_BAD_REPO, "%s '%.200s': %s", what,
			    rq_confine_scope_shown(c, path), rq_fs_strerror(errno));
}
