/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_gitconfig: a git config file read the way libgit2 1.5 reads it, so
 * that replayq can see every file a repository's configuration includes
 * before libgit2 opens any of them (rq_confine).
 *
 * libgit2 is the program that opens the included files, so its reading
 * is the one that counts where it differs from git's: a value's quotes are
 * dropped wherever they are, its inner whitespace is kept as written, a
 * line ending in a backslash (after its comment and trailing whitespace
 * are cut) continues on the next, and lines have no length limit. A file
 * holding a NUL byte is refused here (libgit2 cuts the line at it, git
 * does not): nothing about such a file is left to guess.
 */
#ifndef RQ_GITCONFIG_H
#define RQ_GITCONFIG_H

#include <stddef.h>

/* One variable: name as libgit2 makes it (the section lowercased, then
 * "." and the subsection as written, then "." and the key lowercased; a
 * variable before any section is its key alone), value NULL for a key
 * without '='. Anything but 0 stops the reading with that value. */
typedef int (*rq_gitconfig_fn)(const char *name, const char *value, void *arg);

/*
 * Every variable of text (len bytes), in order, through fn. 0, fn's
 * return when it stopped (when positive, with *line the number of the
 * variable's last line, where git says a bad value is), or -1 with *line
 * the number of the first line
 * libgit2 would refuse (or that holds a NUL byte), and *why what is wrong
 * with it; -2 when memory runs out.
 */
int rq_gitconfig_parse(const char *text, size_t len, rq_gitconfig_fn fn, void *arg, size_t *line,
		       const char **why);

/* 1 when a variable of that name (as rq_gitconfig_parse gives it) makes
 * libgit2 or git read another file: include.path, and includeIf.<any
 * condition>.path (whether or not the condition holds). */
int rq_gitconfig_is_include(const char *name);

#endif
