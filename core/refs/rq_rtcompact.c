/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (compaction) and
 * git's reftable/stack.c (the geometric compaction segment) */
/*
 * rq_rtcompact: compaction of a reftable stack (see rq_rtcompact.h).
 */
#include "rq_rtcompact.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rq_rtfile.h"
#include "rq_rtwrite.h"

/*
 * git's auto compaction (reftable/stack.c, suggest_compaction_segment):
 * the table sizes (less the header) should fall by half or more from the
 * oldest to the newest; [*start, *end) is the run of newest tables whose
 * merge restores that, or empty.
 */
static void segment(const rq_rtstack *st, size_t *start, size_t *end)
{
	size_t n = rq_rtstack_ntables(st), i;
	uint64_t bytes = 0, *size = calloc(n ? n : 1, sizeof(*size));

	*start = *end = 0;
	if (!size || n < 2) {
		free(size);
		return;
	}
	for (i = 0; i < n; i++)
		size[i] = rq_rtable_size(rq_rtstack_table(st, i)) - 23;
	for (i = n - 1; i > 0; i--)
		if (size[i - 1] < size[i] * 2) {
			*end = i + 1;
			bytes = size[i];
			break;
		}
	for (; i > 0; i--) {
		uint64_t cur = bytes;
		bytes += size[i - 1];
		if (size[i - 1] < cur * 2)
			*start = i - 1;
	}
	free(size);
}

/* The tables being compacted (start..end-1 of the stack as it was read
 * under the lock): their names, and the locks taken on them. */
typedef struct crange {
	size_t start, end, n0;
	char **names; /* n0 of them, from the first table asked for */
	char **locks;
	size_t nlocks;
	char table[80]; /* the new table ("" when the merge left nothing) */
} crange;

static void crange_free(crange *c)
{
	for (size_t i = 0; i < c->nlocks; i++) {
		unlink(c->locks[i]);
		free(c->locks[i]);
	}
	for (size_t i = 0; c->names && i < c->n0; i++)
		free(c->names[i]);
	free(c->locks);
	free(c->names);
}

/* The name of table i of the range. */
static const char *cname(const crange *c, size_t i)
{
	return c->names[i - (c->end - c->n0)];
}

/*
 * Lock the tables of the range, the newest first (git's order: a newer
 * process may then compact what it added while an older one compacts the
 * rest). A table locked already ends the range there, or, for a full
 * compaction, is an error.
 */
