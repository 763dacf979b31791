/* SPDX-License-Identifier: GPL-2.0-only; follows git's merge-ort.c (Elijah Newren) */
/*
 * rq_treemerge: the driver of the tree merge (see rq_ort.h for the map of
 * the sub-library), merge-ort's merge_ort_nonrecursive_internal() without
 * the index and worktree updates:
 *
 *   phase 1  rq_ort_collect   walk the trees where they differ
 *   phase 2  rq_ort_rename    renames and directory renames
 *   phase 3  rq_ort_process   resolve every path, write the trees
 *
 * then the result: the root tree, or the conflicts, or a fallback. A
 * fallback drops the conflicts this attempt reported (the fallback merge
 * reports its own). A state merge-ort cannot handle met after a conflict
 * that stands anyway (forced_conflict: a directory rename conflict) does
 * not fall back: the pick conflicts, as it would in git.
 *
 * Remembered renames: a merge continues the chain of the merger's
 * rename cache when its base and side 1 are the previous merge's side 2
 * and result; it advances the chain when clean and breaks it otherwise.
 * merge-ort keeps no renames with merge.directoryRenames=false
 * (merge_check_renames_reusable), and neither does this.
 */
#include "rq_treemerge.h"
#include "rq_ort_collect.h"
#include "rq_ort_process.h"
#include "rq_ort_rename.h"
#include "rq_rename_cache.h"
#include "rq_similarity.h"

#include "rq_odb_mem.h"

#include <stdlib.h>
#include <string.h>

/* Arena memory kept for the next merge: page faults on fresh memory were a
 * large part of a small merge. */
#define KEEP_CHUNK_BYTES (16u << 20)

/* The caches of a merger, empty. 0, or -1 out of memory. */
int rq_treemerge_memory_init(rq_treemerge_memory *mem)
{
	memset(mem, 0, sizeof(*mem));
	if (rq_rename_cache_new(&mem->renames) < 0 ||
	    rq_similarity_cache_new(&mem->similarity) < 0) {
		rq_treemerge_memory_release(mem);
		return -1;
	}
	return 0;
}

/*
 * Frees everything the merger kept: remembered renames, the similarity
 * cache, spare arena chunks.
 */
void rq_treemerge_memory_release(rq_treemerge_memory *mem)
{
	rq_rename_cache_free(mem->renames);
	rq_similarity_cache_free(mem->similarity);
	rq_arena_chunks_free(mem->spare_chunks);
	memset(mem, 0, sizeof(*mem));
}

/* Only the similarity cache has statistics worth reporting. */
void rq_treemerge_memory_stats(const rq_treemerge_memory *mem, size_t *computed, size_t *reused)
{
	rq_similarity_cache_stats(mem->similarity, computed, reused);
}

/*
 * A merge the caller answered from the ids continues (or starts) the chain
 * of remembered renames like any clean merge, and adds nothing to what is
 * remembered (tests/integration/remember.sh checks such sequences against
 * upstream git replay).
 */
void rq_treemerge_trivial(rq_treemerge_memory *mem, const git_oid *base, const git_oid *ours,
			  const git_oid *theirs, const git_oid *result)
{
	(void)rq_rename_cache_chain_continues(mem->renames, base, ours); /* forgets a broken one */
	rq_rename_cache_chain_advance(mem->renames, theirs, result);
}

/*
 * The top-level entry: a directory on every side that has a tree (an absent
 * base, for a root commit, has mode 0), opened, as merge-ort's top level
 * always is.
 */
static int make_root(rq_ort_merge *merge, const git_oid *const oids[3])
{
	rq_ort_entry *root = rq_arena_alloc(&merge->arena, sizeof(*root));

	if (!root)
		return rq_ort_nomem(merge);
	root->path = "";
	root->walked = 1;
	root->conflict_kind = -1;
	root->dirmask = RQ_ORT_MASK_ALL;
	for (int i = 0; i < 3; i++) {
		if (oids[i]) {
			git_oid_cpy(&root->stages[i].oid, oids[i]);
			root->stages[i].mode = RQ_ORT_TYPE_DIR;
		}
	}
	merge->root = root;
	return 0;
}

/*
 * Set up a merge: bound the similarity cache first (never during a merge,
 * which holds indices into it), decide whether the remembered renames apply
 * (they need a continuing chain and directory renames not disabled), and
 * give the arena the chunks kept from the previous merge.
 */
static void merge_setup(rq_ort_merge *merge, rq_treemerge_memory *mem, const rq_ort_config *config,
			const git_oid *base, const git_oid *ours)
{
	rq_similarity_cache_trim(mem->similarity);
	memset(merge, 0, sizeof(*merge));
	merge->config = config;
	merge->rename_cache = mem->renames;
	merge->similarity = mem->similarity;
	merge->write_objects = 1;
	merge->use_remembered_renames = config->dir_renames != RQ_ORT_DIR_RENAMES_FALSE &&
					rq_rename_cache_chain_continues(mem->renames, base, ours);
	if (config->dir_renames == RQ_ORT_DIR_RENAMES_FALSE)
		rq_rename_cache_chain_break(mem->renames);
	merge->arena.spare = mem->spare_chunks;
	mem->spare_chunks = NULL;
	rq_ort_merge_init(merge);
}

/*
 * Does the merge fall back now? Not once a conflict is certain
 * (forced_conflict): the pick conflicts, as it would in git. A merge that
 * keeps its conflicts needs its whole tree: it falls back whenever a state
 * is not reproduced.
 */
static int falls_back(const rq_ort_merge *merge)
{
	return merge->fall_back &&
	       (!merge->forced_conflict || (merge->mode && merge->mode->accept));
}

