/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stop: the stop request, a flag and a self-pipe (see stop.h).
 */
#include "stop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

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
