/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_view: the repository's objects as git reads them, where that is
 * not what their files hold (core/odb, see rq_odb.h for the family).
 *
 * git substitutes some objects when it reads them, and so must a replay
 * that gives git's results:
 *
 *  - replace refs (git's replace-object.c): refs/replace/<id> (or the base
 *    GIT_REPLACE_REF_BASE names) makes every read of <id> give the object
 *    the ref points at, up to five replacements deep ("replace depth too
 *    high for object <id>"); off with GIT_NO_REPLACE_OBJECTS or
 *    core.useReplaceRefs=false. The id stays <id>: a commit replayed onto
 *    a replaced base names the base's id as its parent, with the
 *    replacement's tree merged.
 *  - grafts (commit.c's parse_commit_buffer): a commit listed in the
 *    shallow file has no parents (a shallow clone's boundary); one listed
 *    in info/grafts (GIT_GRAFT_FILE) has the parents the line gives. The
 *    shallow file wins, as in git. A bad shallow line is git's error
 *    ("bad shallow line: ..."), a bad graft line is skipped (what git
 *    says of it: rq_odb_view_graft_notes).
 *
 * Ids are read at the database's width (rq_odb_algo: SHA-1 or SHA-256),
 * as git reads them with the repository's hash: in a SHA-256 repository
 * a graft line of 40-digit ids is bad data, a 40-digit shallow line is
 * "bad shallow line", a replace ref named by 40 digits is no replace ref.
 * The engine's reads (rq_odb_read, rq_cobj through rq_commits) take the
 * replacements (rq_odb_view_redirect) and grafts (rq_odb_view_graft) at
 * either width; the libgit2 backend below (view_read) serves SHA-1 only,
 * as libgit2 does.
 *  - commit headers git reads and libgit2 1.5 refuses: an author or
 *    committer without "<...>", a date that does not fit 64 bits, a
 *    missing or doubled ident line. git reads such a commit (its walk only
 *    needs the committer date, which parse_commit_date() reads leniently);
 *    libgit2 refuses it, and the revision was "unknown". The view hands
 *    libgit2 the same commit with those lines made readable, and the
 *    committer date git would read (capped at 2^63 - 1).
 *
 * It is a backend of the replay's object database (rq_odb_new adds it)
 * above the repository's readers and below the replay's memory store: it
 * reads through the readers it sits on and substitutes. What a pick copies
 * into its new commit (the author line, headers and message, byte for
 * byte) comes from rq_odb_view_read_stored(): replacements applied, as
 * git's read of the commit gives it, and nothing else changed.
 *
 * An abbreviated id is resolved to a full one first (libgit2 hands a
 * prefix lookup the data of the last reader that has it, not the view's):
 * rq_revs does so.
 */
#ifndef RQ_ODB_VIEW_H
#define RQ_ODB_VIEW_H

#include <git2.h>

#include "rq_error.h"
#include "rq_odb.h"
#include "rq_oid.h"

/*
 * Put the view on odb, over every reader odb has now (call once they are
 * all there). refs (with refs_arg; NULL: none) gives the replace refs, the
 * repository the configuration and where the shallow and graft files are; root (NULL: none): those
 * files must resolve inside it (RQ_E_BAD_REPO), and GIT_GRAFT_FILE is not followed. 0, or -1 with
 * err set.
 */
int rq_odb_view_add(git_odb *odb, git_repository *repo, const char *root, rq_odb_refs_fn refs,
		    void *refs_arg, rq_error *err);

/*
 * The object as git's read of it gives it (replacements applied; no graft,
 * no header made readable): what a pick copies. Objects the view does not
 * know (new ones, or odb without a view) come from odb itself. As
 * git_odb_read.
 */
int rq_odb_view_read_stored(git_odb_object **out, git_odb *odb, const rq_oid *id);

/* odb's view backend, NULL when it has none. */
git_odb_backend *rq_odb_view_find(git_odb *odb);
/*
 * Commit id's graft in view b (the shallow file's boundary, info/grafts),
 * for a commit parser (rq_cobj_cache_grafts): -1 when it has none (or b is
 * no view), else the number of parents that replace its own (0: shallow),
 * the first max of them copied to parents. id NULL: the most parents any
 * graft has (-1: no graft at all).
 */
long rq_odb_view_graft(const git_odb_backend *b, const rq_oid *id, rq_oid *parents, size_t max);

/*
 * What git says on stderr as it reads the repository's graft file (the
 * path as rq_odb_view_add takes it), each message whole to say(arg,
 * text): its deprecation hint (git 2.55's words; none with GIT_ADVICE
 * false), then "error: bad graft data: <line>\n" for a line it skips and
 * "error: duplicate graft data: <line>\n" for a commit's second graft.
 * Nothing without a graft file. algo: the repository's format (NULL:
 * SHA-1). 0, or -1 with err set.
 */
typedef void (*rq_odb_view_say_fn)(void *arg, const char *text);
int rq_odb_view_graft_notes(git_repository *repo, const char *root, const rq_oid_algo *algo,
			    rq_odb_view_say_fn say, void *arg, rq_error *err);

#endif
