/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_deflate: every stream inflates (zlib's inflate, the one git uses) to
 * the input, over hand-picked and random inputs of every kind and size up
 * to the limit, with and without a span taken as literals (which no match
 * searches or uses); the code lengths are complete and within their
 * limit; the sizes stay near libdeflate's on objects like a replay's.
 */
#include "testutil.h"

#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rq_deflate.h"

static unsigned long g_seed = 12345;

static unsigned rnd(void)
{
	g_seed = g_seed * 6364136223846793005ul + 1442695040888963407ul;
	return (unsigned)(g_seed >> 33);
}

/* Compress, with in[from..to) as literals, check the stream inflates to
 * the input; its length. */
static size_t round_trip_span(const unsigned char *in, size_t n, size_t from, size_t to)
{
	unsigned char *out = malloc(RQ_DEFLATE_SMALL_BOUND(n));
	unsigned char *back = malloc(n + 1);
	uLongf back_len = n + 1;
	size_t z;

	assert_non_null(out);
	assert_non_null(back);
	z = from || to ? rq_deflate_small_span(in, n, from, to, out) : rq_deflate_small(in, n, out);
	assert_true(z >= 2 + 4);
	assert_true(z <= RQ_DEFLATE_SMALL_BOUND(n));
	assert_int_equal(uncompress(back, &back_len, out, z), Z_OK);
	assert_int_equal(back_len, n);
	if (n)
		assert_memory_equal(back, in, n);
	/* and with libdeflate, which replayq's own pack reader uses */
	{
		struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
		size_t used = 0;
		assert_non_null(d);
		memset(back, 0, n + 1);
		assert_int_equal(libdeflate_zlib_decompress_ex(d, out, z, back, n, &used, NULL),
				 LIBDEFLATE_SUCCESS);
		assert_int_equal(used, z);
		if (n)
			assert_memory_equal(back, in, n);
		libdeflate_free_decompressor(d);
	}
	free(out);
	free(back);
	return z;
}

static size_t round_trip(const unsigned char *in, size_t n)
{
	return round_trip_span(in, n, 0, 0);
}

/* Inputs of one kind at sizes 0 .. the limit. */
typedef void (*fill_fn)(unsigned char *p, size_t n);

static void fill_random(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)rnd();
}

static void fill_zero(unsigned char *p, size_t n)
{
	memset(p, 0, n);
}

/* few symbols, skewed counts: long codes, the code-length code too */
static void fill_skewed(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned r = rnd(), b = 0;
		while (b < 20 && (r & (1u << b)))
			b++;
		p[i] = (unsigned char)('a' + b);
	}
}

/* text with repeats near and far */
static void fill_text(unsigned char *p, size_t n)
{
	static const char *words[] = {"tree ",	 "parent ",	    "author ", "committer ",
				      "the ",	 "merge ",	    "\n",      "1800000000 +0000",
				      "replay ", "0123456789abcdef"};
	size_t i = 0;

	while (i < n) {
		const char *w = words[rnd() % 10];
		for (size_t j = 0; w[j] && i < n; j++)
			p[i++] = (unsigned char)w[j];
	}
}

static void test_round_trips(void **state)
{
	static const fill_fn fills[] = {fill_random, fill_zero, fill_skewed, fill_text};
	unsigned char *in = malloc(RQ_DEFLATE_SMALL_MAX);

	(void)state;
	assert_non_null(in);
	for (size_t f = 0; f < sizeof(fills) / sizeof(fills[0]); f++) {
		for (size_t n = 0; n <= 300; n++) {
			fills[f](in, n);
			round_trip(in, n);
		}
		for (int k = 0; k < 300; k++) {
			size_t n = rnd() % (RQ_DEFLATE_SMALL_MAX + 1);
			fills[f](in, n);
			round_trip(in, n);
		}
		fills[f](in, RQ_DEFLATE_SMALL_MAX);
		round_trip(in, RQ_DEFLATE_SMALL_MAX);
	}
	/* random bytes are stored: the bound is what they take */
	fill_random(in, 1000);
	assert_int_equal(round_trip(in, 1000), 1000 + 11);
	/* zeros: a match of 258 after another */
	fill_zero(in, RQ_DEFLATE_SMALL_MAX);
	assert_true(round_trip(in, RQ_DEFLATE_SMALL_MAX) < 40);
	/* over the limit: nothing */
	assert_int_equal(rq_deflate_small(in, RQ_DEFLATE_SMALL_MAX + 1, in), 0);
	assert_int_equal(rq_deflate_small_span(in, RQ_DEFLATE_SMALL_MAX + 1, 0, 9, in), 0);
	free(in);
}

/* A span taken as literals: every stream still inflates to its input
 * (spans anywhere, empty, reversed, past the end), and inside the span no
 * match is searched for nor taken from. */
