/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_ort_process: phase 3 of the tree merge (merge-ort's process_entries,
 * process_entry, write_completed_directory and write_tree).
 *
 * merge-ort sorts all paths so that children come before their directory
 * and keeps a stack of directories being written; here the entries already
 * form a tree (rq_ort.h), so a depth-first walk does the same: each
 * directory's children are resolved, then its tree is written from their
 * results. A tree is only written when it differs from all three inputs
 * (an unchanged subtree is already in the repository), and not at all once
 * the merge has a conflict (its id is still computed: the parent's content
 * depends on it).
 *
 * Per path (process_entry): take the side that changed it, or the same
 * change made on both sides; merge the content when both sides changed a
 * file (rq_ort_content.c); report modify/delete, add/add, distinct types,
 * and a file where the other side has a directory. merge-ort resolves some
 * of these conflicts by moving one version aside (a file/directory conflict
 * puts the file at "path~side"), which matters only for the conflicted
 * result; replayq reports the conflict and stops.
 */
#include "rq_ort_process.h"
#include "rq_mem.h"
#include "rq_ort_content.h"
#include "rq_tree.h"

#include "rq_odb_mem.h"

#include <stdlib.h>
#include <string.h>

/*
 * Mark e conflicted: the kind given, unless a rename already decided the
 * path's kind (rename/delete, rename/rename, directory rename), which says
 * more about the conflict than the content merge that followed.
 */
static int entry_conflict(rq_ort_merge *merge, rq_ort_entry *e, rq_conflict_kind kind)
{
	e->clean = 0;
	if (e->conflict_kind >= 0)
		kind = (rq_conflict_kind)e->conflict_kind;
	return rq_ort_conflict(merge, e->path, kind);
}

/*
 * Forget the directory versions of a file/directory entry, leaving only its
 * files (merge-ort clears those stages the same way before resolving the
 * file part).
 */
static void zero_non_file_stages(rq_ort_entry *e)
{
	for (int i = 0; i < 3; i++)
		if (!(e->filemask & rq_ort_mask(i)))
			memset(&e->stages[i], 0, sizeof(e->stages[i]));
}

/* How the file part of an entry resolved. */
typedef struct file_outcome {
	int clean;
	rq_conflict_kind kind; /* when not clean */
} file_outcome;

/* What the resolvers below return: the outcome stands as it is (FINAL), or
 * a file/directory conflict still overrides its kind (SET); -1 on error. */
enum { OUTCOME_SET = 0, OUTCOME_FINAL = 1 };

/*
 * A stage this path would take holds a content merge that conflicted
 * (after a rename/add, see rq_ort_rename.c): merge-ort would resolve the
 * path to the text with conflict markers, and may even call the result
 * clean when the other side added the very same text. replayq reports a
 * conflict instead of committing conflict markers (a deliberate difference,
 * listed in rq_merge.c), of the kind of the rename that caused it.
 */
static int take_conflicted_stage(file_outcome *o)
{
	o->clean = 0;
	o->kind = RQ_CONFLICT_RENAME;
	return OUTCOME_FINAL;
}

/*
 * process_entry() when some trees hold the same version (match_mask): the
 * sides agree (take side 1's), or one side kept the base's version and the
 * other side's wins, which may be its deletion (clean whatever else is
 * pending on the path: there is nothing left to conflict with).
 */
static int resolve_matched(rq_ort_entry *ci, file_outcome *o)
{
	int side;

	o->clean = !ci->df_conflict && !ci->path_conflict;
	if (ci->match_mask == RQ_ORT_MASK_SIDES) {
		if (ci->conflicted_stages & RQ_ORT_MASK_SIDE1)
			return take_conflicted_stage(o);
		ci->result = ci->stages[RQ_ORT_SIDE1];
		ci->is_null = 0;
		return OUTCOME_SET;
	}
	side =
	    (RQ_ORT_MASK_ALL & ~ci->match_mask) == RQ_ORT_MASK_SIDE2 ? RQ_ORT_SIDE2 : RQ_ORT_SIDE1;
	if (ci->conflicted_stages & rq_ort_mask(side))
		return take_conflicted_stage(o);
	ci->result = ci->stages[side];
	ci->is_null = ci->result.mode == 0;
	if (ci->is_null)
		o->clean = 1;
	return OUTCOME_SET;
}

/*
 * process_entry() for a path with a file on both sides that differ: files of
 * distinct kinds (regular file, symlink, submodule) conflict as "distinct
 * types"; otherwise handle_content_merge() merges them, and a conflict is an
 * add/add when there was no base version, a mode conflict when only the modes
 * clashed, else a content conflict.
 */
