/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_wildmatch: git's pattern language (wildmatch.c, after rsync's), for
 * the patterns of attribute files.
 *
 * '?' is one character, '*' any run of characters, "[...]" a bracket
 * expression ('!' or '^' negates; ranges; "[:alpha:]" and the other POSIX
 * classes; '\' quotes), '\' quotes the next character. With
 * RQ_WM_PATHNAME none of these matches '/', except "**" as a whole path
 * component: "**" + "/" matches no directory or any number of them, "/" +
 * "**" at the end everything below, "**" alone anything. Without it, '*'
 * matches '/' too. RQ_WM_CASEFOLD compares letters without case.
 *
 * Matching runs as a set of states over the text (no backtracking), so a
 * pattern of many stars costs its length times the text's, never more.
 */
#ifndef RQ_WILDMATCH_H
#define RQ_WILDMATCH_H

#include <stddef.h>

#define RQ_WM_CASEFOLD 1
#define RQ_WM_PATHNAME 2

/* 1 when text (tlen bytes) matches pattern (plen bytes), 0 when not or
 * when the pattern is malformed (an unclosed bracket); -1 out of memory. */
int rq_wildmatch(const char *pattern, size_t plen, const char *text, size_t tlen, int flags);

#endif
