/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_confine: every path of a repository resolves inside the root. The
 * parts: the checks of an opened repository (its places, refs and
 * objects, a ref about to be written); before libgit2 opens it, what
 * libgit2 reads while it finds the repository (a .git file, commondir
 * files), the scope, the configuration (rq_confine_cfg); the open. Each
 * path is judged by rq_confine_scope.
 */
#include "rq_confine.h"
#include "rq_refname.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_confine_cfg.h"
#include "rq_confine_scope.h"
#include "rq_fs.h"

#define WALK_DEPTH 64	/* deeper ref hierarchies are refused */
#define SMALL_FILE 4096 /* a .git file, a commondir file */

/*
 * One entry of a directory libgit2 or replayq reads (p, lstat'ed into
 * st): a regular file, a directory (1: the caller may walk it), or, when
 * links is set, a symbolic link to a regular file inside the scope.
 * Anything else could block its reader (a FIFO), never end (a device) or
 * lead elsewhere: refused.
 */
static int check_node(const rq_confine_scope *c, const char *p, const struct stat *st, int links)
{
	struct stat to;

	if (S_ISREG(st->st_mode))
		return 0;
	if (S_ISDIR(st->st_mode))
		return 1;
	if (!S_ISLNK(st->st_mode))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "'%s' is not a regular file, a directory or a symbolic link "
				    "(a FIFO, a socket or a device)",
				    rq_confine_scope_shown(c, p));
	if (!links)
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "'%s' is a symbolic link (none is taken there)",
				    rq_confine_scope_shown(c, p));
	if (rq_confine_scope_check(c, p) < 0)
		return -1;
	if (stat(p, &to) == 0 && !S_ISREG(to.st_mode))
		return rq_error_set(
		    c->err, RQ_E_BAD_REPO,
		    "'%s' is a symbolic link to something that is not a regular file",
		    rq_confine_scope_shown(c, p));
	return 0;
}

#define WALK_LINKS 1 /* links to regular files inside are taken */
#define WALK_ALL   2 /* a directory deeper than depth is refused (else not walked) */

/* Every entry under dir, depth levels down, passes check_node. */
static int check_tree(const rq_confine_scope *c, const char *dir, int depth, int flags)
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
					  rq_confine_scope_shown(c, dir));
		else if (lstat(p, &st) < 0)
			continue; /* gone meanwhile */
		else if ((rc = check_node(c, p, &st, flags & WALK_LINKS)) <= 0)
			continue;
		else if (depth > 1)
			rc = check_tree(c, p, depth - 1, flags);
		else
			rc = flags & WALK_ALL
				 ? rq_error_set(c->err, RQ_E_BAD_REPO, "'%s' is nested too deep",
						rq_confine_scope_shown(c, p))
				 : 0;
	}
	closedir(dh);
	return rc;
}

/* The ref files at the top of a git directory (HEAD, packed-refs, the
 * *_HEAD files): each a regular file or a link to one inside. */
static int check_ref_files(const rq_confine_scope *c, const char *dir)
{
	struct dirent *d;
	DIR *dh = opendir(dir);
	int rc = 0;

	if (!dh)
		return 0;
	while (rc == 0 && (d = readdir(dh))) {
		size_t n = strlen(d->d_name);
		char p[PATH_MAX];
		struct stat st;
		if (d->d_type == DT_REG ||
		    (strcmp(d->d_name, "HEAD") && strcmp(d->d_name, "packed-refs") &&
		     (n < 5 || strcmp(d->d_name + n - 5, "_HEAD"))))
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, d->d_name) >= (int)sizeof(p) ||
		    lstat(p, &st) < 0)
			continue;
		if ((rc = check_node(c, p, &st, 1)) > 0)
			rc = rq_error_set(c->err, RQ_E_BAD_REPO, "'%s' is a directory",
					  rq_confine_scope_shown(c, p));
	}
	closedir(dh);
	return rc;
}

/* dir/name is not a symbolic link. */
static int not_a_link(const rq_confine_scope *c, const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%s", dir, name) < (int)sizeof(p) && lstat(p, &st) == 0 &&
	    S_ISLNK(st.st_mode))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "'%s' is a symbolic link (none is taken there)",
				    rq_confine_scope_shown(c, p));
	return 0;
}