static int resolve_both_changed(rq_ort_merge *merge, rq_ort_entry *ci, file_outcome *o)
{
	rq_ort_stage merged;
	int content_clean, why;

	if (rq_ort_mode_type(ci->stages[RQ_ORT_SIDE1].mode) !=
	    rq_ort_mode_type(ci->stages[RQ_ORT_SIDE2].mode)) {
		o->kind = RQ_CONFLICT_TYPE;
		return OUTCOME_SET;
	}
	if (ci->conflicted_stages & ci->filemask)
		return take_conflicted_stage(o);
	memset(&merged, 0, sizeof(merged));
	if (rq_ort_content_merge(merge, ci->path, &ci->stages[RQ_ORT_BASE],
				 &ci->stages[RQ_ORT_SIDE1], &ci->stages[RQ_ORT_SIDE2],
				 ci->pathnames, &merged, &content_clean, &why) < 0)
		return -1;
	o->clean = content_clean && !ci->df_conflict && !ci->path_conflict;
	ci->result = merged;
	ci->is_null = merged.mode == 0;
	if (!content_clean) {
		/* the text's markers are the only trouble (an accepting merge) */
		ci->textual = (why & ~RQ_ORT_CONTENT_RESOLUTION) ==
			      (RQ_ORT_CONTENT_CONFLICT | RQ_ORT_CONTENT_TEXT);
		if (why & RQ_ORT_CONTENT_RESOLUTION)
			o->kind = RQ_CONFLICT_RESOLUTION;
		else if (ci->filemask == RQ_ORT_MASK_SIDES)
			o->kind = RQ_CONFLICT_ADD_ADD;
		else if (why == RQ_ORT_CONTENT_MODE)
			o->kind = RQ_CONFLICT_MODE;
	}
	return OUTCOME_SET;
}

/*
 * process_entry() for a file on one side only: added there (clean unless a
 * rename or a directory is in the way), or kept there while the other side
 * deleted it (modify/delete, or rename/delete when a rename moved it; the
 * surviving version is kept as the result, as git does).
 */
static int resolve_one_side(rq_ort_entry *ci, int side, file_outcome *o)
{
	if (ci->filemask & RQ_ORT_MASK_BASE) {
		ci->result = ci->stages[side];
		ci->is_null = 0;
		o->kind = ci->path_conflict ? RQ_CONFLICT_RENAME_DELETE : RQ_CONFLICT_MODIFY_DELETE;
		return OUTCOME_SET;
	}
	if (ci->conflicted_stages & rq_ort_mask(side))
		return take_conflicted_stage(o);
	ci->result = ci->stages[side];
	ci->is_null = 0;
	o->clean = !ci->df_conflict && !ci->path_conflict;
	return OUTCOME_SET;
}

/*
 * Resolve the file part of an entry: the switch of merge-ort's
 * process_entry() over match_mask and filemask. Sets ci->result and the
 * outcome. 0, or -1 on error.
 */
static int resolve_file(rq_ort_merge *merge, rq_ort_entry *ci, file_outcome *o)
{
	int side = rq_ort_lone_side(ci->filemask & RQ_ORT_MASK_SIDES), r = OUTCOME_SET;

	o->clean = 0;
	o->kind = RQ_CONFLICT_CONTENT;
	if (ci->match_mask) {
		r = resolve_matched(ci, o);
	} else if ((ci->filemask & RQ_ORT_MASK_SIDES) == RQ_ORT_MASK_SIDES) {
		r = resolve_both_changed(merge, ci, o);
	} else if (side > 0) {
		r = resolve_one_side(ci, side, o);
	} else if (ci->filemask == RQ_ORT_MASK_BASE) {
		/* deleted on both sides */
		ci->is_null = 1;
		memset(&ci->result, 0, sizeof(ci->result));
		o->clean = !ci->path_conflict;
	} else {
		rq_ort_fall_back(merge, "entry with no file and no directory");
	}
	if (r < 0)
		return -1;
	if (r == OUTCOME_SET && ci->df_conflict)
		o->kind = RQ_CONFLICT_FILE_DIRECTORY;
	return 0;
}

/*
 * merge-ort's process_entry(): a directory needs nothing (its tree is
 * written from its children); a file where another side has a directory
 * takes the path when the directory merged away, else it would have to
 * move aside, which is a file/directory conflict unless the file resolves
 * to nothing; any other file is resolved and reported when not clean.
 */
