/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_ort_content: merge one path's content (see rq_ort_content.h), as
 * merge-ort's handle_content_merge() and merge_3way() do it:
 *
 *  - the mode: a side that kept the base's mode takes the other side's;
 *    two different changes conflict, and the result keeps side 1's mode;
 *  - the content: a side that kept the base's content takes the other
 *    side's (no blob is read); otherwise regular files get a 3-way text
 *    merge (a two-way merge from an empty base when the base was another
 *    kind of object or absent), binary files conflict, and symlinks and
 *    submodules changed on both sides conflict.
 *
 * Differences from git, on purpose:
 *  - a conflicted text merge of a pick yields side 1's blob with the
 *    RQ_ORT_CONTENT_TEXT flag instead of the text with conflict markers:
 *    replayq never commits a conflict, and the callers make sure no clean
 *    result depends on that text (see rq_ort_rename.c); only a merge that
 *    keeps its conflicts (rq_ort_mode) writes that text;
 *  - submodules are never merged (git may fast-forward an initialized
 *    submodule; replayq has no worktree and reports a conflict);
 *  - an external merge driver (merge.<name>.driver) is never run: the
 *    path conflicts, as in git when the driver fails; conflict marker
 *    sizes are not read (an accepting merge's markers are git's default).
 *
 * The driver comes from the path's attributes (rq_attr.h), as ll_merge()
 * finds it: text, union (the line merge taking both sides where they
 * clash), binary ("-merge", "binary": a conflict keeping side 1), in a
 * merge of any kind.
 */
#include "rq_ort_content.h"
#include "rq_attr.h"

#include "rq_hash.h"
#include "rq_ortodb.h"

#include <stdlib.h>
#include <string.h>

/* ll_merge treats larger files as binary (MAX_XDIFF_SIZE). */
#define MAX_XDIFF_SIZE (1u << 30)

/*
 * A merged blob goes to the replay's object store while the merge may still
 * be clean; after the first conflict its id is only computed (the pick
 * stops, and the id still decides equal-content comparisons later).
 */
static int write_blob(rq_ort_merge *merge, const char *buf, size_t n, const rq_ort_stage *base,
		      const rq_ort_stage *side1, const rq_ort_stage *side2, rq_oid *out)
{
	/* a delta against side 1's version: usually the blob the pick before
	 * wrote; else against a version the repository holds whole */
	const rq_oid *alts[2] = {&side2->oid, &base->oid};

	if (merge->write_objects) {
		if (rq_ortodb_write_like(out, merge->odb, merge->config->algo, buf, n,
					 GIT_OBJECT_BLOB, &side1->oid, alts, 2) < 0)
			return rq_error_git(merge->err, "cannot write blob");
	} else if (rq_hash_object(merge->config->algo, GIT_OBJECT_BLOB, buf, n, out) < 0) {
		/* SHA-1: libgit2's collision-detecting hash, as before */
		return rq_error_git(merge->err, "cannot hash blob");
	}
	return 0;
}

/*
 * The mode part of handle_content_merge(): a side that kept the base's mode
 * (or agrees with the other side) takes the other side's; when both changed
 * it differently the merge conflicts and side 1's mode stays, as git's
 * does. merge-ort asserts that this only happens to regular files (an
 * executable bit on both sides); anything else falls back.
 */
static void merge_modes(rq_ort_merge *merge, const rq_ort_stage *base, const rq_ort_stage *side1,
			const rq_ort_stage *side2, rq_ort_stage *result, int *clean, int *why)
{
	if (side1->mode == side2->mode || side1->mode == base->mode) {
		result->mode = side2->mode;
		return;
	}
	/* merge-ort asserts when non-regular files get here with three modes */
	if (!rq_ort_mode_is_reg(side1->mode))
		rq_ort_fall_back(merge, "mode merge of non-regular files");
	result->mode = side1->mode;
	*clean = side2->mode == base->mode;
	if (!*clean)
		*why |= RQ_ORT_CONTENT_MODE;
}

/* The three blobs of a text merge, as buffers (base empty for a two-way
 * merge). */
