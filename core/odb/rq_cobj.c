/* SPDX-License-Identifier: GPL-2.0-only; follows git's commit.c, tag.c and object-name.c */
/*
 * rq_cobj: commits and tags read at the repository's width, and a cache of
 * parsed commits (see the header).
 */
#include "rq_cobj.h"
#include "rq_hindex.h"
#include "rq_mem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK	    (256 * 1024) /* an arena block (larger objects get their own) */
#define PER_CHUNK   1024	 /* commits in one chunk of the table */
#define INDEX_FIRST 1024	 /* the index's first slot count */

/* ---- parsing ---- */

static int corrupt(rq_error *err, const char *what, const rq_oid *id, const rq_oid_algo *algo)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];

	return rq_error_set(err, RQ_E_CORRUPT_OBJECT, "%s %s", what, rq_oid_fmt(hex, id, algo));
}

static const char *next_line(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl + 1 : end;
}

uint64_t rq_cobj_timestamp(const char *p, const char *e)
{
	uint64_t n = 0;
	int neg = 0;

	if (p < e && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	for (; p < e && isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (n > (UINT64_MAX - d) / 10)
			return UINT64_MAX;
		n = n * 10 + d;
	}
	return neg ? (uint64_t)0 - n : n;
}

uint64_t rq_cobj_commit_date(const char *buf, const char *tail)
{
	const char *eol, *p;

	if (buf + 6 >= tail || memcmp(buf, "author", 6))
		return 0;
	buf = next_line(buf, tail);
	if (buf + 9 >= tail || memcmp(buf, "committer", 9))
		return 0;
	if (!(eol = memchr(buf, '\n', (size_t)(tail - buf))))
		return 0;
	for (p = eol; p > buf && p[-1] != '>'; p--)
		;
	if (p == buf)
		return 0;
	while (p < eol && isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p) && *p != '-')
		return 0;
	return rq_cobj_timestamp(p, eol);
}

/* The zone at the end of an ident value ("... +0130"): as an integer. */
static int ident_tz(const char *v, size_t n)
{
	const char *z = v + n - 5;
	int t;

	if (n < 6 || z[-1] != ' ' || (z[0] != '+' && z[0] != '-'))
		return 0;
	for (int i = 1; i < 5; i++)
		if (!isdigit((unsigned char)z[i]))
			return 0;
	t = (z[1] - '0') * 1000 + (z[2] - '0') * 100 + (z[3] - '0') * 10 + (z[4] - '0');
	return z[0] == '-' ? -t : t;
}

/* The headers from p: the first author and committer lines, the encoding,
 * the blank line and the message. */
static void split_rest(rq_cobj_commit *c, const char *p, const char *end)
{
	const char *eoh = p;

	c->headers = p;
	while (eoh < end && *eoh != '\n') {
		const char *nl = next_line(eoh, end),
			   *ve = nl > eoh && nl[-1] == '\n' ? nl - 1 : nl;
		if (!c->author && ve - eoh >= 7 && !memcmp(eoh, "author ", 7)) {
			c->author = eoh + 7;
			c->author_len = (size_t)(ve - c->author);
		} else if (!c->committer && ve - eoh >= 10 && !memcmp(eoh, "committer ", 10)) {
			c->committer = eoh + 10;
			c->committer_len = (size_t)(ve - c->committer);
		}
		eoh = nl;
	}
	c->headers_len = (size_t)(eoh - p);
	c->encoding = rq_cobj_header(c, "encoding", &c->encoding_len);
	c->message = eoh < end ? eoh + 1 : end;
	c->message_len = (size_t)(end - c->message);
	if (c->committer)
		c->tz = ident_tz(c->committer, c->committer_len);
}

/* The parent lines from *p (git's loop): their number, or -1 damaged.
 * ids: where they go (NULL: only counted). */
static long parent_lines(const char **p, const char *tail, const rq_oid_algo *algo, rq_oid *ids)
{
	const size_t plen = algo->hexsz + 7;
	const char *b = *p;
	long n = 0;
	rq_oid tmp;

	while (b + plen < tail && !memcmp(b, "parent ", 7)) {
		if (tail <= b + plen + 1 ||
		    rq_oid_parse_git(ids ? &ids[n] : &tmp, algo, b + 7, algo->hexsz) < 0 ||
		    b[plen] != '\n')
			return -1;
		b += plen + 1;
		n++;
	}
	*p = b;
	return n;
}

