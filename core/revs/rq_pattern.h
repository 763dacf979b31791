/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_pattern: a POSIX regular expression (--author, --committer, --grep)
 * checked without compiling it, in time linear in its length and with no
 * allocation, for the worker's parent, which validates a job's walk
 * options but must never compile a pattern: compiling is unbounded in
 * memory and time (an 18-byte pattern, a\{0,32767\}, makes glibc's regcomp
 * grow to gigabytes), so only the job's child compiles, under its limits.
 *
 * The syntax is the one glibc's regcomp takes: basic (git's default: \( \)
 * \{ \} \| \+ \? and the GNU escapes \w \W \s \S \b \B \< \> \` \'),
 * extended, or fixed strings. The check refuses what regcomp refuses in
 * the usual ways (a bracket, a group or an interval left open, an
 * interval that is not one or counts past 32767 or backwards, a
 * repetition with nothing to repeat, an unknown character class, a range
 * that runs backwards, a back-reference to a group not closed yet, a
 * trailing backslash); a rarer case it lets through is refused by the
 * child's regcomp instead.
 *
 * The limit: what a pattern costs to compile grows with its expansion,
 * each interval multiplying what it repeats by its upper count (or its
 * lower one plus one when open), nested intervals multiplying again. A
 * pattern whose expansion, read as a basic or as an extended expression
 * (a job may ask for either with -E), passes RQ_PATTERN_EXPANSION_MAX is
 * refused: a\{0,2048\} compiles in about 30 MB, a\{0,32767\} in gigabytes.
 */
#ifndef RQ_PATTERN_H
#define RQ_PATTERN_H

#include <stddef.h>

#include "rq_error.h"

#define RQ_PATTERN_EXPANSION_MAX 2048

/*
 * Check pat as syntax says (0 or 'G': basic, 'E': extended, 'F': fixed
 * strings): 0 when regcomp should take it, -1 with RQ_E_USAGE ("invalid
 * regular expression '<pat>': <why>") when not. *expansion (may be NULL):
 * its expansion as far as it was read (at most RQ_PATTERN_EXPANSION_MAX +
 * 1: past the limit it is not counted further).
 */
int rq_pattern_check(const char *pat, int syntax, size_t *expansion, rq_error *err);

/*
 * 0 when the pattern is valid as a basic expression (see above) and its
 * expansion is within RQ_PATTERN_EXPANSION_MAX both as a basic and as an
 * extended one; else -1 with RQ_E_USAGE.
 */
int rq_pattern_bounded(const char *pat, rq_error *err);

#endif
