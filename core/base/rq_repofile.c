/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_repofile: read a repository's small side files safely (rq_repofile.h).
 */
#include "rq_repofile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int under(const char *root, const char *real)
{
	size_t rl = strlen(root);

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	return !strncmp(real, root, rl) && (real[rl] == '/' || real[rl] == '\0');
}

/* Open path for reading (no FIFO may block the open): the descriptor, -2
 * when there is nothing to read, -1 with err set. */
static int open_file(const char *path, const char *root, int nofollow, const char *shown,
		     rq_error *err)
{
	char real[PATH_MAX];
	int fd;

	if (root) {
		if (!realpath(path, real))
			return -2; /* nothing there to read */
		if (!under(root, real))
			return rq_error_set(err, RQ_E_BAD_REPO,
					    "'%s' leads outside the repository root", shown);
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == EACCES
			   ? -2
			   : rq_error_set(err, RQ_E_IO, "cannot read '%s': %s", shown,
					  strerror(errno));
	return fd;
}

/* Up to size bytes into buf (NUL-terminated): how many (a file that shrank
 * gives what was there), or -1 with err set. */
static ssize_t read_all(int fd, char *buf, size_t size, const char *shown, rq_error *err)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return rq_error_set(err, RQ_E_IO, "cannot read '%s': %s", shown,
					    strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

int rq_repofile_read(const char *path, const char *root, int nofollow, size_t max,
		     const char *shown, char **out, size_t *len, rq_error *err)
{
	struct stat st;
	int fd = open_file(path, root, nofollow, shown, err);
	ssize_t got;

	*out = NULL;
	*len = 0;
	if (fd < 0)
		return fd == -2 ? 0 : -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uintmax_t)st.st_size > max ||
	    (uintmax_t)st.st_size >= SIZE_MAX) {
		close(fd);
		return 0;
	}
	if (!(*out = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	got = read_all(fd, *out, (size_t)st.st_size, shown, err);
	close(fd);
	if (got < 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	*len = (size_t)got;
	return 1;
}
