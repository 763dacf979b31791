/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refspace: the disk space a ref update on a files repository needs,
 * taken before its first ref moves.
 *
 * A loose ref is committed (rq_reffile) by appending its reflog entry
 * (and HEAD's, when HEAD points at the ref) and then renaming its lock
 * over the ref. On a full disk the append could go through and the rename
 * fail for want of the lock's content: the reflog would record a move the
 * ref never made, and of several refs the first could move and the next
 * not. So every block the commits will need is taken under the locks,
 * before the fence: each lock file gets its content ("<new id>\n") when
 * it is taken, and each reflog that will grow gets room for its entry
 * (fallocate with FALLOC_FL_KEEP_SIZE: its size, and so its content, does
 * not change; a reflog the commit would create is made, empty, first). A full
 * disk then fails the update with nothing moved and no reflog touched.
 * A file system without fallocate (EOPNOTSUPP) gets no room for its
 * reflogs; there, as anywhere, a commit that fails all the same has its
 * reflogs cut back to their size before it when its ref did not move, and
 * a reflog made empty for an entry never written is removed at the end.
 *
 * Every file is reached from the git directories' descriptors without
 * following a link (rq_fs_open_at), as rq_refs reaches its own.
 */
#ifndef RQ_REFSPACE_H
#define RQ_REFSPACE_H

#include <git2.h>

#include "rq_error.h"
#include "rq_ref_update.h"

typedef struct rq_refspace rq_refspace;

/* 1 when ref lives in the repository's own git directory, not the common
 * one, as git splits them (rq_refread_own: HEAD and the other names
 * outside refs/, refs/bisect/, refs/worktree/, refs/rewritten/; their
 * reflogs: rq_reffile_log_own). */
int rq_refspace_own_dir(const char *ref);

/* For n updates of repo, whose common and own git directories are open
 * as common and own (borrowed). 0, or -1 with err set. */
int rq_refspace_new(rq_refspace **out, git_repository *repo, int common, int own, size_t n,
		    rq_error *err);

/* Take the space of update i (its ref locked, its lock written: rq_reffile;
 * its reflog entry len bytes). 0, or -1 with err set (RQ_E_IO: "No space
 * left on device" and the file it was for). */
int rq_refspace_take(rq_refspace *s, size_t i, const rq_ref_update *u, size_t len, rq_error *err);

/* Commit i failed: when its ref did not move, its reflogs are cut back to
 * their size before it (a reflog it made is removed). */
void rq_refspace_undo(rq_refspace *s, size_t i);

/* The end (after the commits or a failure): reflogs made for an entry
 * that was never written are removed; s is freed. NULL is fine. */
void rq_refspace_free(rq_refspace *s);

#endif
