/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's xdiff: xmerge.c (README: Credits) */
/*
 * rq_xmerge: the 3-way merge of one text file (see rq_xmerge.h), after
 * git's xdl_merge().
 *
 * Like xdl_merge it diffs base -> ours and base -> theirs (rq_xdiff.c),
 * takes the other side when one side has no change at all, and otherwise
 * walks the two scripts together (xdl_do_merge): a hunk that overlaps no
 * hunk of the other side is taken from its side, the same hunk on both
 * sides (same base lines, same new lines) is taken once, and overlapping
 * hunks become a conflict chunk, merged with any chunk it touches. With the
 * default conflict style a conflict whose two sides read the same is then
 * no conflict (the part of xdl_refine_conflicts that can make a merge
 * clean). The clean result is written as xdl_fill_merge_buffer writes it:
 * ours, with each chunk that only theirs changed replaced by their lines.
 *
 * A marked merge (rq_xmerge_marked) goes on where a conflict is found, as
 * xdl_merge does: xdl_refine_conflicts splits each conflict where its two
 * sides agree and xdl_simplify_non_conflicts joins conflicts at most three
 * lines apart (default style), or xdl_refine_zdiff3_conflicts trims what
 * both sides start and end with (zdiff3); then xdl_fill_merge_buffer writes
 * the markers (fill_conflict_hunk, with git's end-of-line choice).
 *
 * A union merge (the built-in "union" driver: xdl_merge with
 * XDL_MERGE_FAVOR_UNION) shapes its conflicts the same way and writes each
 * as ours' lines then theirs', without markers: it never conflicts.
 */
#include "rq_xmerge.h"
#include "rq_xdiff.h"

#include "rq_mem.h"

#include <stdlib.h>
#include <string.h>

/*
 * What a merged chunk takes (xdl_merge's xdmerge_t.mode): the bits of the
 * sides whose lines it keeps, or a conflict, or a conflict whose two sides
 * turned out the same (its lines are already those of ours). git uses the
 * same values (0, 1, 2, 4), and the same merging rule in xdl_append_merge:
 * two chunks of different kinds that touch become a conflict.
 */
enum {
	CHUNK_CONFLICT = 0,
	CHUNK_OURS = 1,	  /* only side 1 (ours) changed it: its lines */
	CHUNK_THEIRS = 2, /* only side 2 (theirs) changed it: its lines */
	CHUNK_SAME = 4	  /* both changed it to the same text: ours' lines */
};

/* One chunk of the merge: chg0 base lines at i0 are chg1 lines at i1 in
 * ours and chg2 lines at i2 in theirs (0-based). */
typedef struct merge_chunk {
	int mode; /* CHUNK_* */
	long i0, chg0, i1, chg1, i2, chg2;
} merge_chunk;

typedef struct chunk_list {
	merge_chunk *v;
	size_t n, cap;
} chunk_list;

/* Both diffs of one merge: base -> ours (env1, script1) and base -> theirs
 * (env2, script2). env1.f2 holds the lines of ours, env2.f2 those of theirs. */
typedef struct both_diffs {
	rq_xdiff_env env1, env2;
	rq_xdiff_change *script1, *script2;
	size_t n1, n2;
} both_diffs;

/*
 * xdl_append_merge(): add a chunk, or extend the last one when the new one
 * starts inside or right at its end on either side (then a chunk of another
 * kind makes it a conflict). 0, or -1 out of memory.
 */
static int append_chunk(chunk_list *chunks, int mode, long i0, long chg0, long i1, long chg1,
			long i2, long chg2)
{
	merge_chunk *m = chunks->n ? &chunks->v[chunks->n - 1] : NULL, *nv;

	if (m && (i1 <= m->i1 + m->chg1 || i2 <= m->i2 + m->chg2)) {
		if (mode != m->mode)
			m->mode = CHUNK_CONFLICT;
		m->chg0 = i0 + chg0 - m->i0;
		m->chg1 = i1 + chg1 - m->i1;
		m->chg2 = i2 + chg2 - m->i2;
		return 0;
	}
	if (!(nv = rq_mem_grow(chunks->v, &chunks->cap, chunks->n + 1, sizeof(*chunks->v), 16)))
		return -1;
	chunks->v = nv;
	m = &chunks->v[chunks->n++];
	m->mode = mode;
	m->i0 = i0;
	m->chg0 = chg0;
	m->i1 = i1;
	m->chg1 = chg1;
	m->i2 = i2;
	m->chg2 = chg2;
	return 0;
}

