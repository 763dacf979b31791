/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's xdiff: xdiffi.c, xprepare.c (README: Credits) */
/*
 * rq_xclassic: the classic diff (xdiffi.c: xdl_do_diff, xdl_recs_cmp,
 * xdl_split), with the preparation the classic algorithm gets in git
 * (xdl_trim_ends, xdl_cleanup_records) and xdiff's heuristics (a cost
 * limit, a snake heuristic). The histogram diff (rq_xhistogram.c) falls
 * back to it for regions where every common line is too frequent.
 */
#include "rq_xclassic.h"

#include "rq_xprepare.h"

#include <limits.h>
#include <stdlib.h>

/*
 * Myers' algorithm finds a shortest edit script by extending, for each edit
 * cost d, the furthest-reaching path on every diagonal k (line1 - line2 =
 * k), following "snakes" of equal lines for free. xdiff searches from both
 * ends at once and splits the region where a forward and a backward path
 * meet (the middle snake), then recurses on both halves (xdl_recs_cmp). On
 * large, very different inputs it stops early: after a long snake once the
 * cost passed XDL_HEUR_MIN_COST (the snake heuristic), or when the cost
 * reaches about the square root of the input size (the cost limit), taking
 * the best split found so far. These shortcuts decide the result on such
 * inputs, so they are reproduced exactly, constants included.
 */

/* xdiff's tuning constants (xdiffi.c, xprepare.c), same values. */
#define XDL_MAX_COST_MIN   256
#define XDL_HEUR_MIN_COST  256
#define XDL_LINE_MAX	   (long)((1UL << (CHAR_BIT * sizeof(long) - 1)) - 1)
#define XDL_SNAKE_CNT	   20
#define XDL_K_HEUR	   4
#define XDL_KPDIS_RUN	   4
#define XDL_MAX_EQLIMIT	   1024
#define XDL_SIMSCAN_WINDOW 100

/* How xdl_cleanup_records classifies a line by its matches in the other
 * file. */
enum { LINE_NO_MATCH = 0, LINE_MATCHES = 1, LINE_MATCHES_TOO_OFTEN = 2 };

/* xdiff's cheap square root (a power of two near sqrt(n)), used to scale
 * the limits below with the file size. */
static long bogosqrt(long n)
{
	long i;
	for (i = 1; n > 0; n >>= 2)
		i <<= 1;
	return i;
}

/* xdl_trim_ends(): leave the common first and last lines out of the diff. */
static void trim_ends(rq_xdiff_file *f1, rq_xdiff_file *f2)
{
	long i, lim = f1->nrec < f2->nrec ? f1->nrec : f2->nrec;
	for (i = 0; i < lim; i++)
		if (f1->recs[i].ha != f2->recs[i].ha)
			break;
	f1->dstart = f2->dstart = i;
	lim -= i;
	for (i = 0; i < lim; i++)
		if (f1->recs[f1->nrec - 1 - i].ha != f2->recs[f2->nrec - 1 - i].ha)
			break;
	f1->dend = f1->nrec - i - 1;
	f2->dend = f2->nrec - i - 1;
}

/*
 * xdl_clean_mmatch(): is the frequent line i inside a run made mostly of
 * unmatched and frequent lines (within a window of 100 lines each way)? Such
 * a line is dropped from the diff like an unmatched one.
 */
static int clean_mmatch(const char *dis, long i, long s, long e)
{
	long r, rdis0, rpdis0, rdis1, rpdis1;

	if (i - s > XDL_SIMSCAN_WINDOW)
		s = i - XDL_SIMSCAN_WINDOW;
	if (e - i > XDL_SIMSCAN_WINDOW)
		e = i + XDL_SIMSCAN_WINDOW;
	for (r = 1, rdis0 = 0, rpdis0 = 1; (i - r) >= s; r++) {
		if (dis[i - r] == LINE_NO_MATCH)
			rdis0++;
		else if (dis[i - r] == LINE_MATCHES_TOO_OFTEN)
			rpdis0++;
		else
			break;
	}
	if (rdis0 == 0)
		return 0;
	for (r = 1, rdis1 = 0, rpdis1 = 1; (i + r) <= e; r++) {
		if (dis[i + r] == LINE_NO_MATCH)
			rdis1++;
		else if (dis[i + r] == LINE_MATCHES_TOO_OFTEN)
			rpdis1++;
		else
			break;
	}
	if (rdis1 == 0)
		return 0;
	rdis1 += rdis0;
	rpdis1 += rpdis0;
	return rpdis1 * XDL_KPDIS_RUN < (rpdis1 + rdis1);
}

