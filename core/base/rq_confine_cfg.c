/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_confine_cfg: a repository's configuration read before libgit2 reads
 * it (see rq_confine_cfg.h).
 */
#include "rq_confine_cfg.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rq_gitconfig.h"

#define CONFIG_DEPTH 10	       /* include depth: libgit2's and git's limit */
#define CONFIG_FILES 100       /* config files one repository may read */
#define CONFIG_BYTES (4 << 20) /* one config file */

/* The file an include names, as libgit2 resolves it: an absolute path as
 * it is, a relative one beside the including file (its path as libgit2
 * named it, not resolved); "~/" is the home directory, outside. */
static int include_path(const rq_confine_cfg *w, const char *val, char *out, size_t size)
{
	const char *slash = strrchr(w->path, '/');
	int n;

	if (!strncmp(val, "~/", 2))
		return -1;
	if (val[0] == '/')
		n = snprintf(out, size, "%s", val);
	else
		n = snprintf(out, size, "%.*s/%s", slash ? (int)(slash - w->path) : 1,
			     slash ? w->path : ".", val);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* One variable of a config file: kept; an include is checked and read in
 * turn. 0, or 1 with the error set (the reading stops). */
static int config_var(const char *name, const char *value, void *arg)
{
	rq_confine_cfg *w = arg;
	char inc[PATH_MAX];
	rq_confine_cfgvar *v;

	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 32;
		if (!(v = realloc(w->v, cap * sizeof(*v))))
			return rq_error_set(w->c->err, RQ_E_NOMEM, "out of memory") < 0;
		w->v = v;
		w->cap = cap;
	}
	v = &w->v[w->n];
	v->name = strdup(name);
	v->value = value ? strdup(value) : NULL;
	if (!v->name || (value && !v->value)) {
		free(v->name);
		free(v->value);
		return rq_error_set(w->c->err, RQ_E_NOMEM, "out of memory") < 0;
	}
	w->n++;
	if (!rq_gitconfig_is_include(name) || !value)
		return 0; /* libgit2 skips an include without a value */
	if (include_path(w, value, inc, sizeof(inc)) < 0)
		return rq_error_set(w->c->err, RQ_E_BAD_REPO,
				    "config includes '%.200s', outside the repository root",
				    value) < 0;
	return rq_confine_cfg_walk(w, inc) < 0;
}

/* A config file and, in turn, every file it includes (whatever their
 * conditions): each resolves inside the root and is a regular file, or
 * does not exist (libgit2 skips it); no deeper than libgit2 reads. */
int rq_confine_cfg_walk(rq_confine_cfg *w, const char *path)
{
	const char *was = w->path, *why;
	size_t len, line;
	char *text;
	int r;

	if (w->depth >= CONFIG_DEPTH || ++w->files > CONFIG_FILES)
		return rq_error_set(w->c->err, RQ_E_BAD_REPO,
				    "config includes nest deeper than %d files, or more than %d",
				    CONFIG_DEPTH, CONFIG_FILES);
	if ((r = rq_confine_scope_read(w->c, path, CONFIG_BYTES, &text, &len,
				       w->depth ? "included config file" : "config file")) <= 0)
		return r;
	w->path = path;
	w->depth++;
	r = rq_gitconfig_parse(text, len, config_var, w, &line, &why);
	w->depth--;
	w->path = was;
	free(text);
	if (r == -2)
		return rq_error_set(w->c->err, RQ_E_NOMEM, "out of memory");
	if (r == -1)
		return rq_error_set(w->c->err, RQ_E_BAD_REPO, "bad config line %zu in '%.200s': %s",
				    line, rq_confine_scope_shown(w->c, path), why);
	return r ? -1 : 0; /* 1: an include's error, set */
}

void rq_confine_cfg_free(rq_confine_cfg *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].name);
		free(w->v[i].value);
	}
	free(w->v);
}

/* a and b name the same directory. */
static int same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static int cfgvar_cmp(const void *a, const void *b)
{
	const rq_confine_cfgvar *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r || x->value == y->value)
		return r;
	if (!x->value || !y->value)
		return x->value ? 1 : -1;
	return strcmp(x->value, y->value);
}

/* What libgit2 opened is what was checked: the same directories, and no
 * variable of its repository configuration that was not read here (a
 * file read differently, or one this check did not see). */
int rq_confine_cfg_opened_as_checked(rq_confine_cfg *w, git_repository *repo, const char *gitdir,
				     const char *commondir)
{
	git_config *cfg = NULL, *local = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *e;
	int r = 0;

	if (!same_dir(git_repository_path(repo), gitdir) ||
	    !same_dir(git_repository_commondir(repo), commondir))
		return rq_error_set(w->c->err, RQ_E_BAD_REPO,
				    "the repository was opened elsewhere than it was checked");
	if (w->n) /* (qsort of NULL, 0 is undefined) */
		qsort(w->v, w->n, sizeof(*w->v), cfgvar_cmp);
	/* no repository configuration (or none readable now): nothing to compare */
	if (git_repository_config(&cfg, repo) == 0 &&
	    git_config_open_level(&local, cfg, GIT_CONFIG_LEVEL_LOCAL) == 0 &&
	    git_config_iterator_new(&it, local) == 0)
		while (r == 0 && git_config_next(&e, it) == 0) {
			rq_confine_cfgvar key = {(char *)e->name, (char *)e->value};
			if (!bsearch(&key, w->v, w->n, sizeof(*w->v), cfgvar_cmp))
				r = rq_error_set(w->c->err, RQ_E_BAD_REPO,
						 "the repository's configuration holds '%.200s', "
						 "which its files do not say as read here",
						 e->name);
		}
	git_config_iterator_free(it);
	git_config_free(local);
	git_config_free(cfg);
	git_error_clear();
	return r;
}
