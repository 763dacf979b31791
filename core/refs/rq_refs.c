/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refs: apply a replay's ref updates, every ref locked and checked
 * before the first is written, or format them for `git update-ref --stdin`.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_confine.h"
#include "rq_fs.h"
#include "rq_refname.h"
#include "rq_refs.h"
#include "rq_refspace.h"
#include "rq_repofmt.h"
#include "rq_testhook.h"

#define MARKER_PREFIX "replayq-refs-"
#define GUARD_NAME    "replayq-refs.guard"

/* "<pid>@<host>" of this process. */
static void owner_name(char *out, size_t size)
{
	char host[128] = "";
	gethostname(host, sizeof(host) - 1);
	snprintf(out, size, "%ld@%s", (long)getpid(), host);
}

/* Where the lock of a ref lives, for messages. */
static int lock_path(git_repository *repo, const char *ref, char *out, size_t size)
{
	const char *dir =
	    rq_refspace_own_dir(ref) ? git_repository_path(repo) : git_repository_commondir(repo);
	int n = snprintf(out, size, "%s%s%s.lock", dir,
			 dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", ref);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/*
 * The two directories the ref files live in, open: every file this module
 * creates, reads or removes is reached from one of them without following
 * a symbolic link (rq_fs_open_at), whatever the repository holds.
 */
typedef struct refdirs {
	int common, own;
} refdirs;

static int refdirs_open(git_repository *repo, refdirs *d, rq_error *err)
{
	d->common = rq_fs_opendir(git_repository_commondir(repo));
	d->own = rq_fs_opendir(git_repository_path(repo));
	if (d->common >= 0 && d->own >= 0)
		return 0;
	rq_error_set(err, RQ_E_IO, "cannot open the git directory: %s", strerror(errno));
	if (d->common >= 0)
		close(d->common);
	if (d->own >= 0)
		close(d->own);
	d->common = d->own = -1;
	return -1;
}

static void refdirs_close(refdirs *d)
{
	if (d->common >= 0)
		close(d->common);
	if (d->own >= 0)
		close(d->own);
	d->common = d->own = -1;
}

/* A file of this module in the common directory, opened without following
 * a link and without blocking on a FIFO: a regular file's descriptor, or
 * -1 with err set (RQ_E_BAD_REPO for a link or anything but a file). */
static int open_own_file(const refdirs *d, const char *name, int flags, rq_error *err)
{
	struct stat st;
	int fd = rq_fs_open_at(d->common, name, flags | O_NONBLOCK, 0644);

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

/* The owner takes every lock right after writing its marker: a lock made
 * much later is someone else's. */
#define RQ_REFS_LOCK_WINDOW_S 60

static int made_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* 1 when the lock file leaf (in dir) holds exactly "<hex>\n": libgit2
 * writes a ref's new id into its lock right before the rename that
 * commits it. */
static int lock_holds(int dir, const char *leaf, const char *hex)
{
	char buf[GIT_OID_HEXSZ + 2];
	size_t want = strlen(hex);
	ssize_t n;
	int fd;

	if (want != GIT_OID_HEXSZ ||
	    (fd = openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)want + 1 && !memcmp(buf, hex, want) && buf[want] == '\n';
}

/* One line of a dead owner's marker, "<ref> <new id>": its lock removed
 * when it is one the owner made (see clean_marker). The ref is checked
 * as a ref name before it names any file: a marker is the repository's
 * data, and "../../x" must not lead anywhere. */
static void clean_lock(const refdirs *d, char *line, const struct stat *mst)
{
	char lock[1100], *hex = strchr(line, ' ');
	const char *leaf;
	struct stat lst;
	int dir;

	if (hex)
		*hex++ = '\0';
	if (!rq_refname_lockable(line) ||
	    snprintf(lock, sizeof(lock), "%s.lock", line) >= (int)sizeof(lock) ||
	    (dir = rq_fs_parent_at(rq_refspace_own_dir(line) ? d->own : d->common, lock, &leaf)) <
		0)
		return;
	if (fstatat(dir, leaf, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(lst.st_mode) &&
	    made_after(&lst.st_mtim, &mst->st_mtim) &&
	    (lst.st_size == 0 ? lst.st_mtim.tv_sec <= mst->st_mtim.tv_sec + RQ_REFS_LOCK_WINDOW_S
			      : lock_holds(dir, leaf, hex ? hex : "")))
		unlinkat(dir, leaf, 0);
	close(dir);
}

/* Remove the locks a dead replayq process left, as its marker lists them
 * ("<ref> <new id>" a line): lock files made after the marker: empty ones
 * made in the minute after it (libgit2 writes a lock's content only at the
 * commit), and ones holding that new id (killed between writing and
 * renaming it, however late); a lock of a live process, or one another
 * program took, stays. A marker that is not a regular file is left. */
static void clean_marker(const refdirs *d, const char *name)
{
	struct stat mst;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	rq_error err;
	FILE *f;
	int fd = open_own_file(d, name, O_RDONLY, &err);

	if (fd < 0)
		return;
	if (fstat(fd, &mst) < 0 || !(f = fdopen(fd, "r"))) {
		close(fd);
		return;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		clean_lock(d, line, &mst);
	}
	free(line);
	fclose(f);
	unlinkat(d->common, name, 0);
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

/* rq_refs_clean_stale with the guard held by the caller. */
static void clean_stale(const refdirs *d)
{
	char host[128] = "";
	struct dirent *e;
	int fd = fcntl(d->common, F_DUPFD_CLOEXEC, 0);
	DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dh) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dh); /* the descriptor's offset is shared with d->common */
	gethostname(host, sizeof(host) - 1);
	while ((e = readdir(dh))) {
		char *at;
		long pid;
		if (strncmp(e->d_name, MARKER_PREFIX, strlen(MARKER_PREFIX)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(MARKER_PREFIX), &at, 10);
		if (pid <= 0 || *at != '@' || strcmp(at + 1, host) != 0)
			continue; /* another machine's: its owner may live */
		/* our own pid: a dead predecessor's (this process writes its
		 * marker only after this clean-up) */
		if ((pid_t)pid != getpid() && !process_gone((pid_t)pid))
			continue; /* alive (or not ours to judge) */
		clean_marker(d, e->d_name);
	}
	closedir(dh);
}

/* 1 when the marker name (in the common directory) has a line for ref. */
static int marker_lists(const refdirs *d, const char *name, const char *ref)
{
	char *line = NULL;
	size_t cap = 0, rl = strlen(ref);
	ssize_t n;
	int found = 0;
	rq_error err;
	FILE *f;
	int fd = open_own_file(d, name, O_RDONLY, &err);

	if (fd < 0)
		return 0;
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return 0;
	}
	while (!found && (n = getline(&line, &cap, f)) > 0)
		found = (size_t)n > rl && !memcmp(line, ref, rl) && line[rl] == ' ';
	free(line);
	fclose(f);
	return found;
}

/* Who holds ref's lock, as the markers say: a replayq process that lists
 * it, alive or gone from this machine; none: someone else. */
static rq_refs_verdict lock_owner(const refdirs *d, const char *ref)
{
	char host[128] = "";
	rq_refs_verdict v = RQ_REFS_LOCKED_OTHER;
	struct dirent *e;
	int fd = fcntl(d->common, F_DUPFD_CLOEXEC, 0);
	DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dh) {
		if (fd >= 0)
			close(fd);
		return v;
	}
	rewinddir(dh);
	gethostname(host, sizeof(host) - 1);
	while (v == RQ_REFS_LOCKED_OTHER && (e = readdir(dh))) {
		char *at;
		long pid;
		if (strncmp(e->d_name, MARKER_PREFIX, strlen(MARKER_PREFIX)) != 0 ||
		    (pid = strtol(e->d_name + strlen(MARKER_PREFIX), &at, 10)) <= 0 ||
		    (pid_t)pid == getpid() || !marker_lists(d, e->d_name, ref))
			continue;
		v = *at == '@' && !strcmp(at + 1, host) && process_gone((pid_t)pid)
			? RQ_REFS_LOCKED_DEAD
			: RQ_REFS_LOCKED_LIVE;
	}
	closedir(dh);
	return v;
}

/* The per-repository guard of rq_refs_apply: <commondir>/replayq-refs.guard,
 * held with flock (released by the kernel when its holder dies); never a
 * symbolic link (RQ_E_BAD_REPO). */
static int guard_lock(const refdirs *d, rq_error *err)
{
	int fd = open_own_file(d, GUARD_NAME, O_RDWR | O_CREAT, err);

	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(fd);
			return rq_error_set(err, RQ_E_IO, "cannot lock '%s': %s", GUARD_NAME,
					    strerror(errno));
		}
	return fd;
}

void rq_refs_clean_stale(git_repository *repo)
{
	refdirs d;
	rq_error err;
	int guard;

	if (refdirs_open(repo, &d, &err) < 0)
		return;
	if ((guard = guard_lock(&d, &err)) >= 0) {
		clean_stale(&d);
		close(guard);
	}
	refdirs_close(&d);
}

/* Before the first lock: write down which locks this process will hold,
 * one "<ref> <new id>" a line (the id names the content a lock has while
 * its ref is being committed), as name (MARKER_PREFIX<owner>). */
static int write_marker(const refdirs *d, const rq_replay_result *result, char *name, size_t size,
			rq_error *err)
{
	char owner[160], hex[GIT_OID_HEXSZ + 1];
	FILE *f;
	int fd;

	owner_name(owner, sizeof(owner));
	snprintf(name, size, "%s%s", MARKER_PREFIX, owner);
	if ((fd = open_own_file(d, name, O_WRONLY | O_CREAT | O_TRUNC, err)) < 0)
		return -1;
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		unlinkat(d->common, name, 0);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < result->nupdates; i++)
		fprintf(f, "%s %s\n", result->updates[i].ref,
			git_oid_tostr(hex, sizeof(hex), &result->updates[i].new_id));
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		fclose(f);
		unlinkat(d->common, name, 0);
		return rq_error_set(err, RQ_E_IO, "cannot write '%s': %s", name, strerror(errno));
	}
	fclose(f);
	return 0;
}