/*
 * A hunk of ours that no hunk of theirs overlaps: a chunk that takes our
 * lines. offset maps base line numbers to theirs around it (the shift of the
 * last hunk of theirs before it), which places the chunk in theirs too.
 */
static int append_ours(chunk_list *chunks, const rq_xdiff_change *x1, long offset)
{
	return append_chunk(chunks, CHUNK_OURS, x1->i1, x1->chg1, x1->i2, x1->chg2, x1->i1 + offset,
			    x1->chg1);
}

/* The same for a hunk of theirs alone, placed in ours with ours' offset. */
static int append_theirs(chunk_list *chunks, const rq_xdiff_change *x2, long offset)
{
	return append_chunk(chunks, CHUNK_THEIRS, x2->i1, x2->chg1, x2->i1 + offset, x2->chg1,
			    x2->i2, x2->chg2);
}

/*
 * Two overlapping hunks as one conflict chunk covering both (the conflict
 * branch of xdl_do_merge): the chunk starts at the earlier start and ends at
 * the later end in base, and each side's range is stretched by the same
 * amounts.
 */
static int append_conflict(chunk_list *chunks, const rq_xdiff_change *x1, const rq_xdiff_change *x2)
{
	long off = x1->i1 - x2->i1, ffo = off + x1->chg1 - x2->chg1;
	long i0 = x1->i1, i1 = x1->i2, i2 = x2->i2, chg0, chg1, chg2;

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
	return append_chunk(chunks, CHUNK_CONFLICT, i0, chg0, i1, chg1, i2, chg2);
}

/*
 * xdl_merge_cmp_lines() without whitespace options: are count lines of a
 * from ia equal to those of b from ib, byte for byte?
 */
static int lines_equal(const rq_xdiff_file *a, long ia, const rq_xdiff_file *b, long ib, long count)
{
	for (long i = 0; i < count; i++) {
		const rq_xdiff_rec *r1 = &a->recs[ia + i], *r2 = &b->recs[ib + i];
		if (r1->size != r2->size || memcmp(r1->ptr, r2->ptr, (size_t)r1->size))
			return 0;
	}
	return 1;
}

/*
 * Are x1 and x2 the same change: the same base lines replaced by the same
 * number of lines, with the same text? Such a hunk merges cleanly, taken
 * once (level XDL_MERGE_EAGER and up; merge-ort asks for ZEALOUS).
 */
static int same_change(const both_diffs *diffs, const rq_xdiff_change *x1,
		       const rq_xdiff_change *x2)
{
	return x1->i1 == x2->i1 && x1->chg1 == x2->chg1 && x1->chg2 == x2->chg2 &&
	       lines_equal(&diffs->env1.f2, x1->i2, &diffs->env2.f2, x2->i2, x1->chg2);
}

/*
 * xdl_do_merge()'s walk over both scripts (level ZEALOUS and up: the same
 * change on both sides is no conflict): chunks in base order in *chunks. The
 * offsets map base line numbers to the other side's, past the last hunk of
 * that side. 0, or -1 out of memory.
 */