static int lock_tables(rq_rttx *tx, crange *c, int all, rq_error *err)
{
	char path[PATH_MAX];

	c->n0 = c->end - c->start;
	if (!(c->names = calloc(c->n0, sizeof(char *))) ||
	    !(c->locks = calloc(c->n0, sizeof(char *))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = c->end; i-- > c->start;) {
		const char *name = rq_rtable_name(rq_rtstack_table(tx->st, i));
		int fd;
		if (rq_rtfile_path(tx->st, name, ".lock", path, err) < 0)
			return -1;
		if ((fd = rq_rtfile_lock(tx, path, -1, err)) < 0) {
			if (err->code != RQ_E_REF_LOCKED || all)
				return -1;
			c->start = i + 1; /* another process compacts the older ones */
			break;
		}
		close(fd);
		if (!(c->locks[c->nlocks] = strdup(path))) {
			unlink(path);
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		}
		c->nlocks++;
		if (!(c->names[i - c->start] = strdup(name)))
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	return 0;
}

/* Merge the range into w: the newest record of each key; deletions only
 * while older tables remain below. */
static int merge_into(rq_rttx *tx, const crange *c, rq_rtwrite *w, rq_error *err)
{
	size_t n = c->end - c->start;
	rq_rtstack_iter *it;
	const rq_rtable_ref *r;
	const rq_rtable_log *l;
	int k;

	if (rq_rtstack_refs_range(&it, tx->st, c->start, n, NULL, 1, err) < 0)
		return -1;
	while ((k = rq_rtstack_next_ref(it, &r, err)) == 0)
		if ((c->start || r->type != RQ_RTABLE_DELETION) &&
		    rq_rtwrite_add_ref(w, r, err) < 0) {
			k = -1;
			break;
		}
	rq_rtstack_iter_free(it);
	if (k < 0 || rq_rtstack_logs_range(&it, tx->st, c->start, n, NULL, 1, err) < 0)
		return -1;
	while ((k = rq_rtstack_next_log(it, &l, err)) == 0)
		if ((c->start || l->type != RQ_RTABLE_LOG_DELETION) &&
		    rq_rtwrite_add_log(w, l, err) < 0) {
			k = -1;
			break;
		}
	rq_rtstack_iter_free(it);
	return k < 0 ? -1 : 0;
}

/* Write the merged table (c->table gets its name; "" when empty). */
static int merge_write(rq_rttx *tx, crange *c, rq_error *err)
{
	uint64_t min = UINT64_MAX, max = 0;
	rq_rtwrite *w;
	rq_buf bytes = {0};
	int rc;

	for (size_t i = c->start; i < c->end; i++) {
		const rq_rtable *t = rq_rtstack_table(tx->st, i);
		if (rq_rtable_min_update_index(t) < min)
			min = rq_rtable_min_update_index(t);
		if (rq_rtable_max_update_index(t) > max)
			max = rq_rtable_max_update_index(t);
	}
	c->table[0] = '\0';
	if (!(w = rq_rtwrite_new(NULL, rq_rtstack_algo(tx->st), min, max)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rc = merge_into(tx, c, w, err);
	if (rc == 0 && !rq_rtwrite_empty(w) && (rc = rq_rtwrite_finish(w, &bytes, err)) == 0)
		rc = rq_rtfile_write_table(tx->st, tx->token, min, max, &bytes, c->table,
					   sizeof(c->table), err);
	rq_rtwrite_free(w);
	free(bytes.p);
	return rc;
}

/* Under the lock again: the list with the range replaced by the new
 * table. The range must still be there, in order (its tables are locked:
 * nobody else compacts them). */
static int replace_range(rq_rttx *tx, const crange *c, rq_error *err)
{
	size_t n = rq_rtstack_ntables(tx->st), k = c->end - c->start, at, o = 0;
	const char **names;
	int rc;

	for (at = 0; at + k <= n; at++) {
		size_t j = 0;
		while (j < k && !strcmp(rq_rtable_name(rq_rtstack_table(tx->st, at + j)),
					cname(c, c->start + j)))
			j++;
		if (j == k)
			break;
	}
	if (at + k > n)
		return rq_error_set(err, RQ_E_IO, "the tables being compacted left the stack");
	if (!(names = calloc(n + 1, sizeof(*names))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (i < at || i >= at + k)
			names[o++] = rq_rtable_name(rq_rtstack_table(tx->st, i));
		else if (i == at && c->table[0])
			names[o++] = c->table;
	rc = rq_rtfile_write_list(tx, names, o, NULL, err);
	free(names);
	return rc;
}

static int compact_range(rq_rttx *tx, crange *c, int all, rq_error *err)
{
	char path[PATH_MAX];
	long timeout = tx->o.lock_timeout_ms ? tx->o.lock_timeout_ms : RQ_RTFILE_LOCK_TIMEOUT_MS;
	int rc;

	if (lock_tables(tx, c, all, err) < 0)
		return !all && err->code == RQ_E_REF_LOCKED ? 0 : -1;
	if (c->end - c->start < 2)
		return 0;
	rq_rtfile_unlock(tx); /* writers may go on while the range is merged */
	if (merge_write(tx, c, err) < 0)
		return -1;
	rc = (tx->fd = rq_rtfile_lock(tx, tx->lock, timeout, err)) < 0 ? -1 : 0;
	if (rc == 0)
		rc = rq_rtstack_reload(tx->st, 0, err);
	if (rc == 0)
		rc = replace_range(tx, c, err);
	if (rc < 0 && c->table[0] && rq_rtfile_path(tx->st, c->table, "", path, err) == 0)
		unlink(path);
	if (rc < 0)
		return -1;
	rq_rtstack_reload(tx->st, 0, err);
	for (size_t i = c->start; i < c->end; i++)
		if (rq_rtfile_path(tx->st, cname(c, i), "", path, err) == 0)
			unlink(path);
	return 0;
}

int rq_rtcompact_run(rq_rtstack *st, const rq_rttx_opts *opts, int all, rq_error *err)
{
	rq_rttx_opts o = {0};
	crange c = {0};
	rq_rttx *tx;
	int rc = 0;

	if (opts)
		o = *opts;
	if (!all)
		o.lock_timeout_ms = -1; /* best effort: not while another writes */
	if (rq_rttx_begin(&tx, st, &o, err) < 0)
		return !all && err->code == RQ_E_REF_LOCKED ? 0 : -1;
	if (all) {
		c.start = 0;
		c.end = rq_rtstack_ntables(st);
	} else {
		segment(st, &c.start, &c.end);
	}
	if (c.end - c.start >= 2)
		rc = compact_range(tx, &c, all, err);
	crange_free(&c);
	rq_rttx_free(tx);
	return rc;
}