/* The paths of the repository that must resolve inside the scope. */
static int check_places(const rq_confine_scope *c, const char *gitdir, const char *commondir)
{
	static const char *const common[] = {"objects", "objects/pack", "objects/info", "refs",
					     "logs",	"packed-refs",	"info",		"reftable"};
	static const char *const own[] = {"HEAD", "logs/HEAD", "index", "reftable"};
	char p[PATH_MAX * 2];
	size_t i;

	if (rq_confine_scope_check(c, gitdir) < 0 || rq_confine_scope_check(c, commondir) < 0)
		return rq_error_set(c->err, RQ_E_BAD_REPO, "the git directory leads outside %s",
				    rq_confine_scope_name(c));
	for (i = 0; i < sizeof(common) / sizeof(*common); i++) {
		snprintf(p, sizeof(p), "%s/%s", commondir, common[i]);
		if (rq_confine_scope_check(c, p) < 0)
			return -1;
	}
	for (i = 0; i < sizeof(own) / sizeof(*own); i++) {
		snprintf(p, sizeof(p), "%s/%s", gitdir, own[i]);
		if (rq_confine_scope_check(c, p) < 0)
			return -1;
	}
	return not_a_link(c, commondir, "reftable") < 0 || not_a_link(c, gitdir, "reftable") < 0
		   ? -1
		   : 0;
}

/* An objects directory: xx/, pack/ *, info/ * (commit-graphs/ too); not
 * the loose files (their reader opens no link and no FIFO). */