static int merge_scripts(const both_diffs *diffs, chunk_list *chunks)
{
	size_t k1 = 0, k2 = 0;

	while (k1 < diffs->n1 && k2 < diffs->n2) {
		const rq_xdiff_change *x1 = &diffs->script1[k1], *x2 = &diffs->script2[k2];
		if (x1->i1 + x1->chg1 < x2->i1) {
			if (append_ours(chunks, x1, x2->i2 - x2->i1) < 0)
				return -1;
			k1++;
			continue;
		}
		if (x2->i1 + x2->chg1 < x1->i1) {
			if (append_theirs(chunks, x2, x1->i2 - x1->i1) < 0)
				return -1;
			k2++;
			continue;
		}
		if (!same_change(diffs, x1, x2) && append_conflict(chunks, x1, x2) < 0)
			return -1;
		/* step past whichever hunk ends first in base (both if together) */
		if (x1->i1 + x1->chg1 >= x2->i1 + x2->chg1)
			k2++;
		if (x2->i1 + x2->chg1 >= x1->i1 + x1->chg1)
			k1++;
	}
	for (; k1 < diffs->n1; k1++)
		if (append_ours(chunks, &diffs->script1[k1],
				diffs->env2.f2.nrec - diffs->env2.f1.nrec) < 0)
			return -1;
	for (; k2 < diffs->n2; k2++)
		if (append_theirs(chunks, &diffs->script2[k2],
				  diffs->env1.f2.nrec - diffs->env1.f1.nrec) < 0)
			return -1;
	return 0;
}

/*
 * The bytes of n lines of f from line i (lines are contiguous in the
 * buffer: the text from the first to the end of the last); an empty string
 * for none.
 */
static const char *lines_text(const rq_xdiff_file *f, long i, long n, size_t *len)
{
	if (n <= 0) {
		*len = 0;
		return "";
	}
	*len = (size_t)(f->recs[i + n - 1].ptr + f->recs[i + n - 1].size - f->recs[i].ptr);
	return f->recs[i].ptr;
}

/*
 * The part of xdl_refine_conflicts() that can make a merge clean: with the
 * default style, a conflict chunk whose two sides (both non-empty) read the
 * same becomes CHUNK_SAME. git goes on to diff the two sides of every other
 * conflict to split it into smaller ones, which never makes it clean: only
 * a marked merge does that (refine_split). Returns the conflicts left.
 */
static size_t refine_conflicts(const both_diffs *diffs, chunk_list *chunks, rq_xmerge_style style)
{
	size_t conflicts = 0;

	for (size_t i = 0; i < chunks->n; i++) {
		merge_chunk *m = &chunks->v[i];
		if (m->mode != CHUNK_CONFLICT)
			continue;
		if (style == RQ_XMERGE_STYLE_MERGE && m->chg1 && m->chg2) {
			size_t la, lb;
			const char *pa = lines_text(&diffs->env1.f2, m->i1, m->chg1, &la);
			const char *pb = lines_text(&diffs->env2.f2, m->i2, m->chg2, &lb);
			if (la == lb && !memcmp(pa, pb, la)) {
				m->mode = CHUNK_SAME;
				continue;
			}
		}
		conflicts++;
	}
	return conflicts;
}

/* Append a copy of chunk c. 0, or -1 out of memory. */
static int push_chunk(chunk_list *chunks, const merge_chunk *c)
{
	merge_chunk *nv = rq_mem_grow(chunks->v, &chunks->cap, chunks->n + 1, sizeof(*nv), 16);

	if (!nv)
		return -1;
	chunks->v = nv;
	chunks->v[chunks->n++] = *c;
	return 0;
}

/*
 * One conflict of refine_split: the two sides diffed, each hunk of that
 * diff a conflict of its own, placed in ours and theirs (the base range
 * stays the whole chunk's, as git leaves it: only diff3 shows it, and
 * diff3 is never refined). 0, -1 out of memory, or a diff failure.
 */
static int split_one(const both_diffs *diffs, const merge_chunk *m, chunk_list *out)
{
	size_t la, lb, n;
	const char *pa = lines_text(&diffs->env1.f2, m->i1, m->chg1, &la);
	const char *pb = lines_text(&diffs->env2.f2, m->i2, m->chg2, &lb);
	rq_xdiff_change *script;
	rq_xdiff_env env;
	merge_chunk c = *m;
	int r = rq_xdiff_histogram(&env, pa, (long)la, pb, (long)lb, &script, &n);

	if (r < 0)
		return r;
	if (!n) { /* the two sides are the same */
		c.mode = CHUNK_SAME;
		r = push_chunk(out, &c);
	}
	for (size_t k = 0; k < n && r == 0; k++) {
		c.i1 = m->i1 + script[k].i1;
		c.chg1 = script[k].chg1;
		c.i2 = m->i2 + script[k].i2;
		c.chg2 = script[k].chg2;
		r = push_chunk(out, &c);
	}
	free(script);
	rq_xdiff_env_free(&env);
	return r;
}