/* Classify each line of f between dstart and dend by how often its class
 * occurs in the other file (other_counts). */
static void classify_matches(const rq_xdiff_file *f, const long *other_counts, char *dis)
{
	long mlim = bogosqrt(f->nrec);

	if (mlim > XDL_MAX_EQLIMIT)
		mlim = XDL_MAX_EQLIMIT;
	for (long i = f->dstart; i <= f->dend; i++) {
		long nm = other_counts[f->recs[i].ha];
		dis[i] = nm == 0      ? LINE_NO_MATCH
			 : nm >= mlim ? LINE_MATCHES_TOO_OFTEN
				      : LINE_MATCHES;
	}
}

/* Keep the lines the classic diff compares (rindex/ha), mark the others
 * changed already. */
static void keep_matching_lines(rq_xdiff_file *f, const char *dis)
{
	f->nreff = 0;
	for (long i = f->dstart; i <= f->dend; i++) {
		if (dis[i] == LINE_MATCHES || (dis[i] == LINE_MATCHES_TOO_OFTEN &&
					       !clean_mmatch(dis, i, f->dstart, f->dend))) {
			f->rindex[f->nreff] = i;
			f->ha[f->nreff] = f->recs[i].ha;
			f->nreff++;
		} else {
			f->rchg[i] = 1;
		}
	}
}

/*
 * xdl_cleanup_records(): lines without a match in the other file, and
 * frequent lines among such lines, cannot be part of the common
 * subsequence worth finding: they are marked changed at once and left out
 * of the Myers search, which then runs on the lines kept. 0, or -1 out of
 * memory.
 */
static int cleanup_records(rq_xdiff_env *env)
{
	rq_xdiff_file *f1 = &env->f1, *f2 = &env->f2;
	char *dis = calloc((size_t)(f1->nrec + f2->nrec + 2), 1), *dis1, *dis2;

	f1->rindex = malloc((size_t)(f1->nrec + 1) * sizeof(long));
	f1->ha = malloc((size_t)(f1->nrec + 1) * sizeof(unsigned long));
	f2->rindex = malloc((size_t)(f2->nrec + 1) * sizeof(long));
	f2->ha = malloc((size_t)(f2->nrec + 1) * sizeof(unsigned long));
	if (!dis || !f1->rindex || !f1->ha || !f2->rindex || !f2->ha) {
		free(dis);
		return -1;
	}
	dis1 = dis;
	dis2 = dis1 + f1->nrec + 1;
	classify_matches(f1, env->len2, dis1);
	classify_matches(f2, env->len1, dis2);
	keep_matching_lines(f1, dis1);
	keep_matching_lines(f2, dis2);
	free(dis);
	return 0;
}

/* Where xdl_split cut a region, and whether each half needs a minimal diff. */
typedef struct split_point {
	long i1, i2;
	int min_lo, min_hi;
} split_point;

/* xdiff's limits for one classic diff (xdalgoenv_t). */
typedef struct algoenv {
	long mxcost, snake_cnt, heur_min;
} algoenv;

/*
 * The state of one xdl_split() search: the two class arrays, the region
 * [off1, lim1) x [off2, lim2), the furthest-reaching forward (kvdf) and
 * backward (kvdb) paths per diagonal, and the diagonal ranges searched so
 * far. The helpers below are the parts of xdl_split's loop; they are
 * static inline so that the compiler builds the same single loop.
 */
