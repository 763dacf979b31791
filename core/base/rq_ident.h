/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_ident: committer identities and git's date formats.
 *
 * An identity is what follows "committer " in a commit header:
 * "Name <email> <epoch> <+hhmm>". Dates are parsed the way git parses
 * GIT_COMMITTER_DATE for the common formats: "@<epoch> [<tz>]",
 * "<epoch> <tz>", ISO 8601 ("2005-04-07T22:13:13+02:00",
 * "2005-04-07 22:13:13 +0200") and RFC 2822 ("Thu, 07 Apr 2005 22:13:13
 * +0200"). A date without a zone is taken in the local zone.
 */
#ifndef RQ_IDENT_H
#define RQ_IDENT_H

#include <stdint.h>
#include <git2.h>

#include "rq_error.h"

#define RQ_IDENT_FIELD_MAX 256

typedef struct rq_ident {
	char name[RQ_IDENT_FIELD_MAX];
	char email[RQ_IDENT_FIELD_MAX];
	int64_t time; /* seconds since the epoch */
	int tz;	      /* minutes east of UTC */
} rq_ident;

/* Parse a date; 0 on success, -1 (RQ_E_BAD_DATE) if not understood. */
int rq_ident_parse_date(const char *s, int64_t *time, int *tz, rq_error *err);

/*
 * Set name and email with git's clean-up: leading and trailing blanks and
 * punctuation (",:;<>\"\\'") removed, '<', '>' and newlines dropped.
 * Fails with RQ_E_IDENT if the name or email ends up empty or too long.
 */
int rq_ident_set(rq_ident *id, const char *name, const char *email, rq_error *err);

/*
 * The committer identity git would use in this repository:
 * GIT_COMMITTER_NAME / GIT_COMMITTER_EMAIL (else committer.name /
 * committer.email, else user.name / user.email, else $EMAIL for the
 * address) and GIT_COMMITTER_DATE (else now, local zone). repo may be NULL
 * (no config is read then).
 */
int rq_ident_default(git_repository *repo, rq_ident *id, rq_error *err);

/* The same for the author (GIT_AUTHOR_*, author.name / author.email, ...):
 * the author git revert gives a revert commit. */
int rq_ident_author_default(git_repository *repo, rq_ident *id, rq_error *err);

/* Write "Name <email> <epoch> <+hhmm>" into buf; -1 if it does not fit. */
int rq_ident_format(const rq_ident *id, char *buf, size_t size);

#endif