/*
 * xdl_refine_conflicts() for a marked merge in the default style: every
 * conflict whose sides are both non-empty becomes the hunks of a diff of
 * its two sides (none: the sides agree, no conflict). 0, or a negative
 * rq_xdiff result (chunks unchanged then).
 */
static int refine_split(const both_diffs *diffs, chunk_list *chunks)
{
	chunk_list out = {NULL, 0, 0};
	int r = 0;

	for (size_t i = 0; i < chunks->n && r == 0; i++) {
		const merge_chunk *m = &chunks->v[i];
		if (m->mode == CHUNK_CONFLICT && m->chg1 && m->chg2)
			r = split_one(diffs, m, &out);
		else
			r = push_chunk(&out, m) < 0 ? RQ_XDIFF_NOMEM : 0;
	}
	if (r < 0) {
		free(out.v);
		return r;
	}
	free(chunks->v);
	*chunks = out;
	return 0;
}

/*
 * xdl_simplify_non_conflicts() at merge-ort's level: two conflicts at most
 * three lines of ours apart become one, the lines between them included.
 */
static void join_near_conflicts(chunk_list *chunks)
{
	size_t k = 0;

	for (size_t i = 0; i < chunks->n; i++) {
		merge_chunk *m = k ? &chunks->v[k - 1] : NULL, *next = &chunks->v[i];
		if (m && m->mode == CHUNK_CONFLICT && next->mode == CHUNK_CONFLICT &&
		    next->i1 - (m->i1 + m->chg1) <= 3) {
			m->chg0 = next->i0 + next->chg0 - m->i0;
			m->chg1 = next->i1 + next->chg1 - m->i1;
			m->chg2 = next->i2 + next->chg2 - m->i2;
			continue;
		}
		chunks->v[k++] = *next;
	}
	chunks->n = k;
}

/*
 * xdl_refine_zdiff3_conflicts(): the lines a conflict's two sides begin
 * with, and then those they end with, leave the conflict (they are written
 * before and after it as lines both sides have).
 */
static void trim_zdiff3(const both_diffs *diffs, chunk_list *chunks)
{
	const rq_xdiff_file *a = &diffs->env1.f2, *b = &diffs->env2.f2;

	for (size_t i = 0; i < chunks->n; i++) {
		merge_chunk *m = &chunks->v[i];
		if (m->mode != CHUNK_CONFLICT)
			continue;
		while (m->chg1 && m->chg2 && lines_equal(a, m->i1, b, m->i2, 1)) {
			m->i1++;
			m->i2++;
			m->chg1--;
			m->chg2--;
		}
		while (m->chg1 && m->chg2 &&
		       lines_equal(a, m->i1 + m->chg1 - 1, b, m->i2 + m->chg2 - 1, 1)) {
			m->chg1--;
			m->chg2--;
		}
	}
}

/* A growing output buffer (oom: an allocation failed, the rest is dropped). */
typedef struct out_buf {
	char *p;
	size_t len, cap;
	int oom;
} out_buf;

static void put_bytes(out_buf *buf, const char *p, size_t len)
{
	char *nb;

	if (!len || buf->oom)
		return; /* rq_mem_grow gives NULL for an empty buffer */
	if (!(nb = rq_mem_grow(buf->p, &buf->cap, buf->len + len, 1, 256))) {
		buf->oom = 1;
		return;
	}
	buf->p = nb;
	memcpy(buf->p + buf->len, p, len);
	buf->len += len;
}

/*
 * xdl_recs_copy(): n lines of f from line i; with add_nl, a newline ("\r\n"
 * when needs_cr) after a last line that has none, as before a marker.
 */
