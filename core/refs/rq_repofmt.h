/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_repofmt: open a repository in a format replayq handles, and say
 * which format it is not.
 *
 * replayq reads SHA-1 repositories, and SHA-256 ones once
 * RQ_REPOFMT_SHA256 (below) is 1, with refs stored as files (loose refs
 * and packed-refs) or as reftables (git 3.0's default,
 * extensions.refStorage = reftable, through rq_refdb_rt). libgit2 1.5
 * refuses every extension it does not know; rq_repofmt_open declares
 * refStorage and objectFormat to it (GIT_OPT_SET_EXTENSIONS) and checks
 * their values itself, in git 2.55's order and words where git refuses
 * too:
 *   - a value git cannot read (objectFormat=sha512, "SHA1", a refStorage
 *     other than files and reftable, compatObjectFormat=md5; any version):
 *     "invalid value for 'extensions.objectformat': 'sha512'" (or
 *     "missing value for ..."), then on a second line where git says it
 *     is, "bad config line 7 in file .git/config" (rq_repofmt_print);
 *   - core.repositoryformatversion above 1: "Expected git repo version
 *     <= 1, found 2";
 *   - version 0 with an extension git honours only in version 1: "repo
 *     version is 0, but v1-only extension found:\n\tobjectformat" (libgit2
 *     opens it);
 *   - version 1 with an extension git does not know: "unknown repository
 *     extension found:\n\t<name>".
 * Where git accepts and replayq does not, the message names the setting:
 * "unsupported repository format: extensions.compatObjectFormat=sha256"
 * (a repository keeping both hashes: out of scope), also for
 * extensions.objectFormat=sha256 while RQ_REPOFMT_SHA256 is 0 and for the
 * extensions git knows and replayq does not handle (worktreeConfig,
 * partialClone, ...). Each is RQ_E_UNSUPPORTED_REPO.
 */
#ifndef RQ_REPOFMT_H
#define RQ_REPOFMT_H

#include <git2.h>
#include <stdio.h>

#include "rq_error.h"
#include "rq_oid.h"

/*
 * The switch that opens SHA-256 repositories (issue 42): 1 accepts
 * extensions.objectFormat=sha256 (rq_repofmt_algo then gives
 * rq_oid_sha256), 0 refuses it by name. tests/CMakeLists.txt reads this
 * line: 1 also turns on the SHA-256 test pass (RQ_TEST_SHA256).
 */
#define RQ_REPOFMT_SHA256 1

/*
 * git_repository_open_ext(out, path, flags, NULL), then the format check,
 * then the reftable ref database when the repository has one. 0, or -1
 * with err set: RQ_E_UNSUPPORTED_REPO, or RQ_E_BAD_REPO (not a
 * repository: libgit2's message).
 */
int rq_repofmt_open(git_repository **out, const char *path, unsigned int flags, rq_error *err);

/* 1 when an opened repository keeps its refs in reftables
 * (extensions.refStorage = reftable), else 0. */
int rq_repofmt_reftable(git_repository *repo);

/* The object format of a repository rq_repofmt_open accepted (its
 * extensions.objectFormat: rq_oid_sha256 for "sha256" when
 * RQ_REPOFMT_SHA256 is 1; SHA-1 when unset). For the openers'
 * rq_odb_opts.algo: read once per job. */
const rq_oid_algo *rq_repofmt_algo(git_repository *repo);

/* Print an error of rq_repofmt_open as git prints the refusal:
 * "error: <cause>\nfatal: bad config line N in file P" for a value git
 * cannot read, else "fatal: <msg>". */
void rq_repofmt_print(FILE *f, const char *msg);

#endif
