/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_commit: write the replayed form of a commit, byte for byte as git
 * replay writes it (git's replay.c create_commit(), commit.c
 * commit_tree_extended(), pretty.c repo_logmsg_reencode()).
 *
 * The original is read as git reads it: its bytes up to the first NUL,
 * re-encoded from its "encoding" header (none: UTF-8) to the commit
 * encoding (i18n.commitEncoding, else UTF-8) when the two differ, the
 * whole buffer through iconv (a conversion that fails leaves it as it
 * is). From that text come the author (the first "author" line; none:
 * the current author) and the message (after the header's blank line and
 * the blank lines that follow it). From the original's raw bytes come the
 * extra headers, as git's read_commit_extra_header_lines() takes them:
 * every field but tree, parent, author, committer, encoding and the
 * signatures (gpgsig, gpgsig-sha256), its continuation lines joined and
 * written again. A pick writes tree, parent, author, committer, the
 * "encoding" header only when i18n.commitEncoding is set and not UTF-8,
 * the extra headers, a blank line and the message. A revert writes git's
 * revert message (of the re-encoded subject) with the current author, and
 * the same extra headers. With a UTF-8 commit encoding, every byte of the
 * result that is not valid UTF-8 is then taken as Latin-1 and converted,
 * and git prints rq_commit_utf8_warning; the calls return 1 then.
 *
 * A merge (a merge train's car) is written from its parts, as `git
 * commit-tree -p <first> -p <second> -m <message>` writes it.
 */
#ifndef RQ_COMMIT_H
#define RQ_COMMIT_H

#include <git2.h>

#include "rq_cobj.h"
#include "rq_error.h"
#include "rq_oid.h"

/* git's warning for a commit whose bytes were not UTF-8, word for word. */
extern const char rq_commit_utf8_warning[];

/* What a commit's bytes depend on beyond the commit and its inputs. */
typedef struct rq_commit_cfg {
	char *encoding;		 /* i18n.commitEncoding; NULL: UTF-8 */
	const char *author;	 /* the current author line (without "author "), for
				  * an original whose author cannot be read after
				  * re-encoding (git: the current author); NULL: an
				  * error then */
	const rq_oid_algo *algo; /* the repository's object format (NULL: SHA-1):
				  * the width of the tree and parent lines */
	rq_cobj_cache *commits;	 /* the job's commits, where the original is read
				  * (as git reads it: replacements applied);
				  * NULL: from odb (rq_odb_view_read_stored) */
} rq_commit_cfg;

/* The repository's i18n.commitEncoding into cfg (author, algo untouched): 0, or
 * -1 (out of memory). rq_commit_cfg_free frees what it set. */
int rq_commit_cfg_load(rq_commit_cfg *cfg, git_repository *repo, rq_error *err);
void rq_commit_cfg_free(rq_commit_cfg *cfg);

/*
 * The pick of orig onto tree and parent (NULL: a root commit); committer:
 * the identity line without the "committer " prefix; cfg NULL: UTF-8 and
 * no current author. 0, 1 (written; it was not valid UTF-8 and was
 * converted: git warns), or -1.
 */
int rq_commit_pick(git_odb *odb, const rq_commit_cfg *cfg, const rq_oid *orig, const rq_oid *tree,
		   const rq_oid *parent, const char *committer, rq_oid *out, rq_error *err);

/* The same with the given parents, in order: a replayed merge commit. */
int rq_commit_pick_parents(git_odb *odb, const rq_commit_cfg *cfg, const rq_oid *orig,
			   const rq_oid *tree, const rq_oid *parents, size_t nparents,
			   const char *committer, rq_oid *out, rq_error *err);

/* The revert of orig; author: the revert's author line (git revert's: the
 * current author). 0, 1 or -1 as rq_commit_pick. */
int rq_commit_revert(git_odb *odb, const rq_commit_cfg *cfg, const rq_oid *orig, const rq_oid *tree,
		     const rq_oid *parent, const char *author, const char *committer, rq_oid *out,
		     rq_error *err);

/*
 * A commit with the given parents (in order), identity lines (without
 * the "author "/"committer " prefix) and message (a newline is added when
 * it does not end with one, as git commit-tree -m does), its ids of algo's
 * width.
 */
int rq_commit_merge(git_odb *odb, const rq_oid_algo *algo, const rq_oid *tree,
		    const rq_oid *parents, size_t nparents, const char *author,
		    const char *committer, const char *message, rq_oid *out, rq_error *err);

/*
 * The revert message for a commit message: 'Revert "<subject>"' (or
 * 'Reapply "<...>"' for a revert of a revert), a blank line, and
 * "This reverts commit <hex>.". Returns malloc'ed text or NULL.
 */
char *rq_commit_revert_message(const char *message, size_t len, const char *hex);

#endif
