/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's xdiff: xprepare.c, xdiffi.c, xhistogram.c (README: Credits) */
/*
 * rq_xdiff: the two-way line diff of the line merge, as git's xdiff
 * computes it for merge-ort (see rq_xdiff.h for what and why).
 *
 * The file reads top to bottom in the order a diff runs:
 *
 *  1. preparation (xprepare.c): split both buffers into lines and number
 *     the distinct lines in order of first appearance, file 1 first. The
 *     numbers matter beyond equality: the histogram diff hashes them into
 *     buckets and gives up on a bucket chain of 64 distinct lines, so the
 *     numbering must be git's for the same inputs to fail the same way;
 *  2. the classic diff (xdiffi.c: xdl_do_diff, xdl_recs_cmp, xdl_split),
 *     with the preparation the classic algorithm gets in git (xdl_trim_ends,
 *     xdl_cleanup_records) and xdiff's heuristics (a cost limit, a snake
 *     heuristic): the histogram diff falls back to it for regions where
 *     every common line is too frequent;
 *  3. the histogram diff (xhistogram.c): find the longest run of lines
 *     common to both regions that is made of the least frequent lines,
 *     recurse on both sides of it;
 *  4. the group sliding (xdl_change_compact) and the script
 *     (xdl_build_script).
 *
 * Differences from xdiff, none of which shows in a merge's result: no
 * whitespace or blank-line options (merge-ort passes none by default), no
 * patience or minimal algorithm, no indent heuristic, and the line hash
 * only numbers the lines (git's hash is not reproduced: the numbering by
 * first appearance is what the diff sees).
 */
#include "rq_xdiff.h"

#include "rq_hindex.h"
#include "rq_mem.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. preparation ------------------------------------------------------ */

/* A byte of 0x01 and of 0x80 in each lane of a word */
#define LANES_01 0x0101010101010101ull
#define LANES_80 0x8080808080808080ull

/*
 * The line that starts at p (before e): its length, its newline included,
 * and *hash, the same as rq_hindex_hash_bytes of it. One pass, a word at a
 * time: a word is tested for a newline byte (a zero byte of the word xor
 * newlines; the lowest lane the test flags is exact) and mixed into the
 * hash; the word that ends the line is cut after its newline.
 */
static long scan_line(const char *p, const char *e, uint64_t *hash)
{
	const unsigned char *s = (const unsigned char *)p, *q = s, *end = (const unsigned char *)e;
	uint64_t h = 0, w, t, nl;
	size_t k = 0;

	for (; end - q >= 8; q += 8) {
		w = rq_hindex_load64(q);
		t = w ^ (LANES_01 * '\n');
		nl = (t - LANES_01) & ~t & LANES_80;
		if (nl) {
			k = (size_t)__builtin_ctzll(nl) / 8 + 1;
			h = rq_hindex_mix(h, k < 8 ? w & ((1ull << (8 * k)) - 1) : w);
			q += k;
			*hash = rq_hindex_mix_end(h, (size_t)(q - s));
			return (long)(q - s);
		}
		h = rq_hindex_mix(h, w);
	}
	/* the last 0-7 bytes of the buffer */
	while (q + k < end && q[k++] != '\n')
		;
	w = 0;
	for (size_t i = k; i > 0; i--)
		w = w << 8 | q[i - 1];
	if (k)
		h = rq_hindex_mix(h, w);
	q += k;
	*hash = rq_hindex_mix_end(h, (size_t)(q - s));
	return (long)(q - s);
}

/*
 * Make f the records of one buffer (the splitting part of git's
 * xdl_prepare_ctx): a record per line, the newline kept in it, its hash in
 * ha until classify_file numbers it, and the change marks all clear, with
 * a zero sentinel on each side so that the group walks below never test
 * the array's bounds. A span (spans: NULL or sorted byte ranges that start
 * and end at line boundaries) is one record, whatever lines it holds. 0, or
 * -1 out of memory (the caller frees f).
 */
