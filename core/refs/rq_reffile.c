/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_reffile: one loose ref and its reflog entries (see the header).
 *
 * The rules followed are git's refs/files-backend.c (lock_raw_ref,
 * write_ref_to_lockfile, log_ref_setup, files_log_ref_write, commit_ref:
 * O_EXCL lock, "<hex>\n", an empty directory in the way removed, reflog
 * appended before the rename) and, for which reflogs get an entry and the
 * entry's bytes, libgit2 1.5's refdb_fs.c (loose_lock, reflog_append,
 * serialize_reflog_entry, maybe_append_head), which wrote replayq's refs
 * until now; core.fsync's parsing follows git's config.c. The code is
 * replayq's own.
 */
#define _GNU_SOURCE
#include "rq_reffile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_fs.h"
#include "rq_rttx.h"

#define LOCK_SUFFIX ".lock"

/* RQ_E_IO with what failed and why; errno stays e. */
static int io_error(rq_error *err, const char *what, const char *name, int e)
{
	rq_error_set(err, RQ_E_IO, "cannot %s '%s': %s", what, name, strerror(e));
	errno = e;
	return -1;
}

/* Remove the directory leaf under dir when it holds nothing but empty
 * directories (at any depth up to 64), following no link. */
static void rmdir_empty(int dir, const char *leaf, int depth)
{
	int fd = openat(dir, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dh;
	struct dirent *e;

	if (fd < 0)
		return;
	if (!(dh = fdopendir(fd))) {
		close(fd);
		return;
	}
	while (depth < 64 && (e = readdir(dh)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rmdir_empty(dirfd(dh), e->d_name, depth + 1);
	closedir(dh);
	unlinkat(dir, leaf, AT_REMOVEDIR); /* fails when anything is left */
}

/* 1 when a directory stands where the ref goes once the empty ones are
 * removed (git: "there is a non-empty directory ... blocking reference"). */
static int blocked(int dir, const char *leaf)
{
	struct stat st;

	rmdir_empty(dir, leaf, 0);
	return fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* The lock's name in its directory. */
static const char *lock_leaf(const rq_reffile *f)
{
	return f->path + f->leaf;
}

int rq_reffile_lock(rq_reffile *f, int base, const char *ref, rq_error *err)
{
	const char *leaf;
	size_t n = strlen(ref);
	int fd;

	rq_reffile_release(f);
	if ((f->dir = rq_fs_parent_make_at(base, ref, &leaf)) < 0)
		return io_error(err, "make the directory of", ref, errno);
	if (!(f->path = malloc(n + sizeof(LOCK_SUFFIX))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	memcpy(f->path, ref, n);
	memcpy(f->path + n, LOCK_SUFFIX, sizeof(LOCK_SUFFIX));
	f->leaf = (size_t)(leaf - ref);
	f->len = n;
	if (blocked(f->dir, leaf)) {
		rq_error_set(err, RQ_E_IO,
			     "there is a non-empty directory '%s' blocking reference '%s'", ref,
			     ref);
		errno = EISDIR;
		return -1;
	}
	fd = openat(f->dir, lock_leaf(f), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0666);
	if (fd < 0 && errno == EEXIST)
		return rq_error_set(err, RQ_E_REF_LOCKED, "'%s' exists", f->path);
	if (fd < 0)
		return io_error(err, "create", f->path, errno);
	close(fd);
	f->held = 1;
	return 0;
}

int rq_reffile_write(rq_reffile *f, const rq_oid *id, const rq_oid_algo *algo, int sync,
		     rq_error *err)
{
	char line[RQ_OID_MAX_HEXSZ + 1];
	int fd, e = 0;

	rq_oid_fmt(line, id, algo);
	line[algo->hexsz] = '\n';
	fd = openat(f->dir, lock_leaf(f), O_WRONLY | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return io_error(err, "open", f->path, errno);
	if (rq_fs_write_all(fd, line, algo->hexsz + 1) < 0 || (sync && fsync(fd) < 0))
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	return e ? io_error(err, "write", f->path, e) : 0;
}

int rq_reffile_commit(rq_reffile *f, int sync, rq_error *err)
{
	char *leaf = strndup(f->path + f->leaf, f->len - f->leaf);
	int r;

	if (!leaf)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	r = renameat(f->dir, lock_leaf(f), f->dir, leaf);
	if (r < 0)
		io_error(err, "rename the lock onto", f->path, errno);
	else
		f->held = 0;
	if (r == 0 && sync && fsync(f->dir) < 0)
		r = io_error(err, "sync the directory of", f->path, errno);
	free(leaf);
	return r < 0 ? -1 : 0;
}

void rq_reffile_release(rq_reffile *f)
{
	if (f->held && f->dir >= 0 && f->path)
		unlinkat(f->dir, lock_leaf(f), 0);
	if (f->dir >= 0)
		close(f->dir);
	free(f->path);
	f->dir = -1;
	f->path = NULL;
	f->leaf = f->len = 0;
	f->held = 0;
}

/* ---- reflogs ---- */

/* libgit2's white space (git__isspace). */
static int space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* s without its leading and trailing white space: *len bytes from the
 * result; NULL when empty or holding '<' or '>'. */
static const char *ident_field(const char *s, size_t *len)
{
	size_t n = strlen(s);

	if (strpbrk(s, "<>"))
		return NULL;
	while (n && space(*s))
		s++, n--;
	while (n && space(s[n - 1]))
		n--;
	*len = n;
	return n ? s : NULL;
}

/* libgit2's clean-up of an entry with a message (buf of *n bytes, room for
 * one more): every newline but in the last two bytes becomes a space,
 * trailing white space goes; then the newline that ends the entry. */
static void log_tidy(char *buf, size_t *n, int msg)
{
	for (size_t i = 0; msg && *n >= 2 && i < *n - 2; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
	while (*n && space(buf[*n - 1]))
		(*n)--;
	buf[(*n)++] = '\n';
	buf[*n] = '\0';
}

int rq_reffile_log_entry(char **out, size_t *len, const rq_oid *old, const rq_oid *new_id,
			 const rq_oid_algo *algo, const rq_ident *who, const char *msg,
			 rq_error *err)
{
	char o[RQ_OID_MAX_HEXSZ + 1], nw[RQ_OID_MAX_HEXSZ + 1];
	size_t nl, el, size;
	const char *name = ident_field(who->name, &nl), *email = ident_field(who->email, &el);
	int tz = who->tz < 0 ? -who->tz : who->tz, w;
	char *buf;

	*out = NULL;
	if (!name || !email)
		return rq_error_set(err, RQ_E_IDENT,
				    "invalid committer identity: an empty name or e-mail, or "
				    "one with '<' or '>'");
	size = 2 * algo->hexsz + nl + el + (msg ? strlen(msg) : 0) + 64;
	if (!(buf = malloc(size)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	w = snprintf(buf, size, "%s %s %.*s <%.*s> %" PRId64 " %c%02d%02d%s%s",
		     rq_oid_fmt(o, old, algo), rq_oid_fmt(nw, new_id, algo), (int)nl, name, (int)el,
		     email, who->time, who->tz < 0 ? '-' : '+', tz / 60, tz % 60, msg ? "\t" : "",
		     msg ? msg : "");
	if (w < 0 || (size_t)w >= size - 1) {
		free(buf);
		return rq_error_set(err, RQ_E_NOMEM, "reflog entry too long");
	}
	*len = (size_t)w;
	log_tidy(buf, len, msg != NULL);
	*out = buf;
	return 0;
}

int rq_reffile_log_own(const char *ref)
{
	return !strcmp(ref, "HEAD");
}

int rq_reffile_logged(int policy, const char *ref, int exists)
{
	if (policy != RQ_RTTX_LOG_NORMAL)
		return policy == RQ_RTTX_LOG_ALWAYS;
	return exists || !strncmp(ref, "refs/heads/", 11) || !strcmp(ref, "HEAD") ||
	       !strncmp(ref, "refs/remotes/", 13) || !strncmp(ref, "refs/notes/", 11);
}

/* "logs/<ref>", malloc'ed (NULL: out of memory). */
static char *log_path(const char *ref)
{
	size_t n = strlen(ref);
	char *p = malloc(n + 6);

	if (p) {
		memcpy(p, "logs/", 5);
		memcpy(p + 5, ref, n + 1);
	}
	return p;
}

int rq_reffile_log_exists(int base, const char *ref)
{
	char *path = log_path(ref);
	const char *leaf;
	struct stat st;
	int dir = path ? rq_fs_parent_at(base, path, &leaf) : -1, r = 0;

	if (dir >= 0) {
		r = fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
		close(dir);
	}
	free(path);
	return r;
}

/* Append to the reflog leaf under dir (an empty directory hierarchy in
 * its place removed first). 0, or an errno value. */
static int append_at(int dir, const char *leaf, const char *line, size_t len, int sync)
{
	int fd, e = 0;

	rmdir_empty(dir, leaf, 0);
	fd = openat(dir, leaf, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		    0666);
	if (fd < 0)
		return errno;
	if (rq_fs_write_all(fd, line, len) < 0 || (sync && fsync(fd) < 0))
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	return e;
}

int rq_reffile_log_append(int base, const char *ref, const char *line, size_t len, int sync,
			  rq_error *err)
{
	char *path = log_path(ref);
	const char *leaf;
	int dir, e;

	if (!path)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if ((dir = rq_fs_parent_make_at(base, path, &leaf)) < 0) {
		io_error(err, "make the directory of", path, errno);
		free(path);
		return -1;
	}
	e = append_at(dir, leaf, line, len, sync);
	close(dir);
	if (e)
		io_error(err, "append to", path, e);
	free(path);
	return e ? -1 : 0;
}

char *rq_reffile_head_target(int own)
{
	char buf[1100];
	int fd = rq_fs_open_at(own, "HEAD", O_RDONLY | O_NONBLOCK, 0);
	ssize_t n;
	struct stat st;

	if (fd < 0)
		return NULL;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n < 5 || memcmp(buf, "ref: ", 5))
		return NULL;
	while (n > 5 && space(buf[n - 1]))
		n--;
	buf[n] = '\0';
	return n > 5 ? strdup(buf + 5) : NULL;
}

/* 1 when the first len bytes of s start the name of a core.fsync
 * component that takes refs in: git matches a component by a prefix. */
static int names_refs(const char *s, size_t len)
{
	static const char *const with_refs[] = {"reference", "committed", "added", "all"};

	for (size_t i = 0; i < sizeof(with_refs) / sizeof(with_refs[0]); i++)
		if (!strncmp(with_refs[i], s, len))
			return 1;
	return 0;
}

int rq_reffile_fsync_value(const char *s)
{
	int on = 0;

	/* git's result is (start & ~taken away) | named, and neither its
	 * default set nor "none" holds refs: refs are in when a token not
	 * taken away names them; an empty token ends the list */
	while (s) {
		const char *end;
		size_t len;
		int neg;

		s += strspn(s, ", \t\n\r");
		end = strchrnul(s, ',');
		neg = *s == '-';
		len = (size_t)(end - s) - (size_t)neg;
		if (!len)
			break;
		if (!neg && names_refs(s, len))
			on = 1;
		s = *end ? end : NULL;
	}
	return on;
}

int rq_reffile_sync(struct git_repository *repo)
{
	git_config *cfg;
	const char *s;
	int on = 0, b;

	if (git_repository_config_snapshot(&cfg, repo) < 0) {
		git_error_clear();
		return 0;
	}
	if (git_config_get_string(&s, cfg, "core.fsync") == 0)
		on = rq_reffile_fsync_value(s);
	if (git_config_get_bool(&b, cfg, "core.fsyncobjectfiles") == 0 && b)
		on = 1;
	git_config_free(cfg);
	git_error_clear();
	return on;
}
