/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_conflict: the list of conflicts a merge reports (see rq_conflict.h).
 */
#include "rq_conflict.h"

#include "rq_mem.h"

#include <stdlib.h>
#include <string.h>

/* The names are part of replayq's output (results' conflict kinds): they
 * never change, and a new kind gets a new name. */
static const char *const kind_names[RQ_CONFLICT_COUNT] = {
    [RQ_CONFLICT_CONTENT] = "content",
    [RQ_CONFLICT_ADD_ADD] = "add/add",
    [RQ_CONFLICT_MODIFY_DELETE] = "modify/delete",
    [RQ_CONFLICT_RENAME] = "rename",
    [RQ_CONFLICT_FILE_DIRECTORY] = "file/directory",
    [RQ_CONFLICT_RENAME_DELETE] = "rename/delete",
    [RQ_CONFLICT_RENAME_RENAME] = "rename/rename",
    [RQ_CONFLICT_DIR_RENAME] = "directory rename",
    [RQ_CONFLICT_MODE] = "mode",
    [RQ_CONFLICT_TYPE] = "distinct types",
    [RQ_CONFLICT_RESOLUTION] = "resolution",
    [RQ_CONFLICT_MERGE_BASES] = "merge bases",
};

/*
 * A value outside the enum (never produced) reads as the most general kind
 * rather than failing: the name goes into a result that must be written.
 */
const char *rq_conflict_kind_name(rq_conflict_kind kind)
{
	if ((int)kind < 0 || kind >= RQ_CONFLICT_COUNT)
		return "content";
	return kind_names[kind];
}

/* The list grows like every array of the core (rq_mem_grow: 8, then
 * doubling); a path whose copy fails leaves the list as it was. */
int rq_conflicts_add(rq_conflicts *c, const char *path, rq_conflict_kind kind)
{
	rq_conflict *nv = rq_mem_grow(c->v, &c->cap, c->n + 1, sizeof(*c->v), 8);

	if (!nv)
		return -1;
	c->v = nv;
	if (!(c->v[c->n].path = strdup(path)))
		return -1;
	c->v[c->n++].kind = kind;
	return 0;
}

/* The list is left empty and valid, ready for reuse. */
void rq_conflicts_free(rq_conflicts *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

int rq_conflict_details_add(rq_conflict_details *d, const rq_conflict_detail *detail)
{
	rq_conflict_detail *nv = rq_mem_grow(d->v, &d->cap, d->n + 1, sizeof(*d->v), 8);

	if (!nv)
		return -1;
	d->v = nv;
	d->v[d->n++] = *detail;
	return 0;
}

void rq_conflict_details_free(rq_conflict_details *d)
{
	if (!d)
		return;
	free(d->v);
	memset(d, 0, sizeof(*d));
}
