/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_testhook: hold a process at a named point until a test lets it go.
 */
#include "rq_testhook.h"

#ifdef RQ_TEST_HOOKS

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

int rq_testhook_wanted(const char *point)
{
	const char *list = getenv("REPLAYQ_TEST_HOLD");
	size_t n = strlen(point);

	while (list && *list) {
		const char *end = strchr(list, ',');
		size_t len = end ? (size_t)(end - list) : strlen(list);
		if (len == n && !strncmp(list, point, n))
			return 1;
		list = end ? end + 1 : NULL;
	}
	return 0;
}

static void on_release(int sig)
{
	(void)sig;
}

/* Announce the hold: <dir>/<point>.<pid>, holding the pid, written under
 * another name first (".<point>.<pid>.tmp") so that it appears whole. */
static void announce(const char *point)
{
	const char *dir = getenv("REPLAYQ_TEST_HOLD_DIR");
	char path[PATH_MAX], tmp[PATH_MAX], pid[32];
	int fd, n;

	if (!dir || !*dir)
		dir = ".";
	n = snprintf(path, sizeof(path), "%s/%s.%ld", dir, point, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(path))
		return;
	n = snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.tmp", dir, point, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (write(fd, pid, (size_t)n) != n) {
		close(fd);
		unlink(tmp);
		return;
	}
	close(fd);
	rename(tmp, path);
}

/* REPLAYQ_TEST_ALLOC_AT=<point>:<MiB>: at that point, take and touch that
 * much memory and keep it (a job that grows once its work has begun). */
static void alloc_at(const char *point)
{
	const char *v = getenv("REPLAYQ_TEST_ALLOC_AT"), *c = v ? strrchr(v, ':') : NULL;
	size_t n;
	char *m;

	if (!c || (size_t)(c - v) != strlen(point) || strncmp(v, point, (size_t)(c - v)))
		return;
	n = (size_t)atol(c + 1) << 20;
	if ((m = malloc(n)))
		memset(m, 1, n);
	__asm__ volatile("" : : "r"(m) : "memory"); /* kept until the process ends */
}

/* With REPLAYQ_TEST_HOLD_ONCE set, only the first process to reach a
 * point holds there: it creates <dir>/<point>.once, and a process that
 * finds that file goes on (a retry passes the point its killed
 * predecessor was held at). 1 hold, 0 go on. */
static int first_here(const char *point)
{
	const char *dir = getenv("REPLAYQ_TEST_HOLD_DIR");
	char path[PATH_MAX];
	int fd, n;

	if (!getenv("REPLAYQ_TEST_HOLD_ONCE"))
		return 1;
	n = snprintf(path, sizeof(path), "%s/%s.once", dir && *dir ? dir : ".", point);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 1;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		return errno != EEXIST;
	close(fd);
	return 1;
}

void rq_testhook_hold(const char *point)
{
	struct sigaction sa, old_sa;
	sigset_t block, old_mask, wait_mask;

	alloc_at(point);
	if (!rq_testhook_wanted(point) || !first_here(point))
		return;
	/* block SIGUSR1 until sigsuspend, so that a release sent right after
	 * the announcement is not lost */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_release;
	sigaction(SIGUSR1, &sa, &old_sa);
	announce(point);
	wait_mask = old_mask;
	sigdelset(&wait_mask, SIGUSR1);
	sigsuspend(&wait_mask);
	sigaction(SIGUSR1, &old_sa, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
}

static rq_testhook_fn g_fn;

void rq_testhook_set_fn(rq_testhook_fn fn)
{
	g_fn = fn;
}

void rq_testhook_at(const char *point, size_t k)
{
	if (g_fn)
		g_fn(point, k);
}

/* Open <dir>/<pid>.docs to append, making dir (and its parents) if it is
 * not there; -1 if it cannot. */
static int doc_open(const char *dir)
{
	char path[PATH_MAX], part[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%ld.docs", dir, (long)getpid()), fd;

	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 || errno != ENOENT)
		return fd;
	for (size_t i = 1; dir[i - 1]; i++) {
		if (dir[i] != '/' && dir[i] != '\0')
			continue;
		if (i >= sizeof(part))
			return -1;
		memcpy(part, dir, i);
		part[i] = '\0';
		if (mkdir(part, 0755) < 0 && errno != EEXIST)
			return -1;
	}
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

void rq_testhook_doc(const char *kind, const char *verdict, const char *text, size_t len,
		     const char *note)
{
	const char *dir = getenv("REPLAYQ_TEST_JSON_DIR");
	char head[128];
	size_t nlen = note ? strlen(note) : 0;
	struct iovec v[4];
	int fd, n;

	if (!dir || !*dir)
		return;
	n = snprintf(head, sizeof(head), "%s %s %zu %zu\n", kind, verdict, len, nlen);
	if (n < 0 || (size_t)n >= sizeof(head) || (fd = doc_open(dir)) < 0)
		return;
	v[0] = (struct iovec){head, (size_t)n};
	v[1] = (struct iovec){(void *)text, len};
	v[2] = (struct iovec){(void *)(note ? note : ""), nlen};
	v[3] = (struct iovec){"\n", 1};
	ssize_t w = writev(fd, v, 4); /* (short: the check finds a record cut) */
	(void)w;
	close(fd);
}

#else
/* not a test build: the hooks are the header's empty inline functions */
typedef int rq_testhook_none;
#endif