static void put_lines(out_buf *buf, const rq_xdiff_file *f, long i, long n, int needs_cr,
		      int add_nl)
{
	size_t len;
	const char *p = lines_text(f, i, n, &len);

	put_bytes(buf, p, len);
	if (add_nl && n > 0 && (!len || p[len - 1] != '\n'))
		put_bytes(buf, needs_cr ? "\r\n" : "\n", needs_cr ? 2 : 1);
}

/* is_eol_crlf(): 1 when line i of f ends in CRLF, 0 in LF, -1 unknown
 * (an empty file, or a lone line without an end). */
static int eol_crlf(const rq_xdiff_file *f, long i)
{
	const rq_xdiff_rec *r;

	if (!f->nrec)
		return -1;
	r = &f->recs[i];
	if (i < f->nrec - 1 || (r->size && r->ptr[r->size - 1] == '\n'))
		return r->size > 1 && r->ptr[r->size - 2] == '\r';
	if (!i)
		return -1;
	r = &f->recs[i - 1];
	return r->size > 1 && r->ptr[r->size - 2] == '\r';
}

/* is_cr_needed(): markers end in CRLF when the line before the conflict
 * in both sides, and the base's first line, do (LF when unknown). */
static int cr_needed(const both_diffs *d, const merge_chunk *m)
{
	int cr = eol_crlf(&d->env1.f2, m->i1 ? m->i1 - 1 : 0);

	if (cr)
		cr = eol_crlf(&d->env2.f2, m->i2 ? m->i2 - 1 : 0);
	if (cr)
		cr = eol_crlf(&d->env1.f1, 0);
	return cr > 0;
}

/* One marker line: size times c, a space and the label when there is one. */
static void put_marker(out_buf *buf, char c, int size, const char *label, int cr)
{
	char run[64];
	int n = size < (int)sizeof(run) ? size : (int)sizeof(run);

	memset(run, c, (size_t)n);
	put_bytes(buf, run, (size_t)n);
	if (label) {
		put_bytes(buf, " ", 1);
		put_bytes(buf, label, strlen(label));
	}
	put_bytes(buf, cr ? "\r\n" : "\n", cr ? 2 : 1);
}

/* fill_conflict_hunk(): the markers around both sides (and the base's
 * lines, for diff3 and zdiff3). */
static void put_conflict(out_buf *buf, const both_diffs *d, const merge_chunk *m,
			 rq_xmerge_style style, const rq_xmerge_marks *marks)
{
	int size = marks->size > 0 ? marks->size : 7, cr = cr_needed(d, m);

	put_marker(buf, '<', size, marks->ours, cr);
	put_lines(buf, &d->env1.f2, m->i1, m->chg1, cr, 1);
	if (style != RQ_XMERGE_STYLE_MERGE) {
		put_marker(buf, '|', size, marks->base, cr);
		put_lines(buf, &d->env1.f1, m->i0, m->chg0, cr, 1);
	}
	put_marker(buf, '=', size, NULL, cr);
	put_lines(buf, &d->env2.f2, m->i2, m->chg2, cr, 1);
	put_marker(buf, '>', size, marks->theirs, cr);
}

/* What one merge asks for (the entry points differ only here). */
typedef struct merge_req {
	rq_xmerge_style style;
	const rq_xmerge_marks *marks; /* write conflicts with these markers */
	int favor_union;	      /* write conflicts as both sides, ours first */
	/* remerge: the hunks of base and of ours as single records */
	const rq_xdiff_spans *base_spans, *ours_spans;
	int *kept; /* remerge: a hunk of ours is in a clean result */
} merge_req;

/* xdl_fill_merge_buffer() with favor_union: a conflict's ours' lines (an
 * end of line added after a last one that has none, as before a marker),
 * then theirs'. */
static void put_union(out_buf *buf, const both_diffs *d, const merge_chunk *m)
{
	put_lines(buf, &d->env1.f2, m->i1, m->chg1, cr_needed(d, m), 1);
	put_lines(buf, &d->env2.f2, m->i2, m->chg2, 0, 0);
}

/*
 * xdl_fill_merge_buffer(): the lines of ours, in which every chunk that
 * changed is replaced by its side's lines (a CHUNK_SAME chunk is already
 * ours) and, with marks, every conflict by its markers and both sides (by
 * both sides alone in a union merge). 0 with *out (never NULL) and
 * *outlen, or -1 out of memory.
 */
