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
#include "rq_refs.h"
#include "rq_testhook.h"

#define MARKER_PREFIX "replayq-refs-"

/* "<pid>@<host>" of this process. */
static void owner_name(char *out, size_t size)
{
	char host[128] = "";
	gethostname(host, sizeof(host) - 1);
	snprintf(out, size, "%ld@%s", (long)getpid(), host);
}

/* Where the lock of a ref lives: HEAD and other pseudo-refs in the
 * repository's own directory, refs/ in the common one. */
static int lock_path(git_repository *repo, const char *ref, char *out, size_t size)
{
	const char *dir =
	    strncmp(ref, "refs/", 5) ? git_repository_path(repo) : git_repository_commondir(repo);
	int n = snprintf(out, size, "%s%s%s.lock", dir,
			 dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", ref);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The owner takes every lock right after writing its marker: a lock made
 * much later is someone else's. */
#define RQ_REFS_LOCK_WINDOW_S 60

static int made_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* 1 when the lock file holds exactly "<hex>\n": libgit2 writes a ref's
 * new id into its lock right before the rename that commits it. */
static int lock_holds(const char *lock, const char *hex)
{
	char buf[GIT_OID_HEXSZ + 2];
	size_t want = strlen(hex), n;
	FILE *f;

	if (!*hex || want > GIT_OID_HEXSZ || !(f = fopen(lock, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return n == want + 1 && !memcmp(buf, hex, want) && buf[want] == '\n';
}

/* Remove the locks a dead replayq process left, as its marker lists them
 * ("<ref> <new id>" a line): lock files made in the minute after the
 * marker: empty ones made in the minute after it (libgit2 writes a lock's
 * content only at the commit), and ones holding that new id (killed
 * between writing and renaming it, however late); a lock of a live
 * process, or one another program took, stays. */
static void clean_marker(git_repository *repo, const char *marker)
{
	struct stat mst, lst;
	char line[1100], lock[PATH_MAX];
	FILE *f;

	if (stat(marker, &mst) < 0 || !(f = fopen(marker, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *hex;
		line[strcspn(line, "\n")] = '\0';
		hex = strchr(line, ' ');
		if (hex)
			*hex++ = '\0';
		if (!*line || lock_path(repo, line, lock, sizeof(lock)) < 0 ||
		    lstat(lock, &lst) < 0 || !S_ISREG(lst.st_mode) ||
		    !made_after(&lst.st_mtim, &mst.st_mtim))
			continue;
		if (lst.st_size == 0
			? lst.st_mtim.tv_sec <= mst.st_mtim.tv_sec + RQ_REFS_LOCK_WINDOW_S
			: lock_holds(lock, hex ? hex : ""))
			unlink(lock);
	}
	fclose(f);
	unlink(marker);
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
static void clean_stale(git_repository *repo)
{
	const char *dir = git_repository_commondir(repo);
	char host[128] = "", path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	gethostname(host, sizeof(host) - 1);
	if (!dir || !(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
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
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			clean_marker(repo, path);
	}
	closedir(d);
}

/* The per-repository guard of rq_refs_apply: <commondir>/replayq-refs.guard,
 * held with flock (released by the kernel when its holder dies). */
static int guard_lock(git_repository *repo, rq_error *err)
{
	char path[PATH_MAX];
	int fd, n = snprintf(path, sizeof(path), "%s/replayq-refs.guard",
			     git_repository_commondir(repo));

	if (n < 0 || (size_t)n >= sizeof(path))
		return rq_error_set(err, RQ_E_IO, "repository path too long");
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return rq_error_set(err, RQ_E_IO, "cannot open '%s': %s", path, strerror(errno));
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(fd);
			return rq_error_set(err, RQ_E_IO, "cannot lock '%s': %s", path,
					    strerror(errno));
		}
	return fd;
}

void rq_refs_clean_stale(git_repository *repo)
{
	rq_error err;
	int guard = guard_lock(repo, &err);

	if (guard < 0)
		return;
	clean_stale(repo);
	close(guard);
}

/* Before the first lock: write down which locks this process will hold,
 * one "<ref> <new id>" a line (the id names the content a lock has while
 * its ref is being committed). */
static int write_marker(git_repository *repo, const rq_replay_result *result, char *path,
			size_t size, rq_error *err)
{
	char owner[160], hex[GIT_OID_HEXSZ + 1];
	FILE *f;
	int n;

	owner_name(owner, sizeof(owner));
	n = snprintf(path, size, "%s/%s%s", git_repository_commondir(repo), MARKER_PREFIX, owner);
	if (n < 0 || (size_t)n >= size)
		return rq_error_set(err, RQ_E_IO, "repository path too long");
	if (!(f = fopen(path, "w")))
		return rq_error_set(err, RQ_E_IO, "cannot write '%s': %s", path, strerror(errno));
	for (size_t i = 0; i < result->nupdates; i++)
		fprintf(f, "%s %s\n", result->updates[i].ref,
			git_oid_tostr(hex, sizeof(hex), &result->updates[i].new_id));
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		fclose(f);
		unlink(path);
		return rq_error_set(err, RQ_E_IO, "cannot write '%s': %s", path, strerror(errno));
	}
	fclose(f);
	return 0;
}

/*
 * Every locked ref must get a target before the commit: libgit2 cannot
 * commit a lock without one.
 */
int rq_refs_apply(git_repository *repo, const rq_replay_result *result, const rq_ident *committer,
		  rq_error *err)
{
	return rq_refs_apply_checked(repo, result, committer, NULL, NULL, err);
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

/* Lock and check every ref (test hook point "refs-locking" after the
 * first): 0, or -1 with err set. */
static int lock_all(git_repository *repo, const rq_replay_result *result, const git_signature *sig,
		    git_transaction **tx, rq_error *err)
{
	for (size_t i = 0; i < result->nupdates; i++) {
		if (lock_one(repo, &result->updates[i], sig, result->reflog_msg, &tx[i], err) < 0)
			return -1;
		if (i == 0 && result->nupdates > 1)
			rq_testhook_hold("refs-locking");
	}
	return 0;
}

/* Commit the locked refs one by one, in order (test hook point
 * "refs-committed" after the first of several). A failure leaves the
 * refs before it moved: the error says how many. */
static int commit_all(const rq_replay_result *result, git_transaction **tx, rq_error *err)
{
	size_t done = 0, todo = 0;

	for (size_t i = 0; i < result->nupdates; i++)
		todo += tx[i] != NULL;
	for (size_t i = 0; i < result->nupdates; i++) {
		if (!tx[i])
			continue;
		if (git_transaction_commit(tx[i]) < 0) {
			char why[RQ_ERROR_MSG_MAX];
			rq_error_git(err, "cannot update refs");
			snprintf(why, sizeof(why), "%s", err->msg);
			return rq_error_set(
			    err, err->code,
			    "cannot update ref '%s' (%zu of %zu moved before it): %s",
			    result->updates[i].ref, done, todo, why);
		}
		if (++done == 1 && todo > 1)
			rq_testhook_hold("refs-committed");
	}
	return 0;
}

int rq_refs_apply_checked(git_repository *repo, const rq_replay_result *result,
			  const rq_ident *committer, int (*may_commit)(void *arg), void *arg,
			  rq_error *err)
{
	git_transaction **tx = NULL;
	git_signature *sig = NULL;
	char marker[PATH_MAX] = "";
	int rc = -1, guard = -1;

	if (!result->nupdates)
		return 0;
	/* a ref or reflog reached through a symbolic link would be written
	 * through it (rq_confine); nothing is locked before all are checked */
	for (size_t i = 0; i < result->nupdates; i++)
		if (rq_confine_ref(repo, result->updates[i].ref, err) < 0)
			return -1;
	if (git_signature_new(&sig, committer->name, committer->email, (git_time_t)committer->time,
			      committer->tz) < 0)
		return rq_error_git(err, "invalid committer identity");
	if (!(tx = calloc(result->nupdates, sizeof(*tx)))) {
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		goto out;
	}
	rq_testhook_hold("refs-start");
	/* one replayq process at a time cleans, writes its marker and takes
	 * its locks in this repository: a cleaner cannot judge a lock that
	 * another is taking right then */
	if ((guard = guard_lock(repo, err)) < 0)
		goto out;
	clean_stale(repo);
	if (write_marker(repo, result, marker, sizeof(marker), err) < 0) {
		marker[0] = '\0';
		goto out;
	}
	if (lock_all(repo, result, sig, tx, err) < 0)
		goto out;
	close(guard); /* every lock is taken: the next may clean and lock */
	guard = -1;
	rq_testhook_hold("refs-locked");
	if (may_commit && may_commit(arg) != 0) {
		rq_error_set(err, RQ_E_INTERRUPTED,
			     "the job is no longer ours: its refs are left as they were");
		goto out;
	}
	rq_testhook_hold("refs-fenced");
	if (commit_all(result, tx, err) < 0)
		goto out;
	rq_testhook_hold("refs-done");
	rc = 0;
out:
	for (size_t i = 0; tx && i < result->nupdates; i++)
		git_transaction_free(tx[i]); /* releases every lock not committed */
	free(tx);
	git_signature_free(sig);
	if (marker[0])
		unlink(marker);
	if (guard >= 0)
		close(guard);
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