typedef struct three_blobs {
	rq_odb_read_obj blob[3];
	const char *buf[3];
	size_t size[3];
} three_blobs;

/* Free the blobs read (absent ones are NULL). */
static void three_blobs_free(three_blobs *blobs)
{
	for (int i = 0; i < 3; i++)
		rq_odb_read_obj_free(&blobs->blob[i]);
}

/*
 * Read the blobs of a text merge: base, side 1, side 2 (in that order, so
 * that an error names the first unreadable one). The base stays an empty
 * buffer for a two-way merge. 0, or -1 on error (free blobs anyway).
 */
static int three_blobs_read(rq_ort_merge *merge, const rq_ort_stage *const stages[3], int two_way,
			    three_blobs *blobs)
{
	for (int i = 0; i < 3; i++) {
		blobs->buf[i] = "";
		blobs->size[i] = 0;
		if (i == RQ_ORT_BASE && two_way)
			continue;
		if (rq_ort_read_blob(merge, &stages[i]->oid, &blobs->blob[i]) < 0)
			return -1;
		blobs->buf[i] = (const char *)blobs->blob[i].data;
		blobs->size[i] = blobs->blob[i].len;
	}
	return 0;
}

/*
 * ll_merge's choice of its binary driver: a NUL in the first 8000 bytes of
 * any version (buffer_is_binary), or a version larger than xdiff handles
 * (MAX_XDIFF_SIZE). merge-ort then keeps side 1 and reports a conflict.
 */
static int any_binary(const three_blobs *blobs)
{
	for (int i = 0; i < 3; i++)
		if (rq_xmerge_buffer_is_binary(blobs->buf[i], blobs->size[i]))
			return 1;
	for (int i = 0; i < 3; i++)
		if (blobs->size[i] > MAX_XDIFF_SIZE)
			return 1;
	return 0;
}

/*
 * The labels of a conflict's markers, as merge_3way() makes them: the
 * merge's labels, each followed by ":<path>" when renames brought the
 * versions from different paths. The strings live in the merge's arena.
 */
static int path_marks(rq_ort_merge *merge, const char *const *paths, rq_xmerge_marks *out)
{
	const rq_xmerge_marks *m = &merge->mode->marks;
	const char *labels[3] = {m->base, m->ours, m->theirs};
	char *made[3];

	*out = *m;
	if (!paths || !paths[0] || !paths[1] || !paths[2] ||
	    (!strcmp(paths[0], paths[1]) && !strcmp(paths[1], paths[2])))
		return 0;
	for (int i = 0; i < 3; i++) {
		size_t ll = labels[i] ? strlen(labels[i]) : 0, pl = strlen(paths[i]);
		if (!(made[i] = rq_arena_alloc(&merge->arena, ll + pl + 2)))
			return rq_ort_nomem(merge);
		memcpy(made[i], labels[i] ? labels[i] : "", ll);
		made[i][ll] = ':';
		memcpy(made[i] + ll + 1, paths[i], pl + 1);
	}
	out->base = made[0];
	out->ours = made[1];
	out->theirs = made[2];
	return 0;
}

/* Is id among the blobs of set (a remerge's R or N blobs with hunks)? */
static int marked(const rq_oidmap *set, const rq_oid *id)
{
	size_t v;
	return set && rq_oidmap_get(set, id, &v);
}

/*
 * The line merge of the merge's kind: a pick's (clean text or a
 * conflict), an accepting merge's (a conflict's text with markers), or a
 * remerge's third merge (R's and N's conflict hunks whole; a hunk of N
 * left in the result is a conflict: RQ_ORT_CONTENT_RESOLUTION when the
 * base held a hunk of R, which the author had resolved).
 * favor_union: the path's union driver, in any kind (an accepting merge
 * then has no conflict to write).
 */