static int fill_merge_buffer(const both_diffs *diffs, const chunk_list *chunks,
			     const merge_req *req, char **out, size_t *outlen)
{
	const rq_xdiff_file *ours = &diffs->env1.f2, *theirs = &diffs->env2.f2;
	out_buf buf = {NULL, 0, 0, 0};
	long i = 0;

	for (size_t k = 0; k < chunks->n; k++) {
		const merge_chunk *m = &chunks->v[k];
		if (m->mode == CHUNK_CONFLICT && !req->marks && !req->favor_union)
			continue;
		if (m->mode == CHUNK_SAME)
			continue;
		put_lines(&buf, ours, i, m->i1 - i, 0, 0);
		if (m->mode == CHUNK_CONFLICT && req->favor_union)
			put_union(&buf, diffs, m);
		else if (m->mode == CHUNK_CONFLICT)
			put_conflict(&buf, diffs, m, req->style, req->marks);
		else if (m->mode & CHUNK_OURS)
			put_lines(&buf, ours, m->i1, m->chg1, 0, 0);
		else
			put_lines(&buf, theirs, m->i2, m->chg2, 0, 0);
		i = m->i1 + m->chg1;
	}
	put_lines(&buf, ours, i, ours->nrec - i, 0, 0);
	if (!buf.oom && !buf.p && !(buf.p = malloc(1)))
		buf.oom = 1;
	if (buf.oom) {
		free(buf.p);
		return -1;
	}
	*out = buf.p;
	*outlen = buf.len;
	return 0;
}

/*
 * A copy of a whole side, for a merge where the other side changed nothing
 * (xdl_merge's shortcut: no chunk walk). Never NULL on success, even for an
 * empty side. 0, or -1 out of memory.
 */
static int copy_side(const char *p, size_t n, char **out, size_t *outlen)
{
	*out = malloc(n ? n : 1);
	if (!*out)
		return -1;
	if (n)
		memcpy(*out, p, n);
	*outlen = n;
	return 0;
}

/* A failed diff as a merge result. */
static rq_xmerge_result from_xdiff(int r)
{
	return r == RQ_XDIFF_TOO_COMPLEX ? RQ_XMERGE_TOO_COMPLEX : RQ_XMERGE_NOMEM;
}

/* A marked merge's conflicts shaped for its style, as xdl_merge does. */
static int shape_conflicts(const both_diffs *diffs, chunk_list *chunks, rq_xmerge_style style)
{
	int r = 0;

	if (style == RQ_XMERGE_STYLE_ZDIFF3)
		trim_zdiff3(diffs, chunks);
	else if (style == RQ_XMERGE_STYLE_MERGE && (r = refine_split(diffs, chunks)) == 0)
		join_near_conflicts(chunks);
	return r;
}

/* remerge: is a span record of ours in the result (a line of ours not
 * replaced by a chunk of theirs)? */
static int ours_span_kept(const both_diffs *diffs, const chunk_list *chunks,
			  const rq_xdiff_spans *spans)
{
	const rq_xdiff_file *ours = &diffs->env1.f2;
	size_t k = 0, sp = 0;

	for (long j = 0; j < ours->nrec && sp < spans->n; j++) {
		const char *origin = ours->recs[0].ptr;
		if (ours->recs[j].ptr - origin != spans->start[sp])
			continue;
		sp++;
		while (k < chunks->n && chunks->v[k].i1 + chunks->v[k].chg1 <= j)
			k++;
		if (k == chunks->n || chunks->v[k].i1 > j || chunks->v[k].mode != CHUNK_THEIRS)
			return 1;
	}
	return 0;
}

/*
 * xdl_do_merge() for two diffs that both have hunks: chunks, refinement,
 * then the clean text, or the conflict (its text when marked); a union
 * merge's conflicts are shaped as a marked merge's and written clean.
 */