typedef struct split_search {
	const unsigned long *ha1, *ha2;
	long off1, lim1, off2, lim2;
	long *kvdf, *kvdb;
	long dmin, dmax, fmid, bmid, odd;
	long fmin, fmax, bmin, bmax;
	const algoenv *aenv;
} split_search;

/* One forward step (one more edit): extend every forward diagonal by one edit
 * and then along its snake. 1 when it met a backward path (*spl set). */
static inline int split_forward(split_search *search, int *got_snake, split_point *spl)
{
	long d, i1, i2, prev1;

	if (search->fmin > search->dmin)
		search->kvdf[--search->fmin - 1] = -1;
	else
		++search->fmin;
	if (search->fmax < search->dmax)
		search->kvdf[++search->fmax + 1] = -1;
	else
		--search->fmax;
	for (d = search->fmax; d >= search->fmin; d -= 2) {
		if (search->kvdf[d - 1] >= search->kvdf[d + 1])
			i1 = search->kvdf[d - 1] + 1;
		else
			i1 = search->kvdf[d + 1];
		prev1 = i1;
		i2 = i1 - d;
		for (; i1 < search->lim1 && i2 < search->lim2 && search->ha1[i1] == search->ha2[i2];
		     i1++, i2++)
			;
		if (i1 - prev1 > search->aenv->snake_cnt)
			*got_snake = 1;
		search->kvdf[d] = i1;
		if (search->odd && search->bmin <= d && d <= search->bmax &&
		    search->kvdb[d] <= i1) {
			spl->i1 = i1;
			spl->i2 = i2;
			spl->min_lo = spl->min_hi = 1;
			return 1;
		}
	}
	return 0;
}

/* The same step backward, from the end of the region. */
static inline int split_backward(split_search *search, int *got_snake, split_point *spl)
{
	long d, i1, i2, prev1;

	if (search->bmin > search->dmin)
		search->kvdb[--search->bmin - 1] = XDL_LINE_MAX;
	else
		++search->bmin;
	if (search->bmax < search->dmax)
		search->kvdb[++search->bmax + 1] = XDL_LINE_MAX;
	else
		--search->bmax;
	for (d = search->bmax; d >= search->bmin; d -= 2) {
		if (search->kvdb[d - 1] < search->kvdb[d + 1])
			i1 = search->kvdb[d - 1];
		else
			i1 = search->kvdb[d + 1] - 1;
		prev1 = i1;
		i2 = i1 - d;
		for (; i1 > search->off1 && i2 > search->off2 &&
		       search->ha1[i1 - 1] == search->ha2[i2 - 1];
		     i1--, i2--)
			;
		if (prev1 - i1 > search->aenv->snake_cnt)
			*got_snake = 1;
		search->kvdb[d] = i1;
		if (!search->odd && search->fmin <= d && d <= search->fmax &&
		    i1 <= search->kvdf[d]) {
			spl->i1 = i1;
			spl->i2 = i2;
			spl->min_lo = spl->min_hi = 1;
			return 1;
		}
	}
	return 0;
}

/* Do the snake_cnt lines before i1/i2 (forward) or from i1/i2 on
 * (backward) match? */
static inline int snake_at(const split_search *search, long i1, long i2, int forward)
{
	for (long k = 0; k < search->aenv->snake_cnt; k++)
		if (forward ? search->ha1[i1 - 1 - k] != search->ha2[i2 - 1 - k]
			    : search->ha1[i1 + k] != search->ha2[i2 + k])
			return 0;
	return 1;
}

/*
 * xdl_split's snake heuristic, on the forward paths or on the backward
 * ones: after a long snake and once the cost passed heur_min, the path
 * that advanced furthest beyond 4 lines per edit (XDL_K_HEUR), and ends
 * (forward) or starts (backward) in a snake of snake_cnt lines, is a good
 * enough split: the half on its far side then needs no minimal diff. 1 if
 * found (*spl set).
 */
