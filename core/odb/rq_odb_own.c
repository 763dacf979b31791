/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_own: replayq's directory in objects/, the marks of its packs, the
 * .keep files of packs on their way in, and the staleness of what killed
 * processes left (see the header).
 */
#include "rq_odb_own.h"
#include "rq_fs.h"
#include "rq_mem.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* ---- held files: .keep files and the consolidation's lock ---- */

#define HELD_MAX 8

/* The .keep files this process holds, by pack name: their descriptors
 * carry the flock that tells a clean-up they are not a killed process's. */
static struct held_keep {
	char name[128]; /* "" when free */
	int fd;
} held[HELD_MAX];
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

int rq_odb_own_hold_at(int dir, const char *file)
{
	char id[96], text[128];
	int fd = openat(dir, file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444), n, e;

	if (fd < 0)
		return -1;
	/* the flock before the content: a clean-up takes a file for replayq's
	 * only by its content, read under the flock it could take */
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	rq_owner_id(id, sizeof(id));
	/* git's receive-pack writes "receive-pack <pid> on <host>" */
	n = snprintf(text, sizeof(text), "replayq %s\n", id);
	if (write(fd, text, (size_t)n) != n) {
		e = errno ? errno : ENOSPC;
		unlinkat(dir, file, 0);
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int rq_odb_own_held_gone(int dir, const char *file, int *fd)
{
	char text[8];
	int r = rq_owner_gone(dir, file, fd);

	if (r != 1)
		return r;
	/* empty: being made (its maker flocks it next) or another tool's */
	if (pread(*fd, text, sizeof(text), 0) != (ssize_t)sizeof(text) ||
	    memcmp(text, "replayq ", sizeof(text))) {
		close(*fd);
		*fd = -1;
		return -1;
	}
	return 1;
}

/* objects/pack, open (or -1), and name's .keep file name into file. */
static int keep_names(const char *objects, const char *name, char *file, size_t size)
{
	char dir[PATH_MAX];

	snprintf(file, size, "%.100s.keep", name);
	if (snprintf(dir, sizeof(dir), "%s/pack", objects) >= (int)sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int rq_odb_own_keep(const char *objects, const char *name)
{
	char file[128];
	int pd = keep_names(objects, name, file, sizeof(file)), fd = -1, slot = -1, e;

	if (pd < 0)
		return -1;
	pthread_mutex_lock(&held_lock);
	for (int i = 0; i < HELD_MAX && slot < 0; i++)
		slot = held[i].name[0] ? -1 : i;
	if (slot >= 0 && (fd = rq_odb_own_hold_at(pd, file)) >= 0) {
		snprintf(held[slot].name, sizeof(held[slot].name), "%s", name);
		held[slot].fd = fd;
	}
	e = slot < 0 ? EMFILE : errno;
	pthread_mutex_unlock(&held_lock);
	close(pd);
	if (fd < 0)
		return e == EEXIST ? 1 : (errno = e, -1);
	return 0;
}

/* 1 when file in dir is the file fd is open on. */
static int same_file(int dir, const char *file, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && fstatat(dir, file, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void rq_odb_own_unkeep(const char *objects, const char *name)
{
	char file[128];
	int pd;

	if (!name || !name[0] || (pd = keep_names(objects, name, file, sizeof(file))) < 0)
		return;
	pthread_mutex_lock(&held_lock);
	for (int i = 0; i < HELD_MAX; i++) {
		if (strcmp(held[i].name, name) || !same_file(pd, file, held[i].fd))
			continue;
		/* removed, then its flock let go: no clean-up judges it after */
		unlinkat(pd, file, 0);
		close(held[i].fd);
		held[i].name[0] = '\0';
		break;
	}
	pthread_mutex_unlock(&held_lock);
	close(pd);
}

int rq_odb_own_keep_drop_stale(int pack_dir, const char *keep_file)
{
	int fd, r;

	if (rq_odb_own_held_gone(pack_dir, keep_file, &fd) != 1)
		return 0;
	r = unlinkat(pack_dir, keep_file, 0) == 0;
	close(fd);
	return r;
}

/* ---- temporary names ---- */

int rq_odb_own_tmp_begin(rq_owner *o, const char *objects, char *base, size_t size, rq_error *err)
{
	int dir = rq_fs_opendir(objects);

	o->fd = -1;
	if (dir < 0)
		return rq_error_set(err, RQ_E_IO, "cannot open %s: %s", objects, strerror(errno));
	if (rq_owner_make(o, dir, RQ_ODB_OWN_TMP, err) < 0) {
		close(dir);
		return -1;
	}
	rq_owner_base(o, base, size);
	return 0;
}

void rq_odb_own_tmp_end(rq_owner *o)
{
	int dir = o->dir;

	if (o->fd < 0)
		return;
	rq_owner_release(o);
	close(dir);
}

/* The owner marker of name in objects (a directory's name, or with pack
 * a temporary file's less its "tmp_", cut before its -pack_ or -idx_):
 * 1 its owner is gone, 0 it lives, -1 there is no marker. */
static int marker_gone(int objects, const char *name, int pack)
{
	char m[NAME_MAX + 1];
	size_t n = strlen(name);
	int fd, r;

	for (const char *p = name; pack && (p = strchr(p, '-')); p++)
		if (!strncmp(p, "-pack_", 6) || !strncmp(p, "-idx_", 5))
			n = (size_t)(p - name);
	if (snprintf(m, sizeof(m), "%.*s" RQ_OWNER_SUFFIX, (int)n, name) >= (int)sizeof(m))
		return -1;
	r = rq_owner_gone(objects, m, &fd);
	if (r == 1) /* the marker itself goes with rq_odb_own_tmp_clean_gone */
		close(fd);
	return r;
}

/* A name without a marker (made by a replayq before markers: <pid>@<host>
 * then "-"): by its pid on this host, else by age and pid. */
static int unmarked_stale(const char *name, long mtime, unsigned max_age)
{
	char id[96], *end;
	const char *at, *host;
	long pid = strtol(name + strlen(RQ_ODB_OWN_TMP), &end, 10);
	int alive =
	    pid > 0 && (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno == EPERM);

	rq_owner_id(id, sizeof(id));
	host = strchr(id, '@') + 1;
	at = *end == '@' ? end + 1 : NULL;
	if (at && !strncmp(at, host, strlen(host)) && at[strlen(host)] == '-')
		return !alive;
	return time(NULL) - mtime >= (time_t)max_age && !alive;
}

int rq_odb_own_tmp_stale(int objects, const char *name, int pack, long mtime, unsigned max_age)
{
	int r = marker_gone(objects, name, pack);

	return r >= 0 ? r : unmarked_stale(name, mtime, max_age);
}

/* What the gone owner of marker name (open and locked as fd, taken) left:
 * its directory and its temporary pack files, then the marker. */
static int clean_gone(int objects, const char *name, int fd)
{
	char base[NAME_MAX + 1], tmp[NAME_MAX + 8];
	int removed = 0, pack;
	struct dirent *e;
	struct stat st;
	DIR *d;

	snprintf(base, sizeof(base), "%.*s", (int)(strlen(name) - strlen(RQ_OWNER_SUFFIX)), name);
	if (fstatat(objects, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
		removed += rq_fs_rmtree_at(objects, base) == 0;
	snprintf(tmp, sizeof(tmp), "tmp_%s-", base);
	pack = openat(objects, "pack", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pack >= 0 && (d = fdopendir(pack))) {
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, tmp, strlen(tmp)))
				removed += unlinkat(dirfd(d), e->d_name, 0) == 0;
		closedir(d);
	} else if (pack >= 0) {
		close(pack);
	}
	unlinkat(objects, name, 0);
	close(fd);
	return removed;
}

int rq_odb_own_tmp_clean_gone(int objects)
{
	int dir = fcntl(objects, F_DUPFD_CLOEXEC, 0), removed = 0, fd;
	DIR *d = dir >= 0 ? fdopendir(dir) : NULL;
	struct dirent *e;

	if (!d) {
		if (dir >= 0)
			close(dir);
		return 0;
	}
	rewinddir(d); /* the offset is shared with objects */
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, RQ_ODB_OWN_TMP, strlen(RQ_ODB_OWN_TMP)) &&
		    rq_owner_is_marker(e->d_name) && rq_owner_gone(objects, e->d_name, &fd) == 1)
			removed += clean_gone(objects, e->d_name, fd);
	closedir(d);
	return removed;
}

/* A stale keep of ours: removed, and its pack when it has no index, under
 * the keep's flock. */
static size_t sweep_keep(int dirfd, const char *keep)
{
	char idx[NAME_MAX + 8], pack[NAME_MAX + 8];
	size_t n = strlen(keep) - 5, removed;
	struct stat st;
	int fd;

	if (rq_odb_own_held_gone(dirfd, keep, &fd) != 1)
		return 0;
	snprintf(idx, sizeof(idx), "%.*s.idx", (int)n, keep);
	snprintf(pack, sizeof(pack), "%.*s.pack", (int)n, keep);
	if (fstatat(dirfd, idx, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		unlinkat(dirfd, pack, 0); /* moved in, its index never was */
	removed = unlinkat(dirfd, keep, 0) == 0;
	close(fd);
	return removed;
}

size_t rq_odb_own_sweep(int objects, int dirfd, char **tmps, size_t n, char **keeps, size_t m)
{
	size_t removed = 0, skip = strlen("tmp_");
	struct stat st;

	for (size_t i = 0; i < n; i++)
		if (fstatat(dirfd, tmps[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    rq_odb_own_tmp_stale(objects, tmps[i] + skip, 1, (long)st.st_mtime,
					 RQ_ODB_OWN_STALE_SECONDS) &&
		    unlinkat(dirfd, tmps[i], 0) == 0)
			removed++;
	for (size_t i = 0; i < m; i++)
		removed += sweep_keep(dirfd, keeps[i]);
	return removed;
}

static void note(char ***v, size_t *n, size_t *cap, const char *name)
{
	char **g = rq_mem_grow(*v, cap, *n + 1, sizeof(**v), 8);

	if (g && (*v = g) && (g[*n] = strdup(name)))
		(*n)++;
}

void rq_odb_own_leftover(rq_odb_own_leftovers *l, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(name, "tmp_" RQ_ODB_OWN_TMP, strlen("tmp_" RQ_ODB_OWN_TMP)))
		note(&l->tmps, &l->ntmps, &l->tmps_cap, name);
	else if (n > 10 && !strcmp(name + n - 5, ".keep"))
		note(&l->keeps, &l->nkeeps, &l->keeps_cap, name);
}

void rq_odb_own_leftovers_sweep(rq_odb_own_leftovers *l, const char *objects_dir, int pack_dir)
{
	if (pack_dir >= 0 && (l->ntmps || l->nkeeps)) {
		/* the temporary files' owner markers are in the objects directory */
		int objects = l->ntmps ? rq_fs_opendir(objects_dir) : -1;
		rq_odb_own_sweep(objects, pack_dir, l->tmps, l->ntmps, l->keeps, l->nkeeps);
		if (objects >= 0)
			close(objects);
	}
	for (size_t i = 0; i < l->ntmps; i++)
		free(l->tmps[i]);
	for (size_t i = 0; i < l->nkeeps; i++)
		free(l->keeps[i]);
	free(l->tmps);
	free(l->keeps);
	memset(l, 0, sizeof(*l));
}

/* ---- the consolidation's lock ---- */

/* A lock that never said whose it is (its maker killed between making it
 * and writing it) and is older than a consolidation ever takes: taken
 * over. */
static int lock_old(int own_fd)
{
	struct stat st;

	return fstatat(own_fd, RQ_ODB_OWN_LOCK, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       time(NULL) - st.st_mtime >= RQ_ODB_OWN_STALE_SECONDS;
}

/* Take the lock, held by its flock (*lock its descriptor): 1 taken, 0
 * held by a live process, -1 failed. One whose owner is gone (its flock
 * free) is taken over, whatever PID namespace or host it was made in. */
static int lock_try(int own_fd, int *lock)
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = rq_odb_own_hold_at(own_fd, RQ_ODB_OWN_LOCK), r;
		if (fd >= 0) {
			*lock = fd;
			return 1;
		}
		if (errno != EEXIST)
			return -1;
		r = rq_odb_own_held_gone(own_fd, RQ_ODB_OWN_LOCK, &fd);
		if (r == 0 || (r < 0 && !lock_old(own_fd)))
			return 0;
		unlinkat(own_fd, RQ_ODB_OWN_LOCK, 0); /* its owner is gone */
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

int rq_odb_own_lock(int own_fd, unsigned wait_ms, int *lock)
{
	const struct timespec step = {0, 2 * 1000 * 1000};
	int r;

	for (unsigned waited = 0;; waited += 2) {
		if ((r = lock_try(own_fd, lock)) != 0 || waited >= wait_ms)
			return r;
		nanosleep(&step, NULL);
	}
}

void rq_odb_own_unlock(int own_fd, int lock)
{
	unlinkat(own_fd, RQ_ODB_OWN_LOCK, 0); /* removed, then its flock let go */
	close(lock);
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
