/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_confine: every path of a repository resolves inside the root.
 */
#include "rq_confine.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_gitconfig.h"

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

/* ---- before libgit2 opens the repository ---- */

#define CONFIG_DEPTH 10	       /* include depth: libgit2's and git's limit */
#define CONFIG_FILES 100       /* config files one repository may read */
#define CONFIG_BYTES (4 << 20) /* one config file */
#define SMALL_FILE   4096      /* a .git file, a commondir file */

/* One variable as read from the files before libgit2 reads them. */
typedef struct cfgvar {
	char *name, *value; /* value NULL: a key without '=' */
} cfgvar;

/* The configuration as read here: every file it includes, checked, and
 * every variable of every file. */
typedef struct cfgwalk {
	const confine *c;
	cfgvar *v;
	size_t n, cap;
	int files, depth;
	const char *path; /* the file being read, as libgit2 names it */
} cfgwalk;

/* A path that does not exist yet: its nearest existing directory is
 * inside (nothing outside is reached through it). */
static int check_maybe_path(const confine *c, const char *path, const char *what)
{
	char p[PATH_MAX], real[PATH_MAX], *slash;

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return rq_error_set(c->err, RQ_E_BAD_REPO, "%s '%.200s' is too long", what, path);
	while (!realpath(p, real)) {
		if ((errno != ENOENT && errno != ENOTDIR) || !(slash = strrchr(p, '/')) ||
		    slash == p)
			return rq_error_set(c->err, RQ_E_BAD_REPO, "cannot resolve %s '%.200s'",
					    what, shown(c, path));
		*slash = '\0';
	}
	if (!inside(c, real))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "%s '%.200s' leads outside the repository root", what,
				    shown(c, path));
	return 0;
}

/*
 * A file libgit2 reads, read here first: it resolves inside the root and
 * is a regular file (a FIFO would block the reader, a device never ends).
 * Its content (at most max bytes) into *out (malloc'ed, NUL-terminated,
 * *len bytes); 1 read, 0 it does not exist, -1 err set.
 */
static int read_inside(const confine *c, const char *path, size_t max, char **out, size_t *len,
		       const char *what)
{
	char real[PATH_MAX];
	struct stat st;
	ssize_t n = 0;
	int fd;

	*out = NULL;
	if (!realpath(path, real))
		return errno == ENOENT || errno == ENOTDIR
			   ? check_maybe_path(c, path, what)
			   : rq_error_set(c->err, RQ_E_BAD_REPO, "cannot resolve %s '%.200s': %s",
					  what, shown(c, path), strerror(errno));
	if (!inside(c, real))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "%s '%.200s' leads outside the repository root", what,
				    shown(c, path));
	fd = open(real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		rq_error_set(c->err, RQ_E_BAD_REPO, "%s '%.200s' is %s", what, shown(c, path),
			     fd < 0 ? "unreadable"
			     : S_ISREG(st.st_mode)
				 ? "too large"
				 : "not a regular file (a FIFO, a directory or a device)");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!(*out = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return rq_error_set(c->err, RQ_E_NOMEM, "out of memory");
	}
	for (*len = 0; *len < (size_t)st.st_size; *len += (size_t)n)
		if ((n = read(fd, *out + *len, (size_t)st.st_size - *len)) <= 0)
			break;
	close(fd);
	(*out)[*len] = '\0';
	return 1;
}

static int walk_config(cfgwalk *w, const char *path);

/* The file an include names, as libgit2 resolves it: an absolute path as
 * it is, a relative one beside the including file (its path as libgit2
 * named it, not resolved); "~/" is the home directory, outside. */
static int include_path(const cfgwalk *w, const char *val, char *out, size_t size)
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
	cfgwalk *w = arg;
	char inc[PATH_MAX];
	cfgvar *v;

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
	return walk_config(w, inc) < 0;
}

