/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's xdiff: xdiffi.c (README: Credits) */
/*
 * rq_xdiff: the two-way line diff of the line merge, as git's xdiff
 * computes it for merge-ort (see rq_xdiff.h for what and why).
 *
 * A diff runs in four steps, one file each:
 *
 *  1. preparation (rq_xprepare.c, xprepare.c): split both buffers into
 *     lines and number the distinct lines in order of first appearance;
 *  2. the classic diff (rq_xclassic.c, xdiffi.c) with xdiff's heuristics,
 *     which the histogram diff falls back to for regions where every common
 *     line is too frequent;
 *  3. the histogram diff (rq_xhistogram.c, xhistogram.c);
 *  4. the group sliding (xdl_change_compact) and the script
 *     (xdl_build_script): this file, which runs the steps.
 *
 * Differences from xdiff, none of which shows in a merge's result: no
 * whitespace or blank-line options (merge-ort passes none by default), no
 * patience or minimal algorithm, no indent heuristic, and the line hash
 * only numbers the lines (git's hash is not reproduced: the numbering by
 * first appearance is what the diff sees).
 */
#include "rq_xdiff.h"

#include "rq_mem.h"
#include "rq_xhistogram.h"
#include "rq_xprepare.h"

#include <stdlib.h>
#include <string.h>

/* Free one side's arrays (the records point into the caller's buffer). */
static void file_free(rq_xdiff_file *f)
{
	free(f->recs);
	free(f->rchg_mem);
	free(f->rindex);
	free(f->ha);
}

/* Free an environment (also one left zeroed by a failed call). */
void rq_xdiff_env_free(rq_xdiff_env *env)
{
	file_free(&env->f1);
	file_free(&env->f2);
	free(env->len1);
	free(env->len2);
	memset(env, 0, sizeof(*env));
}

/* ---- 4. group sliding and the script ---------------------------------------- */

/*
 * A diff is often ambiguous: inserting a block after a line equal to the
 * block's last line is the same as inserting it one line earlier. xdiff
 * settles such cases by sliding each group of changed lines as far as it
 * goes (xdl_change_compact); the merge compares the two sides' scripts
 * hunk by hunk, so it must slide exactly as git does to find the same
 * overlaps.
 */

/* A group of changed lines [start, end) of one file (xdiff's struct xdlgroup);
 * start == end is an empty group between two unchanged lines. */
typedef struct xgroup {
	long start, end;
} xgroup;

/* The first group of f (group_init). */
static void group_init(rq_xdiff_file *f, xgroup *g)
{
	g->start = g->end = 0;
	while (f->rchg[g->end])
		g->end++;
}

/* Move to the next group; -1 at the end of the file (group_next). */
static int group_next(rq_xdiff_file *f, xgroup *g)
{
	if (g->end == f->nrec)
		return -1;
	g->start = g->end + 1;
	for (g->end = g->start; f->rchg[g->end]; g->end++)
		;
	return 0;
}

/* Move to the previous group; -1 at the start of the file (group_previous). */
static int group_previous(rq_xdiff_file *f, xgroup *g)
{
	if (g->start == 0)
		return -1;
	g->end = g->start - 1;
	for (g->start = g->end; f->rchg[g->start - 1]; g->start--)
		;
	return 0;
}

/* Slide g one line down when its first line equals the line after it,
 * joining the next group if they touch; -1 when it cannot (group_slide_down). */
static int group_slide_down(rq_xdiff_file *f, xgroup *g)
{
	if (g->end < f->nrec && f->recs[g->start].ha == f->recs[g->end].ha) {
		f->rchg[g->start++] = 0;
		f->rchg[g->end++] = 1;
		while (f->rchg[g->end])
			g->end++;
		return 0;
	}
	return -1;
}

/* The same upwards (group_slide_up). */
static int group_slide_up(rq_xdiff_file *f, xgroup *g)
{
	if (g->start > 0 && f->recs[g->start - 1].ha == f->recs[g->end - 1].ha) {
		f->rchg[--g->start] = 1;
		f->rchg[--g->end] = 0;
		while (f->rchg[g->start - 1])
			g->start--;
		return 0;
	}
	return -1;
}

/*
 * xdl_change_compact() without the indent heuristic (merges do not use it):
 * slide every group of changed lines of f as far up, then as far down, as
 * equal lines allow, following the matching group go of the other file;
 * then, if the group can end where it lines up with a change on the other
 * side, move it back there, else leave it as low as it goes. This is what
 * makes equivalent diffs come out the way git's do. -1 when the two files'
 * groups get out of step (xdiff's "group sync broken").
 */
