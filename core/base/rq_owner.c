/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_owner: markers whose owner holds an flock (see the header).
 */
#include "rq_owner.h"
#include "rq_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HOST_MAX 64

void rq_owner_id(char *out, size_t size)
{
	char host[256] = "", safe[HOST_MAX + 1];
	size_t j = 0;

	gethostname(host, sizeof(host) - 1);
	for (size_t i = 0; host[i] && j < HOST_MAX; i++) {
		char c = host[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
		safe[j++] = ok ? c : '_';
	}
	if (!j)
		safe[j++] = 'h';
	safe[j] = '\0';
	snprintf(out, size, "%ld@%s", (long)getpid(), safe);
}

static void new_token(char out[9])
{
	unsigned int r;
	struct timespec ts;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		r = (unsigned int)ts.tv_nsec ^ (unsigned int)getpid() << 16;
	}
	snprintf(out, 9, "%08x", r);
}

/* 1 when name in dir is the file fd is open on. */
static int still_named(int dir, const char *name, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && a.st_nlink > 0 &&
	       fstatat(dir, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int rq_owner_make(rq_owner *o, int dir, const char *prefix, rq_error *err)
{
	char id[96];

	o->dir = dir;
	o->fd = -1;
	rq_owner_id(id, sizeof(id));
	for (int tries = 0; tries < 100; tries++) {
		int fd;
		new_token(o->token);
		if (snprintf(o->name, sizeof(o->name), "%s%s.%s" RQ_OWNER_SUFFIX, prefix, id,
			     o->token) >= (int)sizeof(o->name))
			return rq_error_set(err, RQ_E_IO, "marker name too long");
		fd = openat(dir, o->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return rq_error_set(err, RQ_E_IO, "cannot create '%s': %s", o->name,
					    strerror(errno));
		while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
			;
		/* a cleaner that took it before this flock removed it */
		if (still_named(dir, o->name, fd)) {
			o->fd = fd;
			return 0;
		}
		close(fd);
	}
	return rq_error_set(err, RQ_E_IO, "cannot make a marker '%s...'", prefix);
}

void rq_owner_base(const rq_owner *o, char *out, size_t size)
{
	size_t n = strlen(o->name) - strlen(RQ_OWNER_SUFFIX);

	snprintf(out, size, "%.*s", (int)n, o->name);
}

int rq_owner_write(rq_owner *o, const char *data, size_t n, int sync, rq_error *err)
{
	if (rq_fs_write_all(o->fd, data, n) < 0)
		return rq_error_set(err, RQ_E_IO, "cannot write '%s': %s", o->name,
				    strerror(errno));
	if (sync && fsync(o->fd) < 0)
		return rq_error_set(err, RQ_E_IO, "cannot write '%s': %s", o->name,
				    strerror(errno));
	return 0;
}

void rq_owner_release(rq_owner *o)
{
	if (o->fd < 0)
		return;
	unlinkat(o->dir, o->name, 0); /* first: no cleaner judges it after */
	close(o->fd);
	o->fd = -1;
}

int rq_owner_is_marker(const char *name)
{
	size_t n = strlen(name), s = strlen(RQ_OWNER_SUFFIX);

	return n > s && !strcmp(name + n - s, RQ_OWNER_SUFFIX);
}

int rq_owner_gone(int dir, const char *name, int *fd)
{
	struct stat st;
	int f = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*fd = -1;
	if (f < 0)
		return -1;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(f);
		return -1;
	}
	if (flock(f, LOCK_EX | LOCK_NB) < 0) {
		close(f);
		return 0;
	}
	/* removed meanwhile by its owner, or by another cleaner: not ours */
	if (!still_named(dir, name, f)) {
		close(f);
		return -1;
	}
	*fd = f;
	return 1;
}
