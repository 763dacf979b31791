/* SPDX-License-Identifier: GPL-2.0-only; the order and errors follow libgit2's odb.c */
/*
 * rq_odb_read: objects read from an rq_odb database without libgit2's
 * object API (see the header).
 */
#include "rq_odb_read.h"
#include "rq_mem.h"
#include "rq_odb_loose.h"
#include "rq_odb_packread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BK_MEM, BK_VIEW, BK_PACKS, BK_LOOSE, BK_OTHER };

/* One backend of the database, classified once. */
typedef struct bk {
	git_odb_backend *b;
	rq_odb_packread *pr; /* BK_PACKS */
	int kind;
} bk;

/*
 * The trees read lately through rq_odb_read_trees, kept by id (as
 * libgit2's object cache kept them): a merge opens the same trees again
 * and again (every branch of a mass replay merges against the new base's
 * tree; a walk compares each commit with its parent, the next commit it
 * compares). The least recently used one not open goes for a new one; a
 * tree larger than KEEP_MAX is not kept.
 */
#define KEEP_TREES 32
#define KEEP_MAX   (256u * 1024u)

typedef struct kept_tree {
	rq_oid id;
	unsigned char *data; /* malloc'd; NULL: a free slot */
	size_t len;
	uint64_t used; /* when last read */
	int refs;      /* trees open over it */
} kept_tree;

struct rq_odb_read {
	git_odb *odb;
	bk *v; /* in libgit2's order */
	size_t n, cap;
	size_t seen; /* the database's number of backends then */
	const rq_oid_algo *algo;
	kept_tree kept[KEEP_TREES];
	uint64_t clock;
};

int rq_odb_read_refused(const rq_oid_algo *algo, const char *what)
{
	char msg[160];

	if (!algo || algo->rawsz == GIT_OID_RAWSZ)
		return 0;
	snprintf(msg, sizeof(msg), "libgit2 has no SHA-256: %s", what);
	git_error_set_str(GIT_ERROR_INVALID, msg);
	return GIT_ERROR;
}

static int classify(git_odb_backend *b)
{
	git_object_t type;
	size_t len;
	rq_oid none;

	if (rq_odb_packs_reader(b))
		return BK_PACKS;
	if (rq_odb_loose_is(b))
		return BK_LOOSE;
	memset(&none, 0, sizeof(none));
	if (rq_odb_mem_backend_read(b, &none, NULL, &len, &type) != -2)
		return BK_MEM;
	if (rq_odb_view_redirect(b, &none, &none) != 0)
		return BK_VIEW;
	return BK_OTHER;
}

/* The backends as libgit2 orders them (git_odb_get_backend's order),
 * again when their number changed. 0, or -1 out of memory. */
static int sync_backends(rq_odb_read *rd)
{
	size_t n = git_odb_num_backends(rd->odb);
	bk *v;

	if (n == rd->seen && rd->algo)
		return 0;
	if (!(v = rq_mem_grow(rd->v, &rd->cap, n, sizeof(*v), 8))) {
		git_error_set_oom();
		return -1;
	}
	rd->v = v;
	rd->n = 0;
	rd->algo = NULL;
	for (size_t i = 0; i < n; i++) {
		git_odb_backend *b = NULL;
		if (git_odb_get_backend(&b, rd->odb, i) < 0 || !b)
			continue;
		v[rd->n].b = b;
		v[rd->n].pr = rq_odb_packs_reader(b);
		v[rd->n].kind = classify(b);
		if (!rd->algo && v[rd->n].pr)
			rd->algo = rq_odb_packread_algo(v[rd->n].pr);
		rd->n++;
	}
	for (size_t i = 0; i < rd->n && !rd->algo; i++)
		if (rd->v[i].kind == BK_LOOSE)
			rd->algo = rq_odb_loose_algo(rd->v[i].b);
	if (!rd->algo)
		rd->algo = &rq_oid_sha1;
	rd->seen = n;
	return 0;
}

