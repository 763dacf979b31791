/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_deflate: a zlib stream (RFC 1950 around one RFC 1951 block) for a
 * small object, in a few microseconds (core/odb, see rq_odb.h for the
 * family).
 *
 * Most of a replay's new objects are small: commits of 200-400 bytes,
 * trees, and tree deltas. libdeflate spends 5.5-7 us on each call however
 * small the input (its match finder's tables and the Huffman codes of all
 * 288 + 32 symbols, built for every call), which was most of the pack's
 * cost on a 50-pick topic (100 objects). This encoder is made for inputs
 * of at most RQ_DEFLATE_SMALL_MAX bytes:
 *
 * - LZ77 over the whole input (it fits git's 32 KiB window): a hash of
 *   the next 3 bytes, chains of earlier positions followed at most 8 deep,
 *   the longest match taken, with one step of lazy evaluation (a literal
 *   first when the match at the next byte is longer), as zlib's middle
 *   levels do;
 * - Huffman code lengths from the symbols used only (sorted by count, then
 *   built in place, Moffat and Katajainen's method), limited to 15 bits
 *   (7 for the code-length code) by moving leaves down as zlib does;
 * - the smallest of three blocks: that dynamic one, the fixed code, or the
 *   bytes stored.
 *
 * Any inflater reads the result (zlib, libdeflate, git's and libgit2's);
 * the tests check every output against zlib's inflate.
 */
#ifndef RQ_DEFLATE_H
#define RQ_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

/* The largest input rq_deflate_small takes. */
#define RQ_DEFLATE_SMALL_MAX 4096

/* Room the output needs for an input of n bytes (the stored block's size
 * and the zlib wrapper). */
#define RQ_DEFLATE_SMALL_BOUND(n) ((n) + 16)

/*
 * in[0..n) as a zlib stream into out, which has room for
 * RQ_DEFLATE_SMALL_BOUND(n) bytes: its length. 0 when n is above
 * RQ_DEFLATE_SMALL_MAX (nothing written). No allocation, no failure
 * otherwise.
 */
size_t rq_deflate_small(const unsigned char *in, size_t n, unsigned char *out);

/*
 * The same, with in[lit_from..lit_to) taken as literals: no match is
 * searched for there, and none takes its source there (a match that
 * starts before it may still run into it). For bytes that hold no
 * repetition, such as a signature's base64: most of the search's cost
 * for nothing. lit_to <= lit_from: none.
 */
size_t rq_deflate_small_span(const unsigned char *in, size_t n, size_t lit_from, size_t lit_to,
			     unsigned char *out);

/*
 * The Huffman code lengths rq_deflate_small uses (public for its tests):
 * for the nsym symbols (at most 286) counted in freq (each count below
 * 2^23), lengths of at most
 * maxbits (at most 15) into len, 0 for a symbol not used. The code is
 * complete; fewer than two symbols used get a second one of length 1.
 */
void rq_deflate_code_lengths(const uint32_t *freq, unsigned nsym, unsigned maxbits, uint8_t *len);

#endif
