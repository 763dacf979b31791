/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_fs: file-system helpers (see rq_fs.h).
 */
#include "rq_fs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rq_fs_rmtree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d))) {
		char child[PATH_MAX];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >=
		    (int)sizeof(child)) {
			rc = -1;
			continue;
		}
		if (rq_fs_rmtree(child) < 0)
			rc = -1;
	}
	closedir(d);
	if (rmdir(path) < 0)
		rc = -1;
	return rc;
}