static int split_lines(rq_xdiff_file *f, const char *p, long n, const rq_xdiff_spans *spans)
{
	const char *s = p, *e = p + n;
	size_t cap = 0, sp = 0;
	long k = 0;
	rq_xdiff_rec *v;

	if (!(f->recs = rq_mem_grow(NULL, &cap, 1, sizeof(*f->recs), (size_t)n / 32 + 16)))
		return -1;
	while (p < e) {
		uint64_t h;
		long len;
		if (spans && sp < spans->n && spans->start[sp] == p - s) {
			len = spans->end[sp] - spans->start[sp];
			h = rq_hindex_hash_bytes(p, (size_t)len);
			sp++;
		} else {
			len = scan_line(p, e, &h);
		}
		if ((size_t)k + 2 > cap) {
			if (!(v = rq_mem_grow(f->recs, &cap, (size_t)k + 2, sizeof(*v), 16)))
				return -1;
			f->recs = v;
		}
		f->recs[k].ptr = p;
		f->recs[k].size = len;
		f->recs[k].ha = (unsigned long)h;
		k++;
		p += len;
	}
	f->nrec = k;
	if (!(f->rchg_mem = calloc((size_t)f->nrec + 2, 1)))
		return -1;
	f->rchg = f->rchg_mem + 1;
	f->dstart = 0;
	f->dend = f->nrec - 1;
	return 0;
}

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

/* The classifier's table: class c is first seen at line first[c]. */
typedef struct classifier {
	rq_hindex index; /* over first[] */
	const rq_xdiff_rec **first;
} classifier;

/*
 * rq_hindex's equality for the classifier: is class cls's first line equal
 * to line key (same bytes, newline included)?
 */
static int class_has_line(const void *ctx, size_t cls, const void *key)
{
	const rq_xdiff_rec *a = ((const classifier *)ctx)->first[cls], *b = key;
	return a->size == b->size && !memcmp(a->ptr, b->ptr, (size_t)b->size);
}

/*
 * Give every line of f its class (xdl_classify_record): the class of an
 * equal line seen before, else the next number. counts[] counts the lines of
 * each class in f, which the classic diff's cleanup uses (git keeps the same
 * counts per file in its classifier records).
 */
static void classify_file(rq_xdiff_env *env, classifier *classes, rq_xdiff_file *f, long *counts)
{
	for (long i = 0; i < f->nrec; i++) {
		rq_xdiff_rec *r = &f->recs[i];
		size_t h = (size_t)r->ha; /* the line's hash (split_lines) */
		long cls = rq_hindex_find(&classes->index, h, class_has_line, classes, r);
		if (cls < 0) {
			cls = env->nclass++;
			classes->first[cls] = r;
			rq_hindex_add(&classes->index, h, (size_t)cls);
		}
		r->ha = (unsigned long)cls;
		counts[cls]++;
	}
}

/*
 * Split both buffers and number the distinct lines in order of first
 * appearance, file 1 first (git's xdl_prepare_env with its classifier).
 * The table is sized once for every line of both files, at most half full,
 * so it never grows. 0, or -1 out of memory (env freed).
 */
static int env_prepare(rq_xdiff_env *env, const char *a, long na, const rq_xdiff_spans *as,
		       const char *b, long nb, const rq_xdiff_spans *bs)
{
	size_t nslot = 16, total;
	uint32_t *slots = NULL;
	classifier classes;

	memset(env, 0, sizeof(*env));
	memset(&classes, 0, sizeof(classes));
	if (split_lines(&env->f1, a, na, as) < 0 || split_lines(&env->f2, b, nb, bs) < 0)
		goto fail;
	total = (size_t)(env->f1.nrec + env->f2.nrec);
	while (nslot < total * 2)
		nslot <<= 1;
	slots = calloc(nslot, sizeof(*slots));
	classes.first = malloc((total + 1) * sizeof(*classes.first));
	env->len1 = calloc(total + 1, sizeof(*env->len1));
	env->len2 = calloc(total + 1, sizeof(*env->len2));
	if (!slots || !classes.first || !env->len1 || !env->len2)
		goto fail;
	/* an empty index over slots sized for every line (it never grows) */
	classes.index.slot = slots;
	classes.index.nslot = nslot;
	classify_file(env, &classes, &env->f1, env->len1);
	classify_file(env, &classes, &env->f2, env->len2);
	free(slots);
	free(classes.first);
	return 0;
fail:
	free(slots);
	free(classes.first);
	rq_xdiff_env_free(env);
	return -1;
}