static rq_xmerge_result line_merge(rq_ort_merge *merge, const three_blobs *b,
				   const rq_ort_stage *const stages[3], const char *const *paths,
				   int favor_union, char **out, size_t *outlen, int *why)
{
	const rq_ort_mode *mode = merge->mode;
	rq_xmerge_style style = merge->config->conflict_style;
	rq_xmerge_marks marks;
	rq_xmerge_result r;
	int kept = 0, base_marked;

	if (!mode || (mode->accept && favor_union)) /* union: no conflict to write */
		return (favor_union ? rq_xmerge_union : rq_xmerge)(b->buf[0], b->size[0], b->buf[1],
								   b->size[1], b->buf[2],
								   b->size[2], style, out, outlen);
	if (mode->accept) {
		if (path_marks(merge, paths, &marks) < 0)
			return RQ_XMERGE_NOMEM;
		return rq_xmerge_marked(b->buf[0], b->size[0], b->buf[1], b->size[1], b->buf[2],
					b->size[2], style, &marks, out, outlen);
	}
	base_marked = marked(mode->base_marked, &stages[0]->oid);
	r = rq_xmerge_remerge(b->buf[0], b->size[0], base_marked, b->buf[1], b->size[1],
			      marked(mode->ours_marked, &stages[1]->oid), b->buf[2], b->size[2],
			      style, favor_union, &mode->marks, out, outlen, &kept);
	if (r == RQ_XMERGE_CLEAN && kept) {
		free(*out);
		*out = NULL;
		r = RQ_XMERGE_CONFLICT;
	}
	if (r == RQ_XMERGE_CONFLICT && base_marked)
		*why |= RQ_ORT_CONTENT_RESOLUTION;
	return r;
}

/*
 * Run the line merge with merge.conflictStyle and take its result: a clean
 * text becomes a blob; a conflict keeps side 1's blob, flagged
 * RQ_ORT_CONTENT_TEXT (git would store the text with conflict markers),
 * except in an accepting merge, which writes that text; a merge git's
 * xdiff would fail on falls back (no result to reproduce). 0, or -1 on
 * error.
 */
static int merge_text_buffers(rq_ort_merge *merge, const three_blobs *blobs,
			      const rq_ort_stage *const stages[3], const char *const *paths,
			      int favor_union, rq_ort_stage *result, int *clean, int *why)
{
	char *out = NULL;
	size_t outlen = 0;
	int rc = 0;

	switch (line_merge(merge, blobs, stages, paths, favor_union, &out, &outlen, why)) {
	case RQ_XMERGE_CLEAN:
		rc = write_blob(merge, out, outlen, stages[0], stages[1], stages[2], &result->oid);
		break;
	case RQ_XMERGE_CONFLICT:
		*why |= RQ_ORT_CONTENT_CONFLICT | RQ_ORT_CONTENT_TEXT;
		*clean = 0;
		if (out) /* an accepting merge: the text with its markers */
			rc = write_blob(merge, out, outlen, stages[0], stages[1], stages[2],
					&result->oid);
		else
			result->oid = stages[1]->oid;
		break;
	case RQ_XMERGE_TOO_COMPLEX:
		rq_ort_fall_back(merge, "xdiff hash chain overflow"); /* git fails here */
		*clean = 0;
		*why |= RQ_ORT_CONTENT_OTHER;
		break;
	case RQ_XMERGE_NOMEM:
		rc = rq_ort_nomem(merge);
		break;
	}
	free(out);
	return rc;
}

/* A conflict that keeps side 1's content (binary: git's binary driver). */
static void keep_side1(const rq_ort_stage *side1, rq_ort_stage *result, int *clean, int *why,
		       int kind)
{
	*why |= kind;
	*clean = 0;
	result->oid = side1->oid;
}

/*
 * ll_merge()'s driver for path: from its attributes (text without them).
 * A driver the configuration names without a command is git's error. 0,
 * or -1.
 */
static int pick_driver(rq_ort_merge *merge, const char *path, rq_attr_driver *drv)
{
	const char *name;

	*drv = RQ_ATTR_DRIVER_TEXT;
	if (!merge->config->attr || !path)
		return 0;
	if (rq_attr_merge_driver(merge->config->attr, path, drv, &name, merge->err) < 0)
		return -1;
	if (*drv == RQ_ATTR_DRIVER_NO_COMMAND)
		return rq_error_set(merge->err, RQ_E_BAD_REPO,
				    "custom merge driver %s lacks command line.", name);
	return 0;
}

