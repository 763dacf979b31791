/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's utf8.c (encoding names, reencode_string_len) and commit.c
 * (find_invalid_utf8, verify_utf8) */
/*
 * rq_i18n: encoding names, iconv conversions and git's UTF-8 check of a
 * commit's bytes.
 */
#include "rq_i18n.h"

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* "utf" (any case) and an optional '-': the rest of the name, or NULL. */
static const char *utf_suffix(const char *name)
{
	if (strncasecmp(name, "utf", 3) != 0)
		return NULL;
	name += 3;
	return *name == '-' ? name + 1 : name;
}

/* git's same_utf_encoding(): "UTF-16BE" is "utf16be". */
static int same_utf(const char *a, const char *b)
{
	const char *sa = utf_suffix(a), *sb = utf_suffix(b);
	return sa && sb && !strcasecmp(sa, sb);
}

int rq_i18n_is_utf8(const char *name)
{
	return !name || same_utf("utf-8", name);
}

int rq_i18n_same(const char *a, const char *b)
{
	if (!a)
		a = "UTF-8";
	if (!b)
		b = "UTF-8";
	return same_utf(a, b) || !strcasecmp(a, b);
}

/* git's fallback_encoding(): the spellings every iconv knows. */
static const char *fallback(const char *name)
{
	if (rq_i18n_is_utf8(name))
		return "UTF-8";
	if (!strcasecmp(name, "latin-1"))
		return "ISO-8859-1";
	return name;
}

/* The whole of in through cd: malloc'ed output, or NULL. */
static char *convert(iconv_t cd, const char *in, size_t len, size_t *outlen)
{
	size_t cap = len + 1, left = len, room;
	char *out = malloc(cap), *ip = (char *)in, *op;

	if (!out)
		return NULL;
	op = out;
	room = cap - 1;
	while (iconv(cd, &ip, &left, &op, &room) == (size_t)-1) {
		size_t used = (size_t)(op - out);
		char *bigger;
		if (errno != E2BIG || cap > ((size_t)-1) / 2) {
			free(out);
			return NULL;
		}
		cap *= 2;
		if (!(bigger = realloc(out, cap))) {
			free(out);
			return NULL;
		}
		out = bigger;
		op = out + used;
		room = cap - 1 - used;
	}
	*op = '\0';
	*outlen = (size_t)(op - out);
	return out;
}

char *rq_i18n_reencode(const char *in, size_t len, const char *to, const char *from, size_t *outlen)
{
	iconv_t cd;
	char *out;

	if (same_utf("UTF-16LE-BOM", from))
		from = "UTF-16";
	cd = iconv_open(to, from);
	if (cd == (iconv_t)-1)
		cd = iconv_open(fallback(to), fallback(from));
	if (cd == (iconv_t)-1)
		return NULL;
	out = convert(cd, in, len, outlen);
	iconv_close(cd);
	return out;
}

/*
 * The length of the valid UTF-8 sequence at s (of n bytes), by git's
 * find_invalid_utf8() rules; 0 when s[0] starts none.
 */
static size_t valid_sequence(const unsigned char *s, size_t n)
{
	static const unsigned max_cp[] = {0x7f, 0x7ff, 0xffff, 0x10ffff};
	unsigned char c = s[0];
	unsigned cp;
	size_t more = 0;

	if (c < 0x80)
		return 1;
	while (c & 0x40) { /* the high bits after the first: bytes to follow */
		c = (unsigned char)(c << 1);
		more++;
	}
	if (more < 1 || more > 3 || n - 1 < more)
		return 0;
	cp = (unsigned)(c & 0x7f) >> more;
	for (size_t k = 1; k <= more; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if (cp < max_cp[more - 1] + 1 || cp > max_cp[more])
		return 0; /* overlong, or past U+10FFFF */
	if ((cp & 0x1ff800) == 0xd800 || (cp & 0xfffe) == 0xfffe || (cp >= 0xfdd0 && cp <= 0xfdef))
		return 0; /* surrogates and non-characters */
	return more + 1;
}

int rq_i18n_utf8_fix(rq_buf *b)
{
	const unsigned char *s = (const unsigned char *)b->p;
	rq_buf out = {0};
	size_t i = 0, done = 0;

	while (i < b->len) {
		size_t k;
		char two[2];
		if (s[i] < 0x80) { /* ASCII, most of a commit: eight bytes at a time */
			uint64_t w;
			while (i + 8 <= b->len &&
			       (memcpy(&w, s + i, 8), !(w & 0x8080808080808080u)))
				i += 8;
			while (i < b->len && s[i] < 0x80)
				i++;
			continue;
		}
		k = valid_sequence(s + i, b->len - i);
		if (k) {
			i += k;
			continue;
		}
		/* a Latin-1 byte (128-255): its two UTF-8 bytes */
		two[0] = (char)(0xc0 | (s[i] >> 6));
		two[1] = (char)(0x80 | (s[i] & 0x3f));
		rq_buf_add(&out, b->p + done, i - done);
		rq_buf_add(&out, two, 2);
		done = ++i;
	}
	if (!out.p && !out.oom)
		return 1;
	rq_buf_add(&out, b->p + done, b->len - done);
	if (out.oom) {
		free(out.p);
		return -1;
	}
	free(b->p);
	*b = out;
	return 0;
}