int rq_cobj_parse_commit(rq_cobj_commit *out, const rq_oid_algo *algo, const rq_oid *id,
			 const char *raw, size_t len, rq_odb_read_alloc alloc, void *actx,
			 rq_error *err)
{
	const size_t tlen = algo->hexsz + 5;
	const char *tail = raw + len, *p;
	rq_oid *ids = NULL;
	long n;

	memset(out, 0, sizeof(*out));
	out->id = *id;
	out->raw = raw;
	out->len = len;
	if (len <= tlen + 1 || memcmp(raw, "tree ", 5) || raw[tlen] != '\n')
		return corrupt(err, "bogus commit object", id, algo);
	if (rq_oid_parse_git(&out->tree, algo, raw + 5, algo->hexsz) < 0)
		return corrupt(err, "bad tree pointer in commit", id, algo);
	p = raw + tlen + 1;
	if ((n = parent_lines(&p, tail, algo, NULL)) < 0)
		return corrupt(err, "bad parents in commit", id, algo);
	if (n && (!alloc || !(ids = alloc(actx, (size_t)n * sizeof(*ids)))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	p = raw + tlen + 1;
	parent_lines(&p, tail, algo, ids);
	out->parents = ids;
	out->nparents = (size_t)n;
	out->date = rq_cobj_commit_date(p, tail);
	split_rest(out, p, tail);
	return 0;
}

const char *rq_cobj_header(const rq_cobj_commit *c, const char *key, size_t *len)
{
	const char *p = c->headers, *end = c->headers + c->headers_len;
	size_t k = strlen(key);

	for (; p < end; p = next_line(p, end)) {
		const char *v, *e;
		if ((size_t)(end - p) <= k || memcmp(p, key, k) || p[k] != ' ')
			continue;
		v = e = p + k + 1;
		do
			e = next_line(e, end);
		while (e < end && *e == ' ');
		*len = (size_t)(e - v) - (e > v && e[-1] == '\n');
		return v;
	}
	return NULL;
}

int rq_cobj_parse_tag(rq_cobj_tag *out, const rq_oid_algo *algo, const rq_oid *id, const char *raw,
		      size_t len, rq_error *err)
{
	const char *tail = raw + len, *p = raw + 7 + algo->hexsz, *nl;
	char hex[RQ_OID_MAX_HEXSZ + 1], type[20];

	if (len < algo->hexsz + 24 || memcmp(raw, "object ", 7) ||
	    rq_oid_parse_git(&out->object, algo, raw + 7, algo->hexsz) < 0 || *p++ != '\n' ||
	    memcmp(p, "type ", 5))
		return corrupt(err, "bad tag object", id, algo);
	p += 5;
	if (!(nl = memchr(p, '\n', (size_t)(tail - p))) || (size_t)(nl - p) >= sizeof(type))
		return corrupt(err, "bad tag object", id, algo);
	memcpy(type, p, (size_t)(nl - p));
	type[nl - p] = '\0';
	out->type = git_object_string2type(type);
	if (out->type == GIT_OBJECT_INVALID || out->type > GIT_OBJECT_TAG)
		return rq_error_set(err, RQ_E_CORRUPT_OBJECT, "unknown tag type '%s' in %s", type,
				    rq_oid_fmt(hex, id, algo));
	return 0;
}

int rq_cobj_read_odb(void *ctx, const rq_oid *id, rq_odb_read_alloc alloc, void *actx,
		     rq_odb_read_obj *out)
{
	return rq_odb_read_into(ctx, id, alloc, actx, out);
}

/* ---- the cache ---- */

typedef struct block {
	struct block *next;
	size_t used, size;
	unsigned char data[];
} block;

struct rq_cobj_cache {
	const rq_oid_algo *algo;
	rq_cobj_read_fn read;
	void *ctx;
	rq_cobj_graft_fn graft;
	void *graft_ctx;
	block *blocks;		 /* the arena, the current block first */
	rq_cobj_commit **chunks; /* PER_CHUNK commits each: their addresses stay */
	size_t nchunks, capchunks, n;
	rq_hindex index;
};

static rq_cobj_commit *at(const rq_cobj_cache *c, size_t i)
{
	return &c->chunks[i / PER_CHUNK][i % PER_CHUNK];
}

/* n bytes of the arena, 8-aligned (rq_odb_read_alloc). */
static void *arena_alloc(void *ctx, size_t n)
{
	rq_cobj_cache *c = ctx;
	block *b = c->blocks;
	size_t need = (n + 7) & ~(size_t)7;

	if (need < n)
		return NULL;
	if (!b || b->size - b->used < need) {
		size_t size = need > BLOCK / 4 ? need : BLOCK;
		if (!(b = malloc(sizeof(*b) + size)))
			return NULL;
		b->used = 0;
		b->size = size;
		/* a block of its own goes behind the current one */
		if (size != BLOCK && c->blocks) {
			b->next = c->blocks->next;
			c->blocks->next = b;
		} else {
			b->next = c->blocks;
			c->blocks = b;
		}
	}
	b->used += need;
	return b->data + b->used - need;
}

rq_cobj_cache *rq_cobj_cache_new(const rq_oid_algo *algo, rq_cobj_read_fn read, void *ctx)
{
	rq_cobj_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->algo = algo ? algo : &rq_oid_sha1;
	c->read = read;
	c->ctx = ctx;
	return c;
}

void rq_cobj_cache_free(rq_cobj_cache *c)
{
	if (!c)
		return;
	while (c->blocks) {
		block *b = c->blocks;
		c->blocks = b->next;
		free(b);
	}
	for (size_t i = 0; i < c->nchunks; i++)
		free(c->chunks[i]);
	free(c->chunks);
	free(c->index.slot);
	free(c);
}

void rq_cobj_cache_grafts(rq_cobj_cache *c, rq_cobj_graft_fn fn, void *ctx)
{
	c->graft = fn;
	c->graft_ctx = ctx;
}

/* Commit slot's graft, when it has one, in place of its parents. 0 or
 * -1 (out of memory). */
static int apply_graft(rq_cobj_cache *c, rq_cobj_commit *slot)
{
	const rq_oid *g = NULL;
	long n = c->graft ? c->graft(c->graft_ctx, &slot->id, &g) : -1;
	rq_oid *v = NULL;

	if (n < 0)
		return 0;
	if (n && !(v = arena_alloc(c, (size_t)n * sizeof(*v))))
		return -1;
	if (n)
		memcpy(v, g, (size_t)n * sizeof(*v));
	slot->parents = v;
	slot->nparents = (size_t)n;
	return 0;
}

size_t rq_cobj_cache_count(const rq_cobj_cache *c)
{
	return c->n;
}

static int id_eq(const void *ctx, size_t i, const void *key)
{
	return rq_oid_eq(&at(ctx, i)->id, key);
}

static size_t id_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_id(at(ctx, i)->id.id);
}

/* Room for one more commit: its slot, or NULL out of memory. */
static rq_cobj_commit *next_slot(rq_cobj_cache *c)
{
	if (c->n == c->nchunks * PER_CHUNK) {
		rq_cobj_commit **v =
		    rq_mem_grow(c->chunks, &c->capchunks, c->nchunks + 1, sizeof(*v), 8);
		if (!v)
			return NULL;
		c->chunks = v;
		if (!(v[c->nchunks] = malloc(PER_CHUNK * sizeof(**v))))
			return NULL;
		c->nchunks++;
	}
	if (rq_hindex_reserve(&c->index, INDEX_FIRST, c->n, id_hash, c) < 0)
		return NULL;
	return at(c, c->n);
}

/* Read id into alloc(actx): 0, or -1 with err set (missing: "bad object"). */
static int read_object(rq_cobj_cache *c, const rq_oid *id, rq_odb_read_alloc alloc, void *actx,
		       rq_odb_read_obj *o, rq_error *err)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];
	int r = c->read(c->ctx, id, alloc, actx, o);

	if (r == GIT_ENOTFOUND)
		return rq_error_set(err, RQ_E_BAD_REVISION, "bad object %s",
				    rq_oid_fmt(hex, id, c->algo));
	return r < 0 ? rq_error_git(err, "cannot read an object") : 0;
}