int rq_odb_read_open(rq_odb_read **out, git_odb *odb)
{
	rq_odb_read *rd = calloc(1, sizeof(*rd));

	*out = NULL;
	if (!rd) {
		git_error_set_oom();
		return -1;
	}
	rd->odb = odb;
	if (sync_backends(rd) < 0) {
		rq_odb_read_free(rd);
		return -1;
	}
	*out = rd;
	return 0;
}

void rq_odb_read_free(rq_odb_read *rd)
{
	if (!rd)
		return;
	for (size_t i = 0; i < KEEP_TREES; i++)
		free(rd->kept[i].data);
	free(rd->v);
	free(rd);
}

const rq_oid_algo *rq_odb_read_algo(rq_odb_read *rd)
{
	return sync_backends(rd) < 0 ? &rq_oid_sha1 : rd->algo;
}

void rq_odb_read_obj_free(rq_odb_read_obj *o)
{
	if (!o || !o->data)
		return;
	if (o->owner)
		git_odb_backend_data_free(o->owner, o->data);
	else
		free(o->data);
	o->data = NULL;
}

/* libgit2's "object not found - <what> (<hex>)" (nhex digits). */
static int not_found(const rq_odb_read *rd, const char *what, const rq_oid *id, size_t nhex)
{
	char hex[RQ_OID_MAX_HEXSZ + 1], msg[RQ_OID_MAX_HEXSZ + 128];

	rq_oid_fmt(hex, id, rd->algo);
	snprintf(msg, sizeof(msg), "object not found - %s (%.*s)", what, (int)nhex, hex);
	git_error_set_str(GIT_ERROR_ODB, msg);
	return GIT_ENOTFOUND;
}

/* ---- one backend ---- */

/* A read (want) or a header of id from the memory store or the packs'
 * reader: 1 found, 0 not there, or an error (< 0, set). */
static int read_ours(const bk *k, const rq_oid *id, rq_odb_read_obj *o, int want)
{
	void *p = NULL;
	int r;

	if (k->kind == BK_MEM) {
		r = rq_odb_mem_backend_read(k->b, id, want ? &p : NULL, &o->len, &o->type);
		o->data = p;
		return r < 0 ? GIT_ERROR : r;
	}
	if (want)
		r = rq_odb_packread_take(k->pr, id, &o->data, &o->len, &o->type);
	else
		r = rq_odb_packread_read_header(k->pr, id, &o->len, &o->type);
	return r < 0 ? rq_odb_packs_failed(k->b, id, r) : r;
}

/* The same from any backend (libgit2's codes for the others): 1, 0, or
 * an error. */
static int read_one(rq_odb_read *rd, const bk *k, const rq_oid *id, rq_odb_read_obj *o, int want)
{
	void *p = NULL;
	git_oid gid;
	int r;

	o->owner = NULL;
	if (k->kind == BK_MEM || k->kind == BK_PACKS) {
		if ((r = read_ours(k, id, o, want)) != 0 || k->kind == BK_MEM)
			return r;
		r = rq_odb_packs_fallback(k->b, id, want ? &p : NULL, &o->len, &o->type);
	} else if (k->kind == BK_LOOSE) {
		r = want ? rq_odb_loose_read(k->b, id, &p, &o->len, &o->type)
			 : rq_odb_loose_read_header(k->b, id, &o->len, &o->type);
	} else { /* another backend: through libgit2's interface (SHA-1) */
		if (rq_oid_to_git(&gid, id, rd->algo) < 0 ||
		    (want ? !k->b->read : !k->b->read_header))
			return 0;
		r = want ? k->b->read(&p, &o->len, &o->type, k->b, &gid)
			 : k->b->read_header(&o->len, &o->type, k->b, &gid);
	}
	if (r == GIT_ENOTFOUND || r == GIT_PASSTHROUGH)
		return 0;
	if (r < 0)
		return r;
	o->data = p;
	o->owner = k->b;
	return 1;
}

