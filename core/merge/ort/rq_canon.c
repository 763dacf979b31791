/* SPDX-License-Identifier: GPL-2.0-only */
/* follows the tree writing of merge-ort.c */
/*
 * rq_canon: a top-level tree written again with canonical modes
 * (rq_tree_canon_mode).
 */
#include "rq_canon.h"
#include "rq_buf.h"
#include "rq_ortodb.h"
#include "rq_tree.h"

#include <stdlib.h>
#include <string.h>

/*
 * The entry at p (of a raw tree ending at end, ids of rawsz bytes): its
 * mode text's length and value, its whole length. 0, or -1 when it is
 * malformed.
 */
static int entry_at(const char *p, const char *end, size_t rawsz, size_t *mode_len, uint32_t *mode,
		    size_t *len)
{
	const char *sp = memchr(p, ' ', (size_t)(end - p)), *nul;
	uint32_t m = 0;

	if (!sp || sp == p || !(nul = memchr(sp, '\0', (size_t)(end - sp))) ||
	    (size_t)(end - nul) < 1 + rawsz)
		return -1;
	for (const char *q = p; q < sp; q++) {
		if (*q < '0' || *q > '7' || m > 0xffffff)
			return -1;
		m = m * 8 + (uint32_t)(*q - '0');
	}
	*mode_len = (size_t)(sp - p);
	*mode = m;
	*len = (size_t)(nul + 1 + rawsz - p);
	return 0;
}

/* The canonical mode's text, as git writes it in a tree. */
static const char *canon_text(uint32_t mode, size_t *len)
{
	const char *t;

	switch (rq_tree_canon_mode(mode)) {
	case 0100644:
		t = "100644";
		break;
	case 0100755:
		t = "100755";
		break;
	case 0120000:
		t = "120000";
		break;
	case 0040000:
		t = "40000";
		break;
	default:
		t = "160000";
		break;
	}
	*len = strlen(t);
	return t;
}

/* raw written again with canonical modes into b (NULL: only looked at);
 * 1 when that changes a byte, 0 when not, -1 when raw is malformed. */
static int canonical_copy(const char *raw, size_t size, size_t rawsz, rq_buf *b)
{
	const char *p = raw, *end = raw + size;
	int changed = 0;

	while (p < end) {
		size_t ml, len, tl;
		uint32_t mode;
		const char *text;
		if (entry_at(p, end, rawsz, &ml, &mode, &len) < 0)
			return -1;
		text = canon_text(mode, &tl);
		if (tl != ml || memcmp(text, p, ml) != 0)
			changed = 1;
		if (b) {
			rq_buf_add(b, text, tl);
			rq_buf_add(b, p + ml, len - ml);
		}
		p += len;
	}
	return changed;
}

int rq_canon_root(git_odb *odb, rq_odb_read *rd, const rq_oid_algo *algo, const rq_oid *tree,
		  rq_oid *out, rq_error *err)
{
	rq_odb_read_obj obj;
	rq_buf b = {0};
	int rc;

	*out = *tree;
	if (rq_ortodb_read(&obj, rd, tree) < 0)
		return rq_error_git(err, "cannot read tree");
	/* a malformed tree is left to the merge as it is */
	rc = canonical_copy((const char *)obj.data, obj.len, algo->rawsz, NULL);
	if (rc == 1)
		canonical_copy((const char *)obj.data, obj.len, algo->rawsz, &b);
	rq_odb_read_obj_free(&obj);
	if (rc <= 0)
		return 0;
	if (b.oom)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	else if (rq_ortodb_write(out, odb, algo, b.p, b.len, GIT_OBJECT_TREE) < 0)
		rc = rq_error_git(err, "cannot write tree");
	free(b.p);
	return rc;
}
