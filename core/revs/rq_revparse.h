/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_revparse: the syntax of one revision name (no range), read the way
 * git's object-name.c reads it, without a repository; rq_revname looks up
 * what it names.
 *
 *   name   := ":/" text                       the youngest commit whose
 *                                             message matches text
 *           | base [ "@{" at "}" ] suffix*
 *   at     := "-" N (only with no base: the Nth branch checked out before)
 *           | "u" | "upstream" | "push" | N (reflog entry) | date
 *   suffix := "~" [N] | "^" [N] | "^{" [type] "}" | "^{/" text "}"
 *   type   := "commit" | "tree" | "blob" | "tag" ("object" is not taken,
 *             as replayq did not take it before: "unknown revision")
 *
 * Suffixes are read from the right, as git's get_oid_1 reads them: the
 * last "^{" opens the last peel (so a text may hold '~', '^' and '}'), a
 * run of digits after the last '~' or '^' is its count ("^" and "~" alone
 * count 1, "^0" peels to the commit). The base is then a full object id,
 * an abbreviation, "@" or a name to look up by git's DWIM rules; ids are
 * read at the repository's width (rq_revparse_hex).
 *
 * Issue 42: this replaces libgit2's git_revparse_*, which reads ids as
 * 40 digits only (every form fails in a SHA-256 repository).
 */
#ifndef RQ_REVPARSE_H
#define RQ_REVPARSE_H

#include <stddef.h>

#include "rq_oid.h"

typedef enum rq_revparse_step_kind {
	RQ_REVPARSE_PARENT,   /* ^N: the Nth parent (0: the commit itself) */
	RQ_REVPARSE_ANCESTOR, /* ~N: the Nth first-parent ancestor */
	RQ_REVPARSE_PEEL,     /* ^{type}, ^{}: peeled to type */
	RQ_REVPARSE_SEARCH,   /* ^{/text}: youngest ancestor matching text */
} rq_revparse_step_kind;

typedef enum rq_revparse_type {
	RQ_REVPARSE_NONTAG, /* ^{}: whatever is under the tags */
	RQ_REVPARSE_COMMIT,
	RQ_REVPARSE_TREE,
	RQ_REVPARSE_BLOB,
	RQ_REVPARSE_TAG,
} rq_revparse_type;

typedef struct rq_revparse_step {
	rq_revparse_step_kind kind;
	long n;		       /* PARENT, ANCESTOR */
	rq_revparse_type type; /* PEEL */
	const char *text;      /* SEARCH: into the parsed name, not NUL-ended */
	size_t len;
} rq_revparse_step;

typedef enum rq_revparse_at {
	RQ_REVPARSE_AT_NONE,
	RQ_REVPARSE_AT_PRIOR,	 /* @{-N}: at_n = N >= 1 */
	RQ_REVPARSE_AT_UPSTREAM, /* @{u}, @{upstream} */
	RQ_REVPARSE_AT_PUSH,	 /* @{push} */
	RQ_REVPARSE_AT_REFLOG,	 /* @{N}: at_n = N >= 0 */
	RQ_REVPARSE_AT_DATE,	 /* @{<date>}: at_text, at_len */
} rq_revparse_at;

typedef struct rq_revparse {
	const char *base; /* into the parsed name, base_len bytes: the name
			     before "@{" (may be empty), or ":/"'s text */
	size_t base_len;
	int search_all; /* ":/text": base is the text, no at, no step */
	rq_revparse_at at;
	long at_n;
	const char *at_text;
	size_t at_len;
	rq_revparse_step *steps; /* applied in this order, nsteps */
	size_t nsteps;
} rq_revparse;

/*
 * Read expr into *out (which points into expr: keep expr while *out is
 * used). 0; 1 when expr is no revision name by the grammar (empty, an
 * unknown ^{type}, a count over INT_MAX, "@{-N}" after a name, an empty
 * name before a suffix...: git's "unknown revision"), *out then empty;
 * -1 out of memory.
 */
int rq_revparse_read(const char *expr, rq_revparse *out);
void rq_revparse_free(rq_revparse *p);

/*
 * A base as an object id of algo's width (hex digits, either case, as
 * git's get_oid_hex takes them): 2 a full id (exactly algo->hexsz digits)
 * into *out; 1 an abbreviation (RQ_OID_MIN_PREFIX up to hexsz - 1 digits)
 * into *out as rq_oid_parse_prefix makes it; 0 not an id.
 */
int rq_revparse_hex(const rq_oid_algo *algo, const char *s, size_t len, rq_oid *out);

#endif