static rq_xmerge_result merge_both(const both_diffs *diffs, const merge_req *req, char **out,
				   size_t *outlen)
{
	chunk_list chunks = {NULL, 0, 0};
	rq_xmerge_result rc = RQ_XMERGE_NOMEM;
	size_t nconf;
	int r;

	if (merge_scripts(diffs, &chunks) < 0)
		goto done;
	nconf = refine_conflicts(diffs, &chunks, req->style);
	if (nconf && !req->marks && !req->favor_union) {
		rc = RQ_XMERGE_CONFLICT;
		goto done;
	}
	if (nconf && (r = shape_conflicts(diffs, &chunks, req->style)) < 0) {
		rc = from_xdiff(r);
		goto done;
	}
	if (fill_merge_buffer(diffs, &chunks, req, out, outlen) == 0)
		rc = nconf && !req->favor_union ? RQ_XMERGE_CONFLICT : RQ_XMERGE_CLEAN;
	if (rc == RQ_XMERGE_CLEAN && req->kept && req->ours_spans)
		*req->kept = ours_span_kept(diffs, &chunks, req->ours_spans);
done:
	free(chunks.v);
	return rc;
}

/*
 * xdl_merge(): both diffs (a failure of either is the result), the shortcut
 * when one side changed nothing, else the chunk merge.
 */
static rq_xmerge_result run_merge(const char *base, size_t nbase, const char *ours, size_t nours,
				  const char *theirs, size_t ntheirs, const merge_req *req,
				  char **out, size_t *outlen)
{
	both_diffs diffs;
	rq_xmerge_result rc;
	int r;

	memset(&diffs, 0, sizeof(diffs));
	*out = NULL;
	*outlen = 0;
	r = rq_xdiff_histogram_spans(&diffs.env1, base, (long)nbase, req->base_spans, ours,
				     (long)nours, req->ours_spans, &diffs.script1, &diffs.n1);
	if (r < 0)
		return from_xdiff(r);
	r = rq_xdiff_histogram_spans(&diffs.env2, base, (long)nbase, req->base_spans, theirs,
				     (long)ntheirs, NULL, &diffs.script2, &diffs.n2);
	if (r < 0) {
		free(diffs.script1);
		rq_xdiff_env_free(&diffs.env1);
		return from_xdiff(r);
	}
	/* xdl_merge: a side without changes gives the other side as it is */
	if (!diffs.n1) {
		rc =
		    copy_side(theirs, ntheirs, out, outlen) < 0 ? RQ_XMERGE_NOMEM : RQ_XMERGE_CLEAN;
	} else if (!diffs.n2) {
		rc = copy_side(ours, nours, out, outlen) < 0 ? RQ_XMERGE_NOMEM : RQ_XMERGE_CLEAN;
		if (req->kept && req->ours_spans)
			*req->kept = req->ours_spans->n > 0;
	} else {
		rc = merge_both(&diffs, req, out, outlen);
	}
	free(diffs.script1);
	free(diffs.script2);
	rq_xdiff_env_free(&diffs.env1);
	rq_xdiff_env_free(&diffs.env2);
	return rc;
}

rq_xmerge_result rq_xmerge(const char *base, size_t nbase, const char *ours, size_t nours,
			   const char *theirs, size_t ntheirs, rq_xmerge_style style, char **out,
			   size_t *outlen)
{
	merge_req req = {style, NULL, 0, NULL, NULL, NULL};
	return run_merge(base, nbase, ours, nours, theirs, ntheirs, &req, out, outlen);
}

rq_xmerge_result rq_xmerge_union(const char *base, size_t nbase, const char *ours, size_t nours,
				 const char *theirs, size_t ntheirs, rq_xmerge_style style,
				 char **out, size_t *outlen)
{
	merge_req req = {style, NULL, 1, NULL, NULL, NULL};
	return run_merge(base, nbase, ours, nours, theirs, ntheirs, &req, out, outlen);
}

rq_xmerge_result rq_xmerge_marked(const char *base, size_t nbase, const char *ours, size_t nours,
				  const char *theirs, size_t ntheirs, rq_xmerge_style style,
				  const rq_xmerge_marks *marks, char **out, size_t *outlen)
{
	merge_req req = {style, marks, 0, NULL, NULL, NULL};
	return run_merge(base, nbase, ours, nours, theirs, ntheirs, &req, out, outlen);
}

