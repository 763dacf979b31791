/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refmark: markers of ref locks and the clean-up of a gone owner's
 * (see the header). The parts: the directories and the guard; writing the
 * marker; judging a marker and removing what a gone owner left; who
 * holds a lock.
 */
#include "rq_refmark.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_fs.h"
#include "rq_oid.h"
#include "rq_refname.h"
#include "rq_refspace.h"
#include "rq_repofmt.h"
#include "rq_rtlock.h"

#define GUARD_NAME "replayq-refs.guard"
/* the line that says every lock above was let go (no ref name, no lock) */
#define RELEASED "- released"

/* The owner takes every lock right after writing its marker: a lock made
 * much later is someone else's. */
#define LOCK_WINDOW_S 60

/* ---- the directories and the guard ---- */

int rq_refmark_open(rq_refmark *m, git_repository *repo, rq_error *err)
{
	const char *c = git_repository_commondir(repo);
	size_t n = strlen(c);

	memset(m, 0, sizeof(*m));
	m->guard = m->mark.fd = -1;
	m->algo = rq_repofmt_algo(repo);
	m->common = rq_fs_opendir(c);
	m->own = rq_fs_opendir(git_repository_path(repo));
	while (n > 1 && c[n - 1] == '/')
		n--;
	m->common_path = strndup(c, n);
	if (m->common >= 0 && m->own >= 0 && m->common_path)
		return 0;
	rq_error_set(err, RQ_E_IO, "cannot open the git directory: %s", strerror(errno));
	rq_refmark_close(m);
	return -1;
}

void rq_refmark_close(rq_refmark *m)
{
	rq_owner_release(&m->mark);
	rq_refmark_unguard(m);
	if (m->common >= 0)
		close(m->common);
	if (m->own >= 0)
		close(m->own);
	free(m->common_path);
	m->common = m->own = -1;
	m->common_path = NULL;
}

/* A file of this module in the common directory, opened without following
 * a link and without blocking on a FIFO: a regular file's descriptor, or
 * -1 with err set (RQ_E_BAD_REPO for a link or anything but a file). */
static int open_own_file(const rq_refmark *m, const char *name, int flags, rq_error *err)
{
	struct stat st;
	int fd = rq_fs_open_at(m->common, name, flags | O_NONBLOCK, 0644);

	if (fd < 0 && (errno == ELOOP || errno == ENXIO || errno == EISDIR))
		return rq_error_set(err, RQ_E_BAD_REPO,
				    "'%s' in the git directory is not a regular file (a symbolic "
				    "link, a FIFO or a directory): refusing to use it",
				    name);
	if (fd < 0)
		return rq_error_set(err, RQ_E_IO, "cannot open '%s' in the git directory: %s", name,
				    strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return rq_error_set(err, RQ_E_BAD_REPO,
				    "'%s' in the git directory is not a regular file: refusing to "
				    "use it",
				    name);
	}
	return fd;
}

static void clean_stale(rq_refmark *m);

int rq_refmark_guard(rq_refmark *m, rq_error *err)
{
	int fd = open_own_file(m, GUARD_NAME, O_RDWR | O_CREAT, err);

	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(fd);
			return rq_error_set(err, RQ_E_IO, "cannot lock '%s': %s", GUARD_NAME,
					    strerror(errno));
		}
	m->guard = fd;
	clean_stale(m);
	return 0;
}

void rq_refmark_unguard(rq_refmark *m)
{
	if (m->guard >= 0)
		close(m->guard);
	m->guard = -1;
}

/* ---- writing the marker ---- */

const char *rq_refmark_token(rq_refmark *m, rq_error *err)
{
	if (m->mark.fd < 0 && rq_owner_make(&m->mark, m->common, RQ_REFMARK_PREFIX, err) < 0)
		return NULL;
	return m->mark.token;
}

static int write_line(rq_refmark *m, const char *a, const char *b, rq_error *err)
{
	size_t la = strlen(a), lb = strlen(b);
	char *line = malloc(la + lb + 2);
	int rc;

	if (!line)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	memcpy(line, a, la);
	line[la] = ' ';
	memcpy(line + la + 1, b, lb);
	line[la + lb + 1] = '\n';
	rc = rq_refmark_token(m, err) ? rq_owner_write(&m->mark, line, la + lb + 2, 1, err) : -1;
	free(line);
	return rc;
}

int rq_refmark_refs(rq_refmark *m, const rq_ref_updates *res, rq_error *err)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];

	if (!rq_refmark_token(m, err))
		return -1;
	for (size_t i = 0; i < res->nupdates; i++)
		if (write_line(m, res->updates[i].ref,
			       rq_oid_fmt(hex, &res->updates[i].new_id, m->algo), err) < 0)
			return -1;
	return 0;
}