static void test_span(void **state)
{
	static const fill_fn fills[] = {fill_random, fill_zero, fill_skewed, fill_text};
	unsigned char *in = malloc(RQ_DEFLATE_SMALL_MAX), *out = malloc(RQ_DEFLATE_SMALL_MAX);
	size_t whole, first, second;

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	for (size_t f = 0; f < sizeof(fills) / sizeof(fills[0]); f++)
		for (int k = 0; k < 400; k++) {
			size_t n = rnd() % 1200, a = rnd() % (n + 8), b = rnd() % (n + 8);
			fills[f](in, n);
			round_trip_span(in, n, a, b);
		}
	/* text repeated: without a span, the second copy is one match */
	fill_text(in, 400);
	memcpy(in + 400, in, 400);
	whole = round_trip(in, 800);
	/* the second copy as literals: no match searched for there */
	second = round_trip_span(in, 800, 400, 800);
	/* the first as literals: it is no match's source, the second is coded
	 * on its own */
	first = round_trip_span(in, 800, 0, 400);
	assert_true(whole < 400);
	assert_true(second > whole + 150);
	assert_true(first > whole + 150);
	/* an empty or reversed span is none: the same stream as without */
	assert_int_equal(rq_deflate_small_span(in, 800, 500, 500, out), whole);
	assert_int_equal(rq_deflate_small_span(in, 800, 600, 100, out), whole);
	free(in);
	free(out);
}

/* Lengths within the limit and a complete code (Kraft sum exactly 1). */
static void check_code(const uint32_t *freq, unsigned nsym, unsigned maxbits)
{
	uint8_t len[286];
	uint64_t kraft = 0;
	unsigned used = 0;

	rq_deflate_code_lengths(freq, nsym, maxbits, len);
	for (unsigned s = 0; s < nsym; s++) {
		assert_true(len[s] <= maxbits);
		if (freq[s])
			assert_true(len[s] > 0);
		if (len[s]) {
			kraft += (uint64_t)1 << (maxbits - len[s]);
			used++;
		}
	}
	assert_true(used >= 2);
	assert_int_equal(kraft, (uint64_t)1 << maxbits);
}

static void test_code_lengths(void **state)
{
	uint32_t freq[286];

	(void)state;
	/* Fibonacci counts: an unlimited code would be 23 deep */
	memset(freq, 0, sizeof(freq));
	freq[0] = freq[1] = 1;
	for (int s = 2; s < 24; s++)
		freq[s] = freq[s - 1] + freq[s - 2];
	check_code(freq, 24, 15);
	check_code(freq, 19, 7);
	check_code(freq, 24, 7);
	/* more symbols than the insertion sort takes, large counts */
	for (int s = 0; s < 200; s++)
		freq[s] = s < 30 ? freq[s % 24] : (uint32_t)(rnd() % (1u << 22)) + 1;
	check_code(freq, 200, 15);
	/* one symbol, none */
	memset(freq, 0, sizeof(freq));
	freq[7] = 3;
	check_code(freq, 30, 15);
	freq[7] = 0;
	check_code(freq, 30, 15);
	freq[0] = 9;
	check_code(freq, 19, 7);
	/* random counts over every size of alphabet */
	for (int k = 0; k < 2000; k++) {
		unsigned nsym = 2 + rnd() % 285, maxbits = k % 2 ? 15 : 7;
		if (maxbits == 7 && nsym > 19)
			nsym = 19;
		for (unsigned s = 0; s < nsym; s++)
			freq[s] = rnd() % 3 ? 0 : 1u << (rnd() % 12);
		check_code(freq, nsym, maxbits);
	}
}

/* Objects like a replay's: the sizes within 8% of libdeflate's level 2. */
static void test_sizes(void **state)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(2);
	unsigned char in[RQ_DEFLATE_SMALL_MAX], out[RQ_DEFLATE_SMALL_BOUND(RQ_DEFLATE_SMALL_MAX)];
	size_t ours = 0, theirs = 0;

	(void)state;
	assert_non_null(c);
	for (int k = 0; k < 200; k++) {
		int n = snprintf((char *)in, sizeof(in),
				 "tree %08x%08x%08x%08x%08x\nparent %08x%08x%08x%08x%08x\n"
				 "author A U Thor <author@example.com> %u +0000\n"
				 "committer C O Mitter <committer@example.com> 1800000000 +0000\n\n"
				 "change %d of the topic: %s\n",
				 rnd(), rnd(), rnd(), rnd(), rnd(), rnd(), rnd(), rnd(), rnd(),
				 rnd(), 1700000000u + rnd() % 1000000, k,
				 k % 3 ? "fix the thing in the place" : "merge the other thing");
		ours += rq_deflate_small(in, (size_t)n, out);
		theirs += libdeflate_zlib_compress(c, in, (size_t)n, out, sizeof(out));
		fill_text(in, 1000 + (size_t)k * 10);
		ours += round_trip(in, 1000 + (size_t)k * 10);
		theirs += libdeflate_zlib_compress(c, in, 1000 + (size_t)k * 10, out, sizeof(out));
	}
	print_message("rq_deflate %zu bytes, libdeflate level 2 %zu\n", ours, theirs);
	assert_true(ours * 100 <= theirs * 108);
	libdeflate_free_compressor(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trips),
	    cmocka_unit_test(test_span),
	    cmocka_unit_test(test_code_lengths),
	    cmocka_unit_test(test_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