/* A config file and, in turn, every file it includes (whatever their
 * conditions): each resolves inside the root and is a regular file, or
 * does not exist (libgit2 skips it); no deeper than libgit2 reads. */
static int walk_config(cfgwalk *w, const char *path)
{
	const char *was = w->path, *why;
	size_t len, line;
	char *text;
	int r;

	if (w->depth >= CONFIG_DEPTH || ++w->files > CONFIG_FILES)
		return rq_error_set(w->c->err, RQ_E_BAD_REPO,
				    "config includes nest deeper than %d files, or more than %d",
				    CONFIG_DEPTH, CONFIG_FILES);
	if ((r = read_inside(w->c, path, CONFIG_BYTES, &text, &len,
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
				    line, shown(w->c, path), why);
	return r ? -1 : 0; /* 1: an include's error, set */
}

static void cfgwalk_free(cfgwalk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->v[i].name);
		free(w->v[i].value);
	}
	free(w->v);
}

/* dir/name into out (PATH_MAX); -1 when too long. */
static int join(char *out, const char *dir, const char *name)
{
	size_t dl = strlen(dir);
	int n = snprintf(out, PATH_MAX, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", name);
	return n < 0 || n >= PATH_MAX ? -1 : 0;
}

/* The directory a small file (a .git file's "gitdir: ", a commondir file)
 * names, as libgit2 reads it (trailing whitespace dropped, relative to
 * base), into out; it must lead inside the root. 0 or -1. */
static int named_dir(const confine *c, const char *text, const char *base, char *out,
		     const char *what)
{
	size_t n = strlen(text);

	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ' ||
		     text[n - 1] == '\t'))
		n--;
	if (snprintf(out, PATH_MAX, "%s%s%.*s", text[0] == '/' ? "" : base,
		     text[0] == '/' ? "" : "/", (int)n, text) >= PATH_MAX)
		return rq_error_set(c->err, RQ_E_BAD_REPO, "%s is too long", what);
	return check_maybe_path(c, out, what);
}

/* What libgit2 reads while it looks for the repository at path, checked
 * before it does: <path>/.git (a directory, or a file naming one with
 * "gitdir: ") and, in each place it may take for the git directory, the
 * commondir file: inside the root, and no FIFO or device (libgit2 would
 * block reading it). */
