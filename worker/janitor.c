/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * janitor: the worker's start-up sweep for stale temporary object
 * directories (see janitor.h).
 */
#include "janitor.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rq_odb_tmpdir.h"
#include "rq_testhook.h"
#include "stop.h"

/* Look for objects/ directories up to `depth` levels below dir. */
static void janitor_walk(const char *dir, int depth, unsigned *budget, unsigned max_age)
{
	DIR *d;
	struct dirent *e;

	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d)) && *budget > 0) {
		char path[PATH_MAX];
		struct stat st;
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".git") != 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		(*budget)--;
		if (!strcmp(e->d_name, "objects"))
			rq_odb_tmpdir_clean_stale_dir(path, max_age);
		else if (depth > 0 || !strcmp(e->d_name, ".git"))
			janitor_walk(path, depth - 1, budget, max_age);
	}
	closedir(d);
}

/*
 * At start, a forked child removes the temporary object directories that
 * killed processes left in the repositories under the root (the parent
 * itself never opens a repository). It holds none of the worker's
 * descriptors and leaves its stop handling (rq_stop_detach_child). Test
 * hold point "janitor": the sweeping process, before its sweep.
 */
void rq_janitor_start(const char *root)
{
	pid_t pid = fork();
	if (pid == 0) {
		rq_stop_detach_child(NULL, 0);
		/* the grandchild does the work, so that no zombie is left to reap */
		if (fork() == 0) {
			rq_testhook_hold("janitor");
			unsigned budget = 200000;
			janitor_walk(root, 3, &budget, 300);
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}
