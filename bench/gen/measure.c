/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * measure: run one command and print what it cost, for the bench scripts.
 *
 *   measure OUT ERR -- command [args...]
 *
 * Runs the command with stdout to OUT and stderr to ERR (files, created
 * or truncated), waits for it and prints one line:
 *
 *   <wall ms> <peak RSS KiB> <user+system CPU ms> <exit status>
 *
 * The wall time runs from just before posix_spawn to just after wait4
 * returns: the command's own time, as `hyperfine -N` takes it, without the
 * cost of a shell's fork or of /usr/bin/time starting (about 2.5 ms here,
 * which would be added to every tool alike and so shrink every ratio).
 * Peak RSS and CPU time come from wait4's rusage. The exit status is the
 * command's (128 + the signal number when a signal ended it); measure
 * itself exits 0 when it could run the command, 127 when it could not.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
	       (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	double t0, t1;
	pid_t pid;
	int status, rc;

	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fputs("usage: measure OUT ERR -- command [args...]\n", stderr);
		return 127;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	t0 = now_ms();
	rc = posix_spawnp(&pid, argv[4], &fa, NULL, argv + 4, environ);
	if (rc != 0) {
		fprintf(stderr, "measure: cannot run %s: %s\n", argv[4], strerror(rc));
		return 127;
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("measure: wait4");
		return 127;
	}
	t1 = now_ms();
	posix_spawn_file_actions_destroy(&fa);
	printf("%.3f %ld %.0f %d\n", t1 - t0, ru.ru_maxrss, cpu_ms(&ru),
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