static int process_entry(rq_ort_merge *merge, rq_ort_entry *ci)
{
	file_outcome o;

	if (ci->dirmask && ci->filemask == 0)
		return 0;
	if (ci->dirmask && !ci->df_conflict)
		rq_ort_fall_back(merge, "directory and file without a conflict");
	if (ci->df_conflict && ci->result.mode == 0) {
		/* the directory merged away: the file can take its place */
		ci->df_conflict = 0;
		ci->is_null = 0;
		ci->match_mask &= ~ci->dirmask;
		ci->dirmask = 0;
		zero_non_file_stages(ci);
	} else if (ci->df_conflict) {
		rq_ort_entry file;
		if (ci->filemask == RQ_ORT_MASK_BASE) {
			ci->filemask = 0; /* a deleted file under a directory: gone */
			return 0;
		}
		file = *ci;
		file.match_mask &= ~file.dirmask;
		file.dirmask = 0;
		zero_non_file_stages(&file);
		if (resolve_file(merge, &file, &o) < 0)
			return -1;
		if (!o.clean || !file.is_null)
			return entry_conflict(merge, ci, RQ_CONFLICT_FILE_DIRECTORY);
		return 0;
	}
	if (resolve_file(merge, ci, &o) < 0)
		return -1;
	if (!o.clean)
		return entry_conflict(merge, ci, o.kind);
	ci->clean = 1;
	return 0;
}

/* ---- writing trees ------------------------------------------------------------ */

/* An entry of a tree being written. */
typedef struct tree_out {
	const char *name;
	size_t len;
	const rq_ort_stage *st;
} tree_out;

/*
 * git's tree order (base_name_compare): names compare bytewise, and a
 * directory sorts as if its name ended with '/'.
 */
static int tree_out_cmp(const tree_out *a, const tree_out *b)
{
	return rq_tree_name_cmp(a->name, a->len, rq_ort_mode_is_dir(a->st->mode), b->name, b->len,
				rq_ort_mode_is_dir(b->st->mode));
}

/* The children come in plain name order, nearly git's tree order: an
 * insertion sort fixes the few places where they differ. */
static void sort_tree_out(tree_out *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (tree_out_cmp(&v[i - 1], &v[i]) <= 0)
			continue;
		tree_out t = v[i];
		size_t j = i;
		while (j > 0 && tree_out_cmp(&v[j - 1], &t) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = t;
	}
}

/*
 * The children of d that are in the result; *size: the bytes of the tree
 * object they make (mode of up to 6 digits, space, name, NUL, raw id).
 * Children moved away by a directory rename, or resolved to nothing, are
 * left out.
 */
static size_t gather_tree_out(const rq_ort_entry *d, tree_out *v, size_t *size)
{
	size_t n = 0;

	*size = 0;
	for (size_t i = 0; i < d->nchildren; i++) {
		const rq_ort_entry *k = d->children[i];
		if (k->moved_away || k->is_null || !k->result.mode)
			continue;
		v[n].name = k->path + k->basename_offset;
		v[n].len = strlen(v[n].name);
		v[n].st = &k->result;
		*size += v[n].len + 8 + GIT_OID_RAWSZ;
		n++;
	}
	return n;
}

/*
 * Write mode in octal without leading zeros, as git writes tree entries
 * (a directory is "40000"); returns the end.
 */
static char *put_octal(char *p, uint32_t mode)
{
	char tmp[12];
	int tl = 0;

	do {
		tmp[tl++] = (char)('0' + (mode & 7));
		mode >>= 3;
	} while (mode);
	while (tl)
		*p++ = tmp[--tl];
	return p;
}

/* The tree object of v (sorted) into buf; returns its length. Two results
 * for one name make an invalid tree: merge-ort would have died on the way. */
static size_t serialize_tree(rq_ort_merge *merge, const tree_out *v, size_t n, char *buf)
{
	char *p = buf;

	for (size_t i = 0; i < n; i++) {
		if (i && !tree_out_cmp(&v[i - 1], &v[i]))
			rq_ort_fall_back(merge, "two results for one name");
		p = put_octal(p, v[i].st->mode);
		*p++ = ' ';
		memcpy(p, v[i].name, v[i].len);
		p += v[i].len;
		*p++ = '\0';
		memcpy(p, v[i].st->oid.id, GIT_OID_RAWSZ);
		p += GIT_OID_RAWSZ;
	}
	return (size_t)(p - buf);
}

/*
 * Hash the tree and, while the merge is clean, write it unless it is one of
 * the directory's three inputs (those are in the repository already: most
 * directories of a merge that opens them end up equal to one side). The id
 * is the result either way.
 */
