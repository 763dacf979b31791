/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testutil: temporary repositories made with git, shell commands, libgit2
 * set-up for the unit tests.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "testutil.h"

#include "rq_odb_mem.h"

#include "rq_fs.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char scratch[PATH_MAX];

const char *tu_scratch(void)
{
	return scratch;
}

static const char *tmp_base(void)
{
	const char *t = getenv("RQ_TEST_TMP");
	return t && *t ? t : "/tmp";
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

int tu_group_setup(void **state)
{
	static const int levels[] = {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
				     GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_PROGRAMDATA};
	(void)state;

	if (mkdir_p(tmp_base()) < 0) {
		fprintf(stderr, "cannot create %s: %s\n", tmp_base(), strerror(errno));
		return -1;
	}
	snprintf(scratch, sizeof(scratch), "%s/unit-home-XXXXXX", tmp_base());
	if (!mkdtemp(scratch)) {
		fprintf(stderr, "mkdtemp %s: %s\n", scratch, strerror(errno));
		return -1;
	}
	setenv("HOME", scratch, 1);
	setenv("XDG_CONFIG_HOME", scratch, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	setenv("GIT_AUTHOR_NAME", TU_AUTHOR_NAME, 1);
	setenv("GIT_AUTHOR_EMAIL", TU_AUTHOR_EMAIL, 1);
	setenv("GIT_COMMITTER_NAME", TU_COMMITTER_NAME, 1);
	setenv("GIT_COMMITTER_EMAIL", TU_COMMITTER_EMAIL, 1);
	setenv("GIT_AUTHOR_DATE", "@1700000000 +0000", 1);
	setenv("GIT_COMMITTER_DATE", "@1700000000 +0000", 1);
	setenv("TZ", "UTC", 1);
	setenv("LC_ALL", "C", 1);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	unsetenv("GIT_INDEX_FILE");
	unsetenv("GIT_OBJECT_DIRECTORY");
	unsetenv("GIT_ALTERNATE_OBJECT_DIRECTORIES");
	unsetenv("GIT_CEILING_DIRECTORIES");
	unsetenv("EMAIL");
	tzset();

	if (git_libgit2_init() < 0)
		return -1;
	/* no system, global or XDG configuration: only the repository's */
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], scratch) < 0)
			return -1;
	return 0;
}

int tu_group_teardown(void **state)
{
	(void)state;
	git_libgit2_shutdown();
	if (scratch[0])
		tu_rmrf(scratch);
	scratch[0] = '\0';
	return 0;
}

tu_repo *tu_repo_new(int bare)
{
	tu_repo *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->bare = bare;
	r->tick = TU_EPOCH;
	assert_int_equal(mkdir_p(tmp_base()), 0);
	snprintf(r->root, sizeof(r->root), "%s/repo-XXXXXX", tmp_base());
	assert_non_null(mkdtemp(r->root));
	if (bare) {
		snprintf(r->path, sizeof(r->path), "%.1000s/repo.git", r->root);
		snprintf(r->gitdir, sizeof(r->gitdir), "%.1000s", r->path);
	} else {
		snprintf(r->path, sizeof(r->path), "%.1000s/repo", r->root);
		snprintf(r->gitdir, sizeof(r->gitdir), "%.1000s/.git", r->path);
	}
	setenv("GIT_AUTHOR_DATE", "@1700000000 +0000", 1);
	setenv("GIT_COMMITTER_DATE", "@1700000000 +0000", 1);
	assert_int_equal(tu_run(NULL, "git init -q %s -b main '%s'", bare ? "--bare" : "", r->path),
			 0);
	return r;
}

tu_repo *tu_repo_copy(const tu_repo *src)
{
	tu_repo *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->bare = src->bare;
	r->tick = src->tick;
	snprintf(r->root, sizeof(r->root), "%s/repo-XXXXXX", tmp_base());
	assert_non_null(mkdtemp(r->root));
	snprintf(r->path, sizeof(r->path), "%.1000s/%s", r->root, src->bare ? "repo.git" : "repo");
	if (src->bare)
		snprintf(r->gitdir, sizeof(r->gitdir), "%.1000s", r->path);
	else
		snprintf(r->gitdir, sizeof(r->gitdir), "%.1000s/.git", r->path);
	assert_int_equal(tu_run(NULL, "cp -a '%s' '%s'", src->path, r->path), 0);
	return r;
}

int tu_copy_setup(void **state, const tu_repo *tmpl, const char *date)
{
	*state = tu_repo_copy(tmpl);
	setenv("GIT_COMMITTER_DATE", date, 1);
	return 0;
}

