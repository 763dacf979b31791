/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stop: the stop request, a flag and a self-pipe, and what a forked child
 * leaves of it and of its parent's descriptors (see stop.h).
 */
#define _GNU_SOURCE /* syscall */
#include "stop.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* close_range(2) by its number: glibc has the wrapper from 2.34 only; a
 * kernel or a C library without it takes the /proc listing below */
static int close_fd_range(unsigned lo, unsigned hi)
{
#ifdef SYS_close_range
	return (int)syscall(SYS_close_range, lo, hi, 0);
#else
	(void)lo;
	(void)hi;
	errno = ENOSYS;
	return -1;
#endif
}

static volatile sig_atomic_t stop_requested;
static int stop_pipe[2] = {-1, -1}; /* the handler wakes the event loop */

static void on_stop(int sig)
{
	int saved = errno;

	(void)sig;
	stop_requested = 1;
	if (stop_pipe[1] >= 0 && write(stop_pipe[1], "s", 1) < 0) {
		/* full: the loop is awake already */
	}
	errno = saved;
}

void rq_stop_catch(void)
{
	struct sigaction sa;

	if (stop_pipe[0] < 0 && pipe(stop_pipe) == 0)
		for (int i = 0; i < 2; i++)
			if (fcntl(stop_pipe[i], F_SETFL, O_NONBLOCK) < 0 ||
			    fcntl(stop_pipe[i], F_SETFD, FD_CLOEXEC) < 0)
				break;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int rq_stop_requested(void)
{
	return stop_requested;
}

int rq_stop_fd(void)
{
	return stop_pipe[0];
}

void rq_stop_drain(void)
{
	char drain[64];

	if (stop_pipe[0] >= 0 && read(stop_pipe[0], drain, sizeof(drain)) < 0) {
		/* nothing to do: the flag is what counts */
	}
}

static int kept(int fd, const int *keep, size_t nkeep)
{
	for (size_t i = 0; i < nkeep; i++)
		if (keep[i] == fd)
			return 1;
	return 0;
}

/* Without /proc, or without a descriptor left to read it with (a
 * parent at its limit): every number below the limit (at most 65536). */
static void close_all_below_limit(const int *keep, size_t nkeep)
{
	struct rlimit rl;
	int hi =
	    getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;

	for (int fd = 3; fd < hi; fd++)
		if (!kept(fd, keep, nkeep))
			close(fd);
}

/* Without close_range: the descriptors open, as /proc lists them, closed
 * but those kept (a batch at a time: closing changes the listing). */
static void close_listed(const int *keep, size_t nkeep)
{
	for (int more = 1; more;) {
		int fds[256], n = 0;
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;
		if (!d) {
			close_all_below_limit(keep, nkeep);
			return;
		}
		while (n < 256 && (e = readdir(d))) {
			int fd = atoi(e->d_name);
			if (fd >= 3 && fd != dirfd(d) && !kept(fd, keep, nkeep))
				fds[n++] = fd;
		}
		closedir(d);
		for (int i = 0; i < n; i++)
			close(fds[i]);
		more = n == 256;
	}
}

/* Close every descriptor from 3 up but those in keep. */
static void close_inherited(const int *keep, size_t nkeep)
{
	unsigned lo = 3;
	int failed = 0;

	/* the gaps between the kept descriptors, lowest first */
	for (;;) {
		unsigned next = ~0U;
		for (size_t i = 0; i < nkeep; i++)
			if (keep[i] >= (int)lo && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
		if (next > lo)
			failed |= close_fd_range(lo, next - 1) < 0;
		if (next == ~0U)
			break;
		lo = next + 1;
	}
	if (failed)
		close_listed(keep, nkeep);
}

void rq_stop_detach_child(const int *keep, size_t nkeep)
{
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_IGN);
	close_inherited(keep, nkeep);
	stop_pipe[0] = stop_pipe[1] = -1;
	stop_requested = 0;
}
