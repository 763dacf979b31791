/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's xdiff: xmerge.c and xhistogram.c (README: Credits) */
/*
 * rq_treemerge_xdiff: the 3-way merge of one text file, as git's merge-ort
 * does it (ll_merge -> xdl_merge, level XDL_MERGE_ZEALOUS, histogram diff).
 *
 * libgit2's git_merge_file() is not usable here: it always diffs with the
 * myers algorithm, while merge-ort hard-codes histogram diff, and the two
 * disagree on a few percent of real merges. This file re-implements the
 * parts of xdiff that decide a merge: lines split after each LF, lines
 * grouped in classes of equal content, the histogram diff (with its
 * fallback to the classic myers diff for regions whose common lines are
 * all too frequent), the sliding of change groups (xdl_change_compact
 * without the indent heuristic), the edit script, and the merge of the two
 * scripts (identical changes are clean; overlapping changes are a conflict
 * unless both sides end up with the same text). Only clean results are
 * produced; a conflict is reported without content.
 */
#include "rq_treemerge.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct xrec {
	const char *ptr;
	long size;
	unsigned long ha; /* class index */
} xrec;

typedef struct xfile {
	xrec *recs;
	long nrec;
	char *rchg_mem;
	char *rchg; /* rchg[-1] and rchg[nrec] are 0 */
	long dstart, dend;
	long *rindex;	   /* myers only */
	unsigned long *ha; /* myers only */
	long nreff;
} xfile;

typedef struct xenv {
	xfile f1, f2;
	long *len1, *len2; /* occurrences of each class in each file */
	long nclass;
} xenv;

typedef struct xchange {
	long i1, i2, chg1, chg2;
} xchange;

/* ---- preparation ------------------------------------------------------- */

static long count_lines(const char *p, long n)
{
	long k = 0;
	const char *e = p + n;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		k++;
		p = nl ? nl + 1 : e;
	}
	return k;
}

static int split(xfile *f, const char *p, long n)
{
	const char *e = p + n;
	long k = 0;

	f->nrec = count_lines(p, n);
	f->recs = malloc((size_t)(f->nrec + 1) * sizeof(*f->recs));
	f->rchg_mem = calloc((size_t)f->nrec + 2, 1);
	if (!f->recs || !f->rchg_mem)
		return -1;
	f->rchg = f->rchg_mem + 1;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *end = nl ? nl + 1 : e;
		f->recs[k].ptr = p;
		f->recs[k].size = (long)(end - p);
		k++;
		p = end;
	}
	f->dstart = 0;
	f->dend = f->nrec - 1;
	return 0;
}

static uint64_t line_hash(const char *p, long n)
{
	uint64_t h = 1469598103934665603ull;
	for (long i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ull;
	}
	return h;
}

static void xenv_free(xenv *e)
{
	free(e->f1.recs);
	free(e->f1.rchg_mem);
	free(e->f1.rindex);
	free(e->f1.ha);
	free(e->f2.recs);
	free(e->f2.rchg_mem);
	free(e->f2.rindex);
	free(e->f2.ha);
	free(e->len1);
	free(e->len2);
	memset(e, 0, sizeof(*e));
}

/* Split both files and number the distinct lines in order of appearance
 * (file 1 first), like xdl_prepare_env()'s classifier. */
static int xenv_prepare(xenv *e, const char *a, long na, const char *b, long nb)
{
	size_t tabsz = 16, total;
	long *tab = NULL;
	xrec **first = NULL;

	memset(e, 0, sizeof(*e));
	if (split(&e->f1, a, na) < 0 || split(&e->f2, b, nb) < 0)
		goto fail;
	total = (size_t)(e->f1.nrec + e->f2.nrec);
	while (tabsz < total * 2)
		tabsz <<= 1;
	tab = malloc(tabsz * sizeof(*tab));
	first = malloc((total + 1) * sizeof(*first));
	e->len1 = calloc(total + 1, sizeof(*e->len1));
	e->len2 = calloc(total + 1, sizeof(*e->len2));
	if (!tab || !first || !e->len1 || !e->len2)
		goto fail;
	memset(tab, 0xff, tabsz * sizeof(*tab));
	for (int pass = 1; pass <= 2; pass++) {
		xfile *f = pass == 1 ? &e->f1 : &e->f2;
		for (long i = 0; i < f->nrec; i++) {
			xrec *r = &f->recs[i];
			size_t h = (size_t)line_hash(r->ptr, r->size) & (tabsz - 1);
			long cls = -1;
			while (tab[h] >= 0) {
				xrec *o = first[tab[h]];
				if (o->size == r->size &&
				    !memcmp(o->ptr, r->ptr, (size_t)r->size)) {
					cls = tab[h];
					break;
				}
				h = (h + 1) & (tabsz - 1);
			}
			if (cls < 0) {
				cls = e->nclass++;
				tab[h] = cls;
				first[cls] = r;
			}
			r->ha = (unsigned long)cls;
			if (pass == 1)
				e->len1[cls]++;
			else
				e->len2[cls]++;
		}
	}
	free(tab);
	free(first);
	return 0;
fail:
	free(tab);
	free(first);
	xenv_free(e);
	return -1;
}

