/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_repofile: read one of the small files git reads beside the objects and
 * refs (the shallow file, info/grafts, attribute files), under the rules a
 * worker's repository is held to (docs/security.md): never a FIFO or a
 * device (a blocking read would stall the job), and, when a root is given,
 * never a file that resolves outside it.
 */
#ifndef RQ_REPOFILE_H
#define RQ_REPOFILE_H

#include <stddef.h>

#include "rq_error.h"

/*
 * Read the regular file at path whole into *out (malloc'd, NUL-terminated,
 * *len bytes). root (NULL: none): the file must resolve inside it, else
 * RQ_E_BAD_REPO naming it as `shown`. nofollow: a symbolic link is not
 * followed but taken as no file (git's rule for a .gitattributes in the
 * tree). A file larger than max bytes is taken as no file. 1 when read;
 * 0 when there is no such regular file (*out NULL); -1 with err set.
 */
int rq_repofile_read(const char *path, const char *root, int nofollow, size_t max,
		     const char *shown, char **out, size_t *len, rq_error *err);

#endif
