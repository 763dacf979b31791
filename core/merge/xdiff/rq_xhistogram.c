/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's xdiff: xhistogram.c (README: Credits) */
/*
 * rq_xhistogram: the histogram diff (xhistogram.c): find the longest run
 * of lines common to both regions that is made of the least frequent
 * lines, recurse on both sides of it; a region where every common line is
 * too frequent goes to the classic diff (rq_xclassic.c).
 */
#include "rq_xhistogram.h"

#include "rq_xclassic.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

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
	if (rq_xclassic_diff(&sub, a0->ptr, (long)(a1->ptr + a1->size - a0->ptr), &as, b0->ptr,
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
int rq_xhistogram_diff(rq_xdiff_env *env, long line1, long count1, long line2, long count2)
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
		found = rq_xhistogram_diff(env, line1, (long)lcs.begin1 - line1, line2,
					   (long)lcs.begin2 - line2);
		if (found)
			return found;
		count1 = line1 + count1 - 1 - (long)lcs.end1;
		line1 = (long)lcs.end1 + 1;
		count2 = line2 + count2 - 1 - (long)lcs.end2;
		line2 = (long)lcs.end2 + 1;
	}
}