/* ---- refs that cannot be created: directory/file conflicts ---- */

/* 1 when name is a loose ref file (or a link: a loose symbolic ref) under
 * d, reached without following a link. */
static int loose_file(const refdirs *d, const char *name)
{
	const char *leaf;
	struct stat st;
	int dir = rq_fs_parent_at(rq_refspace_own_dir(name) ? d->own : d->common, name, &leaf), r;

	if (dir < 0)
		return 0;
	r = fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode);
	close(dir);
	return r;
}

/* 1 when the directory fd (taken) holds a file at any depth (a link, a
 * lock, a broken ref: anything but empty directories), as git's lock
 * would find it in the way; deeper than 64 levels counts as holding one. */
static int holds_files(int fd, int depth)
{
	DIR *dh = fdopendir(fd);
	struct dirent *e;
	int found = 0;

	if (!dh) {
		close(fd);
		return 0;
	}
	while (!found && (e = readdir(dh))) {
		struct stat st;
		int sub;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(dh), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISDIR(st.st_mode) || depth >= 64)
			found = 1;
		else if ((sub = openat(dirfd(dh), e->d_name,
				       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			found = holds_files(sub, depth + 1);
	}
	closedir(dh);
	return found;
}

/* The smallest existing ref under name/ (loose or packed), into *clash
 * (malloc'ed): 1, 0 when there is none, -1 on error. */
static int ref_below(git_repository *repo, const char *name, char **clash, rq_error *err)
{
	git_reference_iterator *it;
	const char *n;
	size_t len = strlen(name);
	char *glob = malloc(len + 3);
	int r;

	if (!glob)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	memcpy(glob, name, len);
	memcpy(glob + len, "/*", 3); /* name holds no glob character: git refuses them */
	r = git_reference_iterator_glob_new(&it, repo, glob);
	free(glob);
	if (r < 0)
		return rq_error_git(err, "cannot list the refs");
	while ((r = git_reference_next_name(&n, it)) == 0)
		if (!strncmp(n, name, len) && n[len] == '/' && (!*clash || strcmp(n, *clash) < 0)) {
			free(*clash);
			if (!(*clash = strdup(n))) {
				git_reference_iterator_free(it);
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			}
		}
	git_reference_iterator_free(it);
	if (r != GIT_ITEROVER)
		return rq_error_git(err, "cannot list the refs");
	return *clash != NULL;
}

/* The existing ref that keeps name from being created: one of its leading
 * directories (refs/heads/main for refs/heads/main/sub), else the
 * smallest one beneath it (refs/heads/team/x for refs/heads/team), into
 * *clash (malloc'ed): 1, 0 none, -1 on error. */
static int ref_clash(git_repository *repo, const char *name, char **clash, rq_error *err)
{
	char *up = strdup(name);

	*clash = NULL;
	if (!up)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (char *p = strchr(up + 5, '/'); p; p = strchr(p + 1, '/')) {
		git_reference *ref = NULL;
		*p = '\0';
		if (git_reference_lookup(&ref, repo, up) == 0) {
			git_reference_free(ref);
			*clash = up;
			return 1;
		}
		*p = '/';
	}
	free(up);
	return ref_below(repo, name, clash, err);
}

/* One ref to create: refused (RQ_E_BAD_REF, in git's words) when an
 * existing ref or a non-empty directory is in its way. */
static int creatable(git_repository *repo, const refdirs *d, const char *name, rq_error *err)
{
	const char *leaf;
	char *clash = NULL;
	int r = ref_clash(repo, name, &clash, err), dir, sub = -1;

	if (r < 0)
		return -1;
	if (r > 0) { /* git names the lock when a loose file is in the way */
		r = loose_file(d, clash) || loose_file(d, name)
			? rq_error_set(err, RQ_E_BAD_REF,
				       "cannot lock ref '%s': '%s' exists; cannot create '%s'",
				       name, clash, name)
			: rq_error_set(err, RQ_E_BAD_REF, "'%s' exists; cannot create '%s'", clash,
				       name);
		free(clash);
		return r;
	}
	if ((dir = rq_fs_parent_at(rq_refspace_own_dir(name) ? d->own : d->common, name, &leaf)) <
	    0)
		return 0;
	sub = openat(dir, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	if (sub >= 0 && holds_files(sub, 0))
		return rq_error_set(err, RQ_E_BAD_REF,
				    "cannot lock ref '%s': there is a non-empty directory '%s' "
				    "blocking reference '%s'",
				    name, name, name);
	return 0;
}

/* 1 when a is one of b's leading directories. */
static int dir_of(const char *a, const char *b)
{
	size_t n = strlen(a);
	return !strncmp(a, b, n) && b[n] == '/';
}

int rq_refs_check_creatable(git_repository *repo, const rq_replay_result *result, rq_error *err)
{
	static const git_oid zero;
	refdirs d;
	int rc = 0;

	if (refdirs_open(repo, &d, err) < 0)
		return -1;
	for (size_t i = 0; rc == 0 && i < result->nupdates; i++) {
		const rq_ref_update *u = &result->updates[i];
		if (!git_oid_equal(&u->old_id, &zero) || strncmp(u->ref, "refs/", 5))
			continue; /* it exists: nothing stands in its way */
		for (size_t k = 0; rc == 0 && k < result->nupdates; k++)
			if (dir_of(u->ref, result->updates[k].ref) ||
			    dir_of(result->updates[k].ref, u->ref))
				rc = rq_error_set(err, RQ_E_BAD_REF,
						  "cannot process '%s' and '%s' at the same time",
						  u->ref, result->updates[k].ref);
		if (rc == 0)
			rc = creatable(repo, &d, u->ref, err);
	}
	refdirs_close(&d);
	return rc;
}

int rq_refs_apply(git_repository *repo, const rq_replay_result *result, const rq_ident *committer,
		  rq_error *err)
{
	return rq_refs_apply_fenced(repo, result, committer, NULL, err);
}

/* The error of a lock that could not be taken: a lock file another live
 * process holds is worth a retry (RQ_E_REF_LOCKED), anything else is not. */
static int lock_failed(git_repository *repo, const char *ref, int r, rq_error *err)
{
	const git_error *e = git_error_last();
	char lock[PATH_MAX];

	if (r == GIT_ELOCKED && lock_path(repo, ref, lock, sizeof(lock)) == 0)
		return rq_error_set(err, RQ_E_REF_LOCKED,
				    "cannot lock ref '%s': '%s' exists: another process "
				    "is updating it",
				    ref, lock);
	return rq_error_set(err, RQ_E_REF_MOVED, "cannot lock ref '%s': %s", ref,
			    e && e->message ? e->message : "locked by another process");
}

/*
 * Lock one ref in a transaction of its own and check it: *tx is the
 * transaction, ready to commit, or NULL when the ref holds its new value
 * already (a retried job applied it before: nothing to write, no reflog
 * entry, as git does for an update that changes nothing). 0, or -1 with
 * err set (RQ_E_REF_MOVED when the ref is anywhere else).
 */
static int lock_one(git_repository *repo, const rq_ref_update *u, const git_signature *sig,
		    const char *msg, git_transaction **tx, rq_error *err)
{
	git_oid cur;
	int r;

	if (git_transaction_new(tx, repo) < 0)
		return rq_error_git(err, "cannot start a ref transaction");
	if ((r = git_transaction_lock_ref(*tx, u->ref)) < 0)
		return lock_failed(repo, u->ref, r, err);
	r = git_reference_name_to_id(&cur, repo, u->ref);
	if (r == GIT_ENOTFOUND)
		memset(&cur, 0, sizeof(cur));
	else if (r < 0)
		return rq_error_git(err, "cannot read ref");
	if (git_oid_equal(&cur, &u->new_id)) {
		git_transaction_free(*tx); /* releases the lock */
		*tx = NULL;
		return 0;
	}
	if (!git_oid_equal(&cur, &u->old_id)) {
		char have[GIT_OID_HEXSZ + 1], want[GIT_OID_HEXSZ + 1];
		git_oid_tostr(have, sizeof(have), &cur);
		git_oid_tostr(want, sizeof(want), &u->old_id);
		return rq_error_set(err, RQ_E_REF_MOVED,
				    "cannot lock ref '%s': is at %s but expected %s", u->ref, have,
				    want);
	}
	if (git_transaction_set_target(*tx, u->ref, &u->new_id, sig, msg) < 0)
		return rq_error_git(err, "cannot update ref");
	return 0;
}

/* An update in progress: its transactions (one a ref, NULL when there is
 * nothing to write), the space its commits take (NULL on a reftable
 * repository, whose one table is written at once), and the ref that
 * failed to lock. */
typedef struct update_run {
	git_repository *repo;
	const rq_replay_result *res;
	const git_signature *sig;
	git_transaction **tx;
	rq_refspace *space;
	const char *failed;
} update_run;

/* Lock and check every ref, and take the space its commit needs (test
 * hook point "refs-locking" after the first): 0, or -1 with err set. */
static int lock_all(update_run *u, rq_error *err)
{
	const rq_replay_result *res = u->res;

	for (size_t i = 0; i < res->nupdates; i++) {
		u->failed = res->updates[i].ref;
		if (lock_one(u->repo, &res->updates[i], u->sig, res->reflog_msg, &u->tx[i], err) <
		    0)
			return -1;
		u->failed = NULL;
		if (u->tx[i] && u->space &&
		    rq_refspace_take(u->space, i, &res->updates[i], u->sig, res->reflog_msg, err) <
			0)
			return -1;
		if (i == 0 && res->nupdates > 1)
			rq_testhook_hold("refs-locking");
	}
	return 0;
}

/* 1 when ref holds id. */
static int ref_at(git_repository *repo, const char *ref, const git_oid *id)
{
	git_oid cur;

	return git_reference_name_to_id(&cur, repo, ref) == 0 && git_oid_equal(&cur, id);
}

/* Commit the locked refs one by one, in order (test hook point
 * "refs-committed" after the first of several). A failure leaves the
 * refs before it moved (the error says how many), and the reflogs of the
 * one that failed as they were. */
static int commit_all(update_run *u, size_t *moved, rq_error *err)
{
	const rq_replay_result *res = u->res;
	size_t done = 0, todo = 0;

	for (size_t i = 0; i < res->nupdates; i++)
		todo += u->tx[i] != NULL;
	for (size_t i = 0; i < res->nupdates; i++) {
		char why[RQ_ERROR_MSG_MAX];
		if (!u->tx[i])
			continue;
		if (git_transaction_commit(u->tx[i]) == 0) {
			*moved = ++done;
			if (done == 1 && todo > 1)
				rq_testhook_hold("refs-committed");
			continue;
		}
		rq_error_git(err, "cannot update refs");
		if (u->space && !ref_at(u->repo, res->updates[i].ref, &res->updates[i].new_id))
			rq_refspace_undo(u->space, i);
		snprintf(why, sizeof(why), "%s", err->msg);
		return rq_error_set(err, err->code,
				    "cannot update ref '%s' (%zu of %zu moved before it): %s",
				    res->updates[i].ref, done, todo, why);
	}
	return 0;
}

/* Before anything is locked: every ref a name git takes and reached
 * through no symbolic link (rq_confine: libgit2 would write through it),
 * and every ref to create free of directory/file conflicts. */
static int check_updates(git_repository *repo, const rq_replay_result *result, rq_error *err)
{
	char why[RQ_ERROR_MSG_MAX];

	for (size_t i = 0; i < result->nupdates; i++) {
		const char *ref = result->updates[i].ref;
		if (!rq_refname_lockable(ref))
			return rq_error_set(err, RQ_E_BAD_REF, "'%s' is not a valid refname", ref);
		if (rq_confine_ref(repo, ref, err) < 0)
			return -1;
	}
	if (rq_refs_check_creatable(repo, result, err) == 0)
		return 0;
	snprintf(why, sizeof(why), "%s", err->msg);
	return rq_error_set(err, err->code, "failed to commit ref transaction: %s",
			    why); /* git's words */
}

/* Under the per-repository guard (its descriptor returned): the locks of
 * dead owners removed, this process's marker written (its name into
 * marker, "" when none). -1 with err set. */
static int guard_and_mark(const refdirs *d, const rq_replay_result *result, char *marker,
			  size_t size, rq_error *err)
{
	int guard = guard_lock(d, err);

	marker[0] = '\0';
	if (guard < 0)
		return -1;
	clean_stale(d);
	if (write_marker(d, result, marker, size, err) < 0) {
		marker[0] = '\0';
		close(guard);
		return -1;
	}
	return guard;
}

/* Why an update failed, from its error: a lock's owner judged by the
 * markers (under the guard, or right after it). */
static rq_refs_verdict verdict_of(const refdirs *d, const rq_error *err, const char *ref)
{
	if (err->code == RQ_E_REF_MOVED)
		return RQ_REFS_MOVED;
	if (err->code != RQ_E_REF_LOCKED)
		return RQ_REFS_FAILED;
	return ref && d->common >= 0 ? lock_owner(d, ref) : RQ_REFS_LOCKED_OTHER;
}

/* Under the guard: the stale locks cleaned, the marker written, every ref
 * locked and its space taken; the guard released. 0, or -1 with err. */
static int lock_under_guard(update_run *u, refdirs *d, char *marker, size_t size, rq_error *err)
{
	int guard;

	if (refdirs_open(u->repo, d, err) < 0 ||
	    (!rq_repofmt_reftable(u->repo) &&
	     rq_refspace_new(&u->space, u->repo, d->common, d->own, u->res->nupdates, err) < 0) ||
	    (guard = guard_and_mark(d, u->res, marker, size, err)) < 0)
		return -1;
	if (lock_all(u, err) < 0) {
		close(guard);
		return -1;
	}
	close(guard); /* every lock is taken: the next may clean and lock */
	return 0;
}

/* The update once its names are checked, in the order of the protocol
 * (with its hold points): locks, fence, commit. One replayq process at a
 * time cleans, writes its marker and takes its locks in a repository: a
 * cleaner cannot judge a lock that another is taking right then. */
static int update(update_run *u, rq_refs_fence *fence, rq_error *err)
{
	char marker[NAME_MAX + 1] = "";
	refdirs d = {-1, -1};
	int rc = -1;

	rq_testhook_hold("refs-start");
	if (lock_under_guard(u, &d, marker, sizeof(marker), err) < 0)
		goto out;
	rq_testhook_hold("refs-locked");
	if (fence->may_commit && fence->may_commit(fence->arg) != 0) {
		rq_error_set(err, RQ_E_INTERRUPTED,
			     "the job is no longer ours: its refs are left as they were");
		goto out;
	}
	fence->passed = 1;
	rq_testhook_hold("refs-fenced");
	if (commit_all(u, &fence->moved, err) < 0)
		goto out;
	rq_testhook_hold("refs-done");
	rc = 0;
out:
	if (rc < 0)
		fence->verdict = verdict_of(&d, err, u->failed);
	for (size_t i = 0; i < u->res->nupdates; i++)
		git_transaction_free(u->tx[i]); /* releases every lock not committed */
	rq_refspace_free(u->space);
	if (marker[0])
		unlinkat(d.common, marker, 0);
	refdirs_close(&d);
	return rc;
}

int rq_refs_apply_fenced(git_repository *repo, const rq_replay_result *result,
			 const rq_ident *committer, rq_refs_fence *fence, rq_error *err)
{
	rq_refs_fence none = {0};
	git_signature *sig = NULL;
	int rc;

	if (!fence)
		fence = &none;
	fence->passed = 0;
	fence->moved = 0;
	fence->verdict = RQ_REFS_APPLIED;
	if (!result->nupdates)
		return 0;
	fence->verdict = RQ_REFS_FAILED;
	if (check_updates(repo, result, err) < 0)
		return -1;
	if (git_signature_new(&sig, committer->name, committer->email, (git_time_t)committer->time,
			      committer->tz) < 0)
		return rq_error_git(err, "invalid committer identity");
	update_run u = {repo, result, sig, calloc(result->nupdates, sizeof(*u.tx)), NULL, NULL};
	if (!u.tx)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	else
		rc = update(&u, fence, err);
	free(u.tx);
	git_signature_free(sig);
	if (rc == 0)
		fence->verdict = RQ_REFS_APPLIED;
	return rc;
}

char *rq_refs_format_updates(const rq_replay_result *result)
{
	size_t line = 8 + 2 * (GIT_OID_HEXSZ + 1) + 1;
	size_t size = 1;
	char *out, *p;

	for (size_t i = 0; i < result->nupdates; i++)
		size += line + strlen(result->updates[i].ref);
	if (!(out = malloc(size)))
		return NULL;
	p = out;
	*p = '\0';
	for (size_t i = 0; i < result->nupdates; i++) {
		char n[GIT_OID_HEXSZ + 1], o[GIT_OID_HEXSZ + 1];
		git_oid_tostr(n, sizeof(n), &result->updates[i].new_id);
		git_oid_tostr(o, sizeof(o), &result->updates[i].old_id);
		p += sprintf(p, "update %s %s %s\n", result->updates[i].ref, n, o);
	}
	return out;
}
