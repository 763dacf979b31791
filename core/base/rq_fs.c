/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_fs: file-system helpers (see rq_fs.h).
 */
#include "rq_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define RMTREE_DEPTH 64

int rq_fs_opendir(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* 1 when the component [s, s + n) is one a name may hold. */
static int plain_component(const char *s, size_t n)
{
	return n > 0 && n < NAME_MAX + 1 && !(n == 1 && s[0] == '.') &&
	       !(n == 2 && s[0] == '.' && s[1] == '.');
}

/* rq_fs_parent_at, making the missing directories on the way (mode
 * 0777 less the umask) when make is set. */
static int parent_walk(int dirfd, const char *name, const char **leaf, int make)
{
	char part[NAME_MAX + 1];
	const char *s = name, *slash;
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);

	while (fd >= 0 && (slash = strchr(s, '/'))) {
		size_t n = (size_t)(slash - s);
		int next;
		if (!plain_component(s, n)) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		memcpy(part, s, n);
		part[n] = '\0';
		next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && make &&
		    (mkdirat(fd, part, 0777) == 0 || errno == EEXIST))
			next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
		s = slash + 1;
	}
	if (fd >= 0 && !plain_component(s, strlen(s))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	*leaf = s;
	return fd;
}

int rq_fs_parent_at(int dirfd, const char *name, const char **leaf)
{
	return parent_walk(dirfd, name, leaf, 0);
}

int rq_fs_parent_make_at(int dirfd, const char *name, const char **leaf)
{
	return parent_walk(dirfd, name, leaf, 1);
}

int rq_fs_open_at(int dirfd, const char *name, int flags, mode_t mode)
{
	const char *leaf;
	int dir = rq_fs_parent_at(dirfd, name, &leaf), fd, keep;

	if (dir < 0)
		return -1;
	fd = openat(dir, leaf, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	keep = errno;
	close(dir);
	errno = keep;
	return fd;
}

static int rmtree_in(int dirfd, const char *name, int depth);

/* Remove everything in the directory fd (taken). */
static int empty_dir(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    rmtree_in(dirfd(d), e->d_name, depth + 1) < 0)
			rc = -1;
	closedir(d);
	return rc;
}

static int rmtree_in(int dirfd, const char *name, int depth)
{
	struct stat st;
	int fd, rc;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	if (depth >= RMTREE_DEPTH)
		return -1;
	/* a directory swapped for a link meanwhile is not entered */
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	rc = empty_dir(fd, depth);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int rq_fs_rmtree_at(int dirfd, const char *name)
{
	if (!plain_component(name, strlen(name))) {
		errno = EINVAL;
		return -1;
	}
	return rmtree_in(dirfd, name, 0);
}

int rq_fs_rmtree(const char *path)
{
	char dir[PATH_MAX];
	const char *base;
	char *slash;
	size_t n = strlen(path);
	int fd, rc;

	while (n > 1 && path[n - 1] == '/')
		n--; /* "dir/" is "dir" */
	if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (!(slash = strrchr(dir, '/'))) {
		base = path;
		fd = rq_fs_opendir(".");
	} else {
		*slash = '\0';
		base = path + (slash - dir) + 1;
		fd = rq_fs_opendir(slash == dir ? "/" : dir);
	}
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	memcpy(dir, base, n - (size_t)(base - path));
	dir[n - (size_t)(base - path)] = '\0';
	rc = rq_fs_rmtree_at(fd, dir);
	close(fd);
	return rc;
}

int rq_fs_open_regular(const char *path, int follow, struct stat *st)
{
	struct stat own;
	int fd =
	    open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));

	if (!st)
		st = &own;
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		int e = S_ISREG(st->st_mode) ? errno : RQ_FS_ENOTREG;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int rq_fs_map_regular(const char *path, int follow, size_t max, const unsigned char **p,
		      size_t *len)
{
	struct stat st;
	int fd = rq_fs_open_regular(path, follow, &st), e = 0;
	void *m = MAP_FAILED;

	if (fd < 0)
		return -1;
	if (st.st_size <= 0 || (uint64_t)st.st_size > max)
		e = st.st_size <= 0 ? EINVAL : EFBIG;
	else if ((m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
		e = errno;
	close(fd);
	if (e) {
		errno = e;
		return -1;
	}
	*p = m;
	*len = (size_t)st.st_size;
	return 0;
}

int rq_fs_read_regular(const char *path, int follow, size_t max, char **out, size_t *len)
{
	struct stat st;
	size_t got = 0;
	int fd = rq_fs_open_regular(path, follow, &st), e;

	*out = NULL;
	*len = 0;
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	if ((size_t)st.st_size > max || !(*out = malloc((size_t)st.st_size + 1))) {
		e = (size_t)st.st_size > max ? EFBIG : ENOMEM;
		close(fd);
		errno = e;
		return -1;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, *out + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	(*out)[got] = '\0';
	*len = got;
	return 1;
}

const char *rq_fs_strerror(int e)
{
	if (e == RQ_FS_ENOTREG)
		return "not a regular file (a FIFO, a directory or a device)";
	if (e == EFBIG)
		return "too large";
	return strerror(e);
}

int rq_fs_write_all(int fd, const void *p, size_t n)
{
	const char *q = p;

	while (n) {
		ssize_t w = write(fd, q, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0)
			errno = ENOSPC; /* what a write that takes nothing means here */
		if (w <= 0)
			return -1;
		q += w;
		n -= (size_t)w;
	}
	return 0;
}
