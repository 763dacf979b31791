/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_commits: the commits of one job (a replay, a walk), read once each
 * through replayq's own object reader (rq_odb_read) over the repository's
 * object database, parsed as git parses them (an rq_cobj cache at the
 * database's width), with the shallow and graft files' parents as
 * rq_odb_view reads them (at the same width). Made once where the job's state is made
 * (rq_revs_parse), freed with it; the commits it gives stay valid until
 * then.
 */
#ifndef RQ_COMMITS_H
#define RQ_COMMITS_H

#include <git2.h>

#include "rq_cobj.h"
#include "rq_error.h"
#include "rq_odb_read.h"
#include "rq_oid.h"

typedef struct rq_commits rq_commits;

/* Over repo's object database as it is now (after rq_odb_install), in
 * format algo (NULL: SHA-1). 0, or -1 with err set. */
int rq_commits_open(rq_commits **out, git_repository *repo, const rq_oid_algo *algo, rq_error *err);
/* Read through repo's object database of now from here on (the replay's,
 * with its store of new objects, once rq_odb_tmpdir_open put it there);
 * the commits read so far stay (c NULL: nothing to do). 0, or -1 with err
 * set. */
int rq_commits_reopen(rq_commits *c, git_repository *repo, rq_error *err);
/* Let go of the object database (before the replay's store is packed or
 * freed): the commits read stay, nothing more is read. c NULL: nothing. */
void rq_commits_release(rq_commits *c);
void rq_commits_free(rq_commits *c);
rq_cobj_cache *rq_commits_cache(const rq_commits *c);
rq_odb_read *rq_commits_reader(const rq_commits *c);

#endif