static inline int split_good(const split_search *search, long ec, int forward, split_point *spl)
{
	const long *kv = forward ? search->kvdf : search->kvdb, snake = search->aenv->snake_cnt;
	long lo = forward ? search->fmin : search->bmin,
	     mid = forward ? search->fmid : search->bmid, best = 0;

	for (long d = forward ? search->fmax : search->bmax; d >= lo; d -= 2) {
		long dd = d > mid ? d - mid : mid - d, i1 = kv[d], i2 = i1 - d, v;
		int inside;
		if (forward) {
			v = (i1 - search->off1) + (i2 - search->off2) - dd;
			inside = search->off1 + snake <= i1 && i1 < search->lim1 &&
				 search->off2 + snake <= i2 && i2 < search->lim2;
		} else {
			v = (search->lim1 - i1) + (search->lim2 - i2) - dd;
			inside = search->off1 < i1 && i1 <= search->lim1 - snake &&
				 search->off2 < i2 && i2 <= search->lim2 - snake;
		}
		if (v > XDL_K_HEUR * ec && v > best && inside &&
		    snake_at(search, i1, i2, forward)) {
			best = v;
			spl->i1 = i1;
			spl->i2 = i2;
		}
	}
	if (best <= 0)
		return 0;
	spl->min_lo = forward;
	spl->min_hi = !forward;
	return 1;
}

/*
 * The cost limit of xdl_split: past mxcost edits, stop searching and cut
 * at the furthest-reaching path, forward or backward, whichever got
 * further (the diff is then not minimal, as in git).
 */
static inline void split_at_cost_limit(const split_search *search, split_point *spl)
{
	long fbest = -1, fbest1 = -1, bbest = XDL_LINE_MAX, bbest1 = XDL_LINE_MAX, d, i1, i2;

	for (d = search->fmax; d >= search->fmin; d -= 2) {
		i1 = search->kvdf[d] < search->lim1 ? search->kvdf[d] : search->lim1;
		i2 = i1 - d;
		if (search->lim2 < i2)
			i1 = search->lim2 + d, i2 = search->lim2;
		if (fbest < i1 + i2) {
			fbest = i1 + i2;
			fbest1 = i1;
		}
	}
	for (d = search->bmax; d >= search->bmin; d -= 2) {
		i1 = search->off1 > search->kvdb[d] ? search->off1 : search->kvdb[d];
		i2 = i1 - d;
		if (i2 < search->off2)
			i1 = search->off2 + d, i2 = search->off2;
		if (i1 + i2 < bbest) {
			bbest = i1 + i2;
			bbest1 = i1;
		}
	}
	if ((search->lim1 + search->lim2) - bbest < fbest - (search->off1 + search->off2)) {
		spl->i1 = fbest1;
		spl->i2 = fbest - fbest1;
		spl->min_lo = 1;
		spl->min_hi = 0;
	} else {
		spl->i1 = bbest1;
		spl->i2 = bbest - bbest1;
		spl->min_lo = 0;
		spl->min_hi = 1;
	}
}

/*
 * xdl_split(): Myers' middle snake, searched from both ends at once, with
 * xdiff's two ways out for large inputs (the snake heuristic and the cost
 * limit) unless need_min asks for a minimal diff. Fills *spl with where to
 * cut the region; returns the edit cost reached.
 */
static long xsplit(const unsigned long *ha1, long off1, long lim1, const unsigned long *ha2,
		   long off2, long lim2, long *kvdf, long *kvdb, int need_min, split_point *spl,
		   const algoenv *aenv)
{
	split_search search = {ha1,  ha2,  off1,	lim1,	     off2,	  lim2,
			       kvdf, kvdb, off1 - lim2, lim1 - off2, off1 - off2, lim1 - lim2,
			       0,    0,	   0,		0,	     0,		  aenv};

	search.odd = (search.fmid - search.bmid) & 1;
	search.fmin = search.fmax = search.fmid;
	search.bmin = search.bmax = search.bmid;
	kvdf[search.fmid] = off1;
	kvdb[search.bmid] = lim1;
	for (long ec = 1;; ec++) {
		int got_snake = 0; /* a snake longer than snake_cnt seen at this cost */

		if (split_forward(&search, &got_snake, spl) ||
		    split_backward(&search, &got_snake, spl))
			return ec;
		if (need_min)
			continue; /* a minimal diff was asked for: no shortcuts */
		if (got_snake && ec > aenv->heur_min &&
		    (split_good(&search, ec, 1, spl) || split_good(&search, ec, 0, spl)))
			return ec;
		if (ec >= aenv->mxcost) {
			split_at_cost_limit(&search, spl);
			return ec;
		}
	}
}