/*
 * One pass over the backends (refreshed: only those with a refresh, as
 * libgit2's second pass): 1 found, 0 not, or an error. *to: the id the
 * view redirected to (replace refs).
 */
static int pass(rq_odb_read *rd, const rq_oid *id, rq_odb_read_obj *o, int want, int refreshed,
		rq_oid *to)
{
	for (size_t i = 0; i < rd->n; i++) {
		const bk *k = &rd->v[i];
		int r;
		if (refreshed && !k->b->refresh)
			continue;
		if (k->kind == BK_VIEW) {
			if (rq_odb_view_redirect(k->b, id, to) < 0)
				return GIT_ERROR;
			continue;
		}
		if ((r = read_one(rd, k, to, o, want)) != 0)
			return r;
	}
	return 0;
}

/* The empty tree, known without being stored (libgit2's and git's). */
static int empty_tree(rq_odb_read_obj *o, int want)
{
	o->owner = NULL;
	o->type = GIT_OBJECT_TREE;
	o->len = 0;
	if (want && !(o->data = calloc(1, 1))) {
		git_error_set_oom();
		return GIT_ERROR;
	}
	return 0;
}

static int lookup(rq_odb_read *rd, const rq_oid *id, rq_odb_read_obj *o, int want)
{
	rq_oid to = *id;
	int r;

	memset(o, 0, sizeof(*o));
	if (sync_backends(rd) < 0)
		return GIT_ERROR;
	if (rq_oid_eq(id, &rd->algo->empty_tree))
		return empty_tree(o, want);
	if ((r = pass(rd, id, o, want, 0, &to)) == 0 && git_odb_refresh(rd->odb) == 0) {
		to = *id;
		r = pass(rd, id, o, want, 1, &to);
	}
	if (r > 0)
		return 0;
	if (r < 0)
		return r;
	if (!rq_oid_eq(&to, id)) { /* rq_odb_view's words */
		char a[RQ_OID_MAX_HEXSZ + 1], b[RQ_OID_MAX_HEXSZ + 1], msg[200];
		snprintf(msg, sizeof(msg), "replacement %s not found for %s",
			 rq_oid_fmt(a, &to, rd->algo), rq_oid_fmt(b, id, rd->algo));
		git_error_set_str(RQ_ERROR_GIT_CORRUPT, msg);
		return GIT_ERROR;
	}
	return not_found(rd, want ? "no match for id" : "cannot read header for", id,
			 rd->algo->hexsz);
}

int rq_odb_read_object(rq_odb_read *rd, const rq_oid *id, rq_odb_read_obj *out)
{
	return lookup(rd, id, out, 1);
}

int rq_odb_read_into(rq_odb_read *rd, const rq_oid *id, rq_odb_read_alloc alloc, void *ctx,
		     rq_odb_read_obj *out)
{
	unsigned char *p;
	int r = lookup(rd, id, out, 1);

	if (r < 0)
		return r;
	if (!(p = alloc(ctx, out->len + 1))) {
		rq_odb_read_obj_free(out);
		git_error_set_oom();
		return GIT_ERROR;
	}
	memcpy(p, out->data, out->len + 1);
	rq_odb_read_obj_free(out);
	out->data = p;
	return 0;
}

int rq_odb_read_header(rq_odb_read *rd, const rq_oid *id, size_t *len, git_object_t *type)
{
	rq_odb_read_obj o;
	int r = lookup(rd, id, &o, 0);

	if (r == 0) {
		*len = o.len;
		*type = o.type;
	}
	return r;
}

/* ---- presence ---- */