/*
 * The three phases, with the fallback checks between them: a fallback
 * decided in phase 1 stops everything; one decided in phase 2 skips phase 3
 * unless a conflict is certain. Returns -1 on error,
 * RQ_TREEMERGE_FALL_BACK, or 0 when the phases ran (merge->conflicts and
 * renames_unclean say how it went).
 */
static int run_phases(rq_ort_merge *merge)
{
	if (rq_ort_collect(merge) < 0)
		return -1;
	if (merge->fall_back)
		return RQ_TREEMERGE_FALL_BACK;
	if (rq_ort_rename(merge) < 0)
		return -1;
	if (falls_back(merge))
		return RQ_TREEMERGE_FALL_BACK;
	if (!merge->fall_back && rq_ort_process(merge) < 0)
		return -1;
	if (falls_back(merge))
		return RQ_TREEMERGE_FALL_BACK;
	return 0;
}

/* The root's tree, or the empty tree (written) when nothing is left. */
static int root_tree(rq_ort_merge *merge, git_oid *out)
{
	if (!merge->root->is_null) {
		git_oid_cpy(out, &merge->root->result.oid);
		return 0;
	}
	rq_oid id;

	if (rq_odb_mem_write(&id, merge->odb, "", 0, GIT_OBJECT_TREE) < 0)
		return rq_error_git(merge->err, "cannot write the empty tree");
	rq_oid_to_git(out, &id, &rq_oid_sha1);
	return 0;
}

static void version_of(rq_conflict_version *v, const rq_ort_stage *st)
{
	git_oid_cpy(&v->oid, &st->oid);
	v->mode = st->mode;
}

/*
 * A merge that keeps its conflicts: the versions of each conflict it
 * reported (from the path's entry; none for a conflict of the rename phase
 * without a path), in the order of the list.
 */
static int accept_details(rq_ort_merge *merge, size_t from)
{
	for (size_t i = from; i < merge->conflicts->n; i++) {
		const rq_conflict *c = &merge->conflicts->v[i];
		rq_ort_entry *e = c->path[0] ? rq_ort_entry_get(merge, c->path) : NULL;
		rq_conflict_detail d;
		memset(&d, 0, sizeof(d));
		if (e) {
			d.textual = e->textual && (c->kind == RQ_CONFLICT_CONTENT ||
						   c->kind == RQ_CONFLICT_ADD_ADD);
			for (int k = 0; k < 3; k++)
				version_of(&d.stages[k], &e->stages[k]);
			if (!e->is_null)
				version_of(&d.result, &e->result);
		}
		if (rq_conflict_details_add(merge->mode->accepted, &d) < 0)
			return rq_ort_nomem(merge);
	}
	return 0;
}

/*
 * The outcome after the phases: a conflict when any was reported (an unclean
 * rename phase without any path reported, which merge-ort can produce, is
 * reported at the top level), else the root tree. A merge that keeps its
 * conflicts gives its tree in both cases, and the conflicts' versions.
 */
static int finish(rq_ort_merge *merge, size_t nconflicts_before, git_oid *out)
{
	int accept = merge->mode && merge->mode->accept;

	if (merge->renames_unclean || merge->conflicts->n > nconflicts_before) {
		if (merge->conflicts->n == nconflicts_before &&
		    rq_ort_conflict(merge, "", RQ_CONFLICT_RENAME) < 0)
			return -1;
		if (accept &&
		    (root_tree(merge, out) < 0 || accept_details(merge, nconflicts_before) < 0))
			return -1;
		return RQ_TREEMERGE_CONFLICT;
	}
	if (root_tree(merge, out) < 0)
		return -1;
	return RQ_TREEMERGE_CLEAN;
}

/*
 * merge_ort_nonrecursive_internal() for replayq: set up, run, conclude; on
 * every path out the chain of remembered renames advances (clean) or breaks
 * (anything else), and the arena's chunks go back to the merger.
 */
int rq_treemerge(git_repository *repo, git_odb *odb, const rq_ort_config *config,
		 rq_treemerge_memory *mem, const rq_ort_mode *mode, const git_oid *base,
		 const git_oid *ours, const git_oid *theirs, git_oid *out, rq_conflicts *conflicts,
		 rq_error *err)
{
	const git_oid *oids[3] = {base, ours, theirs};
	size_t nconflicts_before = conflicts->n;
	rq_ort_merge merge;
	int rc;

	merge_setup(&merge, mem, config, base, ours);
	merge.repo = repo;
	merge.odb = odb;
	merge.err = err;
	merge.conflicts = conflicts;
	merge.mode = mode;
	rc = make_root(&merge, oids);
	if (rc == 0)
		rc = run_phases(&merge);
	if (rc == 0)
		rc = finish(&merge, nconflicts_before, out);
	if (rc == RQ_TREEMERGE_FALL_BACK || (rc < 0 && mode && mode->accept)) {
		/* drop what this attempt reported; the fallback reports its own */
		while (conflicts->n > nconflicts_before) {
			conflicts->n--;
			free(conflicts->v[conflicts->n].path);
		}
		if (mode && mode->accepted && mode->accepted->n > nconflicts_before)
			mode->accepted->n = nconflicts_before;
	}
	if (rc == RQ_TREEMERGE_CLEAN)
		rq_rename_cache_chain_advance(mem->renames, theirs, out);
	else
		rq_rename_cache_chain_break(mem->renames);
	mem->spare_chunks = rq_arena_release(&merge.arena, KEEP_CHUNK_BYTES);
	return rc;
}