/* Commit id's bytes o, parsed into the table. */
static int add_commit(rq_cobj_cache *c, const rq_oid *id, const rq_odb_read_obj *o,
		      const rq_cobj_commit **out, rq_error *err)
{
	rq_cobj_commit *slot = next_slot(c);

	if (!slot)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (rq_cobj_parse_commit(slot, c->algo, id, (const char *)o->data, o->len, arena_alloc, c,
				 err) < 0)
		return -1;
	if (apply_graft(c, slot) < 0)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rq_hindex_add(&c->index, rq_hindex_hash_id(id->id), c->n++);
	*out = slot;
	return 0;
}

static int not_a(const rq_cobj_cache *c, const rq_oid *id, git_object_t type, rq_error *err)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];

	return rq_error_set(err, RQ_E_BAD_REVISION, "object %s is a %s, not a commit",
			    rq_oid_fmt(hex, id, c->algo), git_object_type2string(type));
}

int rq_cobj_get(rq_cobj_cache *c, const rq_oid *id, const rq_cobj_commit **out, rq_error *err)
{
	long k = rq_hindex_find(&c->index, rq_hindex_hash_id(id->id), id_eq, c, id);
	rq_odb_read_obj o;

	if (k >= 0) {
		*out = at(c, (size_t)k);
		return 0;
	}
	if (read_object(c, id, arena_alloc, c, &o, err) < 0)
		return -1;
	if (o.type != GIT_OBJECT_COMMIT)
		return not_a(c, id, o.type, err); /* (its bytes stay in the arena) */
	return add_commit(c, id, &o, out, err);
}