/* ---- the classic (myers) diff with xdiff's heuristics ------------------- */

#define XDL_MAX_COST_MIN   256
#define XDL_HEUR_MIN_COST  256
#define XDL_LINE_MAX	   (long)((1UL << (CHAR_BIT * sizeof(long) - 1)) - 1)
#define XDL_SNAKE_CNT	   20
#define XDL_K_HEUR	   4
#define XDL_KPDIS_RUN	   4
#define XDL_MAX_EQLIMIT	   1024
#define XDL_SIMSCAN_WINDOW 100

static long bogosqrt(long n)
{
	long i;
	for (i = 1; n > 0; n >>= 2)
		i <<= 1;
	return i;
}

static void trim_ends(xfile *f1, xfile *f2)
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

static int clean_mmatch(const char *dis, long i, long s, long e)
{
	long r, rdis0, rpdis0, rdis1, rpdis1;

	if (i - s > XDL_SIMSCAN_WINDOW)
		s = i - XDL_SIMSCAN_WINDOW;
	if (e - i > XDL_SIMSCAN_WINDOW)
		e = i + XDL_SIMSCAN_WINDOW;
	for (r = 1, rdis0 = 0, rpdis0 = 1; (i - r) >= s; r++) {
		if (!dis[i - r])
			rdis0++;
		else if (dis[i - r] == 2)
			rpdis0++;
		else
			break;
	}
	if (rdis0 == 0)
		return 0;
	for (r = 1, rdis1 = 0, rpdis1 = 1; (i + r) <= e; r++) {
		if (!dis[i + r])
			rdis1++;
		else if (dis[i + r] == 2)
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

/* Discard lines without a match on the other side (and runs of lines with
 * too many matches among them), as xdl_cleanup_records() does. */
static int cleanup_records(xenv *e)
{
	xfile *f1 = &e->f1, *f2 = &e->f2;
	char *dis = calloc((size_t)(f1->nrec + f2->nrec + 2), 1), *dis1, *dis2;
	long i, mlim;

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
	if ((mlim = bogosqrt(f1->nrec)) > XDL_MAX_EQLIMIT)
		mlim = XDL_MAX_EQLIMIT;
	for (i = f1->dstart; i <= f1->dend; i++) {
		long nm = e->len2[f1->recs[i].ha];
		dis1[i] = (nm == 0) ? 0 : (nm >= mlim) ? 2 : 1;
	}
	if ((mlim = bogosqrt(f2->nrec)) > XDL_MAX_EQLIMIT)
		mlim = XDL_MAX_EQLIMIT;
	for (i = f2->dstart; i <= f2->dend; i++) {
		long nm = e->len1[f2->recs[i].ha];
		dis2[i] = (nm == 0) ? 0 : (nm >= mlim) ? 2 : 1;
	}
	f1->nreff = 0;
	for (i = f1->dstart; i <= f1->dend; i++) {
		if (dis1[i] == 1 ||
		    (dis1[i] == 2 && !clean_mmatch(dis1, i, f1->dstart, f1->dend))) {
			f1->rindex[f1->nreff] = i;
			f1->ha[f1->nreff] = f1->recs[i].ha;
			f1->nreff++;
		} else {
			f1->rchg[i] = 1;
		}
	}
	f2->nreff = 0;
	for (i = f2->dstart; i <= f2->dend; i++) {
		if (dis2[i] == 1 ||
		    (dis2[i] == 2 && !clean_mmatch(dis2, i, f2->dstart, f2->dend))) {
			f2->rindex[f2->nreff] = i;
			f2->ha[f2->nreff] = f2->recs[i].ha;
			f2->nreff++;
		} else {
			f2->rchg[i] = 1;
		}
	}
	free(dis);
	return 0;
}

typedef struct split_t {
	long i1, i2;
	int min_lo, min_hi;
} split_t;

typedef struct algoenv {
	long mxcost, snake_cnt, heur_min;
} algoenv;

static long xsplit(unsigned long const *ha1, long off1, long lim1, unsigned long const *ha2,
		   long off2, long lim2, long *kvdf, long *kvdb, int need_min, split_t *spl,
		   const algoenv *aenv)
{
	long dmin = off1 - lim2, dmax = lim1 - off2;
	long fmid = off1 - off2, bmid = lim1 - lim2;
	long odd = (fmid - bmid) & 1;
	long fmin = fmid, fmax = fmid;
	long bmin = bmid, bmax = bmid;
	long ec, d, i1, i2, prev1, best, dd, v, k;

	kvdf[fmid] = off1;
	kvdb[bmid] = lim1;
	for (ec = 1;; ec++) {
		int got_snake = 0;

		if (fmin > dmin)
			kvdf[--fmin - 1] = -1;
		else
			++fmin;
		if (fmax < dmax)
			kvdf[++fmax + 1] = -1;
		else
			--fmax;
		for (d = fmax; d >= fmin; d -= 2) {
			if (kvdf[d - 1] >= kvdf[d + 1])
				i1 = kvdf[d - 1] + 1;
			else
				i1 = kvdf[d + 1];
			prev1 = i1;
			i2 = i1 - d;
			for (; i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2]; i1++, i2++)
				;
			if (i1 - prev1 > aenv->snake_cnt)
				got_snake = 1;
			kvdf[d] = i1;
			if (odd && bmin <= d && d <= bmax && kvdb[d] <= i1) {
				spl->i1 = i1;
				spl->i2 = i2;
				spl->min_lo = spl->min_hi = 1;
				return ec;
			}
		}
		if (bmin > dmin)
			kvdb[--bmin - 1] = XDL_LINE_MAX;
		else
			++bmin;
		if (bmax < dmax)
			kvdb[++bmax + 1] = XDL_LINE_MAX;
		else
			--bmax;
		for (d = bmax; d >= bmin; d -= 2) {
			if (kvdb[d - 1] < kvdb[d + 1])
				i1 = kvdb[d - 1];
			else
				i1 = kvdb[d + 1] - 1;
			prev1 = i1;
			i2 = i1 - d;
			for (; i1 > off1 && i2 > off2 && ha1[i1 - 1] == ha2[i2 - 1]; i1--, i2--)
				;
			if (prev1 - i1 > aenv->snake_cnt)
				got_snake = 1;
			kvdb[d] = i1;
			if (!odd && fmin <= d && d <= fmax && i1 <= kvdf[d]) {
				spl->i1 = i1;
				spl->i2 = i2;
				spl->min_lo = spl->min_hi = 1;
				return ec;
			}
		}
		if (need_min)
			continue;
		if (got_snake && ec > aenv->heur_min) {
			for (best = 0, d = fmax; d >= fmin; d -= 2) {
				dd = d > fmid ? d - fmid : fmid - d;
				i1 = kvdf[d];
				i2 = i1 - d;
				v = (i1 - off1) + (i2 - off2) - dd;
				if (v > XDL_K_HEUR * ec && v > best &&
				    off1 + aenv->snake_cnt <= i1 && i1 < lim1 &&
				    off2 + aenv->snake_cnt <= i2 && i2 < lim2) {
					for (k = 1; ha1[i1 - k] == ha2[i2 - k]; k++)
						if (k == aenv->snake_cnt) {
							best = v;
							spl->i1 = i1;
							spl->i2 = i2;
							break;
						}
				}
			}
			if (best > 0) {
				spl->min_lo = 1;
				spl->min_hi = 0;
				return ec;
			}
			for (best = 0, d = bmax; d >= bmin; d -= 2) {
				dd = d > bmid ? d - bmid : bmid - d;
				i1 = kvdb[d];
				i2 = i1 - d;
				v = (lim1 - i1) + (lim2 - i2) - dd;
				if (v > XDL_K_HEUR * ec && v > best && off1 < i1 &&
				    i1 <= lim1 - aenv->snake_cnt && off2 < i2 &&
				    i2 <= lim2 - aenv->snake_cnt) {
					for (k = 0; ha1[i1 + k] == ha2[i2 + k]; k++)
						if (k == aenv->snake_cnt - 1) {
							best = v;
							spl->i1 = i1;
							spl->i2 = i2;
							break;
						}
				}
			}
			if (best > 0) {
				spl->min_lo = 0;
				spl->min_hi = 1;
				return ec;
			}
		}
		if (ec >= aenv->mxcost) {
			long fbest, fbest1, bbest, bbest1;

			fbest = fbest1 = -1;
			for (d = fmax; d >= fmin; d -= 2) {
				i1 = kvdf[d] < lim1 ? kvdf[d] : lim1;
				i2 = i1 - d;
				if (lim2 < i2)
					i1 = lim2 + d, i2 = lim2;
				if (fbest < i1 + i2) {
					fbest = i1 + i2;
					fbest1 = i1;
				}
			}
			bbest = bbest1 = XDL_LINE_MAX;
			for (d = bmax; d >= bmin; d -= 2) {
				i1 = off1 > kvdb[d] ? off1 : kvdb[d];
				i2 = i1 - d;
				if (i2 < off2)
					i1 = off2 + d, i2 = off2;
				if (i1 + i2 < bbest) {
					bbest = i1 + i2;
					bbest1 = i1;
				}
			}
			if ((lim1 + lim2) - bbest < fbest - (off1 + off2)) {
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
			return ec;
		}
	}
}

static void recs_cmp(xfile *d1, long off1, long lim1, xfile *d2, long off2, long lim2, long *kvdf,
		     long *kvdb, int need_min, const algoenv *aenv)
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
		split_t spl;
		spl.i1 = spl.i2 = 0;
		xsplit(ha1, off1, lim1, ha2, off2, lim2, kvdf, kvdb, need_min, &spl, aenv);
		recs_cmp(d1, off1, spl.i1, d2, off2, spl.i2, kvdf, kvdb, spl.min_lo, aenv);
		recs_cmp(d1, spl.i1, lim1, d2, spl.i2, lim2, kvdf, kvdb, spl.min_hi, aenv);
	}
}