/* ---- 2. the classic (Myers) diff with xdiff's heuristics ------------------ */

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
static int classic_diff(rq_xdiff_env *env, const char *a, long na, const rq_xdiff_spans *as,
			const char *b, long nb, const rq_xdiff_spans *bs)
{
	long ndiags, *kvd;
	algoenv aenv;

	if (env_prepare(env, a, na, as, b, nb, bs) < 0)
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

/* ---- 3. the histogram diff ------------------------------------------------ */

/*
 * The histogram diff (xhistogram.c, after JGit): in the region being
 * diffed, count how often each line of A occurs; for each line of B that
 * occurs in A, grow the common run around each of its occurrences, and keep
 * a run when it is longer than the best so far or made of rarer lines
 * (runs of rare lines are the anchors a reader would pick). The region is then split around
 * that run. A region where every common line occurs more than
 * MAX_CHAIN_LENGTH times has no good anchor: it goes to the classic diff.
 * Lines are indexed in buckets by class; git's index fails when one bucket
 * chains 64 distinct lines, and so does this (RQ_XDIFF_TOO_COMPLEX).
 */

/* xhistogram.c's limit: a line occurring more often than this in a region
 * is not used as an anchor, and a bucket chain this long fails the diff. */
#define MAX_CHAIN_LENGTH 64

/* One distinct line of region A in the index: its last occurrence scanned
 * (the lowest line number), how often it occurs, the next record in its
 * bucket. */
typedef struct histrec {
	unsigned int ptr, cnt;
	long next; /* index in the pool, -1 */
} histrec;

/* xhistogram.c's struct histindex, over region A (lines line1..). */
typedef struct histindex {
	rq_xdiff_env *env;
	long *buckets; /* chain heads by hashed class, -1 empty */
	histrec *pool;
	long npool;
	long *line_map;		 /* line - ptr_shift -> its record */
	unsigned int *next_ptrs; /* line - ptr_shift -> next occurrence of its class, 0 none */
	unsigned int table_bits, ptr_shift;
	unsigned int cnt;	 /* the lowest occurrence count of the best run so far */
	unsigned int has_common; /* some line of B occurs in A */
} histindex;

/* A common run: lines begin1..end1 of A equal begin2..end2 of B. */
typedef struct region {
	unsigned int begin1, end1, begin2, end2;
} region;

/*
 * xdl_hashbits(): the number of bits of a table of at least size entries
 * (at least 1), which sizes the histogram index's buckets.
 */
static unsigned int hashbits(unsigned int size)
{
	unsigned int val = 1, bits = 0;
	for (; val < size && bits < CHAR_BIT * sizeof(unsigned int); val <<= 1, bits++)
		;
	return bits ? bits : 1;
}

/* XDL_HASHLONG: a class number into b bits. */
static unsigned long hashlong(unsigned long v, unsigned int b)
{
	return (v + (v >> b)) & ((1UL << b) - 1);
}

/* The class of line l (1-based) of A, of B. */
#define CLASS_A(ix, l) ((ix)->env->f1.recs[(l)-1].ha)
#define CLASS_B(ix, l) ((ix)->env->f2.recs[(l)-1].ha)

/*
 * scan_a(): index region A from its last line to its first, so that each
 * record ends up at the first occurrence of its line and next_ptrs chains
 * the occurrences forward. -1 when a bucket's chain reaches
 * MAX_CHAIN_LENGTH distinct lines (xdiff fails there).
 */
static int scan_a(histindex *hist, unsigned int line1, unsigned int count1)
{
	/* from the last line up, so that each record ends at the first
	 * occurrence of its line, and next_ptrs links each occurrence to the
	 * next one down the file */
	for (unsigned int ptr = line1 + count1 - 1; line1 <= ptr; ptr--) {
		unsigned long tbl = hashlong(CLASS_A(hist, ptr), hist->table_bits);
		long r = hist->buckets[tbl];
		unsigned int chain_len = 0;
		int found = 0;
		while (r >= 0) {
			histrec *rec = &hist->pool[r];
			if (CLASS_A(hist, rec->ptr) == CLASS_A(hist, ptr)) {
				hist->next_ptrs[ptr - hist->ptr_shift] = rec->ptr;
				rec->ptr = ptr;
				if (rec->cnt < UINT_MAX)
					rec->cnt++;
				hist->line_map[ptr - hist->ptr_shift] = r;
				found = 1;
				break;
			}
			r = rec->next;
			chain_len++;
		}
		if (found) {
			if (ptr == 0) /* unsigned: do not wrap below line 0 */
				break;
			continue;
		}
		/* a new distinct line: git gives up when its bucket is full */
		if (chain_len == MAX_CHAIN_LENGTH)
			return -1;
		r = hist->npool++;
		hist->pool[r].ptr = ptr;
		hist->pool[r].cnt = 1;
		hist->pool[r].next = hist->buckets[tbl];
		hist->buckets[tbl] = r;
		hist->line_map[ptr - hist->ptr_shift] = r;
		if (ptr == 0)
			break;
	}
	return 0;
}

/* The occurrence count of line l of A (for the run's minimum). */
static inline unsigned int count_of_a(const histindex *hist, unsigned int l)
{
	return hist->pool[hist->line_map[l - hist->ptr_shift]].cnt;
}

/*
 * Grow the match of A's line as and B's line bs both ways while the lines
 * are equal (within the regions), keeping in *rc the lowest occurrence
 * count met; the run is left in *run. Part of try_lcs().
 */
static inline void extend_run(const histindex *hist, region *run, unsigned int *rc,
			      unsigned int line1, unsigned int end1, unsigned int line2,
			      unsigned int end2)
{
	unsigned int as = run->begin1, bs = run->begin2, ae = as, be = bs;

	while (line1 < as && line2 < bs && CLASS_A(hist, as - 1) == CLASS_B(hist, bs - 1)) {
		as--;
		bs--;
		if (1 < *rc) {
			unsigned int c = count_of_a(hist, as);
			*rc = *rc < c ? *rc : c;
		}
	}
	while (ae < end1 && be < end2 && CLASS_A(hist, ae + 1) == CLASS_B(hist, be + 1)) {
		ae++;
		be++;
		if (1 < *rc) {
			unsigned int c = count_of_a(hist, ae);
			*rc = *rc < c ? *rc : c;
		}
	}
	run->begin1 = as;
	run->begin2 = bs;
	run->end1 = ae;
	run->end2 = be;
}

/*
 * try_lcs(): for line b_ptr of B, try every occurrence in A of its line
 * (when that line is rare enough) as the seed of a common run, keep the
 * longest run of the rarest lines in *lcs. Returns the next line of B worth
 * trying (past the runs found).
 */
static unsigned int try_lcs(histindex *hist, region *lcs, unsigned int b_ptr, unsigned int line1,
			    unsigned int count1, unsigned int line2, unsigned int count2)
{
	unsigned int b_next = b_ptr + 1, end1 = line1 + count1 - 1, end2 = line2 + count2 - 1;
	long r = hist->buckets[hashlong(CLASS_B(hist, b_ptr), hist->table_bits)];

	for (; r >= 0; r = hist->pool[r].next) {
		histrec *rec = &hist->pool[r];
		unsigned int as = rec->ptr, np, rc;
		/* too frequent to beat the best run: only note that A and B
		 * have something in common (for the fallback decision) */
		if (rec->cnt > hist->cnt) {
			if (!hist->has_common)
				hist->has_common = CLASS_A(hist, rec->ptr) == CLASS_B(hist, b_ptr);
			continue;
		}
		if (CLASS_A(hist, as) != CLASS_B(hist, b_ptr))
			continue;
		hist->has_common = 1;
		for (;;) {
			region run = {as, as, b_ptr, b_ptr};
			np = hist->next_ptrs[as - hist->ptr_shift];
			rc = rec->cnt;
			extend_run(hist, &run, &rc, line1, end1, line2, end2);
			if (b_next <= run.end2)
				b_next = run.end2 + 1;
			if (lcs->end1 - lcs->begin1 < run.end1 - run.begin1 || rc < hist->cnt) {
				*lcs = run;
				hist->cnt = rc;
			}
			/* the next occurrence in A past this run, if any */
			while (np && np <= run.end1)
				np = hist->next_ptrs[np - hist->ptr_shift];
			if (np == 0)
				break;
			as = np;
		}
	}
	return b_next;
}

/*
 * find_lcs(): index region A, then look for the best common run from every
 * line of B (try_lcs returns the next line worth trying). The index is built
 * per region, as in git, which is what makes the chain limit apply per
 * region. Returns 0 (the run is in *lcs, or there is none: lcs left zero), 1
 * (there are common lines, but all too frequent: the caller falls back to the
 * classic diff for the region), RQ_XDIFF_NOMEM or RQ_XDIFF_TOO_COMPLEX.
 */
static int find_lcs(rq_xdiff_env *env, region *lcs, unsigned int line1, unsigned int count1,
		    unsigned int line2, unsigned int count2)
{
	histindex hist;
	int ret = RQ_XDIFF_NOMEM;
	size_t nb;

	memset(&hist, 0, sizeof(hist));
	hist.env = env;
	hist.table_bits = hashbits(count1);
	nb = (size_t)1 << hist.table_bits;
	hist.buckets = malloc(nb * sizeof(*hist.buckets));
	hist.pool = malloc((size_t)count1 * sizeof(*hist.pool));
	hist.line_map = malloc((size_t)count1 * sizeof(*hist.line_map));
	hist.next_ptrs = calloc((size_t)count1, sizeof(*hist.next_ptrs));
	if (!hist.buckets || !hist.pool || !hist.line_map || !hist.next_ptrs)
		goto out;
	for (size_t i = 0; i < nb; i++)
		hist.buckets[i] = -1;
	hist.ptr_shift = line1;
	if (scan_a(&hist, line1, count1) < 0) {
		ret = RQ_XDIFF_TOO_COMPLEX;
		goto out;
	}
	/* any run of lines occurring at most MAX_CHAIN_LENGTH times beats none */
	hist.cnt = MAX_CHAIN_LENGTH + 1;
	for (unsigned int b_ptr = line2; b_ptr <= line2 + count2 - 1;)
		b_ptr = try_lcs(&hist, lcs, b_ptr, line1, count1, line2, count2);
	ret = (hist.has_common && MAX_CHAIN_LENGTH < hist.cnt) ? 1 : 0;
out:
	free(hist.buckets);
	free(hist.pool);
	free(hist.line_map);
	free(hist.next_ptrs);
	return ret;
}

/*
 * The spans among count records of f from index from (0-based): the records
 * holding more than one line, as byte ranges from the first record's start,
 * into start[] and end[] (room for count each).
 */
static void region_spans(const rq_xdiff_file *f, long from, long count, long *start, long *end,
			 rq_xdiff_spans *out)
{
	const char *origin = f->recs[from].ptr;

	out->start = start;
	out->end = end;
	out->n = 0;
	for (long i = from; i < from + count; i++) {
		const rq_xdiff_rec *r = &f->recs[i];
		if (r->size < 2 || !memchr(r->ptr, '\n', (size_t)r->size - 1))
			continue;
		start[out->n] = (long)(r->ptr - origin);
		end[out->n++] = (long)(r->ptr + r->size - origin);
	}
}

/*
 * fall_back_to_classic_diff(): diff the region with the classic algorithm
 * in an environment of its own (git's xdl_fall_back_diff builds one from
 * the region's bytes too, so the classes and heuristics are those of the
 * region alone), and copy its change marks back. 0, or RQ_XDIFF_NOMEM.
 */
static int fall_back_to_classic_diff(rq_xdiff_env *env, long line1, long count1, long line2,
				     long count2)
{
	const rq_xdiff_rec *a0 = &env->f1.recs[line1 - 1], *a1 = &env->f1.recs[line1 + count1 - 2];
	const rq_xdiff_rec *b0 = &env->f2.recs[line2 - 1], *b1 = &env->f2.recs[line2 + count2 - 2];
	long *sv = NULL;
	rq_xdiff_spans as = {NULL, NULL, 0}, bs = {NULL, NULL, 0};
	rq_xdiff_env sub;
	int rc = 0;

	if (env->has_spans) {
		/* the region's spans, relative to its first byte */
		if (!(sv = malloc((size_t)(count1 + count2) * 2 * sizeof(*sv))))
			return RQ_XDIFF_NOMEM;
		region_spans(&env->f1, line1 - 1, count1, sv, sv + count1, &as);
		region_spans(&env->f2, line2 - 1, count2, sv + 2 * count1, sv + 2 * count1 + count2,
			     &bs);
	}
	if (classic_diff(&sub, a0->ptr, (long)(a1->ptr + a1->size - a0->ptr), &as, b0->ptr,
			 (long)(b1->ptr + b1->size - b0->ptr), &bs) < 0) {
		rc = RQ_XDIFF_NOMEM;
	} else {
		memcpy(env->f1.rchg + line1 - 1, sub.f1.rchg, (size_t)count1);
		memcpy(env->f2.rchg + line2 - 1, sub.f2.rchg, (size_t)count2);
		rq_xdiff_env_free(&sub);
	}
	free(sv);
	return rc;
}

/* Mark count lines of f from line (1-based) changed. */
static void mark_changed(rq_xdiff_file *f, long line, long count)
{
	while (count--)
		f->rchg[line++ - 1] = 1;
}

/*
 * histogram_diff(): diff lines line1.. (count1) of A against line2..
 * (count2) of B: anchor on the best common run, recurse on what lies before
 * it and loop on what lies after it (as git does, to bound the recursion).
 * A region without any common run is all changed. 0, RQ_XDIFF_NOMEM or
 * RQ_XDIFF_TOO_COMPLEX.
 */
static int histogram_diff(rq_xdiff_env *env, long line1, long count1, long line2, long count2)
{
	for (;;) {
		region lcs;
		int found;

		if (count1 <= 0 && count2 <= 0)
			return 0;
		if (!count1 || !count2) {
			mark_changed(&env->f2, line2, count2);
			mark_changed(&env->f1, line1, count1);
			return 0;
		}
		memset(&lcs, 0, sizeof(lcs));
		found = find_lcs(env, &lcs, (unsigned int)line1, (unsigned int)count1,
				 (unsigned int)line2, (unsigned int)count2);
		if (found < 0)
			return found;
		if (found)
			return fall_back_to_classic_diff(env, line1, count1, line2, count2);
		/* no common run at all (line numbers are 1-based: 0 is unset) */
		if (lcs.begin1 == 0 && lcs.begin2 == 0) {
			mark_changed(&env->f1, line1, count1);
			mark_changed(&env->f2, line2, count2);
			return 0;
		}
		found = histogram_diff(env, line1, (long)lcs.begin1 - line1, line2,
				       (long)lcs.begin2 - line2);
		if (found)
			return found;
		count1 = line1 + count1 - 1 - (long)lcs.end1;
		line1 = (long)lcs.end1 + 1;
		count2 = line2 + count2 - 1 - (long)lcs.end2;
		line2 = (long)lcs.end2 + 1;
	}
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
	if (env_prepare(env, a, na, as, b, nb, bs) < 0)
		return RQ_XDIFF_NOMEM;
	env->has_spans = (as && as->n) || (bs && bs->n);
	r = histogram_diff(env, 1, env->f1.nrec, 1, env->f2.nrec);
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