static int exists_one(rq_odb_read *rd, const bk *k, const rq_oid *id)
{
	git_oid gid;
	size_t len;
	git_object_t type;
	int r;

	switch (k->kind) {
	case BK_MEM:
		return rq_odb_mem_backend_read(k->b, id, NULL, &len, &type) > 0;
	case BK_PACKS: /* libgit2's pack backend only when ours cannot tell */
		if ((r = rq_odb_packread_has(k->pr, id)) >= 0)
			return r;
		return rq_odb_packs_fallback(k->b, id, NULL, &len, &type) == 0;
	case BK_LOOSE:
		return rq_odb_loose_exists(k->b, id);
	case BK_VIEW:
		return 0;
	default:
		return rq_oid_to_git(&gid, id, rd->algo) == 0 && k->b->exists &&
		       k->b->exists(k->b, &gid) > 0;
	}
}

static int exists_pass(rq_odb_read *rd, const rq_oid *id, int refreshed)
{
	for (size_t i = 0; i < rd->n; i++)
		if ((!refreshed || rd->v[i].b->refresh) && exists_one(rd, &rd->v[i], id))
			return 1;
	return 0;
}

int rq_odb_read_exists(rq_odb_read *rd, const rq_oid *id)
{
	if (rq_oid_is_zero(id) || sync_backends(rd) < 0)
		return 0;
	if (exists_pass(rd, id, 0))
		return 1;
	return git_odb_refresh(rd->odb) == 0 && exists_pass(rd, id, 1);
}

/* ---- abbreviations ---- */

/* git's words for a prefix that names more than one object */
static int ambiguous(const rq_odb_read *rd, const rq_oid *prefix, size_t nhex)
{
	char hex[RQ_OID_MAX_HEXSZ + 1], msg[RQ_OID_MAX_HEXSZ + 64];

	rq_oid_fmt(hex, prefix, rd->algo);
	snprintf(msg, sizeof(msg), "short object ID %.*s is ambiguous", (int)nhex, hex);
	git_error_set_str(GIT_ERROR_ODB, msg);
	return GIT_EAMBIGUOUS;
}

/* The matches of backend k: 0 none, 1 (*got), 2 more, or an error. */
static int prefix_one(const bk *k, const rq_oid *prefix, size_t nhex, rq_oid *got)
{
	int r;

	switch (k->kind) {
	case BK_MEM:
		r = rq_odb_mem_backend_prefix(k->b, prefix, nhex, got);
		return r == GIT_EAMBIGUOUS ? 2 : r;
	case BK_PACKS:
		r = rq_odb_packread_find_prefix(k->pr, prefix, nhex, got);
		if (r < 0)
			git_error_set_oom();
		return r < 0 ? GIT_ERROR : r;
	case BK_LOOSE:
		r = rq_odb_loose_find_prefix(k->b, prefix, nhex, got);
		if (r == GIT_EAMBIGUOUS)
			return 2;
		return r == 0 ? 1 : r == GIT_ENOTFOUND ? 0 : r;
	default: /* the view and others answer no abbreviation */
		return 0;
	}
}

/* Matches over every backend, counted into *found (the same object in
 * two backends once). 0, or an error. */
static int prefix_pass(rq_odb_read *rd, const rq_oid *prefix, size_t nhex, int refreshed,
		       rq_oid *full, int *found)
{
	for (size_t i = 0; i < rd->n && *found < 2; i++) {
		rq_oid got;
		int r;
		if (refreshed && !rd->v[i].b->refresh)
			continue;
		if ((r = prefix_one(&rd->v[i], prefix, nhex, &got)) < 0)
			return r;
		if (r == 2 || (r == 1 && *found && !rq_oid_eq(&got, full)))
			*found = 2;
		else if (r == 1 && !*found) {
			*full = got;
			*found = 1;
		}
	}
	return 0;
}