/* xdl_do_diff() without algorithm flags, on two buffers. */
static int classic_diff(xenv *e, const char *a, long na, const char *b, long nb)
{
	long ndiags, *kvd;
	algoenv aenv;

	if (xenv_prepare(e, a, na, b, nb) < 0)
		return -1;
	trim_ends(&e->f1, &e->f2);
	if (cleanup_records(e) < 0) {
		xenv_free(e);
		return -1;
	}
	ndiags = e->f1.nreff + e->f2.nreff + 3;
	kvd = malloc((size_t)(2 * ndiags + 2) * sizeof(long));
	if (!kvd) {
		xenv_free(e);
		return -1;
	}
	aenv.mxcost = bogosqrt(ndiags);
	if (aenv.mxcost < XDL_MAX_COST_MIN)
		aenv.mxcost = XDL_MAX_COST_MIN;
	aenv.snake_cnt = XDL_SNAKE_CNT;
	aenv.heur_min = XDL_HEUR_MIN_COST;
	recs_cmp(&e->f1, 0, e->f1.nreff, &e->f2, 0, e->f2.nreff, kvd + e->f2.nreff + 1,
		 kvd + ndiags + e->f2.nreff + 1, 0, &aenv);
	free(kvd);
	return 0;
}

/* ---- histogram diff --------------------------------------------------------- */

