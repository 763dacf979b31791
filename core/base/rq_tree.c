/* SPDX-License-Identifier: GPL-2.0-only; follows git's tree-walk.c (decode_tree_entry) */
/*
 * rq_tree: a tree object's entries as git reads them (see rq_tree.h).
 */
#include "rq_tree.h"

#include <string.h>

#define MODE_TYPE    0170000u
#define MODE_DIR     0040000u
#define MODE_REG     0100000u
#define MODE_LINK    0120000u
#define MODE_GITLINK 0160000u

uint32_t rq_tree_canon_mode(uint32_t mode)
{
	if ((mode & MODE_TYPE) == MODE_REG)
		return MODE_REG | ((mode & 0100) ? 0755 : 0644);
	if ((mode & MODE_TYPE) == MODE_LINK)
		return MODE_LINK;
	if ((mode & MODE_TYPE) == MODE_DIR)
		return MODE_DIR;
	return MODE_GITLINK;
}

int rq_tree_name_cmp(const char *a, size_t alen, int a_dir, const char *b, size_t blen, int b_dir)
{
	size_t n = alen < blen ? alen : blen;
	int c = memcmp(a, b, n);
	unsigned char ca, cb;

	if (c)
		return c;
	ca = n < alen ? (unsigned char)a[n] : a_dir ? '/' : 0;
	cb = n < blen ? (unsigned char)b[n] : b_dir ? '/' : 0;
	return ca < cb ? -1 : ca > cb ? 1 : 0;
}

/*
 * One entry at p (size bytes left): "<octal mode> <name>\0<id>", the id of
 * rawsz bytes. Its length, or 0 with *why set. git's checks, in git's
 * order: room for at least a one-digit mode, a one-byte name and the id
 * with the NUL before it; then the mode; then a name that is not empty.
 * Inline, called with a constant rawsz from entry_sized: each width gets
 * its own copy, the SHA-1 one with the 20-byte copy it always had.
 */
static inline size_t entry_at(const unsigned char *p, size_t size, size_t rawsz, rq_tree_entry *e,
			      const char **why)
{
	const unsigned char *nul, *q = p;
	uint32_t mode = 0;

	if (size < rawsz + 3 || !(nul = memchr(p, '\0', size)) ||
	    (size_t)(nul - p) + 1 + rawsz > size) {
		*why = "too-short tree object";
		return 0;
	}
	if (*q == ' ') {
		*why = "malformed mode in tree entry";
		return 0;
	}
	for (; q < nul && *q != ' '; q++) {
		if (*q < '0' || *q > '7') {
			*why = "malformed mode in tree entry";
			return 0;
		}
		mode = (mode << 3) + (uint32_t)(*q - '0');
	}
	if (q == nul) {
		*why = "malformed mode in tree entry";
		return 0;
	}
	if (++q == nul) {
		*why = "empty filename in tree entry";
		return 0;
	}
	e->name = (const char *)q;
	e->len = (size_t)(nul - q);
	e->mode = rq_tree_canon_mode(mode & 0xffffu); /* git keeps 16 bits */
	memcpy(e->id.id, nul + 1, rawsz);
	memset(e->id.id + rawsz, 0, RQ_OID_MAX_RAWSZ - rawsz);
	return (size_t)(nul - p) + 1 + rawsz;
}

/* entry_at at the tree's width, one branch per entry. */
static size_t entry_sized(const rq_tree *t, size_t pos, rq_tree_entry *e, const char **why)
{
	if (t->rawsz == 20)
		return entry_at(t->data + pos, t->size - pos, 20, e, why);
	return entry_at(t->data + pos, t->size - pos, RQ_OID_MAX_RAWSZ, e, why);
}

void rq_tree_close(rq_tree *t)
{
	if (!t)
		return;
	if (t->rd && t->rd->release)
		t->rd->release(t->rd->ctx, t->mem, t->owner);
	memset(t, 0, sizeof(*t));
}

int rq_tree_open_data(rq_tree *t, const rq_oid_algo *algo, const void *data, size_t size,
		      rq_error *err)
{
	rq_tree_entry e;
	const char *why = NULL;
	size_t pos = 0;

	memset(t, 0, sizeof(*t));
	t->data = data;
	t->size = size;
	t->rawsz = algo->rawsz;
	while (pos < t->size) {
		size_t len = entry_sized(t, pos, &e, &why);
		if (!len) {
			rq_tree_close(t);
			return rq_error_set(err, RQ_E_CORRUPT_OBJECT, "%s", why);
		}
		pos += len;
		t->n++;
	}
	return 0;
}

int rq_tree_open_with(rq_tree *t, const rq_tree_reader *rd, const rq_oid_algo *algo,
		      const rq_oid *id, rq_error *err)
{
	const unsigned char *data;
	size_t len;
	git_object_t type;
	void *mem = NULL, *owner = NULL;

	memset(t, 0, sizeof(*t));
	if (rd->read(rd->ctx, id, &data, &len, &type, &mem, &owner) < 0)
		return rq_error_git(err, "cannot read tree");
	if (type != GIT_OBJECT_TREE) {
		char hex[RQ_OID_MAX_HEXSZ + 1];
		rd->release(rd->ctx, mem, owner);
		rq_oid_fmt(hex, id, algo);
		return rq_error_set(err, RQ_E_CORRUPT_OBJECT, "object %s is not a tree", hex);
	}
	if (rq_tree_open_data(t, algo, data, len, err) < 0) {
		rd->release(rd->ctx, mem, owner);
		return -1;
	}
	t->rd = rd;
	t->mem = mem;
	t->owner = owner;
	return 0;
}

int rq_tree_next(const rq_tree *t, size_t *pos, rq_tree_entry *e)
{
	const char *why;
	size_t len;

	if (*pos >= t->size)
		return 0;
	len = entry_sized(t, *pos, e, &why);
	if (!len) /* checked when opened: cannot happen */
		return 0;
	*pos += len;
	return 1;
}