static int check_objects(const rq_confine_scope *c, const char *dir)
{
	char p[PATH_MAX + 8];

	if (check_tree(c, dir, 1, WALK_LINKS) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/pack", dir);
	if (check_tree(c, p, 1, WALK_LINKS) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/info", dir);
	return check_tree(c, p, 2, WALK_LINKS);
}

int rq_confine_objects(const char *dir, const char *within, rq_error *err)
{
	rq_confine_scope c = {within, strlen(within), within, strlen(within), dir, err, ""};

	return check_objects(&c, dir);
}

/* What is in the places libgit2 and replayq read refs and objects from,
 * in one git directory (common: the common one). */
static int check_contents(const rq_confine_scope *c, const char *dir, int common)
{
	char p[PATH_MAX];

	if (common && (snprintf(p, sizeof(p), "%s/objects", dir) >= (int)sizeof(p) ||
		       check_objects(c, p) < 0))
		return -1;
	snprintf(p, sizeof(p), "%s/refs", dir);
	if (check_tree(c, p, WALK_DEPTH, WALK_LINKS | WALK_ALL) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/logs", dir);
	if (check_tree(c, p, WALK_DEPTH, WALK_LINKS | WALK_ALL) < 0)
		return -1;
	/* reftable/ * (the tables and tables.list): no link at all */
	snprintf(p, sizeof(p), "%s/reftable", dir);
	if (check_tree(c, p, 1, 0) < 0)
		return -1;
	return check_ref_files(c, dir);
}

static void trimmed(char *out, const char *path)
{
	snprintf(out, PATH_MAX, "%s", path);
	for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--)
		out[n - 1] = '\0';
}

static int confine_repo(rq_confine_scope *c, git_repository *repo)
{
	char gitdir[PATH_MAX], commondir[PATH_MAX];

	const char *was = c->base;
	int rc = -1;

	trimmed(gitdir, git_repository_path(repo));
	trimmed(commondir, git_repository_commondir(repo));
	c->base = gitdir;
	if (check_places(c, gitdir, commondir) == 0) {
		c->base = commondir;
		if (check_contents(c, commondir, 1) == 0) {
			c->base = gitdir;
			rc = strcmp(gitdir, commondir) ? check_contents(c, gitdir, 0) : 0;
		}
	}
	c->base = was; /* (c outlives the buffers) */
	return rc;
}

int rq_confine_repo(git_repository *repo, const char *within, rq_error *err)
{
	rq_confine_scope c = {within, strlen(within), within, strlen(within), within, err, ""};

	return confine_repo(&c, repo);
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
	int own = !strncmp(name, "refs/", 5) ? rq_refname_worktree_prefix(name) : 1;
	const char *base = own ? git_repository_path(repo) : git_repository_commondir(repo);
	char b[PATH_MAX], dir[PATH_MAX + 16], list[PATH_MAX + 32];
	struct stat st;

	snprintf(b, sizeof(b), "%s", base);
	while (strlen(b) > 1 && b[strlen(b) - 1] == '/')
		b[strlen(b) - 1] = '\0';
	if (no_link_below(b, name, "ref", err) < 0)
		return -1;
	snprintf(logs, sizeof(logs), "logs/%s", name);
	if (no_link_below(b, logs, "reflog", err) < 0)
		return -1;
	/* a reftable repository writes its tables there */
	snprintf(dir, sizeof(dir), "%s/reftable", b);
	snprintf(list, sizeof(list), "%s/tables.list", dir);
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && stat(list, &st) == 0)
		return rq_error_set(err, RQ_E_BAD_REPO,
				    "ref '%s' is in a reftable directory that is a symbolic link "
				    "('reftable'); refusing to write through it",
				    name);
	return 0;
}

/* ---- before libgit2 opens the repository ---- */

/* dir/name into out (PATH_MAX); -1 when too long. */
static int join(char *out, const char *dir, const char *name)
{
	size_t dl = strlen(dir);
	int n = snprintf(out, PATH_MAX, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", name);
	return n < 0 || n >= PATH_MAX ? -1 : 0;
}

/* libgit2's whitespace (git__isspace), which it trims from the end of a
 * .git file and of a commondir file: \v and \f too. */
static int lg2_space(int ch)
{
	return ch == ' ' || (ch >= '\t' && ch <= '\r');
}

/* [s, s + n) holds a control byte (a NUL, a line end, a tab, DEL). */
static int has_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 1;
	return 0;
}

/*
 * The common directory a commondir file's text (len bytes) names for the
 * git directory gitdir, into out (PATH_MAX). git drops the line ends at
 * its end and takes a relative path from the git directory; libgit2 1.5
 * drops all trailing whitespace (\v and \f too), joins only a path that
 * starts with "./" or "../" to the git directory, and takes any other
 * relative one from the process's current directory. So only the text
 * both read alike is taken: an absolute path, or one starting with "./"
 * or "../", with no control byte and no trailing space before its line
 * end. 0, or -1 with RQ_E_BAD_REPO.
 */
static int commondir_text(const char *text, size_t len, const char *gitdir, char *out,
			  rq_error *err)
{
	size_t n = len, gl = strlen(gitdir);
	const char *why = NULL;

	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	if (!n)
		why = "is empty";
	else if (has_control(text, n) || text[n - 1] == ' ')
		why = "holds a control character or ends in a space (libgit2 and git read it "
		      "differently)";
	else if (text[0] != '/' && strncmp(text, "./", 2) && strncmp(text, "../", 3))
		why = "names a relative path not starting with ./ or ../ (libgit2 takes it from "
		      "the current directory, git from the git directory)";
	while (gl > 1 && gitdir[gl - 1] == '/')
		gl--;
	if (!why && snprintf(out, PATH_MAX, "%.*s%s%.*s", text[0] == '/' ? 0 : (int)gl, gitdir,
			     text[0] == '/' ? "" : "/", (int)n, text) >= PATH_MAX)
		why = "names a path too long";
	if (why)
		return rq_error_set(err, RQ_E_BAD_REPO, "the commondir file of '%.*s' %s", (int)gl,
				    gitdir, why);
	return 0;
}

int rq_confine_commondir(const char *gitdir, char *out, rq_error *err)
{
	char p[PATH_MAX], *text;
	size_t len;
	int r;

	if (snprintf(p, sizeof(p), "%s/commondir", gitdir) >= (int)sizeof(p))
		return rq_error_set(err, RQ_E_BAD_REPO, "the git directory's path is too long");
	if ((r = rq_fs_read_regular(p, 1, SMALL_FILE, &text, &len)) < 0)
		return errno == ENOMEM
			   ? rq_error_set(err, RQ_E_NOMEM, "out of memory")
			   : rq_error_set(err, RQ_E_BAD_REPO, "'%s': %s", p, rq_fs_strerror(errno));
	if (r == 0) {
		trimmed(out, gitdir);
		return 0;
	}
	r = commondir_text(text, len, gitdir, out, err);
	free(text);
	return r < 0 ? -1 : 1;
}

/*
 * The git directory a .git file's text (len bytes) names, as libgit2 1.5
 * reads it: its trailing whitespace dropped, "gitdir:", any whitespace,
 * then the path, relative to dir (the directory of the .git file), into
 * out. 1, 0 when it is not a gitdir file (libgit2 opens nothing), or -1:
 * a path with a control byte (git would read another) or too long.
 */
static int gitfile_target(const rq_confine_scope *c, const char *text, size_t len, const char *dir,
			  char *out)
{
	size_t n = len;
	const char *p = text + 7;

	while (n && lg2_space((unsigned char)text[n - 1]))
		n--;
	if (n <= 7 || memcmp(text, "gitdir:", 7))
		return 0;
	while (p < text + n && lg2_space((unsigned char)*p))
		p++;
	if (has_control(p, (size_t)(text + n - p)))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "the '.git' file holds a control character");
	if (snprintf(out, PATH_MAX, "%s%s%.*s", *p == '/' ? "" : dir, *p == '/' ? "" : "/",
		     (int)(text + n - p), p) >= PATH_MAX)
		return rq_error_set(c->err, RQ_E_BAD_REPO, "the '.git' file's path is too long");
	return 1;
}

