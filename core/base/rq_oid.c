/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_oid: object ids of both object formats (see rq_oid.h).
 */
#include "rq_oid.h"

#include <git2.h>

/* The ids of the empty tree and the empty blob are what `git hash-object
 * -t tree /dev/null` and `git hash-object /dev/null` print in a repository
 * of each format (tests/unit/test_oid.c checks them against upstream
 * git). */
const rq_oid_algo rq_oid_sha1 = {
    "sha1",
    20,
    40,
    {{0x4b, 0x82, 0x5d, 0xc6, 0x42, 0xcb, 0x6e, 0xb9, 0xa0, 0x60,
      0xe5, 0x4b, 0xf8, 0xd6, 0x92, 0x88, 0xfb, 0xee, 0x49, 0x04}},
    {{0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6, 0x43, 0x4b, 0x8b,
      0x29, 0xae, 0x77, 0x5a, 0xd8, 0xc2, 0xe4, 0x8c, 0x53, 0x91}},
};

const rq_oid_algo rq_oid_sha256 = {
    "sha256",
    32,
    64,
    {{0x6e, 0xf1, 0x9b, 0x41, 0x22, 0x5c, 0x53, 0x69, 0xf1, 0xc1, 0x04,
      0xd4, 0x5d, 0x8d, 0x85, 0xef, 0xa9, 0xb0, 0x57, 0xb5, 0x3b, 0x14,
      0xb4, 0xb9, 0xb9, 0x39, 0xdd, 0x74, 0xde, 0xcc, 0x53, 0x21}},
    {{0x47, 0x3a, 0x0f, 0x4c, 0x3b, 0xe8, 0xa9, 0x36, 0x81, 0xa2, 0x67,
      0xe3, 0xb1, 0xe9, 0xa7, 0xdc, 0xda, 0x11, 0x85, 0x43, 0x6f, 0xe1,
      0x41, 0xf7, 0x74, 0x91, 0x20, 0xa3, 0x03, 0x72, 0x18, 0x13}},
};

const rq_oid_algo *rq_oid_algo_by_name(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, rq_oid_sha1.name))
		return &rq_oid_sha1;
	if (!strcmp(name, rq_oid_sha256.name))
		return &rq_oid_sha256;
	return NULL;
}

int rq_oid_is_zero(const rq_oid *id)
{
	static const rq_oid zero;

	return rq_oid_eq(id, &zero);
}

void rq_oid_from_raw(rq_oid *out, const rq_oid_algo *algo, const unsigned char *raw)
{
	memcpy(out->id, raw, algo->rawsz);
	memset(out->id + algo->rawsz, 0, RQ_OID_MAX_RAWSZ - algo->rawsz);
}

char *rq_oid_fmt(char out[RQ_OID_MAX_HEXSZ + 1], const rq_oid *id, const rq_oid_algo *algo)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < algo->rawsz; i++) {
		out[2 * i] = digits[id->id[i] >> 4];
		out[2 * i + 1] = digits[id->id[i] & 15];
	}
	out[algo->hexsz] = '\0';
	return out;
}

int rq_oid_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A lower-case hex digit's value, or -1 (ids are written in lower case). */
static int hexval(char c)
{
	return c >= 'A' && c <= 'F' ? -1 : rq_oid_hex_digit(c);
}

/* len digits of s into out's front (an odd last one in a high half), the
 * rest zero: 0, or -1 at a character that is not a digit. */
static int from_hex(rq_oid *out, const char *s, size_t len)
{
	rq_oid id = {{0}};

	for (size_t i = 0; i < len; i++) {
		int v = hexval(s[i]);
		if (v < 0)
			return -1;
		id.id[i / 2] |= (unsigned char)(i % 2 ? v : v << 4);
	}
	*out = id;
	return 0;
}

int rq_oid_parse_git(rq_oid *out, const rq_oid_algo *algo, const char *s, size_t len)
{
	rq_oid id = {{0}};

	if (!s || len < algo->hexsz)
		return -1;
	for (size_t i = 0; i < algo->rawsz; i++) {
		int hi = rq_oid_hex_digit(s[2 * i]), lo = rq_oid_hex_digit(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		id.id[i] = (unsigned char)(hi << 4 | lo);
	}
	*out = id;
	return 0;
}

int rq_oid_parse(rq_oid *out, const rq_oid_algo *algo, const char *s, size_t len)
{
	if (!s || len != algo->hexsz)
		return -1;
	return from_hex(out, s, len);
}

int rq_oid_parse_prefix(rq_oid *out, const rq_oid_algo *algo, const char *s, size_t len)
{
	if (!s || len < RQ_OID_MIN_PREFIX || len > algo->hexsz)
		return -1;
	return from_hex(out, s, len);
}

int rq_oid_has_prefix(const rq_oid *id, const rq_oid *prefix, size_t nhex)
{
	if (nhex > RQ_OID_MAX_HEXSZ)
		return 0;
	if (memcmp(id->id, prefix->id, nhex / 2))
		return 0;
	return nhex % 2 == 0 || (id->id[nhex / 2] & 0xf0) == prefix->id[nhex / 2];
}

void rq_oid_from_git(rq_oid *out, const struct git_oid *id)
{
	rq_oid_from_raw(out, &rq_oid_sha1, id->id);
}

int rq_oid_to_git(struct git_oid *out, const rq_oid *id, const rq_oid_algo *algo)
{
	if (algo->rawsz != GIT_OID_RAWSZ)
		return -1;
	memcpy(out->id, id->id, GIT_OID_RAWSZ);
	return 0;
}