int tu_copy_teardown(void **state)
{
	tu_repo_free(*state);
	*state = NULL;
	return 0;
}

void tu_repo_free(tu_repo *r)
{
	if (!r)
		return;
	git_repository_free(r->repo);
	if (r->root[0])
		tu_rmrf(r->root);
	free(r);
}

git_repository *tu_repo_open(tu_repo *r)
{
	if (!r->repo) {
		int rc = git_repository_open(&r->repo, r->path);
		if (rc < 0)
			fprintf(stderr, "git_repository_open %s: %s\n", r->path,
				git_error_last() ? git_error_last()->message : "?");
		assert_int_equal(rc, 0);
	}
	return r->repo;
}

static char *vformat(const char *fmt, va_list ap)
{
	va_list aq;
	int n;
	char *s;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	assert_true(n >= 0);
	s = malloc((size_t)n + 1);
	assert_non_null(s);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

/* "cd <dir> && { <cmd>\n}" followed by redir; malloc'ed. */
static char *wrap(tu_repo *r, const char *cmd, const char *redir)
{
	const char *dir = r ? r->path : scratch;
	size_t n = strlen(dir) + strlen(cmd) + strlen(redir) + 32;
	char *s = malloc(n);

	assert_non_null(s);
	snprintf(s, n, "cd '%s' && { %s\n}%s", dir, cmd, redir);
	return s;
}

static int exit_status(int st)
{
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* The command run in r's directory with its stdout discarded: its exit
 * status; *cmd_out (when not NULL) the command, malloc'ed. */
static int vrun(tu_repo *r, char **cmd_out, const char *fmt, va_list ap)
{
	char *cmd = vformat(fmt, ap), *full = wrap(r, cmd, " >/dev/null");
	int st;

	fflush(NULL);
	st = exit_status(system(full));
	free(full);
	if (cmd_out)
		*cmd_out = cmd;
	else
		free(cmd);
	return st;
}

int tu_run(tu_repo *r, const char *fmt, ...)
{
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = vrun(r, NULL, fmt, ap);
	va_end(ap);
	return st;
}

void tu_git(tu_repo *r, const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int st;

	va_start(ap, fmt);
	st = vrun(r, &cmd, fmt, ap);
	va_end(ap);
	if (st != 0)
		fprintf(stderr, "command failed (%d): %s\n", st, cmd);
	free(cmd);
	assert_int_equal(st, 0);
}

static char *vcapture(tu_repo *r, size_t *len_out, const char *fmt, va_list ap)
{
	char *cmd = vformat(fmt, ap), *full = wrap(r, cmd, "");
	char *out = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int st;

	fflush(NULL);
	f = popen(full, "r");
	free(full);
	free(cmd);
	if (!f)
		return NULL;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *n = realloc(out, cap);
			assert_non_null(n);
			out = n;
		}
		size_t got = fread(out + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0)
			break;
	}
	out[len] = '\0';
	st = exit_status(pclose(f));
	if (st != 0) {
		free(out);
		return NULL;
	}
	if (len_out)
		*len_out = len;
	return out;
}

char *tu_capture(tu_repo *r, const char *fmt, ...)
{
	va_list ap;
	char *out;
	size_t len;

	va_start(ap, fmt);
	out = vcapture(r, &len, fmt, ap);
	va_end(ap);
	if (!out)
		return NULL;
	while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' ' || out[len - 1] == '\t' ||
			   out[len - 1] == '\r'))
		out[--len] = '\0';
	return out;
}

char *tu_capture_raw(tu_repo *r, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *out;

	va_start(ap, fmt);
	out = vcapture(r, len, fmt, ap);
	va_end(ap);
	return out;
}

/* Before removing: directories a test made read-only become writable. */
static int make_writable(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(path, 0700);
	return 0;
}

int tu_rmrf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISDIR(st.st_mode))
		nftw(path, make_writable, 16, FTW_PHYS);
	return rq_fs_rmtree(path);
}

int tu_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

int tu_count_entries(const char *dir, const char *prefix, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	size_t pl = strlen(prefix), sl = strlen(suffix);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (l >= pl + sl && !strncmp(e->d_name, prefix, pl) &&
		    !strcmp(e->d_name + l - sl, suffix))
			n++;
	}
	closedir(d);
	return n;
}