static void *heap_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

/* git's peel_to_type: where a step leads from object id of type t whose
 * bytes are o. 1 with *next (and *t), 0 at want, -1 with err set. */
static int peel_step(rq_cobj_cache *c, const rq_oid *id, git_object_t *t, rq_odb_read_obj *o,
		     git_object_t want, const char *name, rq_oid *next, rq_error *err)
{
	rq_cobj_tag tag;
	const rq_cobj_commit *cm;

	if (*t == want)
		return 0;
	if (*t == GIT_OBJECT_TAG) {
		if (rq_cobj_parse_tag(&tag, c->algo, id, (const char *)o->data, o->len, err) < 0)
			return -1;
		*next = tag.object;
		return 1;
	}
	if (*t == GIT_OBJECT_COMMIT && rq_cobj_get(c, id, &cm, err) == 0) {
		*next = cm->tree;
		return 1;
	}
	if (*t == GIT_OBJECT_COMMIT)
		return -1;
	return rq_error_set(err, RQ_E_BAD_REVISION,
			    "%s: expected %s type, but the object dereferences to %s type", name,
			    git_object_type2string(want), git_object_type2string(*t));
}

int rq_cobj_peel(rq_cobj_cache *c, const rq_oid *id, git_object_t want, const char *name,
		 rq_oid *out, rq_error *err)
{
	rq_oid cur = *id;

	for (int depth = 0; depth < 1000; depth++) {
		long k = rq_hindex_find(&c->index, rq_hindex_hash_id(cur.id), id_eq, c, &cur);
		rq_odb_read_obj o = {NULL, 0, GIT_OBJECT_COMMIT, NULL};
		git_object_t t = GIT_OBJECT_COMMIT;
		int r;
		if (k < 0 && read_object(c, &cur, heap_alloc, NULL, &o, err) < 0)
			return -1;
		t = o.type;
		r = peel_step(c, &cur, &t, &o, want, name, &cur, err);
		free(o.data);
		if (r <= 0) {
			*out = cur;
			return r;
		}
	}
	return rq_error_set(err, RQ_E_CORRUPT_OBJECT, "%s: a chain of tags that does not end",
			    name);
}

/* rq_reach's read: the cached commit's date and a copy of its parents. */
static int reach_read(void *ctx, const rq_oid *id, int64_t *date, rq_oid **parents,
		      size_t *nparents, rq_error *err)
{
	const rq_cobj_commit *c = NULL;

	*parents = NULL;
	*nparents = 0;
	if (rq_cobj_get(ctx, id, &c, err) < 0)
		return -1;
	*date = c->date > INT64_MAX ? INT64_MAX : (int64_t)c->date;
	if (c->nparents && !(*parents = malloc(c->nparents * sizeof(**parents))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (c->nparents)
		memcpy(*parents, c->parents, c->nparents * sizeof(**parents));
	*nparents = c->nparents;
	return 0;
}

rq_reach_reader rq_cobj_reach_reader(rq_cobj_cache *c)
{
	return (rq_reach_reader){reach_read, c};
}