void rq_refmark_released(rq_refmark *m)
{
	rq_error err;

	if (m->mark.fd >= 0)
		rq_owner_write(&m->mark, RELEASED "\n", strlen(RELEASED) + 1, 0, &err);
}

const char *rq_refmark_rel(const rq_refmark *m, const char *path)
{
	size_t n = strlen(m->common_path);

	if (strncmp(path, m->common_path, n) != 0 || path[n] != '/')
		return NULL;
	return path + n + 1;
}

int rq_refmark_lockfile(rq_refmark *m, const char *path, rq_error *err)
{
	const char *rel = rq_refmark_rel(m, path), *token = rq_refmark_token(m, err);

	if (!token)
		return -1;
	if (!rel)
		return rq_error_set(err, RQ_E_IO, "lock '%s' outside the git directory", path);
	return write_line(m, rel, token, err);
}

/* ---- a gone owner's locks ---- */

static int made_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* 1 when the lock file leaf (in dir) holds exactly "<hex>\n", hex an id
 * of algo: what rq_reffile writes into a ref's lock before the rename
 * that commits it. */
static int lock_holds(int dir, const char *leaf, const char *hex, const rq_oid_algo *algo)
{
	char buf[RQ_OID_MAX_HEXSZ + 2];
	size_t want = algo->hexsz;
	rq_oid id;
	ssize_t n;
	int fd;

	if (rq_oid_parse(&id, algo, hex, strlen(hex)) < 0 ||
	    (fd = openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)want + 1 && !memcmp(buf, hex, want) && buf[want] == '\n';
}

/* A loose ref's lock of a gone owner's marker ("<ref> <new id>", mst its
 * marker's times): removed when the owner made it. The ref is checked as
 * a ref name before it names any file: "../../x" leads nowhere. */
static void clean_ref_lock(const rq_refmark *m, const char *ref, const char *hex,
			   const struct stat *mst)
{
	char lock[1100];
	const char *leaf;
	struct stat lst;
	int dir;

	if (!rq_refname_lockable(ref) ||
	    snprintf(lock, sizeof(lock), "%s.lock", ref) >= (int)sizeof(lock) ||
	    (dir = rq_fs_parent_at(rq_refspace_own_dir(ref) ? m->own : m->common, lock, &leaf)) < 0)
		return;
	if (fstatat(dir, leaf, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(lst.st_mode) &&
	    made_after(&lst.st_mtim, &mst->st_mtim) &&
	    (lst.st_size == 0 ? lst.st_mtim.tv_sec <= mst->st_mtim.tv_sec + LOCK_WINDOW_S
			      : lock_holds(dir, leaf, hex, m->algo)))
		unlinkat(dir, leaf, 0);
	close(dir);
}

/* 1 when a marker line's first field is a lock file's path (a ref name
 * never ends in ".lock"). */
static int lockfile_line(const char *key)
{
	size_t n = strlen(key);
	return n > 5 && !strcmp(key + n - 5, ".lock");
}

/* Every line of the marker open as fd (taken), split as "<key> <value>",
 * handed to fn. */
static void each_line(int fd, void (*fn)(void *arg, const char *key, const char *value), void *arg)
{
	char *line = NULL, *sp;
	size_t cap = 0;
	ssize_t n;
	FILE *f = fdopen(fd, "r");

	if (!f) {
		close(fd);
		return;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if ((sp = strchr(line, ' ')))
			*sp++ = '\0';
		fn(arg, line, sp ? sp : "");
	}
	free(line);
	fclose(f);
}

/* A reftable lock's path under the common directory: ".../reftable/<name>.lock". */
static int reftable_lock(const char *rel)
{
	const char *leaf = strrchr(rel, '/');
	size_t n = leaf ? (size_t)(leaf - rel) : 0;

	return leaf && n >= 8 && !strncmp(leaf - 8, "reftable", 8) && (n == 8 || leaf[-9] == '/') &&
	       strlen(leaf) > 6;
}

/* A lock file of a gone owner's marker ("<path>.lock <token>"): removed
 * when it holds the owner's token (rq_rtlock_owned_at: from the instant
 * it was made, so no time is judged), and with it the tables named with
 * the token that the stack never published. The path is reached from the
 * common directory one component at a time without following a link
 * ("../" is refused). */
static void clean_lock_file(const rq_refmark *m, const char *rel, const char *token)
{
	const char *leaf;
	int dir;

	if (!reftable_lock(rel) || (dir = rq_fs_parent_at(m->common, rel, &leaf)) < 0)
		return;
	if (rq_rtlock_owned_at(dir, leaf, token))
		unlinkat(dir, leaf, 0);
	rq_rtlock_drop_unpublished_at(dir, token);
	close(dir);
}

typedef struct gone_marker {
	const rq_refmark *m;
	struct stat st;
	int released; /* the owner let every lock go before it died */
} gone_marker;

static void released_line(void *arg, const char *key, const char *value)
{
	gone_marker *g = arg;

	(void)value;
	g->released |= !strcmp(key, "-");
}

static void clean_line(void *arg, const char *key, const char *value)
{
	gone_marker *g = arg;

	if (lockfile_line(key)) /* judged by its content, released or not */
		clean_lock_file(g->m, key, value);
	else if (!g->released) /* else a ref's lock there now is someone else's */
		clean_ref_lock(g->m, key, value, &g->st);
}

/* Remove what the gone owner of the marker open as fd (taken, locked)
 * left, then the marker. */
static void clean_marker(const rq_refmark *m, const char *name, int fd)
{
	gone_marker g = {m, {0}, 0};
	int rfd;

	if (fstat(fd, &g.st) == 0 && (rfd = dup(fd)) >= 0) {
		lseek(rfd, 0, SEEK_SET);
		each_line(rfd, released_line, &g);
		if ((rfd = dup(fd)) >= 0) {
			lseek(rfd, 0, SEEK_SET);
			each_line(rfd, clean_line, &g);
		}
	}
	unlinkat(m->common, name, 0);
	close(fd); /* lets the lock go: the marker is gone already */
}

/* 1 when pid has exited: no such process, or a zombie nobody reaped. */
static int process_gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	if (kill(pid, 0) < 0)
		return errno == ESRCH;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold anything */
	return p && p[1] == ' ' && p[2] == 'Z';
}

/*
 * Is the owner of the marker name gone? 1 gone (*fd: the marker, open;
 * locked unless it is an old one), 0 alive or not to be judged here, -1
 * not a marker. A marker named the old way ("<pid>@<host>", no flock
 * held) is gone when it was made on this host and its process is.
 */
static int marker_gone(const rq_refmark *m, const char *name, int *fd)
{
	char host[128] = "", *at;
	long pid;
	rq_error err;

	if (rq_owner_is_marker(name))
		return rq_owner_gone(m->common, name, fd);
	*fd = -1;
	gethostname(host, sizeof(host) - 1);
	pid = strtol(name + strlen(RQ_REFMARK_PREFIX), &at, 10);
	if (pid <= 0 || *at != '@' || strcmp(at + 1, host) != 0)
		return 0; /* another machine's: its owner may live */
	/* our own pid: a dead predecessor's (an old marker has no flock) */
	if ((pid_t)pid != getpid() && !process_gone((pid_t)pid))
		return 0;
	return (*fd = open_own_file(m, name, O_RDONLY, &err)) >= 0 ? 1 : -1;
}

/* Every marker of the common directory, judged by fn. */
static void each_marker(const rq_refmark *m, int (*fn)(void *arg, const char *name), void *arg)
{
	struct dirent *e;
	int fd = fcntl(m->common, F_DUPFD_CLOEXEC, 0);
	DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dh) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dh); /* the descriptor's offset is shared with m->common */
	while ((e = readdir(dh)))
		if (!strncmp(e->d_name, RQ_REFMARK_PREFIX, strlen(RQ_REFMARK_PREFIX)) &&
		    strcmp(e->d_name, m->mark.name) && fn(arg, e->d_name) != 0)
			break;
	closedir(dh);
}