#define MAX_CHAIN_LENGTH 64

typedef struct hrec {
	unsigned int ptr, cnt;
	long next; /* index in the pool, -1 */
} hrec;

typedef struct hindex {
	xenv *env;
	long *buckets; /* table of chain heads */
	hrec *pool;
	long npool;
	long *line_map; /* line -> record */
	unsigned int *next_ptrs;
	unsigned int table_bits, ptr_shift, cnt, has_common;
} hindex;

typedef struct region {
	unsigned int begin1, end1, begin2, end2;
} region;

static unsigned int hashbits(unsigned int size)
{
	unsigned int val = 1, bits = 0;
	for (; val < size && bits < CHAR_BIT * sizeof(unsigned int); val <<= 1, bits++)
		;
	return bits ? bits : 1;
}

static unsigned long hashlong(unsigned long v, unsigned int b)
{
	return (v + (v >> b)) & ((1UL << b) - 1);
}

#define REC1(ix, l) ((ix)->env->f1.recs[(l)-1].ha)
#define REC2(ix, l) ((ix)->env->f2.recs[(l)-1].ha)

static int scan_a(hindex *ix, unsigned int line1, unsigned int count1)
{
	for (unsigned int ptr = line1 + count1 - 1; line1 <= ptr; ptr--) {
		unsigned long tbl = hashlong(REC1(ix, ptr), ix->table_bits);
		long r = ix->buckets[tbl];
		unsigned int chain_len = 0;
		int found = 0;
		while (r >= 0) {
			hrec *rec = &ix->pool[r];
			if (REC1(ix, rec->ptr) == REC1(ix, ptr)) {
				ix->next_ptrs[ptr - ix->ptr_shift] = rec->ptr;
				rec->ptr = ptr;
				if (rec->cnt < UINT_MAX)
					rec->cnt++;
				ix->line_map[ptr - ix->ptr_shift] = r;
				found = 1;
				break;
			}
			r = rec->next;
			chain_len++;
		}
		if (found) {
			if (ptr == 0)
				break;
			continue;
		}
		if (chain_len == MAX_CHAIN_LENGTH)
			return -1;
		r = ix->npool++;
		ix->pool[r].ptr = ptr;
		ix->pool[r].cnt = 1;
		ix->pool[r].next = ix->buckets[tbl];
		ix->buckets[tbl] = r;
		ix->line_map[ptr - ix->ptr_shift] = r;
		if (ptr == 0)
			break;
	}
	return 0;
}