int rq_odb_read_prefix(rq_odb_read *rd, const rq_oid *prefix, size_t nhex, rq_oid *full)
{
	int found = 0, r;

	if (sync_backends(rd) < 0)
		return GIT_ERROR;
	if (nhex < RQ_OID_MIN_PREFIX) {
		git_error_set_str(GIT_ERROR_ODB, "ambiguous OID prefix - prefix length too short");
		return GIT_EAMBIGUOUS;
	}
	if (nhex >= rd->algo->hexsz) {
		if (!rq_odb_read_exists(rd, prefix))
			return not_found(rd, "no match for id prefix", prefix, rd->algo->hexsz);
		*full = *prefix;
		return 0;
	}
	if ((r = prefix_pass(rd, prefix, nhex, 0, full, &found)) < 0)
		return r;
	if (!found && git_odb_refresh(rd->odb) == 0 &&
	    (r = prefix_pass(rd, prefix, nhex, 1, full, &found)) < 0)
		return r;
	if (found > 1)
		return ambiguous(rd, prefix, nhex);
	return found ? 0 : not_found(rd, "no match for id prefix", prefix, nhex);
}

/* ---- trees, for rq_tree_open_with ---------------------------------------------- */

/* the owner a kept tree is handed out with (no backend is it) */
static char kept_owner;

static kept_tree *kept_find(rq_odb_read *rd, const rq_oid *id)
{
	for (size_t i = 0; i < KEEP_TREES; i++)
		if (rd->kept[i].data && rq_oid_eq(&rd->kept[i].id, id))
			return &rd->kept[i];
	return NULL;
}

/* Tree o (read as id) kept, its data taken (o emptied): the slot, or NULL
 * (too large, every slot open, out of memory: o left as it is). */
static kept_tree *kept_add(rq_odb_read *rd, const rq_oid *id, rq_odb_read_obj *o)
{
	kept_tree *k = NULL;
	unsigned char *data = o->data;

	for (size_t i = 0; i < KEEP_TREES; i++)
		if (!rd->kept[i].refs && (!k || rd->kept[i].used < k->used))
			k = &rd->kept[i];
	if (!k || o->len > KEEP_MAX)
		return NULL;
	if (o->owner) { /* a backend's buffer: a copy of our own */
		if (!(data = malloc(o->len + 1)))
			return NULL;
		memcpy(data, o->data, o->len + 1);
		rq_odb_read_obj_free(o);
	}
	free(k->data);
	k->id = *id;
	k->data = data;
	k->len = o->len;
	o->data = NULL;
	return k;
}

static int tree_read(void *ctx, const rq_oid *id, const unsigned char **data, size_t *len,
		     git_object_t *type, void **mem, void **owner)
{
	rq_odb_read *rd = *(rq_odb_read **)ctx;
	kept_tree *k;
	rq_odb_read_obj o;
	int rc;

	if (!rd) {
		git_error_set_str(GIT_ERROR_ODB, "the object database was closed");
		return GIT_ERROR;
	}
	if (!(k = kept_find(rd, id))) {
		if ((rc = rq_odb_read_object(rd, id, &o)) < 0)
			return rc;
		if (o.type != GIT_OBJECT_TREE || !(k = kept_add(rd, id, &o))) {
			*data = o.data; /* handed over as read */
			*len = o.len;
			*type = o.type;
			*mem = o.data;
			*owner = o.owner;
			return 0;
		}
	}
	k->refs++;
	k->used = ++rd->clock;
	*data = k->data;
	*len = k->len;
	*type = GIT_OBJECT_TREE;
	*mem = k;
	*owner = &kept_owner;
	return 0;
}

static void tree_release(void *ctx, void *mem, void *owner)
{
	rq_odb_read_obj o = {mem, 0, GIT_OBJECT_INVALID, owner};

	(void)ctx;
	if (owner == &kept_owner)
		((kept_tree *)mem)->refs--;
	else
		rq_odb_read_obj_free(&o);
}

rq_tree_reader rq_odb_read_trees(rq_odb_read **rd)
{
	return (rq_tree_reader){tree_read, tree_release, rd};
}
