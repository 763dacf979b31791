/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * janitor: the worker's start-up sweep for stale temporary object
 * directories (see janitor.h).
 */
#include "janitor.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rq_fs.h"
#include "rq_odb_tmpdir.h"
#include "rq_testhook.h"
#include "stop.h"

/* Look for objects/ directories up to `depth` levels below the directory
 * dir (a descriptor, kept), entering no symbolic link: a link under the
 * root may lead anywhere, and the sweep removes what it finds. */
static void janitor_walk(int dir, int depth, unsigned *budget, unsigned max_age)
{
	int fd = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) && *budget > 0) {
		int sub;
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".git") != 0)
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		sub = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (sub < 0)
			continue;
		(*budget)--;
		if (!strcmp(e->d_name, "objects"))
			rq_odb_tmpdir_clean_stale_at(sub, max_age);
		else if (depth > 0 || !strcmp(e->d_name, ".git"))
			janitor_walk(sub, depth - 1, budget, max_age);
		close(sub);
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
			int fd = rq_fs_opendir(root);
			if (fd >= 0)
				janitor_walk(fd, 3, &budget, 300);
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}