static unsigned int try_lcs(hindex *ix, region *lcs, unsigned int b_ptr, unsigned int line1,
			    unsigned int count1, unsigned int line2, unsigned int count2)
{
	unsigned int b_next = b_ptr + 1;
	long r = ix->buckets[hashlong(REC2(ix, b_ptr), ix->table_bits)];
	unsigned int as, ae, bs, be, np, rc;
	unsigned int end1 = line1 + count1 - 1, end2 = line2 + count2 - 1;

	for (; r >= 0; r = ix->pool[r].next) {
		hrec *rec = &ix->pool[r];
		if (rec->cnt > ix->cnt) {
			if (!ix->has_common)
				ix->has_common = REC1(ix, rec->ptr) == REC2(ix, b_ptr);
			continue;
		}
		as = rec->ptr;
		if (REC1(ix, as) != REC2(ix, b_ptr))
			continue;
		ix->has_common = 1;
		for (;;) {
			int should_break = 0;
			np = ix->next_ptrs[as - ix->ptr_shift];
			bs = b_ptr;
			ae = as;
			be = bs;
			rc = rec->cnt;
			while (line1 < as && line2 < bs && REC1(ix, as - 1) == REC2(ix, bs - 1)) {
				as--;
				bs--;
				if (1 < rc) {
					unsigned int c =
					    ix->pool[ix->line_map[as - ix->ptr_shift]].cnt;
					rc = rc < c ? rc : c;
				}
			}
			while (ae < end1 && be < end2 && REC1(ix, ae + 1) == REC2(ix, be + 1)) {
				ae++;
				be++;
				if (1 < rc) {
					unsigned int c =
					    ix->pool[ix->line_map[ae - ix->ptr_shift]].cnt;
					rc = rc < c ? rc : c;
				}
			}
			if (b_next <= be)
				b_next = be + 1;
			if (lcs->end1 - lcs->begin1 < ae - as || rc < ix->cnt) {
				lcs->begin1 = as;
				lcs->begin2 = bs;
				lcs->end1 = ae;
				lcs->end2 = be;
				ix->cnt = rc;
			}
			if (np == 0)
				break;
			while (np <= ae) {
				np = ix->next_ptrs[np - ix->ptr_shift];
				if (np == 0) {
					should_break = 1;
					break;
				}
			}
			if (should_break)
				break;
			as = np;
		}
	}
	return b_next;
}

/* 0: lcs found (or none), 1: fall back to the classic diff, -1: error,
 * RQ_XMERGE_TOO_COMPLEX: xdiff would fail (a hash chain of 64 distinct lines) */
static int find_lcs(xenv *env, region *lcs, unsigned int line1, unsigned int count1,
		    unsigned int line2, unsigned int count2)
{
	hindex ix;
	int ret = -1;
	size_t nb;

	memset(&ix, 0, sizeof(ix));
	ix.env = env;
	ix.table_bits = hashbits(count1);
	nb = (size_t)1 << ix.table_bits;
	ix.buckets = malloc(nb * sizeof(*ix.buckets));
	ix.pool = malloc((size_t)count1 * sizeof(*ix.pool));
	ix.line_map = malloc((size_t)count1 * sizeof(*ix.line_map));
	ix.next_ptrs = calloc((size_t)count1, sizeof(*ix.next_ptrs));
	if (!ix.buckets || !ix.pool || !ix.line_map || !ix.next_ptrs)
		goto out;
	for (size_t i = 0; i < nb; i++)
		ix.buckets[i] = -1;
	ix.ptr_shift = line1;
	if (scan_a(&ix, line1, count1) < 0) {
		ret = RQ_XMERGE_TOO_COMPLEX;
		goto out;
	}
	ix.cnt = MAX_CHAIN_LENGTH + 1;
	for (unsigned int b_ptr = line2; b_ptr <= line2 + count2 - 1;)
		b_ptr = try_lcs(&ix, lcs, b_ptr, line1, count1, line2, count2);
	ret = (ix.has_common && MAX_CHAIN_LENGTH < ix.cnt) ? 1 : 0;
out:
	free(ix.buckets);
	free(ix.pool);
	free(ix.line_map);
	free(ix.next_ptrs);
	return ret;
}

static int fall_back_to_classic_diff(xenv *env, long line1, long count1, long line2, long count2)
{
	const xrec *a0 = &env->f1.recs[line1 - 1], *a1 = &env->f1.recs[line1 + count1 - 2];
	const xrec *b0 = &env->f2.recs[line2 - 1], *b1 = &env->f2.recs[line2 + count2 - 2];
	xenv sub;

	if (classic_diff(&sub, a0->ptr, (long)(a1->ptr + a1->size - a0->ptr), b0->ptr,
			 (long)(b1->ptr + b1->size - b0->ptr)) < 0)
		return -1;
	memcpy(env->f1.rchg + line1 - 1, sub.f1.rchg, (size_t)count1);
	memcpy(env->f2.rchg + line2 - 1, sub.f2.rchg, (size_t)count2);
	xenv_free(&sub);
	return 0;
}

