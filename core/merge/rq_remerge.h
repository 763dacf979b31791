/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_remerge: the replay of a merge commit that keeps what the person who
 * made it did by hand, after Elijah Newren's design notes for `git replay`
 * ("Preserving topology, replaying merges", replay-design-notes.txt in his
 * replay branch of git).
 *
 * For a merge O whose parents are replayed (or kept):
 *  - R: the automatic remerge of O's parents, its conflicts accepted (the
 *    tree `git show --remerge-diff O` compares O with);
 *  - N: the automatic merge of the new parents, its conflicts accepted;
 *  - the result: the three-way merge of base R, ours N and theirs O, which
 *    carries the diff from R to O (the resolutions and any other change
 *    made in the merge) onto N.
 * Both remerges label their conflict markers alike (the labels N's would
 * have), so that a conflict N shares with R is the same text in both.
 *
 * Conflict rules:
 *  - a conflict hunk of R or N is never split: the third merge takes each
 *    as one "line" (rq_merger_merge_remerge);
 *  - N with the same hunk as R: O's text for it is the resolution, clean;
 *  - R with a conflict where N has none: the merge goes on normally (a
 *    conflict when N and O both changed the hunk's place differently);
 *  - N with a conflict R did not have, or a different one (a hunk of N left
 *    in the result): a conflict of the replay;
 *  - a conflict that is not text (modes, modify/delete, binary files,
 *    distinct types, file/directory, renames): when R and N have it alike
 *    (same kind, same three modes and ids), O's version stands; any other
 *    is a conflict of the replay;
 *  - a merge of more than two parents (an octopus) is remerged parent by
 *    parent (each onto the merge of the ones before, against their merge
 *    bases); it is replayed when both remerges are clean, else it is a
 *    conflict.
 * A conflict of the replay where R had a conflict at the path (whose
 * resolution no longer applies) has the kind RQ_CONFLICT_RESOLUTION; any
 * other keeps its own kind.
 *
 * Merge bases: several are merged into a virtual base first, oldest first,
 * as merge-ort's recursive merge does (core/merge/rq_vbase.h, which merge
 * trains share); none (unrelated histories): the empty tree.
 *
 * Renames remembered along a chain of picks are forgotten at a merge: the
 * pick after it detects renames afresh.
 */
#ifndef RQ_REMERGE_H
#define RQ_REMERGE_H

#include <git2.h>
#include <stddef.h>

#include "rq_cobj.h"
#include "rq_error.h"
#include "rq_merge.h"
#include "rq_oidmap.h"

/*
 * Replay a merge: orig_parents are O's parents, new_parents what they
 * became (nparents >= 2 each, in O's order; a new parent may repeat
 * another), orig_tree O's tree; ranks: the commits the replay wrote, each
 * with its rank (later ones larger; NULL: none), which orders the search
 * for merge bases (rq_reach.h). 0 clean (*out: the result tree), 1 conflict
 * (conflicts appended, one per path), -1 with err set. Objects are written
 * through the repository's object database (the replay's store): R's and
 * N's conflicted trees too, which only the pack's size sees. Ids are of
 * the merger's format (rq_merger_algo); commits are read through the
 * merger's commit cache (rq_merger_commits), objects through its reader.
 */
int rq_remerge(rq_merger *m, git_repository *repo, const rq_oidmap *ranks,
	       const rq_oid *orig_parents, const rq_oid *new_parents, size_t nparents,
	       const rq_oid *orig_tree, rq_oid *out, rq_conflicts *conflicts, rq_error *err);

#endif
