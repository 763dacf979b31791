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
 * The limit: what a pattern costs to compile grows with its expansion:
 * each character, bracket, back-reference and anchor counts one, a group
 * what it holds (at least one); each repetition multiplies what it
 * repeats by its upper count (or its lower one plus one when open; '+'
 * two, '*' and '?' one), nested repetitions multiplying again, and a
 * repetition of what can match the empty string multiplies by its count
 * once more (glibc's work on the empty paths through the copies grows
 * with the square of their number: \(a*\)\{0,2000\} takes 112 MB,
 * \(\(\(a\|\)*\)\{0,8\}\)\{0,8\} minutes). A pattern whose expansion
 * passes RQ_PATTERN_EXPANSION_MAX is refused: a\{0,2048\} compiles in
 * about 30 MB, a\{0,32767\} in gigabytes. What this count misses is
 * caught in the job's child, which compiles and tries each pattern in a
 * process of its own under a CPU-time limit first (rq_revfilter).
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
 * A job's pattern: 0 when pat is valid as syntax says (as
 * rq_pattern_check: the syntax the job's options give all its patterns),
 * has no back-reference (glibc's matching of them has an unfixed stack
 * overflow, CVE-2019-9192, and takes exponential time: a job's pattern
 * may not have one), and its expansion is within RQ_PATTERN_EXPANSION_MAX;
 * else -1 with RQ_E_USAGE saying which.
 */
int rq_pattern_bounded(const char *pat, int syntax, rq_error *err);

/*
 * The second line of defence, in the process that is about to compile
 * the patterns (a job's child, `replayq replay`): compile each of pats
 * (n, regcomp's cflags) and match it against a few texts in a process of
 * its own, under a CPU-time limit of RQ_PATTERN_PROBE_CPU_MS. 0 when that
 * process finished (a pattern regcomp refuses is left to the caller's own
 * compiling); -1 with RQ_E_BAD_REVISION naming the pattern it was at when
 * it ran out of time or crashed (glibc's regcomp can take minutes on a
 * pattern the count above lets through, and its regexec has an unfixed
 * stack overflow), or RQ_E_IO when no process could be started.
 */
#define RQ_PATTERN_PROBE_CPU_MS 2000
int rq_pattern_probe(char *const *pats, size_t n, int cflags, rq_error *err);

#endif