static int store_tree(rq_ort_merge *merge, rq_ort_entry *d, const char *buf, size_t len)
{
	git_oid id;
	rq_oid rid;
	int exists = 0, plain;

	/* hashed once: the plain SHA-1 while the compressor runs, checked
	 * for collisions by it, or here when the tree is not written (a
	 * side's, or the merge has a conflict) */
	if ((plain = rq_odb_mem_hash(&rid, merge->odb, buf, len, GIT_OBJECT_TREE)) < 0)
		return rq_error_git(merge->err, "cannot hash tree");
	rq_oid_to_git(&id, &rid, &rq_oid_sha1);
	for (int i = 0; i < 3; i++)
		if (rq_ort_mode_is_dir(d->stages[i].mode) && git_oid_equal(&id, &d->stages[i].oid))
			exists = 1;
	if (plain && (exists || !merge->write_objects) &&
	    rq_odb_mem_check(&rid, buf, len, GIT_OBJECT_TREE) < 0)
		return rq_error_git(merge->err, "cannot hash tree");
	if (merge->write_objects && !exists &&
	    rq_odb_mem_write_hashed(&rid, merge->odb, buf, len, GIT_OBJECT_TREE) < 0)
		return rq_error_git(merge->err, "cannot write tree");
	d->is_null = 0;
	d->result.mode = RQ_ORT_TYPE_DIR;
	git_oid_cpy(&d->result.oid, &id);
	return 0;
}

/*
 * write_completed_directory() + write_tree(): the tree of directory d from
 * its children's results; a directory left without entries resolves to
 * nothing (git never writes empty trees below the top). 0, or -1.
 */
static int write_dir(rq_ort_merge *merge, rq_ort_entry *d)
{
	tree_out *v = d->nchildren ? malloc(d->nchildren * sizeof(*v)) : NULL;
	size_t n, size;
	char *buf;
	int rc;

	if (d->nchildren && !v)
		return rq_ort_nomem(merge);
	n = gather_tree_out(d, v, &size);
	if (!n) {
		d->is_null = 1;
		memset(&d->result, 0, sizeof(d->result));
		free(v);
		return 0;
	}
	sort_tree_out(v, n);
	if (!(buf = malloc(size))) {
		free(v);
		return rq_ort_nomem(merge);
	}
	rc = store_tree(merge, d, buf, serialize_tree(merge, v, n, buf));
	free(buf);
	free(v);
	return rc;
}

/* A child of a directory, once any children of its own are done: resolved
 * unless it already is. 0, or -1. */
static int process_child(rq_ort_merge *merge, rq_ort_entry *k)
{
	if (k->clean)
		return 0;
	if (k->dirmask && !k->walked) {
		rq_ort_fall_back(merge, "unresolved directory not walked");
		return 0;
	}
	return process_entry(merge, k);
}

/* A directory being processed, and its next child. */
typedef struct proc_frame {
	rq_ort_entry *dir;
	size_t next;
} proc_frame;

static int push_dir(rq_ort_merge *merge, proc_frame **st, size_t *n, size_t *cap, rq_ort_entry *d)
{
	proc_frame *nv = rq_mem_grow(*st, cap, *n + 1, sizeof(*nv), 16);

	if (!nv)
		return rq_ort_nomem(merge);
	*st = nv;
	nv[*n].dir = d;
	nv[(*n)++].next = 0;
	return 0;
}

/*
 * Resolve the children of d, opened directories first into their own
 * children (merge-ort's process_entries handles paths in reverse sorted
 * order for the same effect: children before parents), writing each
 * directory's tree once its children are done. A collected directory gets
 * its tree even when its entry was resolved (a rename source at the path of
 * a directory). The directories wait on a stack of our own, not the C
 * stack: a tree may be nested thousands deep.
 */
static int process_dir(rq_ort_merge *merge, rq_ort_entry *d)
{
	proc_frame *st = NULL;
	size_t n = 0, cap = 0;
	int rc = push_dir(merge, &st, &n, &cap, d);

	while (rc == 0 && n) {
		proc_frame *f = &st[n - 1];
		rq_ort_entry *k;
		if (f->next == f->dir->nchildren) {
			k = f->dir;
			rc = write_dir(merge, k);
			if (--n && rc == 0)
				rc = process_child(merge, k);
			continue;
		}
		k = f->dir->children[f->next++];
		if (k->moved_away)
			continue;
		if (k->dirmask && k->walked)
			rc = push_dir(merge, &st, &n, &cap, k);
		else
			rc = process_child(merge, k);
	}
	free(st);
	return rc < 0 ? -1 : 0;
}

/* Phase 3 from the top: the root's tree is the merge's result. */
int rq_ort_process(rq_ort_merge *merge)
{
	return process_dir(merge, merge->root);
}