static int clean_one(void *arg, const char *name)
{
	const rq_refmark *m = arg;
	int fd;

	if (marker_gone(m, name, &fd) == 1)
		clean_marker(m, name, fd);
	return 0;
}

/* rq_refmark_guard's clean-up, the guard held. */
static void clean_stale(rq_refmark *m)
{
	each_marker(m, clean_one, m);
}

/* ---- who holds a lock ---- */

typedef struct holder_find {
	const rq_refmark *m;
	const char *key;
	int found, verdict;
} holder_find;

static void holder_line(void *arg, const char *key, const char *value)
{
	holder_find *h = arg;

	(void)value;
	h->found |= !strcmp(key, h->key);
}

static int holder_one(void *arg, const char *name)
{
	holder_find *h = arg;
	int fd, gone = marker_gone(h->m, name, &fd), rfd;

	if (gone < 0)
		return 0;
	if (gone == 0 && (rfd = open_own_file(h->m, name, O_RDONLY, &(rq_error){0})) < 0)
		return 0;
	h->found = 0;
	each_line(gone ? dup(fd) : rfd, holder_line, h);
	if (fd >= 0)
		close(fd); /* judged only: cleaned by the next clean-up */
	if (!h->found)
		return 0;
	h->verdict = gone ? RQ_REFMARK_GONE : RQ_REFMARK_LIVE;
	return 1;
}

int rq_refmark_holder(rq_refmark *m, const char *key)
{
	holder_find h = {m, key, 0, RQ_REFMARK_NOBODY};

	each_marker(m, holder_one, &h);
	return h.verdict;
}
