/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refspace: the disk space of a files update, taken before the first
 * ref moves (see the header).
 */
#define _GNU_SOURCE /* fallocate */
#include "rq_refspace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_fs.h"
#include "rq_reffile.h"
#include "rq_refread.h"
#include "rq_rttx.h"

/* A reflog given room: the directory that holds it (-1: none), its name
 * there, its size before, and whether it was made for the update. */
typedef struct logroom {
	int dir;
	char *leaf;
	off_t before;
	int made;
} logroom;

/* One update's reflogs: its ref's, and HEAD's when HEAD points at it. */
typedef struct slot {
	logroom log[2];
} slot;

struct rq_refspace {
	git_repository *repo;
	int common, own;
	int policy;
	char *head_target; /* what HEAD points at, when it is a symbolic ref */
	size_t n;
	slot *v;
};

int rq_refspace_own_dir(const char *ref)
{
	return rq_refread_own(ref);
}

int rq_refspace_new(rq_refspace **out, git_repository *repo, int common, int own, size_t n,
		    rq_error *err)
{
	rq_refspace *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s || !(s->v = calloc(n ? n : 1, sizeof(*s->v)))) {
		free(s);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	s->repo = repo;
	s->common = common;
	s->own = own;
	s->n = n;
	s->policy = rq_rttx_log_policy(repo);
	for (size_t i = 0; i < n; i++)
		s->v[i].log[0].dir = s->v[i].log[1].dir = -1;
	s->head_target = rq_reffile_head_target(own);
	*out = s;
	return 0;
}

static int space_error(rq_error *err, const char *what, const char *name)
{
	return rq_error_set(err, RQ_E_IO, "cannot %s '%s': %s", what, name, strerror(errno));
}

/* Room for len more bytes in the reflog path (under dir, made when
 * missing) into lr. 0, or -1 with err set. */
static int room(logroom *lr, int dir, const char *path, size_t len, rq_error *err)
{
	const char *leaf;
	struct stat st;
	int pd = rq_fs_parent_make_at(dir, path, &leaf), fd;

	if (pd < 0)
		return space_error(err, "make the directory of", path);
	fd = openat(pd, leaf, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT &&
	    (fd = openat(pd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)) >=
		0)
		lr->made = 1;
	lr->dir = pd;
	if (fd < 0 || !(lr->leaf = strdup(leaf)) || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return space_error(err, "open the reflog", path);
	}
	lr->before = st.st_size;
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, (off_t)len) < 0 && errno != EOPNOTSUPP &&
	    errno != ENOSYS) {
		close(fd);
		return space_error(err, "make room in the reflog", path);
	}
	close(fd);
	return 0;
}

int rq_refspace_take(rq_refspace *s, size_t i, const rq_ref_update *u, size_t len, rq_error *err)
{
	int dir = rq_reffile_log_own(u->ref) ? s->own : s->common;
	char path[1100];

	if (snprintf(path, sizeof(path), "logs/%s", u->ref) >= (int)sizeof(path))
		return rq_error_set(err, RQ_E_BAD_REF, "ref name too long");
	if (!rq_reffile_logged(s->policy, u->ref, rq_reffile_log_exists(dir, u->ref)))
		return 0;
	if (room(&s->v[i].log[0], dir, path, len, err) < 0)
		return -1;
	if (s->head_target && !strcmp(s->head_target, u->ref) &&
	    room(&s->v[i].log[1], s->own, "logs/HEAD", len, err) < 0)
		return -1;
	return 0;
}

void rq_refspace_undo(rq_refspace *s, size_t i)
{
	for (int k = 0; k < 2; k++) {
		logroom *lr = &s->v[i].log[k];
		int fd;
		if (lr->dir < 0 || !lr->leaf)
			continue;
		if (lr->made) {
			unlinkat(lr->dir, lr->leaf, 0);
			lr->made = 0;
		} else if ((fd = openat(lr->dir, lr->leaf,
					O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) >= 0) {
			if (ftruncate(fd, lr->before) < 0)
				lr->before = -1; /* (nothing more to do) */
			close(fd);
		}
	}
}

void rq_refspace_free(rq_refspace *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		for (int k = 0; k < 2; k++) {
			logroom *lr = &s->v[i].log[k];
			struct stat st;
			if (lr->made && lr->leaf &&
			    fstatat(lr->dir, lr->leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode) && st.st_size == 0)
				unlinkat(lr->dir, lr->leaf, 0);
			if (lr->dir >= 0)
				close(lr->dir);
			free(lr->leaf);
		}
	free(s->v);
	free(s->head_target);
	free(s);
}