static int histogram_diff(xenv *env, long line1, long count1, long line2, long count2)
{
	for (;;) {
		region lcs;
		int found;

		if (count1 <= 0 && count2 <= 0)
			return 0;
		if (!count1) {
			while (count2--)
				env->f2.rchg[line2++ - 1] = 1;
			return 0;
		} else if (!count2) {
			while (count1--)
				env->f1.rchg[line1++ - 1] = 1;
			return 0;
		}
		memset(&lcs, 0, sizeof(lcs));
		found = find_lcs(env, &lcs, (unsigned int)line1, (unsigned int)count1,
				 (unsigned int)line2, (unsigned int)count2);
		if (found < 0)
			return found;
		if (found)
			return fall_back_to_classic_diff(env, line1, count1, line2, count2);
		if (lcs.begin1 == 0 && lcs.begin2 == 0) {
			while (count1--)
				env->f1.rchg[line1++ - 1] = 1;
			while (count2--)
				env->f2.rchg[line2++ - 1] = 1;
			return 0;
		}
		{
			int r = histogram_diff(env, line1, (long)lcs.begin1 - line1, line2,
					       (long)lcs.begin2 - line2);
			if (r)
				return r;
		}
		{
			long end1 = line1 + count1 - 1, end2 = line2 + count2 - 1;
			count1 = end1 - (long)lcs.end1;
			line1 = (long)lcs.end1 + 1;
			count2 = end2 - (long)lcs.end2;
			line2 = (long)lcs.end2 + 1;
		}
	}
}

/* ---- compaction and edit script ---------------------------------------------- */

typedef struct xgroup {
	long start, end;
} xgroup;

static void group_init(xfile *f, xgroup *g)
{
	g->start = g->end = 0;
	while (f->rchg[g->end])
		g->end++;
}

static int group_next(xfile *f, xgroup *g)
{
	if (g->end == f->nrec)
		return -1;
	g->start = g->end + 1;
	for (g->end = g->start; f->rchg[g->end]; g->end++)
		;
	return 0;
}

static int group_previous(xfile *f, xgroup *g)
{
	if (g->start == 0)
		return -1;
	g->end = g->start - 1;
	for (g->start = g->end; f->rchg[g->start - 1]; g->start--)
		;
	return 0;
}

static int group_slide_down(xfile *f, xgroup *g)
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

static int group_slide_up(xfile *f, xgroup *g)
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

/* xdl_change_compact() without the indent heuristic; -1 on a broken sync. */
static int change_compact(xfile *f, xfile *fo)
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

static int build_script(xenv *e, xchange **out, size_t *nout)
{
	char *rchg1 = e->f1.rchg, *rchg2 = e->f2.rchg;
	long i1, i2, l1, l2;
	size_t n = 0, cap = 0;
	xchange *v = NULL;

	for (i1 = e->f1.nrec, i2 = e->f2.nrec; i1 >= 0 || i2 >= 0; i1--, i2--) {
		if (i1 < 0 || i2 < 0) {
			free(v);
			return -1;
		}
		if (rchg1[i1 - 1] || rchg2[i2 - 1]) {
			for (l1 = i1; rchg1[i1 - 1]; i1--)
				;
			for (l2 = i2; rchg2[i2 - 1]; i2--)
				;
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 16;
				xchange *nv = realloc(v, ncap * sizeof(*nv));
				if (!nv) {
					free(v);
					return -1;
				}
				v = nv;
				cap = ncap;
			}
			v[n].i1 = i1;
			v[n].i2 = i2;
			v[n].chg1 = l1 - i1;
			v[n].chg2 = l2 - i2;
			n++;
		}
	}
	/* collected from the end: reverse */
	for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
		xchange t = v[a];
		v[a] = v[b];
		v[b] = t;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* Diff base -> side with the histogram algorithm: environment and script. */
static int diff_histogram(xenv *e, const char *a, long na, const char *b, long nb, xchange **scr,
			  size_t *nscr)
{
	int r;
	if (xenv_prepare(e, a, na, b, nb) < 0)
		return -1;
	r = histogram_diff(e, 1, e->f1.nrec, 1, e->f2.nrec);
	if (r == 0 && (change_compact(&e->f1, &e->f2) < 0 || change_compact(&e->f2, &e->f1) < 0))
		r = RQ_XMERGE_TOO_COMPLEX;
	if (r == 0)
		r = build_script(e, scr, nscr);
	if (r < 0)
		xenv_free(e);
	return r;
}

/* ---- merge ------------------------------------------------------------------ */