/* A small file libgit2 reads in a git directory it looks at while it
 * finds the repository (commondir, a worktree's gitdir, HEAD): inside the
 * root, and a regular file when it exists. */
static int check_small_file(const rq_confine_scope *c, const char *dir, const char *name)
{
	char p[PATH_MAX];
	struct stat st;

	if (join(p, dir, name) < 0)
		return rq_error_set(c->err, RQ_E_BAD_REPO, "a path is too long");
	if (rq_confine_scope_check_maybe(c, p, name) < 0)
		return -1;
	if (stat(p, &st) == 0 && !S_ISREG(st.st_mode))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "'%s' is not a regular file (a FIFO, a directory or a device)",
				    rq_confine_scope_shown(c, p));
	return 0;
}

/* A place libgit2 may take for the git directory while it finds the
 * repository: its commondir, gitdir and HEAD files (check_small_file);
 * with first (the place libgit2 looks at first), the common directory
 * its commondir file names, whose objects/ and refs/ libgit2 looks at
 * (so a job could tell what exists outside by the error it gets). */
static int check_place(const rq_confine_scope *c, const char *dir, int first)
{
	static const char *const small[] = {"commondir", "gitdir", "HEAD"};
	char common[PATH_MAX];
	int r;

	for (size_t k = 0; k < sizeof(small) / sizeof(*small); k++)
		if (check_small_file(c, dir, small[k]) < 0)
			return -1;
	if (!first)
		return 0;
	/* (its own buffer: rq_confine_commondir's out must not be dir) */
	r = rq_confine_commondir(dir, common, c->err);
	return r < 0 || (r > 0 && rq_confine_scope_check_maybe(
				      c, common, "the commondir file's directory") < 0)
		   ? -1
		   : 0;
}

/* What libgit2 reads while it looks for the repository at path, checked
 * before it does: <path>/.git (a directory, or a file naming one with
 * "gitdir:") and each place it may take for the git directory. */
