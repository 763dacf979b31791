/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_i18n: the text encodings of commit messages, as git treats them
 * (git's utf8.c: is_encoding_utf8, same_encoding, reencode_string_len;
 * commit.c: find_invalid_utf8 and verify_utf8).
 *
 * Encoding names are compared as git compares them: "UTF-8", "utf8" and
 * "Utf-8" are one encoding (a leading "utf", any case, then an optional
 * '-'), other names are equal when they are equal without regard to case.
 * Conversions go through the C library's iconv, as git's do, so that the
 * same names convert to the same bytes.
 */
#ifndef RQ_I18N_H
#define RQ_I18N_H

#include <stddef.h>

#include "rq_buf.h"

/* git's is_encoding_utf8(): NULL (no encoding given) counts as UTF-8. */
int rq_i18n_is_utf8(const char *name);

/* git's same_encoding(): NULL counts as UTF-8. */
int rq_i18n_same(const char *a, const char *b);

/*
 * in[0..len) converted from encoding `from` to encoding `to`, as git's
 * reencode_string_len(): a name iconv does not know is tried again with
 * git's fallback spelling ("UTF-8" for a UTF-8 alias, "ISO-8859-1" for
 * "latin-1"), "UTF-16LE-BOM" is read as "UTF-16", and any byte sequence
 * the conversion refuses (invalid or cut short) fails the whole
 * conversion. Returns malloc'ed bytes, NUL-terminated, with *outlen set;
 * NULL on failure (or out of memory).
 */
char *rq_i18n_reencode(const char *in, size_t len, const char *to, const char *from,
		       size_t *outlen);

/*
 * git's verify_utf8(): every byte of b that does not start a valid UTF-8
 * sequence (git's rules: at most four bytes, no overlong form, no
 * surrogate, nothing past U+10FFFF, no non-character U+xxFFFE/U+xxFFFF or
 * U+FDD0..U+FDEF) is taken as Latin-1 and replaced by its two-byte UTF-8
 * form. Returns 1 when b was valid (unchanged), 0 when bytes were
 * converted (git then warns), -1 out of memory (b unchanged).
 */
int rq_i18n_utf8_fix(rq_buf *b);

#endif