/* What a merged chunk takes (xdl_merge's "mode"): bits of the sides whose
 * lines it keeps, or a conflict whose two sides turned out the same. */
enum {
	XM_CONFLICT = 0,
	XM_OURS = 1,   /* side 1 changed it: its lines */
	XM_THEIRS = 2, /* side 2 changed it: its lines */
	XM_SAME = 4    /* both changed it alike: either side's lines, already in ours */
};

typedef struct xmerge {
	int mode; /* XM_* */
	long i0, chg0, i1, chg1, i2, chg2;
} xmerge;

typedef struct mlist {
	xmerge *v;
	size_t n, cap;
} mlist;

static int append_merge(mlist *l, int mode, long i0, long chg0, long i1, long chg1, long i2,
			long chg2)
{
	xmerge *m = l->n ? &l->v[l->n - 1] : NULL;
	if (m && (i1 <= m->i1 + m->chg1 || i2 <= m->i2 + m->chg2)) {
		if (mode != m->mode)
			m->mode = XM_CONFLICT;
		m->chg0 = i0 + chg0 - m->i0;
		m->chg1 = i1 + chg1 - m->i1;
		m->chg2 = i2 + chg2 - m->i2;
		return 0;
	}
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		xmerge *nv = realloc(l->v, ncap * sizeof(*nv));
		if (!nv)
			return -1;
		l->v = nv;
		l->cap = ncap;
	}
	m = &l->v[l->n++];
	m->mode = mode;
	m->i0 = i0;
	m->chg0 = chg0;
	m->i1 = i1;
	m->chg1 = chg1;
	m->i2 = i2;
	m->chg2 = chg2;
	return 0;
}

static int lines_equal(const xfile *a, long ia, const xfile *b, long ib, long count)
{
	for (long i = 0; i < count; i++) {
		const xrec *r1 = &a->recs[ia + i], *r2 = &b->recs[ib + i];
		if (r1->size != r2->size || memcmp(r1->ptr, r2->ptr, (size_t)r1->size))
			return 0;
	}
	return 1;
}

static const char *chunk(const xfile *f, long i, long n, size_t *len)
{
	if (n <= 0) {
		*len = 0;
		return "";
	}
	*len = (size_t)(f->recs[i + n - 1].ptr + f->recs[i + n - 1].size - f->recs[i].ptr);
	return f->recs[i].ptr;
}

static int out_append(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (*len + n > *cap) {
		size_t ncap = *cap ? *cap : 256;
		while (ncap < *len + n)
			ncap *= 2;
		char *nb = realloc(*buf, ncap);
		if (!nb)
			return -1;
		*buf = nb;
		*cap = ncap;
	}
	if (n)
		memcpy(*buf + *len, p, n);
	*len += n;
	return 0;
}

static int copy_recs(const xfile *f, long i, long n, char **buf, size_t *len, size_t *cap)
{
	size_t l;
	const char *p = chunk(f, i, n, &l);
	return out_append(buf, len, cap, p, l);
}

static int dup_buf(const char *p, size_t n, char **out, size_t *outlen)
{
	*out = malloc(n ? n : 1);
	if (!*out)
		return -1;
	if (n)
		memcpy(*out, p, n);
	*outlen = n;
	return 0;
}