/* Is the line at p (up to e) the marker of c with label, git-style? Its
 * length (newline included) when it is, else 0. */
static size_t marker_line(const char *p, const char *e, char c, int size, const char *label)
{
	size_t ll = label ? strlen(label) : 0, n = (size_t)size;

	if ((size_t)(e - p) < n + 1)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] != c)
			return 0;
	if (label) {
		if ((size_t)(e - p) < n + 1 + ll + 1 || p[n] != ' ' || memcmp(p + n + 1, label, ll))
			return 0;
		n += 1 + ll;
	}
	if (n < (size_t)(e - p) && p[n] == '\r')
		n++;
	return n < (size_t)(e - p) && p[n] == '\n' ? n + 1 : 0;
}

/*
 * The conflict hunks of a text rq_xmerge_marked wrote with marks: from a
 * line "<<<<<<< <ours>" to the next ">>>>>>> <theirs>" line, both whole.
 * *start and *end are malloc'ed (NULL when there are none). 0, or -1 out
 * of memory.
 */
static int find_hunks(const char *buf, size_t n, const rq_xmerge_marks *marks, rq_xdiff_spans *sp,
		      long **start, long **end)
{
	const char *p = buf, *e = buf + n, *open = NULL;
	int size = marks->size > 0 ? marks->size : 7;
	size_t cap = 0, cap2 = 0;

	sp->n = 0;
	*start = *end = NULL;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *next = nl ? nl + 1 : e;
		size_t m;
		if (!open && marker_line(p, e, '<', size, marks->ours)) {
			open = p;
		} else if (open && (m = marker_line(p, e, '>', size, marks->theirs)) > 0) {
			long *ns = rq_mem_grow(*start, &cap, sp->n + 1, sizeof(*ns), 8);
			long *ne = ns ? rq_mem_grow(*end, &cap2, sp->n + 1, sizeof(*ne), 8) : NULL;
			if (ns)
				*start = ns;
			if (!ne)
				return -1;
			*end = ne;
			(*start)[sp->n] = (long)(open - buf);
			(*end)[sp->n++] = (long)(p + m - buf);
			open = NULL;
		}
		p = next;
	}
	sp->start = *start;
	sp->end = *end;
	return 0;
}

rq_xmerge_result rq_xmerge_remerge(const char *base, size_t nbase, int base_marked,
				   const char *ours, size_t nours, int ours_marked,
				   const char *theirs, size_t ntheirs, rq_xmerge_style style,
				   int favor_union, const rq_xmerge_marks *marks, char **out,
				   size_t *outlen, int *kept)
{
	rq_xdiff_spans bs = {NULL, NULL, 0}, os = {NULL, NULL, 0};
	long *b0 = NULL, *b1 = NULL, *o0 = NULL, *o1 = NULL;
	merge_req req = {style, NULL, favor_union, &bs, &os, kept};
	rq_xmerge_result rc = RQ_XMERGE_NOMEM;

	*kept = 0;
	*out = NULL;
	*outlen = 0;
	if ((!base_marked || find_hunks(base, nbase, marks, &bs, &b0, &b1) == 0) &&
	    (!ours_marked || find_hunks(ours, nours, marks, &os, &o0, &o1) == 0))
		rc = run_merge(base, nbase, ours, nours, theirs, ntheirs, &req, out, outlen);
	free(b0);
	free(b1);
	free(o0);
	free(o1);
	return rc;
}

#define FIRST_FEW_BYTES 8000 /* git's, for buffer_is_binary */

/*
 * git's buffer_is_binary() (xdiff-interface.c): a NUL in the first 8000 bytes
 * (FIRST_FEW_BYTES) makes a buffer binary, whatever follows.
 */
int rq_xmerge_buffer_is_binary(const char *buf, size_t n)
{
	if (n > FIRST_FEW_BYTES)
		n = FIRST_FEW_BYTES;
	return memchr(buf, 0, n) != NULL;
}
