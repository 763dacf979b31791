/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_error: the error value every replayq library call fills on failure.
 *
 * A call that fails returns a negative int and leaves a stable code (one of
 * rq_code, with a fixed string name used in JSON results and logs) and a
 * human message in the rq_error it was given. Messages are complete
 * sentences without the "fatal: " prefix; the program adds that.
 */
#ifndef RQ_ERROR_H
#define RQ_ERROR_H

#include <stddef.h>

/*
 * The core's codes. The layers above add their own after RQ_E_CORE_END
 * (queue/rq_qerror.h: invalid_job, timeout, dead_letter, redis), so an
 * rq_code is an int that holds any layer's code. RQ_E_CRASHED is here
 * because the core's parallel replay runs child processes; the worker uses
 * the same code for a job process that dies.
 */
typedef int rq_code;

enum rq_core_code {
	RQ_OK = 0,
	RQ_E_USAGE,	       /* bad option or combination of options */
	RQ_E_BAD_REPO,	       /* repository missing, unreadable or outside its root */
	RQ_E_BAD_REVISION,     /* a revision argument does not name a commit */
	RQ_E_AMBIGUOUS,	       /* a name matches several refs */
	RQ_E_NOT_A_REF,	       /* a name that must be a ref is not one */
	RQ_E_BAD_REF,	       /* a ref name that is not valid */
	RQ_E_NOTHING,	       /* no commits to replay were given */
	RQ_E_MERGE_COMMIT,     /* the range holds a merge commit */
	RQ_E_EMPTY_COMMIT,     /* a pick became empty with empty=abort */
	RQ_E_TOO_MANY_COMMITS, /* the range holds more commits than allowed */
	RQ_E_IDENT,	       /* no committer identity could be found */
	RQ_E_BAD_DATE,	       /* a date that cannot be parsed */
	RQ_E_REF_MOVED,	       /* a ref changed since it was read */
	RQ_E_REF_LOCKED,       /* a ref is locked by another process (worth a retry) */
	RQ_E_CORRUPT_OBJECT,   /* an object in the repository is damaged */
	RQ_E_IO,	       /* a file system operation failed */
	RQ_E_GIT,	       /* libgit2 reported an unexpected error */
	RQ_E_NOMEM,	       /* out of memory */
	RQ_E_CRASHED,	       /* the process running a job died */
	RQ_E_INTERRUPTED,      /* stopped by a signal */
	RQ_E_INTERNAL,	       /* a bug */
	RQ_E_UNSUPPORTED_REPO, /* a repository format replayq does not handle */
	RQ_E_SIGN_KEY,	       /* the signing key cannot be used (encrypted, not in the agent) */
	RQ_E_SIGN_FAILED,      /* the signing program is missing or failed, the agent refused */
	RQ_E_TREE_TOO_DEEP,    /* a tree nested deeper than core.maxTreeDepth */
	RQ_E_CORE_END	       /* the first code of the layers above */
};

#define RQ_ERROR_MSG_MAX 512

typedef struct rq_error {
	rq_code code;
	char msg[RQ_ERROR_MSG_MAX];
} rq_error;

/* Clear an error (code RQ_OK, empty message). err may be NULL. */
void rq_error_clear(rq_error *err);

/*
 * Set code and a printf-style message; returns -1 so that callers can
 * write `return rq_error_set(err, ...)`. err may be NULL.
 */
int rq_error_set(rq_error *err, rq_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Set RQ_E_GIT (or RQ_E_NOMEM) from libgit2's last error, prefixed with
 * what was being done. Returns -1.
 */
int rq_error_git(rq_error *err, const char *what);

/*
 * When libgit2's last error is a damaged object (rq_odb, zlib), set
 * RQ_E_CORRUPT_OBJECT with its message and return -1; else 0 (err
 * untouched). For a failed lookup that would otherwise say "no such name".
 */
int rq_error_git_corrupt(rq_error *err);

/* The libgit2 error class replayq's object readers (rq_odb) set for a
 * damaged object, which rq_error_git_corrupt recognises. */
#define RQ_ERROR_GIT_CORRUPT 0x7271
/* The class for a tree nested deeper than core.maxTreeDepth, which
 * rq_error_git turns into RQ_E_TREE_TOO_DEEP with its message alone. */
#define RQ_ERROR_GIT_TOO_DEEP 0x7272

/*
 * Make err libgit2's last error, for code that fails through a libgit2
 * caller which reports libgit2's errors (rq_error_git): a damaged object
 * and a tree too deep keep their code, out of memory stays out of memory,
 * anything else becomes a plain libgit2 error with the message.
 */
void rq_error_to_git(const rq_error *err);

/* Stable snake_case name of a core code ("bad_revision", ...); "internal"
 * for any other value (queue/rq_qerror.h names the queue's codes). */
const char *rq_error_code_name(rq_code code);

#endif