void tu_tick(tu_repo *r)
{
	char date[64];

	r->tick += 60;
	snprintf(date, sizeof(date), "@%ld +0000", r->tick);
	setenv("GIT_AUTHOR_DATE", date, 1);
	setenv("GIT_COMMITTER_DATE", date, 1);
}

void tu_commit_file(tu_repo *r, const char *path, const char *content, const char *msg)
{
	char full[PATH_MAX];
	FILE *f;

	assert_false(r->bare);
	assert_null(strchr(msg, '\''));
	assert_null(strchr(path, '\''));
	tu_tick(r);
	assert_true(snprintf(full, sizeof(full), "%s/%s", r->path, path) < (int)sizeof(full));
	{
		char dir[PATH_MAX];
		char *slash;
		snprintf(dir, sizeof(dir), "%s", full);
		slash = strrchr(dir, '/');
		*slash = '\0';
		assert_int_equal(mkdir_p(dir), 0);
	}
	f = fopen(full, "w");
	assert_non_null(f);
	fputs(content, f);
	assert_int_equal(fclose(f), 0);
	tu_git(r, "git add -- '%s' && git commit -q -m '%s'", path, msg);
}

void tu_rev_parse(tu_repo *r, const char *rev, git_oid *out)
{
	char *hex = tu_capture(r, "git rev-parse --verify -q '%s'", rev);

	if (!hex)
		fprintf(stderr, "cannot resolve %s\n", rev);
	assert_non_null(hex);
	assert_int_equal(git_oid_fromstr(out, hex), 0);
	free(hex);
}

const char *tu_hex(const git_oid *oid)
{
	static char bufs[4][GIT_OID_HEXSZ + 1];
	static int next;
	char *b = bufs[next++ % 4];

	git_oid_tostr(b, GIT_OID_HEXSZ + 1, oid);
	return b;
}

const rq_oid *tu_rq_oid(const git_oid *oid)
{
	static rq_oid bufs[4];
	static unsigned next;
	rq_oid *o = &bufs[next++ % 4];

	rq_oid_from_git(o, oid);
	return o;
}

void tu_rev_oid(tu_repo *r, const char *rev, rq_oid *out)
{
	git_oid g;

	tu_rev_parse(r, rev, &g);
	rq_oid_from_git(out, &g);
}

const char *tu_oid_hex(const rq_oid *oid)
{
	static char bufs[4][RQ_OID_MAX_HEXSZ + 1];
	static unsigned next;

	return rq_oid_fmt(bufs[next++ % 4], oid, &rq_oid_sha1);
}

int tu_mem_write_like(git_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type,
		      const git_oid *like)
{
	rq_oid id;
	int rc = rq_odb_mem_write_like(&id, odb, data, len, type, like ? tu_rq_oid(like) : NULL,
				       NULL, 0);

	if (rc == 0)
		rq_oid_to_git(out, &id, &rq_oid_sha1);
	return rc;
}

int tu_mem_write(git_oid *out, git_odb *odb, const void *data, size_t len, git_object_t type)
{
	return tu_mem_write_like(out, odb, data, len, type, NULL);
}

int tu_loose_count(tu_repo *r)
{
	char objects[PATH_MAX + 16];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(objects, sizeof(objects), "%s/objects", r->gitdir);
	if (!(d = opendir(objects)))
		return 0;
	while ((e = readdir(d))) {
		char sub[2 * PATH_MAX];
		if (strlen(e->d_name) != 2 || !strchr("0123456789abcdef", e->d_name[0]) ||
		    !strchr("0123456789abcdef", e->d_name[1]))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", objects, e->d_name);
		n += tu_count_entries(sub, "", "");
	}
	closedir(d);
	return n;
}

char *tu_worktree_head(tu_repo *r, const char *onto, const char *fmt, ...)
{
	va_list ap;
	char *cmd, *out;

	va_start(ap, fmt);
	cmd = vformat(fmt, ap);
	va_end(ap);
	out = tu_capture(r,
			 "git worktree add -q --detach ../wt '%s' >/dev/null 2>&1 || exit 1; "
			 "(cd ../wt && %s) >/dev/null 2>&1 && git -C ../wt rev-parse HEAD; s=$?; "
			 "git worktree remove --force ../wt >/dev/null 2>&1; exit $s",
			 onto, cmd);
	free(cmd);
	return out;
}

void tu_assert_no_tmpdir(tu_repo *r)
{
	char objects[PATH_MAX];

	snprintf(objects, sizeof(objects), "%.3000s/objects", r->gitdir);
	assert_int_equal(tu_count_entries(objects, "replayq-tmp-", ""), 0);
}
