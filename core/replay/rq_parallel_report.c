/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_parallel_report: a worker's report to the parent of a parallel
 * replay (rq_parallel), both sides of it: the child writes its messages,
 * the parent reads them back into its verdict. The messages are rq_child
 * frames; their types are listed above rq_parallel_report_picks().
 */
#include "rq_parallel_report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- written by a child ---- */

void rq_parallel_report_fmt(rq_buf *b, char type, const char *fmt, ...)
{
	char tmp[RQ_ERROR_MSG_MAX + 64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	rq_child_frame(b, type, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* N: a commit picked (its new commit and tree, and 1 when it was not
 * UTF-8); S: the counts; C and P: a conflict and its paths;
 * K and P: a keep-going conflict and its paths; E: a pick's error; F:
 * another failure; D: done. */
void rq_parallel_report_picks(rq_buf *b, const rq_parallel_job *job, const unsigned char *did)
{
	for (size_t i = 0; i < job->n; i++) {
		char a[RQ_OID_MAX_HEXSZ + 1], t[RQ_OID_MAX_HEXSZ + 1];
		if (!did[i])
			continue;
		rq_oid_fmt(a, &job->new_ids[i], job->algo);
		rq_oid_fmt(t, &job->new_trees[i], job->algo);
		rq_parallel_report_fmt(b, 'N', "%zu %s %s %d", i, a, t, job->warned[i]);
	}
}

void rq_parallel_report_counts(rq_buf *b, const rq_parallel_job *job)
{
	rq_parallel_counts c = {0};

	job->counts(job->arg, &c);
	rq_parallel_report_fmt(b, 'S', "%zu %zu %zu %zu %zu %zu %zu %zu", c.picked, c.dropped,
			       c.merges_trivial, c.merges_full, c.merges_fallback,
			       c.scores_computed, c.scores_reused, c.merge_commits);
}

/* P: the paths of the conflict just reported, with their kinds. */
static void report_paths(rq_buf *b, const rq_conflicts *conf)
{
	for (size_t k = 0; k < conf->n; k++) {
		const rq_conflict *c = &conf->v[k];
		rq_buf line = {0};
		char head[32];
		int n = snprintf(head, sizeof(head), "%d ", (int)c->kind);
		rq_buf_add(&line, head, (size_t)n);
		rq_buf_str(&line, c->path);
		if (line.oom)
			b->oom = 1;
		else
			rq_child_frame(b, 'P', line.p, line.len);
		free(line.p);
	}
}

/* K: a keep-going conflict, each followed by its paths. */
void rq_parallel_report_kept(rq_buf *b, const rq_parallel_report_failure *wf)
{
	for (size_t k = 0; k < wf->kept.n; k++) {
		rq_parallel_report_fmt(b, 'K', "%zu", wf->kept.v[k].index);
		report_paths(b, &wf->kept.v[k].conflicts);
	}
}

void rq_parallel_report_failed(rq_buf *b, const rq_parallel_report_failure *wf)
{
	if (wf->fail == SIZE_MAX)
		return;
	if (wf->kind == 1) {
		rq_parallel_report_fmt(b, 'C', "%zu", wf->fail);
		report_paths(b, &wf->conf);
	} else {
		rq_parallel_report_fmt(b, 'E', "%zu %d %s", wf->fail, (int)wf->err.code,
				       wf->err.msg);
	}
}

/* ---- read by the parent ---- */

/* The report has ended when its last message is D (done) or X (took none). */
int rq_parallel_report_complete(const rq_child_in *in)
{
	rq_child_in walk = *in;
	rq_child_msg m;
	char last = 0;

	while (rq_child_in_next(&walk, &m) == 1) {
		last = m.type;
		walk.head = (size_t)(m.data + m.len + 1 - walk.buf.p);
	}
	return last == 'D' || last == 'X';
}

/* Where the P messages that follow go. */
enum { PATHS_DROP, PATHS_FIRST, PATHS_KEPT };

/* "N <index> <new id> <new tree> <warned>": the ids exactly of the job's
 * width. */
static int take_pick(const rq_parallel_job *job, const rq_child_msg *m)
{
	size_t i, hexsz = job->algo->hexsz;
	int warned, used = 0;
	const char *a, *t;
	char *end;

	errno = 0;
	i = (size_t)strtoull(m->data, &end, 10);
	if (errno || end == m->data || *end != ' ' || i >= job->n)
		return -1;
	a = end + 1;
	t = a + hexsz + 1;
	if (strnlen(a, 2 * hexsz + 2) < 2 * hexsz + 2 || a[hexsz] != ' ' || t[hexsz] != ' ' ||
	    rq_oid_parse(&job->new_ids[i], job->algo, a, hexsz) < 0 ||
	    rq_oid_parse(&job->new_trees[i], job->algo, t, hexsz) < 0 ||
	    sscanf(t + hexsz + 1, "%d%n", &warned, &used) != 1 || t[hexsz + 1 + used] != '\0')
		return -1;
	job->warned[i] = warned == 1;
	return 0;
}

static int take_counts(rq_parallel_report_verdict *v, const rq_child_msg *m)
{
	rq_parallel_counts c;

	if (sscanf(m->data, "%zu %zu %zu %zu %zu %zu %zu %zu", &c.picked, &c.dropped,
		   &c.merges_trivial, &c.merges_full, &c.merges_fallback, &c.scores_computed,
		   &c.scores_reused, &c.merge_commits) != 8)
		return -1;
	v->counts.picked += c.picked;
	v->counts.dropped += c.dropped;
	v->counts.merge_commits += c.merge_commits;
	v->counts.merges_trivial += c.merges_trivial;
	v->counts.merges_full += c.merges_full;
	v->counts.merges_fallback += c.merges_fallback;
	v->counts.scores_computed += c.scores_computed;
	v->counts.scores_reused += c.scores_reused;
	return 0;
}

/* "<code> <message>" of an E or F message, after its index for E. */
static int parse_error(const char *s, rq_error *out)
{
	int code, at = 0;

	if (sscanf(s, "%d %n", &code, &at) != 1 || !at || code <= RQ_OK || code >= RQ_E_CORE_END)
		return -1;
	rq_error_set(out, code, "%s", s + at);
	return 0;
}

/* C or E: a pick failed; it wins when it is earlier than any seen. */
static int take_failure(rq_parallel_report_verdict *v, const rq_child_msg *m, int *better)
{
	size_t i;
	int at = 0;

	if (sscanf(m->data, "%zu %n", &i, &at) != 1 || (m->type == 'E' && !at))
		return -1;
	*better = i < v->first.fail;
	if (!*better)
		return 0;
	if (m->type == 'E' && parse_error(m->data + at, &v->first.err) < 0)
		return -1;
	rq_conflicts_free(&v->first.conf);
	v->first.fail = i;
	v->first.kind = m->type == 'C' ? 1 : -1;
	return 0;
}

/* P: a path of the conflict just read, into c. */
static int take_path(rq_conflicts *c, const rq_child_msg *m)
{
	int kind, at = 0;

	if (sscanf(m->data, "%d %n", &kind, &at) != 1 || !at)
		return -1;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 8;
		rq_conflict *nv = realloc(c->v, ncap * sizeof(*nv));
		if (!nv)
			return -1;
		c->v = nv;
		c->cap = ncap;
	}
	if (!(c->v[c->n].path = strndup(m->data + at, m->len - (size_t)at)))
		return -1;
	c->v[c->n++].kind = (rq_conflict_kind)kind;
	return 0;
}

/* K: a keep-going conflict; its paths follow. */
static int take_kept(const rq_parallel_job *job, rq_parallel_report_verdict *v,
		     const rq_child_msg *m)
{
	rq_conflicts none = {0};
	size_t i;

	if (sscanf(m->data, "%zu", &i) != 1 || i >= job->n)
		return -1;
	return rq_parallel_kept_add(&v->kept, i, &none);
}

/* One message of a report; 1 at its end (D or X), 0 go on, -1 unreadable. */
static int read_message(const rq_parallel_job *job, rq_parallel_report_verdict *v, int *done,
			const rq_child_msg *m, int *paths)
{
	int better = 0;

	switch (m->type) {
	case 'N':
		return take_pick(job, m);
	case 'S':
		return take_counts(v, m);
	case 'C':
	case 'E':
		if (take_failure(v, m, &better) < 0)
			return -1;
		*paths = better && m->type == 'C' ? PATHS_FIRST : PATHS_DROP; /* after a C only */
		return 0;
	case 'K':
		*paths = PATHS_KEPT;
		return take_kept(job, v, m);
	case 'P':
		if (*paths == PATHS_KEPT)
			return take_path(&v->kept.v[v->kept.n - 1].conflicts, m);
		return *paths == PATHS_FIRST ? take_path(&v->first.conf, m) : 0;
	case 'F':
		if (!v->has_other && parse_error(m->data, &v->other) < 0)
			return -1;
		v->has_other = 1;
		return 0;
	case 'D':
	case 'X': /* X: the child took no group (and left no part file) */
		*done = m->type == 'D';
		return 1;
	default:
		return -1;
	}
}

/* Parse one child's report into the verdict; 0, or -1 when it is unreadable. */
int rq_parallel_report_read(const rq_parallel_job *job, rq_parallel_report_verdict *v,
			    rq_child_in *in, int *done)
{
	rq_child_msg m;
	int paths = PATHS_DROP, r;

	while ((r = rq_child_in_next(in, &m)) == 1) {
		int a = read_message(job, v, done, &m, &paths);
		rq_child_in_drop(in);
		if (a != 0)
			return a < 0 ? -1 : 0;
	}
	return -1; /* no end: not a whole report */
}
