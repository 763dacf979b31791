/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_rtlock: reftable lock files that say who made them (see the header).
 */
#include "rq_rtlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_buf.h"
#include "rq_fs.h"

#define TOKEN_LEN 8

static int token_ok(const char *token)
{
	return token && strlen(token) == TOKEN_LEN &&
	       strspn(token, "0123456789abcdef") == TOKEN_LEN;
}

/* "replayq <token>\n" into line (at least 18 bytes): its length. */
static size_t token_line(char *line, const char *token)
{
	return (size_t)sprintf(line, "replayq %.8s\n", token);
}

/* The lock made empty and then filled (no hard links here). */
static int create_plain(const char *path, const char *line, size_t n)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666), e;

	if (fd >= 0 && rq_fs_write_all(fd, line, n) < 0) {
		e = errno;
		close(fd);
		unlink(path);
		errno = e;
		return -1;
	}
	return fd;
}

int rq_rtlock_create(const char *path, const char *token)
{
	const char *tok = token_ok(token) ? token : "00000000";
	char tmp[PATH_MAX], line[32];
	size_t n = token_line(line, tok);
	int fd, r, e;

	if (snprintf(tmp, sizeof(tmp), "%s-%s.temp", path, tok) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* a gone writer's, same token */
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	if (rq_fs_write_all(fd, line, n) < 0) {
		e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		return -1;
	}
	r = link(tmp, path);
	e = errno;
	unlink(tmp);
	if (r == 0)
		return fd;
	close(fd);
	if (e == EPERM || e == EOPNOTSUPP || e == ENOSYS || e == EMLINK)
		return create_plain(path, line, n);
	errno = e;
	return -1;
}

/* The file leaf of dir, whole (at most 1 MiB), NUL-ended; NULL: none. */
static char *read_small(int dir, const char *leaf)
{
	int fd = openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	rq_buf b = {0};
	char chunk[4096];
	ssize_t n;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 && b.len < (1 << 20))
		rq_buf_add(&b, chunk, (size_t)n);
	close(fd);
	rq_buf_add(&b, "", 1);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* 1 when the line p (n bytes) is a whole line of text. */
static int has_line(const char *text, const char *p, size_t n)
{
	for (const char *hit = text; (hit = strstr(hit, p)) != NULL; hit++)
		if ((hit == text || hit[-1] == '\n') && (hit[n] == '\n' || !hit[n]))
			return 1;
	return 0;
}

/* 1 when a line of list names a table with token that tables.list (in
 * dir) does not: a table its writer made and never published. */
static int names_unpublished(int dir, const char *list, const char *token)
{
	char want[16], *published = read_small(dir, "tables.list");
	const char *p = list;
	int found = 0;

	snprintf(want, sizeof(want), "-%.8s.ref", token);
	while (!found && *p) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		size_t n = (size_t)(end - p), w = strlen(want);
		if (n > w && !memcmp(end - w, want, w)) {
			char *line = strndup(p, n);
			found = line && !(published && has_line(published, line, n));
			free(line);
		}
		p = nl ? nl + 1 : end;
	}
	free(published);
	return found;
}

int rq_rtlock_owned_at(int dir, const char *leaf, const char *token)
{
	char line[32], *content;
	struct stat sb;
	int owned;

	if (!token_ok(token) || fstatat(dir, leaf, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(sb.st_mode) || sb.st_size == 0 || !(content = read_small(dir, leaf)))
		return 0;
	token_line(line, token);
	owned = !strcmp(content, line) || names_unpublished(dir, content, token);
	free(content);
	return owned;
}

int rq_rtlock_owned(const char *path, const char *token)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path + 1)) : strdup(".");
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1, owned = 0;

	if (fd >= 0) {
		owned = rq_rtlock_owned_at(fd, slash ? slash + 1 : path, token);
		close(fd);
	}
	free(dir);
	return owned;
}

/* 1 when the file name of the directory dir is the writer's with token
 * and is not in use: a lock's temporary file ("<lock>-<token>.temp"), a
 * table's ("...-<token>.temp.XXXXXX", "...-<token>.ref.temp.XXXXXX"), or
 * a table tables.list does not name. */
static int leftover(int dir, const char *name, const char *token)
{
	char want[16];
	const char *rest = NULL;

	snprintf(want, sizeof(want), "-%.8s.", token);
	for (const char *hit = name; (hit = strstr(hit, want)) != NULL; hit++)
		rest = hit + strlen(want); /* the last: "<table>.lock-<token>.temp" */
	if (!rest)
		return 0;
	if (!strcmp(rest, "temp") || !strncmp(rest, "temp.", 5) || !strncmp(rest, "ref.temp.", 9))
		return 1;
	return !strcmp(rest, "ref") && names_unpublished(dir, name, token);
}

int rq_rtlock_drop_unpublished_at(int dir, const char *token)
{
	int fd = fcntl(dir, F_DUPFD_CLOEXEC, 0), dropped = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d || !token_ok(token)) {
		if (d)
			closedir(d);
		else if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d); /* an offset shared with dir */
	while ((e = readdir(d)))
		if (leftover(dir, e->d_name, token))
			dropped += unlinkat(dirfd(d), e->d_name, 0) == 0;
	closedir(d);
	return dropped;
}