static int check_discovery(const rq_confine_scope *c, const char *path)
{
	char dotgit[PATH_MAX], target[PATH_MAX], *text;
	const char *cand[3] = {NULL, NULL, path};
	struct stat st;
	size_t len;
	int r;

	if (join(dotgit, path, ".git") < 0 || rq_confine_scope_check_maybe(c, dotgit, "'.git'") < 0)
		return -1;
	if (stat(dotgit, &st) == 0 && S_ISDIR(st.st_mode))
		cand[0] = dotgit;
	else if (stat(dotgit, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((r = rq_confine_scope_read(c, dotgit, SMALL_FILE, &text, &len, "'.git' file")) <
		    0)
			return -1;
		if (r > 0 && (r = gitfile_target(c, text, len, path, target)) > 0)
			cand[1] = target;
		free(text);
		if (r < 0 || (cand[1] &&
			      rq_confine_scope_check_maybe(c, target, "the gitdir of '.git'") < 0))
			return -1;
	}
	for (int i = 0, seen = 0; i < 3; i++)
		if (cand[i] && check_place(c, cand[i], !seen++) < 0)
			return -1;
	return 0;
}

/* The git directory libgit2 will open at path (no search upwards: the
 * parent of path is the ceiling) and its common directory (a commondir
 * file, else itself), both inside the root. */
static int find_dirs(const rq_confine_scope *c, const char *path, char *gitdir, char *commondir)
{
	git_buf b = GIT_BUF_INIT;
	char parent[PATH_MAX], p[PATH_MAX], *slash;
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
	if (rq_confine_scope_check(c, gitdir) < 0 || join(p, gitdir, "commondir") < 0 ||
	    rq_confine_scope_check_maybe(c, p, "commondir file") < 0 ||
	    rq_confine_commondir(gitdir, commondir, c->err) < 0)
		return -1;
	return rq_confine_scope_check_maybe(c, commondir, "the commondir file's directory");
}

/* git is a linked worktree's git directory of common: common/worktrees/<name>. */
static int worktree_of(const char *common, const char *git)
{
	size_t cl = strlen(common);

	return !strncmp(git, common, cl) && !strncmp(git + cl, "/worktrees/", 11) && git[cl + 11] &&
	       !strchr(git + cl + 11, '/');
}

/*
 * The scope of the repository at path (its git directory gitdir, common
 * directory commondir): path itself when both are inside it; the main
 * repository when path is one of its linked worktrees' git directories
 * (<common>/worktrees/<name>); refused otherwise (another repository's
 * directory under the root). Then HEAD, which libgit2 reads at open, is
 * in it.
 */
static int set_scope(rq_confine_scope *c, const char *path, const char *gitdir,
		     const char *commondir)
{
	char d[PATH_MAX], g[PATH_MAX], p[PATH_MAX];

	if (!realpath(path, d) || !realpath(gitdir, g) || !realpath(commondir, c->scopebuf))
		return rq_error_set(c->err, RQ_E_BAD_REPO, "cannot resolve the git directory");
	if (!rq_confine_scope_under(d, strlen(d), g))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "the git directory '%s' is outside the repository",
				    rq_confine_scope_shown(c, gitdir));
	if (rq_confine_scope_under(d, strlen(d), c->scopebuf))
		snprintf(c->scopebuf, sizeof(c->scopebuf), "%s", d);
	else if (strcmp(g, d) || !worktree_of(c->scopebuf, g))
		return rq_error_set(c->err, RQ_E_BAD_REPO,
				    "the common directory '%s' is outside the repository (another "
				    "repository's?)",
				    rq_confine_scope_shown(c, commondir));
	c->scope = c->scopebuf;
	c->scopelen = strlen(c->scope);
	return join(p, gitdir, "HEAD") < 0 ? -1 : rq_confine_scope_check(c, p);
}

/* The configuration libgit2 will read (<commondir>/config; a linked
 * worktree's config.worktree as well), every include checked and read. */
static int walk_configs(rq_confine_cfg *w, const char *gitdir, const char *commondir)
{
	char p[PATH_MAX];

	if (join(p, commondir, "config") < 0 || rq_confine_cfg_walk(w, p) < 0)
		return -1;
	if (!strcmp(gitdir, commondir))
		return 0;
	return join(p, gitdir, "config.worktree") < 0 || rq_confine_cfg_walk(w, p) < 0 ? -1 : 0;
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

int rq_confine_open(git_repository **out, const char *path, const char *root, unsigned flags,
		    rq_confine_opener open, rq_error *err)
{
	char gitdir[PATH_MAX], commondir[PATH_MAX];
	rq_confine_scope c = {root, strlen(root), root, strlen(root), path, err, ""};
	rq_confine_cfg w = {&c, NULL, 0, 0, 0, 0, NULL};
	int rc = -1;

	*out = NULL;
	if (check_discovery(&c, path) == 0 && find_dirs(&c, path, gitdir, commondir) == 0 &&
	    ((flags & RQ_CONFINE_ROOT_SCOPE) || set_scope(&c, path, gitdir, commondir) == 0) &&
	    walk_configs(&w, gitdir, commondir) == 0) {
		if (open_checked(out, path, open, err) == 0 &&
		    rq_confine_cfg_opened_as_checked(&w, *out, gitdir, commondir) == 0 &&
		    confine_repo(&c, *out) == 0)
			rc = 0;
	}
	if (rc < 0) {
		git_repository_free(*out);
		*out = NULL;
	}
	rq_confine_cfg_free(&w);
	return rc;
}