static int check_discovery(const confine *c, const char *path)
{
	char dotgit[PATH_MAX], target[PATH_MAX], p[PATH_MAX], *text;
	const char *cand[3] = {NULL, NULL, path};
	struct stat st;
	size_t len;
	int r;

	if (join(dotgit, path, ".git") < 0 || check_maybe_path(c, dotgit, "'.git'") < 0)
		return -1;
	if (stat(dotgit, &st) == 0 && S_ISDIR(st.st_mode))
		cand[0] = dotgit;
	else if (stat(dotgit, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((r = read_inside(c, dotgit, SMALL_FILE, &text, &len, "'.git' file")) < 0)
			return -1;
		if (r > 0 && !strncmp(text, "gitdir: ", 8)) {
			r = named_dir(c, text + 8, path, target, "the gitdir of '.git'");
			cand[1] = target;
		}
		free(text);
		if (r < 0)
			return -1;
	}
	for (int i = 0; i < 3; i++) {
		if (!cand[i])
			continue;
		if (join(p, cand[i], "commondir") < 0)
			return rq_error_set(c->err, RQ_E_BAD_REPO, "a path is too long");
		if (check_maybe_path(c, p, "commondir file") < 0)
			return -1;
		/* (the one of the git directory taken is read below) */
		if (stat(p, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return rq_error_set(c->err, RQ_E_BAD_REPO,
					    "'%s' is not a regular file (a FIFO or a device)",
					    shown(c, p));
	}
	return 0;
}

/* The git directory libgit2 will open at path (no search upwards: the
 * parent of path is the ceiling) and its common directory (a commondir
 * file, else itself), both inside the root. */
static int find_dirs(const confine *c, const char *path, char *gitdir, char *commondir)
{
	git_buf b = GIT_BUF_INIT;
	char parent[PATH_MAX], p[PATH_MAX], *text, *slash;
	size_t len;
	int r;

	snprintf(parent, sizeof(parent), "%s", path);
	if ((slash = strrchr(parent, '/')))
		slash[slash == parent] = '\0';
	r = git_repository_discover(&b, path, 0, parent);
	if (r == 0 && snprintf(gitdir, PATH_MAX, "%s", b.ptr) >= PATH_MAX)
		r = -1;
	git_buf_dispose(&b);
	if (r < 0)
		return rq_error_set(c->err, RQ_E_BAD_REPO, "'%s' is not a git repository", path);
	if (check_path(c, gitdir) < 0 || join(p, gitdir, "commondir") < 0 ||
	    (r = read_inside(c, p, SMALL_FILE, &text, &len, "commondir file")) < 0)
		return -1;
	if (r == 0)
		snprintf(commondir, PATH_MAX, "%s", gitdir);
	else
		r = named_dir(c, text, gitdir, commondir, "the commondir file's directory");
	free(text);
	return r < 0 ? -1 : 0;
}

/* The configuration libgit2 will read (<commondir>/config; a linked
 * worktree's config.worktree as well), every include checked and read. */
static int walk_configs(cfgwalk *w, const char *gitdir, const char *commondir)
{
	char p[PATH_MAX];

	if (join(p, commondir, "config") < 0 || walk_config(w, p) < 0)
		return -1;
	if (!strcmp(gitdir, commondir))
		return 0;
	return join(p, gitdir, "config.worktree") < 0 || walk_config(w, p) < 0 ? -1 : 0;
}

/* a and b name the same directory. */
static int same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static int cfgvar_cmp(const void *a, const void *b)
{
	const cfgvar *x = a, *y = b;
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
static int opened_as_checked(cfgwalk *w, git_repository *repo, const char *gitdir,
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
	qsort(w->v, w->n, sizeof(*w->v), cfgvar_cmp);
	/* no repository configuration (or none readable now): nothing to compare */
	if (git_repository_config(&cfg, repo) == 0 &&
	    git_config_open_level(&local, cfg, GIT_CONFIG_LEVEL_LOCAL) == 0 &&
	    git_config_iterator_new(&it, local) == 0)
		while (r == 0 && git_config_next(&e, it) == 0) {
			cfgvar key = {(char *)e->name, (char *)e->value};
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

/* The opener's error, or libgit2's "not a git repository". */
static int open_checked(git_repository **out, const char *path, rq_confine_opener open,
			rq_error *err)
{
	if (open) {
		err->code = 0;
		if (open(out, path, err) == 0)
			return 0;
		return err->code
			   ? -1
			   : rq_error_set(err, RQ_E_BAD_REPO, "'%s' is not a git repository", path);
	}
	if (git_repository_open_ext(out, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0)
		return 0;
	return rq_error_set(err, RQ_E_BAD_REPO, "'%s' is not a git repository", path);
}

int rq_confine_open(git_repository **out, const char *path, const char *root,
		    rq_confine_opener open, rq_error *err)
{
	char gitdir[PATH_MAX], commondir[PATH_MAX];
	confine c = {root, strlen(root), path, err};
	cfgwalk w = {&c, NULL, 0, 0, 0, 0, NULL};
	int rc = -1;

	*out = NULL;
	if (check_discovery(&c, path) == 0 && find_dirs(&c, path, gitdir, commondir) == 0 &&
	    walk_configs(&w, gitdir, commondir) == 0) {
		if (open_checked(out, path, open, err) == 0 &&
		    opened_as_checked(&w, *out, gitdir, commondir) == 0 &&
		    rq_confine_repo(*out, root, err) == 0)
			rc = 0;
	}
	if (rc < 0) {
		git_repository_free(*out);
		*out = NULL;
	}
	cfgwalk_free(&w);
	return rc;
}