/*
 * merge_3way() for regular files. A base of another kind (or absent) makes
 * it a two-way merge from an empty base, as in git (handle_content_merge's
 * two_way). The binary driver keeps side 1 and conflicts without reading a
 * blob; so does an external driver, which is never run (git's outcome when
 * the driver fails). 0, or -1 on error.
 */
static int merge_regular_files(rq_ort_merge *merge, const char *path, const rq_ort_stage *base,
			       const rq_ort_stage *side1, const rq_ort_stage *side2,
			       const char *const *paths, rq_ort_stage *result, int *clean, int *why)
{
	const rq_ort_stage *stages[3] = {base, side1, side2};
	int two_way = rq_ort_mode_type(base->mode) != rq_ort_mode_type(side1->mode);
	three_blobs blobs = {{{0}}, {"", "", ""}, {0, 0, 0}};
	rq_attr_driver drv;
	int rc = -1;

	if (pick_driver(merge, path, &drv) < 0)
		return -1;
	if (drv == RQ_ATTR_DRIVER_BINARY || drv == RQ_ATTR_DRIVER_EXTERNAL) {
		keep_side1(side1, result, clean, why,
			   drv == RQ_ATTR_DRIVER_BINARY ? RQ_ORT_CONTENT_BINARY
							: RQ_ORT_CONTENT_CONFLICT);
		return 0;
	}
	if (three_blobs_read(merge, stages, two_way, &blobs) < 0)
		goto done;
	if (any_binary(&blobs)) {
		keep_side1(side1, result, clean, why, RQ_ORT_CONTENT_BINARY);
		rc = 0;
	} else {
		rc = merge_text_buffers(merge, &blobs, stages, paths, drv == RQ_ATTR_DRIVER_UNION,
					result, clean, why);
	}
done:
	three_blobs_free(&blobs);
	return rc;
}

/*
 * handle_content_merge(): modes first, then content. A side equal to the
 * base (or to the other side) needs no blob read at all; only two different
 * changes of a regular file reach the line merge. In a remerge's third
 * merge, taking ours whole where it holds N's conflict hunks leaves them
 * unresolved: a conflict.
 */
int rq_ort_content_merge(rq_ort_merge *merge, const char *path, const rq_ort_stage *base,
			 const rq_ort_stage *side1, const rq_ort_stage *side2,
			 const char *const *paths, rq_ort_stage *result, int *clean, int *why)
{
	*clean = 1;
	*why = 0;
	merge_modes(merge, base, side1, side2, result, clean, why);
	if (rq_oid_eq(&side1->oid, &side2->oid) || rq_oid_eq(&side1->oid, &base->oid)) {
		result->oid = side2->oid;
	} else if (rq_oid_eq(&side2->oid, &base->oid)) {
		result->oid = side1->oid;
		if (merge->mode && marked(merge->mode->ours_marked, &side1->oid)) {
			*clean = 0;
			*why |= RQ_ORT_CONTENT_CONFLICT;
			if (marked(merge->mode->base_marked, &base->oid))
				*why |= RQ_ORT_CONTENT_RESOLUTION;
		}
	} else if (rq_ort_mode_is_reg(side1->mode)) {
		return merge_regular_files(merge, path, base, side1, side2, paths, result, clean,
					   why) < 0
			   ? -1
			   : 0;
	} else if (rq_ort_mode_type(side1->mode) == RQ_ORT_TYPE_GITLINK ||
		   rq_ort_mode_type(side1->mode) == RQ_ORT_TYPE_LINK) {
		/* submodules are not merged (none is checked out); symlinks conflict */
		*why |= RQ_ORT_CONTENT_CONFLICT;
		*clean = 0;
		result->oid = side1->oid;
	} else {
		rq_ort_fall_back(merge, "content merge of an unknown type");
		*why |= RQ_ORT_CONTENT_OTHER;
		*clean = 0;
	}
	return 0;
}