int rq_xmerge(const char *base, size_t nbase, const char *ours, size_t nours, const char *theirs,
	      size_t ntheirs, int style, char **out, size_t *outlen)
{
	xenv e1, e2;
	xchange *s1 = NULL, *s2 = NULL;
	size_t n1 = 0, n2 = 0, k1 = 0, k2 = 0;
	mlist l = {NULL, 0, 0};
	int r, rc = -1, conflicts = 0;

	*out = NULL;
	*outlen = 0;
	r = diff_histogram(&e1, base, (long)nbase, ours, (long)nours, &s1, &n1);
	if (r < 0)
		return r == RQ_XMERGE_TOO_COMPLEX ? RQ_XMERGE_TOO_COMPLEX : -1;
	r = diff_histogram(&e2, base, (long)nbase, theirs, (long)ntheirs, &s2, &n2);
	if (r < 0) {
		free(s1);
		xenv_free(&e1);
		return r == RQ_XMERGE_TOO_COMPLEX ? RQ_XMERGE_TOO_COMPLEX : -1;
	}
	if (!n1) {
		rc = dup_buf(theirs, ntheirs, out, outlen);
		goto done;
	}
	if (!n2) {
		rc = dup_buf(ours, nours, out, outlen);
		goto done;
	}
	while (k1 < n1 && k2 < n2) {
		const xchange *x1 = &s1[k1], *x2 = &s2[k2];
		long i0, i1, i2, chg0, chg1, chg2;
		if (x1->i1 + x1->chg1 < x2->i1) {
			i0 = x1->i1;
			i1 = x1->i2;
			i2 = x2->i2 - x2->i1 + x1->i1;
			chg0 = x1->chg1;
			chg1 = x1->chg2;
			chg2 = x1->chg1;
			if (append_merge(&l, XM_OURS, i0, chg0, i1, chg1, i2, chg2) < 0)
				goto done;
			k1++;
			continue;
		}
		if (x2->i1 + x2->chg1 < x1->i1) {
			i0 = x2->i1;
			i1 = x1->i2 - x1->i1 + x2->i1;
			i2 = x2->i2;
			chg0 = x2->chg1;
			chg1 = x2->chg1;
			chg2 = x2->chg2;
			if (append_merge(&l, XM_THEIRS, i0, chg0, i1, chg1, i2, chg2) < 0)
				goto done;
			k2++;
			continue;
		}
		if (x1->i1 != x2->i1 || x1->chg1 != x2->chg1 || x1->chg2 != x2->chg2 ||
		    !lines_equal(&e1.f2, x1->i2, &e2.f2, x2->i2, x1->chg2)) {
			long off = x1->i1 - x2->i1;
			long ffo = off + x1->chg1 - x2->chg1;
			i0 = x1->i1;
			i1 = x1->i2;
			i2 = x2->i2;
			if (off > 0) {
				i0 -= off;
				i1 -= off;
			} else {
				i2 += off;
			}
			chg0 = x1->i1 + x1->chg1 - i0;
			chg1 = x1->i2 + x1->chg2 - i1;
			chg2 = x2->i2 + x2->chg2 - i2;
			if (ffo < 0) {
				chg0 -= ffo;
				chg1 -= ffo;
			} else {
				chg2 += ffo;
			}
			if (append_merge(&l, XM_CONFLICT, i0, chg0, i1, chg1, i2, chg2) < 0)
				goto done;
		}
		i1 = x1->i1 + x1->chg1;
		i2 = x2->i1 + x2->chg1;
		if (i1 >= i2)
			k2++;
		if (i2 >= i1)
			k1++;
	}
	for (; k1 < n1; k1++) {
		const xchange *x1 = &s1[k1];
		if (append_merge(&l, XM_OURS, x1->i1, x1->chg1, x1->i2, x1->chg2,
				 x1->i1 + e2.f2.nrec - e2.f1.nrec, x1->chg1) < 0)
			goto done;
	}
	for (; k2 < n2; k2++) {
		const xchange *x2 = &s2[k2];
		if (append_merge(&l, XM_THEIRS, x2->i1, x2->chg1, x2->i1 + e1.f2.nrec - e1.f1.nrec,
				 x2->chg1, x2->i2, x2->chg2) < 0)
			goto done;
	}
	/* xdl_refine_conflicts(): a conflict whose two sides read the same is
	 * no conflict (only with the default conflict style) */
	for (size_t i = 0; i < l.n; i++) {
		xmerge *m = &l.v[i];
		if (m->mode)
			continue;
		if (style == RQ_TM_STYLE_MERGE && m->chg1 && m->chg2) {
			size_t la, lb;
			const char *pa = chunk(&e1.f2, m->i1, m->chg1, &la);
			const char *pb = chunk(&e2.f2, m->i2, m->chg2, &lb);
			if (la == lb && !memcmp(pa, pb, la)) {
				m->mode = XM_SAME;
				continue;
			}
		}
		conflicts++;
	}
	if (conflicts) {
		rc = 1;
		goto done;
	}
	{
		char *buf = NULL;
		size_t len = 0, cap = 0;
		long i = 0;
		for (size_t k = 0; k < l.n; k++) {
			const xmerge *m = &l.v[k];
			if (!(m->mode & (XM_OURS | XM_THEIRS)))
				continue; /* XM_SAME: the lines are copied with ours below */
			if (copy_recs(&e1.f2, i, m->i1 - i, &buf, &len, &cap) < 0)
				goto oom;
			if ((m->mode & XM_OURS) &&
			    copy_recs(&e1.f2, m->i1, m->chg1, &buf, &len, &cap) < 0)
				goto oom;
			if ((m->mode & XM_THEIRS) &&
			    copy_recs(&e2.f2, m->i2, m->chg2, &buf, &len, &cap) < 0)
				goto oom;
			i = m->i1 + m->chg1;
		}
		if (copy_recs(&e1.f2, i, e1.f2.nrec - i, &buf, &len, &cap) < 0)
			goto oom;
		if (!buf && !(buf = malloc(1)))
			goto done;
		*out = buf;
		*outlen = len;
		rc = 0;
		goto done;
	oom:
		free(buf);
	}
done:
	free(l.v);
	free(s1);
	free(s2);
	xenv_free(&e1);
	xenv_free(&e2);
	return rc;
}