/*
 * xdl_recs_cmp(): diff the region [off1, lim1) x [off2, lim2) of the kept
 * lines: skip the common ends, mark everything changed when one side is
 * empty, else split at the middle snake and recurse on both halves.
 */
static void recs_cmp(rq_xdiff_file *d1, long off1, long lim1, rq_xdiff_file *d2, long off2,
		     long lim2, long *kvdf, long *kvdb, int need_min, const algoenv *aenv)
{
	unsigned long const *ha1 = d1->ha, *ha2 = d2->ha;

	for (; off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2]; off1++, off2++)
		;
	for (; off1 < lim1 && off2 < lim2 && ha1[lim1 - 1] == ha2[lim2 - 1]; lim1--, lim2--)
		;
	if (off1 == lim1) {
		for (; off2 < lim2; off2++)
			d2->rchg[d2->rindex[off2]] = 1;
	} else if (off2 == lim2) {
		for (; off1 < lim1; off1++)
			d1->rchg[d1->rindex[off1]] = 1;
	} else {
		split_point spl;
		spl.i1 = spl.i2 = 0;
		xsplit(ha1, off1, lim1, ha2, off2, lim2, kvdf, kvdb, need_min, &spl, aenv);
		recs_cmp(d1, off1, spl.i1, d2, off2, spl.i2, kvdf, kvdb, spl.min_lo, aenv);
		recs_cmp(d1, spl.i1, lim1, d2, spl.i2, lim2, kvdf, kvdb, spl.min_hi, aenv);
	}
}

/*
 * xdl_do_diff() for the Myers algorithm on two buffers: prepare (with
 * trimming and cleanup, as git does for this algorithm only), size the
 * diagonal arrays and the cost limit from the kept lines, and mark the
 * changed lines in env. 0, or -1 out of memory (env freed).
 */
int rq_xclassic_diff(rq_xdiff_env *env, const char *a, long na, const rq_xdiff_spans *as,
		     const char *b, long nb, const rq_xdiff_spans *bs)
{
	long ndiags, *kvd;
	algoenv aenv;

	if (rq_xprepare_env(env, a, na, as, b, nb, bs) < 0)
		return -1;
	trim_ends(&env->f1, &env->f2);
	if (cleanup_records(env) < 0) {
		rq_xdiff_env_free(env);
		return -1;
	}
	ndiags = env->f1.nreff + env->f2.nreff + 3;
	kvd = malloc((size_t)(2 * ndiags + 2) * sizeof(long));
	if (!kvd) {
		rq_xdiff_env_free(env);
		return -1;
	}
	/* kvd holds the forward and the backward vectors, each indexed by
	 * diagonal from -(nreff2 + 1) to nreff1 + 1 */
	aenv.mxcost = bogosqrt(ndiags);
	if (aenv.mxcost < XDL_MAX_COST_MIN)
		aenv.mxcost = XDL_MAX_COST_MIN;
	aenv.snake_cnt = XDL_SNAKE_CNT;
	aenv.heur_min = XDL_HEUR_MIN_COST;
	recs_cmp(&env->f1, 0, env->f1.nreff, &env->f2, 0, env->f2.nreff, kvd + env->f2.nreff + 1,
		 kvd + ndiags + env->f2.nreff + 1, 0, &aenv);
	free(kvd);
	return 0;
}