static int change_compact(rq_xdiff_file *f, rq_xdiff_file *fo)
{
	xgroup g, go;
	long earliest_end, end_matching_other, groupsize;

	group_init(f, &g);
	group_init(fo, &go);
	for (;;) {
		if (g.end != g.start) {
			do {
				groupsize = g.end - g.start;
				end_matching_other = -1;
				while (!group_slide_up(f, &g))
					if (group_previous(fo, &go))
						return -1;
				earliest_end = g.end;
				if (go.end > go.start)
					end_matching_other = g.end;
				for (;;) {
					if (group_slide_down(f, &g))
						break;
					if (group_next(fo, &go))
						return -1;
					if (go.end > go.start)
						end_matching_other = g.end;
				}
			} while (groupsize != g.end - g.start);
			if (g.end == earliest_end) {
				/* no shifting was possible */
			} else if (end_matching_other != -1) {
				while (go.end == go.start) {
					if (group_slide_up(f, &g))
						return -1;
					if (group_previous(fo, &go))
						return -1;
				}
			}
		}
		if (group_next(f, &g))
			break;
		if (group_next(fo, &go))
			return -1;
	}
	if (!group_next(fo, &go))
		return -1;
	return 0;
}

/*
 * xdl_build_script(): turn the change marks into hunks. Like git it walks
 * from the end (both files together) and then reverses, so the hunks come
 * in file order. 0, or -1 out of memory or on marks that do not pair up.
 */
static int build_script(rq_xdiff_env *env, rq_xdiff_change **out, size_t *nout)
{
	char *rchg1 = env->f1.rchg, *rchg2 = env->f2.rchg;
	long i1, i2, l1, l2;
	size_t n = 0, cap = 0;
	rq_xdiff_change *v = NULL, *nv;

	/* i1 and i2 walk both files from the end, in step over unchanged
	 * lines; the rchg[-1] sentinels end each run of changes */
	for (i1 = env->f1.nrec, i2 = env->f2.nrec; i1 >= 0 || i2 >= 0; i1--, i2--) {
		if (i1 < 0 || i2 < 0)
			goto fail; /* the files' unchanged lines do not pair up */
		if (!rchg1[i1 - 1] && !rchg2[i2 - 1])
			continue;
		for (l1 = i1; rchg1[i1 - 1]; i1--)
			;
		for (l2 = i2; rchg2[i2 - 1]; i2--)
			;
		if (!(nv = rq_mem_grow(v, &cap, n + 1, sizeof(*v), 16)))
			goto fail;
		v = nv;
		v[n].i1 = i1;
		v[n].i2 = i2;
		v[n].chg1 = l1 - i1;
		v[n].chg2 = l2 - i2;
		n++;
	}
	for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
		rq_xdiff_change t = v[a];
		v[a] = v[b];
		v[b] = t;
	}
	*out = v;
	*nout = n;
	return 0;
fail:
	free(v);
	return -1;
}

/*
 * xdl_do_diff() with XDF_HISTOGRAM_DIFF, then xdl_change_compact() on both
 * files and xdl_build_script(), as xdl_merge() runs them for each side.
 */
int rq_xdiff_histogram(rq_xdiff_env *env, const char *a, long na, const char *b, long nb,
		       rq_xdiff_change **script, size_t *nscript)
{
	return rq_xdiff_histogram_spans(env, a, na, NULL, b, nb, NULL, script, nscript);
}

int rq_xdiff_histogram_spans(rq_xdiff_env *env, const char *a, long na, const rq_xdiff_spans *as,
			     const char *b, long nb, const rq_xdiff_spans *bs,
			     rq_xdiff_change **script, size_t *nscript)
{
	int r;

	*script = NULL;
	*nscript = 0;
	if (rq_xprepare_env(env, a, na, as, b, nb, bs) < 0)
		return RQ_XDIFF_NOMEM;
	env->has_spans = (as && as->n) || (bs && bs->n);
	r = rq_xhistogram_diff(env, 1, env->f1.nrec, 1, env->f2.nrec);
	/* git's xdl_merge fails on a broken group sync; nothing to reproduce */
	if (r == 0 &&
	    (change_compact(&env->f1, &env->f2) < 0 || change_compact(&env->f2, &env->f1) < 0))
		r = RQ_XDIFF_TOO_COMPLEX;
	if (r == 0 && build_script(env, script, nscript) < 0)
		r = RQ_XDIFF_NOMEM;
	if (r < 0)
		rq_xdiff_env_free(env);
	return r;
}
