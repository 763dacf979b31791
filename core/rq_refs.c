/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refs: apply a replay's ref updates in one checked transaction, or
 * format them for `git update-ref --stdin`.
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

/* Remove the locks a dead replayq process left, as its marker lists them:
 * only empty lock files (libgit2 writes a lock's content at the commit)
 * made in the minute after the marker; a lock of a live process, or one
 * another program took later, stays. */
static void clean_marker(git_repository *repo, const char *marker)
{
	struct stat mst, lst;
	char line[1100], lock[PATH_MAX];
	FILE *f;

	if (stat(marker, &mst) < 0 || !(f = fopen(marker, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line || lock_path(repo, line, lock, sizeof(lock)) < 0 ||
		    lstat(lock, &lst) < 0 || !S_ISREG(lst.st_mode) || lst.st_size != 0)
			continue;
		if (made_after(&lst.st_mtim, &mst.st_mtim) &&
		    lst.st_mtim.tv_sec <= mst.st_mtim.tv_sec + RQ_REFS_LOCK_WINDOW_S)
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

void rq_refs_clean_stale(git_repository *repo)
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

/* Before the first lock: write down which locks this process will hold. */
static int write_marker(git_repository *repo, const rq_replay_result *result, char *path,
			size_t size, rq_error *err)
{
	char owner[160];
	FILE *f;
	int n;

	owner_name(owner, sizeof(owner));
	n = snprintf(path, size, "%s/%s%s", git_repository_commondir(repo), MARKER_PREFIX, owner);
	if (n < 0 || (size_t)n >= size)
		return rq_error_set(err, RQ_E_IO, "repository path too long");
	if (!(f = fopen(path, "w")))
		return rq_error_set(err, RQ_E_IO, "cannot write '%s': %s", path, strerror(errno));
	for (size_t i = 0; i < result->nupdates; i++)
		fprintf(f, "%s\n", result->updates[i].ref);
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

int rq_refs_apply_checked(git_repository *repo, const rq_replay_result *result,
			  const rq_ident *committer, int (*may_commit)(void *arg), void *arg,
			  rq_error *err)
{
	git_transaction *tx = NULL;
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
	/* one replayq process at a time cleans, writes its marker and takes
	 * its locks in this repository: a cleaner cannot judge a lock that
	 * another is taking right then */
	if ((guard = guard_lock(repo, err)) < 0)
		goto out;
	rq_refs_clean_stale(repo);
	if (write_marker(repo, result, marker, sizeof(marker), err) < 0) {
		marker[0] = '\0';
		goto out;
	}
	if (git_transaction_new(&tx, repo) < 0) {
		rq_error_git(err, "cannot start a ref transaction");
		goto out;
	}
	for (size_t i = 0; i < result->nupdates; i++) {
		const rq_ref_update *u = &result->updates[i];
		git_oid cur;
		int r;
		if ((r = git_transaction_lock_ref(tx, u->ref)) < 0) {
			const git_error *e = git_error_last();
			char lock[PATH_MAX];
			if (r == GIT_ELOCKED && lock_path(repo, u->ref, lock, sizeof(lock)) == 0)
				/* a lock another live process holds: worth a retry */
				rq_error_set(err, RQ_E_REF_LOCKED,
					     "cannot lock ref '%s': '%s' exists: another process "
					     "is updating it",
					     u->ref, lock);
			else
				rq_error_set(
				    err, RQ_E_REF_MOVED, "cannot lock ref '%s': %s", u->ref,
				    e && e->message ? e->message : "locked by another process");
			goto out;
		}
		r = git_reference_name_to_id(&cur, repo, u->ref);
		if (r == GIT_ENOTFOUND) {
			memset(&cur, 0, sizeof(cur));
		} else if (r < 0) {
			rq_error_git(err, "cannot read ref");
			goto out;
		}
		/* a ref already at its new value: a retried job applied before */
		if (!git_oid_equal(&cur, &u->old_id) && !git_oid_equal(&cur, &u->new_id)) {
			char have[GIT_OID_HEXSZ + 1], want[GIT_OID_HEXSZ + 1];
			git_oid_tostr(have, sizeof(have), &cur);
			git_oid_tostr(want, sizeof(want), &u->old_id);
			rq_error_set(err, RQ_E_REF_MOVED,
				     "cannot lock ref '%s': is at %s but expected %s", u->ref, have,
				     want);
			goto out;
		}
		if (git_transaction_set_target(tx, u->ref, &u->new_id, sig, result->reflog_msg) <
		    0) {
			rq_error_git(err, "cannot update ref");
			goto out;
		}
	}
	close(guard); /* every lock is taken: the next may clean and lock */
	guard = -1;
	rq_testhook_hold("refs-locked");
	if (may_commit && may_commit(arg) != 0) {
		rq_error_set(err, RQ_E_INTERRUPTED,
			     "the job is no longer ours: its refs are left as they were");
		goto out;
	}
	if (git_transaction_commit(tx) < 0) {
		rq_error_git(err, "cannot update refs");
		goto out;
	}
	rc = 0;
out:
	git_transaction_free(tx); /* releases every lock not committed */
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
