/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's xdiff: xprepare.c (README: Credits) */
/*
 * rq_xprepare: the first step of a diff (rq_xdiff.c runs the steps): split
 * both buffers into lines and number the distinct lines in order of first
 * appearance, file 1 first. The numbers matter beyond equality: the
 * histogram diff hashes them into buckets and gives up on a bucket chain of
 * 64 distinct lines, so the numbering must be git's for the same inputs to
 * fail the same way. The line hash only numbers the lines (git's hash is not
 * reproduced: the numbering by first appearance is what the diff sees).
 */
#include "rq_xprepare.h"

#include "rq_hindex.h"
#include "rq_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
int rq_xprepare_env(rq_xdiff_env *env, const char *a, long na, const rq_xdiff_spans *as,
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
