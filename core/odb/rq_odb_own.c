/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_own: replayq's directory in objects/, the marks of its packs, and
 * the .keep files of packs on their way in (see the header).
 */
#include "rq_odb_own.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void rq_odb_own_host(char *out, unsigned long size)
{
	char h[256] = "";
	size_t j = 0;

	gethostname(h, sizeof(h) - 1);
	for (size_t i = 0; h[i] && j + 1 < size && j < 64; i++)
		if (isalnum((unsigned char)h[i]) || h[i] == '.' || h[i] == '_')
			out[j++] = h[i];
	if (!j)
		out[j++] = 'h';
	out[j] = '\0';
}

int rq_odb_own_dir(const char *objects, int create)
{
	int od = open(objects, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;

	if (od < 0)
		return -1;
	fd = openat(od, RQ_ODB_OWN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(od, RQ_ODB_OWN_DIR, 0777) < 0 && errno != EEXIST) {
			close(od);
			return -1;
		}
		fd = openat(od, RQ_ODB_OWN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	close(od);
	return fd;
}

int rq_odb_own_mark(const char *objects, const char *name)
{
	char file[128];
	int dir = rq_odb_own_dir(objects, 1), fd;

	if (dir < 0)
		return -1;
	snprintf(file, sizeof(file), "%.100s" RQ_ODB_OWN_MARK, name);
	/* read-only: a mark that is there already opens too, whoever owns it */
	fd = openat(dir, file, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0444);
	close(dir);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* objects/pack/<name>.keep into out. */
static int keep_path(const char *objects, const char *name, char *out, size_t n)
{
	return snprintf(out, n, "%s/pack/%s.keep", objects, name) < (int)n ? 0 : -1;
}

int rq_odb_own_keep(const char *objects, const char *name)
{
	char path[PATH_MAX], host[80], text[160];
	int fd, n;

	if (keep_path(objects, name, path, sizeof(path)) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return errno == EEXIST ? 1 : -1;
	rq_odb_own_host(host, sizeof(host));
	/* git's receive-pack writes "receive-pack <pid> on <host>" */
	n = snprintf(text, sizeof(text), "replayq %ld on %s\n", (long)getpid(), host);
	if (write(fd, text, (size_t)n) != n) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

/* The owner a .keep of ours names: 1 with *pid and host, else 0. */
static int keep_owner(int dirfd, const char *file, long *pid, char *host, size_t hn)
{
	char text[200], fmt[32];
	int fd = openat(dirfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	snprintf(fmt, sizeof(fmt), "replayq %%ld on %%%zus", hn - 1);
	return sscanf(text, fmt, pid, host) == 2;
}

void rq_odb_own_unkeep(const char *objects, const char *name)
{
	char path[PATH_MAX], dir[PATH_MAX], host[80], file[128], me[80];
	long pid;
	int fd;

	if (!name || !name[0] || keep_path(objects, name, path, sizeof(path)) < 0)
		return;
	snprintf(dir, sizeof(dir), "%s/pack", objects);
	snprintf(file, sizeof(file), "%.100s.keep", name);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	rq_odb_own_host(me, sizeof(me));
	/* only the keep this process wrote */
	if (keep_owner(fd, file, &pid, host, sizeof(host)) && pid == (long)getpid() &&
	    !strcmp(host, me))
		unlinkat(fd, file, 0);
	close(fd);
}

int rq_odb_own_keep_stale_at(int fd, const char *keep_file, unsigned max_age)
{
	char host[80], me[80];
	struct stat st;
	long pid;
	int alive;

	if (!keep_owner(fd, keep_file, &pid, host, sizeof(host)) ||
	    fstatat(fd, keep_file, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	rq_odb_own_host(me, sizeof(me));
	alive = pid > 0 && (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno == EPERM);
	if (!strcmp(host, me))
		return !alive;
	return time(NULL) - st.st_mtime >= (time_t)max_age;
}

int rq_odb_own_tmp_stale(const char *owner, long mtime, unsigned max_age)
{
	char host[80], *end;
	const char *at;
	long pid = strtol(owner, &end, 10);
	int alive =
	    pid > 0 && (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno == EPERM);

	rq_odb_own_host(host, sizeof(host));
	at = *end == '@' ? end + 1 : NULL;
	if (at && !strncmp(at, host, strlen(host)) && at[strlen(host)] == '-')
		return !alive;
	return time(NULL) - mtime >= (long)max_age && !alive;
}

/* A stale keep of ours: removed, and its pack when it has no index. */
static size_t sweep_keep(int dirfd, const char *keep)
{
	char idx[NAME_MAX + 8], pack[NAME_MAX + 8];
	size_t n = strlen(keep) - 5;
	struct stat st;

	if (!rq_odb_own_keep_stale_at(dirfd, keep, RQ_ODB_OWN_STALE_SECONDS))
		return 0;
	snprintf(idx, sizeof(idx), "%.*s.idx", (int)n, keep);
	snprintf(pack, sizeof(pack), "%.*s.pack", (int)n, keep);
	if (fstatat(dirfd, idx, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		unlinkat(dirfd, pack, 0); /* moved in, its index never was */
	return unlinkat(dirfd, keep, 0) == 0;
}

size_t rq_odb_own_sweep(int dirfd, char **tmps, size_t n, char **keeps, size_t m)
{
	size_t removed = 0, skip = strlen("tmp_" RQ_ODB_OWN_TMP);
	struct stat st;

	for (size_t i = 0; i < n; i++)
		if (fstatat(dirfd, tmps[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    rq_odb_own_tmp_stale(tmps[i] + skip, (long)st.st_mtime,
					 RQ_ODB_OWN_STALE_SECONDS) &&
		    unlinkat(dirfd, tmps[i], 0) == 0)
			removed++;
	for (size_t i = 0; i < m; i++)
		removed += sweep_keep(dirfd, keeps[i]);
	return removed;
}

/* ---- the consolidation's lock ---- */

/* A lock older than a consolidation ever takes (its owner's pid reused by
 * another process, say): taken over. */
static int lock_old(int own_fd)
{
	struct stat st;

	return fstatat(own_fd, RQ_ODB_OWN_LOCK, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       time(NULL) - st.st_mtime >= RQ_ODB_OWN_STALE_SECONDS;
}

/* Take objects/replayq/consolidate.lock: 1 taken, 0 held by a live
 * process, -1 failed. One whose owner is gone is taken over. */
static int lock_try(int own_fd)
{
	char text[160], host[80];
	int n;

	rq_odb_own_host(host, sizeof(host));
	n = snprintf(text, sizeof(text), "replayq %ld on %s\n", (long)getpid(), host);
	for (int tries = 0; tries < 2; tries++) {
		int fd = openat(own_fd, RQ_ODB_OWN_LOCK,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
		if (fd >= 0) {
			int ok = write(fd, text, (size_t)n) == n;
			close(fd);
			if (ok)
				return 1;
			unlinkat(own_fd, RQ_ODB_OWN_LOCK, 0);
			return -1;
		}
		if (errno != EEXIST)
			return -1;
		if (!rq_odb_own_keep_stale_at(own_fd, RQ_ODB_OWN_LOCK, RQ_ODB_OWN_STALE_SECONDS) &&
		    !lock_old(own_fd))
			return 0;
		unlinkat(own_fd, RQ_ODB_OWN_LOCK, 0); /* its owner is gone */
	}
	return 0;
}

int rq_odb_own_lock(int own_fd, unsigned wait_ms)
{
	const struct timespec step = {0, 2 * 1000 * 1000};
	int r;

	for (unsigned waited = 0;; waited += 2) {
		if ((r = lock_try(own_fd)) != 0 || waited >= wait_ms)
			return r;
		nanosleep(&step, NULL);
	}
}

void rq_odb_own_unlock(int own_fd)
{
	unlinkat(own_fd, RQ_ODB_OWN_LOCK, 0);
}

size_t rq_odb_own_count(const char *objects)
{
	int fd = rq_odb_own_dir(objects, 0);
	DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	size_t n = 0, ml = strlen(RQ_ODB_OWN_MARK);

	if (!dh) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(dh))) {
		size_t l = strlen(e->d_name);
		n += l > ml && !strcmp(e->d_name + l - ml, RQ_ODB_OWN_MARK);
	}
	closedir(dh);
	return n;
}
