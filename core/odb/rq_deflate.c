/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_deflate: a small input as one deflate block in a zlib stream (see the
 * header). The formats are RFC 1950 and RFC 1951; the tables below are the
 * latter's.
 */
#include "rq_deflate.h"

#include <libdeflate.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define NLITLEN	     286 /* 0-255 literals, 256 the end, 257-285 lengths */
#define NDIST	     30
#define NPRE	     19
#define HASH_BITS    12
#define CHAIN_DEPTH  8
#define MIN_MATCH    3
#define MAX_MATCH    258
#define NICE_MATCH   64 /* a match this long is taken without looking further */
#define END_OF_BLOCK 256

static const uint16_t len_base[29] = {3,  4,  5,  6,   7,   8,	 9,   10,  11, 13,
				      15, 17, 19, 23,  27,  31,	 35,  43,  51, 59,
				      67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
				      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[NDIST] = {
    1,	 2,   3,   4,	5,   7,	   9,	 13,   17,   25,   33,	 49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[NDIST] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
					  6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
/* the order the code-length code's lengths are sent in */
static const uint8_t pre_order[NPRE] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
					11, 4,	12, 3, 13, 2, 14, 1, 15};
static const uint8_t pre_extra[NPRE] = {[16] = 2, [17] = 3, [18] = 7};

/* A literal (len 0, val the byte) or a match (len, val the distance), with
 * its length and distance symbols. */
typedef struct lz_item {
	uint16_t len, val;
	uint8_t lsym, dsym;
} lz_item;

/* ---- LZ77 ---- */

typedef struct lz_state {
	const unsigned char *in;
	size_t n;
	size_t lit_from, lit_to;	     /* positions taken as literals, unsearched */
	unsigned hash_bits;		     /* fewer for a smaller input: less table to clear */
	uint16_t head[1u << HASH_BITS];	     /* 1 + the latest position of a hash, 0: none */
	uint16_t prev[RQ_DEFLATE_SMALL_MAX]; /* 1 + the position before it, same hash */
} lz_state;

static unsigned hash3(const lz_state *s, const unsigned char *p)
{
	uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
	return (v * 0x9E3779B1u) >> (32 - s->hash_bits);
}

static inline void lz_insert(lz_state *s, size_t pos)
{
	if (pos + MIN_MATCH <= s->n) {
		unsigned h = hash3(s, s->in + pos);
		s->prev[pos] = s->head[h];
		s->head[h] = (uint16_t)(pos + 1);
	}
}

/* The longest match for pos among the earlier positions of its chain: its
 * length (0: none of MIN_MATCH), *dist. */
static size_t lz_find(const lz_state *s, size_t pos, size_t *dist)
{
	const unsigned char *in = s->in, *cur = in + pos;
	size_t best = 0, limit = s->n - pos < MAX_MATCH ? s->n - pos : MAX_MATCH;
	unsigned cand;

	if (limit < MIN_MATCH)
		return 0;
	cand = s->head[hash3(s, cur)];
	for (int depth = 0; cand && depth < CHAIN_DEPTH; depth++) {
		const unsigned char *c = in + cand - 1;
		if (c[best] == cur[best] && c[0] == cur[0]) {
			size_t l = 0;
			while (l < limit && c[l] == cur[l])
				l++;
			if (l > best) {
				best = l;
				*dist = (size_t)(cur - c);
				if (l >= NICE_MATCH || l == limit)
					break;
			}
		}
		cand = s->prev[cand - 1];
	}
	return best >= MIN_MATCH ? best : 0;
}

static unsigned len_symbol(size_t len)
{
	unsigned i = 28;
	while (len_base[i] > len)
		i--;
	return i;
}

static unsigned dist_symbol(size_t dist)
{
	uint32_t x = (uint32_t)dist - 1;
	unsigned b;

	if (x < 4)
		return x;
	b = 31u - (unsigned)__builtin_clz(x);
	return 2 * b + ((x >> (b - 1)) & 1);
}

/* The symbol counts, which symbols are used (bit s of word s / 64) and
 * the extra bits the items need. */
typedef struct lz_counts {
	uint32_t lit[NLITLEN], dist[NDIST];
	uint64_t lit_used[(NLITLEN + 63) / 64], dist_used;
	uint64_t extra_bits;
} lz_counts;

static void count_lit(lz_counts *c, unsigned s)
{
	c->lit[s]++;
	c->lit_used[s / 64] |= (uint64_t)1 << (s % 64);
}

static void put_item(lz_item *v, size_t *k, lz_counts *c, size_t len, size_t val)
{
	lz_item it = {(uint16_t)len, (uint16_t)val, 0, 0};

	if (!len) {
		count_lit(c, (unsigned)val);
	} else {
		it.lsym = (uint8_t)len_symbol(len);
		it.dsym = (uint8_t)dist_symbol(val);
		count_lit(c, 257u + it.lsym);
		c->dist[it.dsym]++;
		c->dist_used |= (uint64_t)1 << it.dsym;
		c->extra_bits += len_extra[it.lsym] + dist_extra[it.dsym];
	}
	v[(*k)++] = it;
}

/* The input as literals and matches: greedy, with one step of lazy
 * evaluation. The number of items. */
static size_t lz_parse(lz_state *s, lz_item *v, lz_counts *c)
{
	size_t pos = 0, k = 0, len, dist = 0, next_len = 0, next_dist = 0;
	int have_next = 0;

	s->hash_bits = s->n <= 256 ? 8 : s->n <= 1024 ? 10 : HASH_BITS;
	memset(s->head, 0, sizeof(s->head[0]) << s->hash_bits);
	while (pos < s->n) {
		if (pos >= s->lit_from && pos < s->lit_to) {
			/* the literal span: no search, and no position of it
			 * becomes a match's source */
			for (; pos < s->lit_to; pos++)
				put_item(v, &k, c, 0, s->in[pos]);
			have_next = 0;
			continue;
		}
		if (have_next) {
			len = next_len;
			dist = next_dist;
			have_next = 0;
		} else {
			len = lz_find(s, pos, &dist);
		}
		lz_insert(s, pos);
		if (len && len < NICE_MATCH) {
			next_len = lz_find(s, pos + 1, &next_dist);
			have_next = 1;
			if (next_len > len) {
				put_item(v, &k, c, 0, s->in[pos++]);
				continue;
			}
			have_next = 0;
		}
		if (!len) {
			put_item(v, &k, c, 0, s->in[pos++]);
			continue;
		}
		put_item(v, &k, c, len, dist);
		for (size_t j = 1; j < len; j++)
			lz_insert(s, pos + j);
		pos += len;
	}
	return k;
}

/* ---- Huffman codes ---- */

/*
 * Moffat and Katajainen, "In-place calculation of minimum-redundancy
 * codes" (1995): a[0..n) holds weights in ascending order, n >= 2; on
 * return, each one's code length (a[0] the longest).
 */
static void lengths_in_place(uint32_t *a, int n)
{
	int root = 0, leaf = 2, next, avbl, used, depth;

	a[0] += a[1];
	for (next = 1; next < n - 1; next++) {
		if (leaf >= n || a[root] < a[leaf]) {
			a[next] = a[root];
			a[root++] = (uint32_t)next;
		} else {
			a[next] = a[leaf++];
		}
		if (leaf >= n || (root < next && a[root] < a[leaf])) {
			a[next] += a[root];
			a[root++] = (uint32_t)next;
		} else {
			a[next] += a[leaf++];
		}
	}
	a[n - 2] = 0;
	for (next = n - 3; next >= 0; next--)
		a[next] = a[a[next]] + 1;
	avbl = 1;
	used = depth = 0;
	root = n - 2;
	next = n - 1;
	while (avbl > 0) {
		while (root >= 0 && a[root] == (uint32_t)depth) {
			used++;
			root--;
		}
		while (avbl > used) {
			a[next--] = (uint32_t)depth;
			avbl--;
		}
		avbl = 2 * used;
		depth++;
		used = 0;
	}
}

/* Lengths a[0..n) (ascending weights: non-increasing lengths) made at most
 * maxbits: the deeper leaves moved up to maxbits, then, while the code is
 * over-full, a leaf moved down from the deepest level that has one with
 * room below (zlib's way), and the lengths handed out again. */
static void limit_lengths(uint32_t *a, int n, unsigned maxbits)
{
	unsigned count[16] = {0};
	uint64_t kraft = 0;
	int k = 0;

	if (a[0] <= maxbits)
		return;
	for (int i = 0; i < n; i++)
		count[a[i] > maxbits ? maxbits : a[i]]++;
	/* the code's room in units of 2^-maxbits: more than all of it now */
	for (unsigned b = 1; b <= maxbits; b++)
		kraft += (uint64_t)count[b] << (maxbits - b);
	/* each step takes one unit off: a leaf of level b moves down to b + 1,
	 * and a leaf of maxbits becomes its sibling there */
	for (; kraft > (uint64_t)1 << maxbits; kraft--) {
		unsigned b = maxbits - 1;
		while (!count[b])
			b--;
		count[b]--;
		count[b + 1] += 2;
		count[maxbits]--;
	}
	for (unsigned b = maxbits; b >= 1; b--)
		for (unsigned j = 0; j < count[b]; j++)
			a[k++] = b;
}

/* The symbols a code gives a length to, in symbol order. */
typedef struct code_syms {
	uint16_t s[NLITLEN + 2]; /* the fixed code has 288 */
	unsigned n;
} code_syms;

/* Keys (count << 9 | symbol, given in symbol order; counts below 2^23)
 * sorted by count, then symbol: by insertion when few, else by the count's
 * 8-bit digits, as many as the largest has (stable: equal counts stay in
 * symbol order). */
static void sort_keys(uint32_t *key, unsigned n)
{
	uint32_t tmp[NLITLEN], *from = key, *to = tmp, top = 0;

	if (n <= 32) {
		for (unsigned i = 1; i < n; i++) {
			uint32_t k = key[i];
			unsigned j = i;
			for (; j > 0 && key[j - 1] > k; j--)
				key[j] = key[j - 1];
			key[j] = k;
		}
		return;
	}
	for (unsigned i = 0; i < n; i++)
		top |= key[i];
	for (unsigned shift = 9; shift < 32 && top >> shift; shift += 8) {
		unsigned pos[256] = {0}, sum = 0;
		for (unsigned i = 0; i < n; i++)
			pos[(from[i] >> shift) & 255]++;
		for (unsigned d = 0; d < 256; d++) {
			unsigned c = pos[d];
			pos[d] = sum;
			sum += c;
		}
		for (unsigned i = 0; i < n; i++)
			to[pos[(from[i] >> shift) & 255]++] = from[i];
		from = to;
		to = from == tmp ? key : tmp;
	}
	if (from != key)
		memcpy(key, from, n * sizeof(*key));
}

/*
 * Lengths into len (zeroed) for the used symbols (in symbol order), and
 * the symbols that got one into out. Fewer than two used: a second symbol
 * (0 or 1) gets a length too.
 */
static void lengths_for(const uint32_t *freq, const uint16_t *used, unsigned n, unsigned maxbits,
			uint8_t *len, code_syms *out)
{
	uint32_t key[NLITLEN], w[NLITLEN];

	if (n < 2) {
		unsigned a = n ? used[0] : 0, b = a ? 0 : 1;
		len[a] = len[b] = 1;
		out->s[0] = (uint16_t)(a < b ? a : b);
		out->s[1] = (uint16_t)(a < b ? b : a);
		out->n = 2;
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		key[i] = freq[used[i]] << 9 | used[i];
		out->s[i] = used[i];
	}
	out->n = n;
	sort_keys(key, n);
	for (unsigned i = 0; i < n; i++)
		w[i] = key[i] >> 9;
	lengths_in_place(w, (int)n);
	limit_lengths(w, (int)n, maxbits);
	for (unsigned i = 0; i < n; i++)
		len[key[i] & 511] = (uint8_t)w[i];
}

/* The symbols set in a bitmap of nwords words, in order. */
static unsigned bitmap_symbols(const uint64_t *bits, unsigned nwords, uint16_t *out)
{
	unsigned n = 0;

	for (unsigned w = 0; w < nwords; w++)
		for (uint64_t v = bits[w]; v; v &= v - 1)
			out[n++] = (uint16_t)(w * 64 + (unsigned)__builtin_ctzll(v));
	return n;
}

void rq_deflate_code_lengths(const uint32_t *freq, unsigned nsym, unsigned maxbits, uint8_t *len)
{
	uint16_t used[NLITLEN];
	code_syms cs;
	unsigned n = 0;

	memset(len, 0, nsym);
	for (unsigned s = 0; s < nsym; s++)
		if (freq[s])
			used[n++] = (uint16_t)s;
	lengths_for(freq, used, n, maxbits, len, &cs);
}

/* The low n bits of v in reverse order. */
static unsigned reverse_bits(unsigned v, unsigned n)
{
	v = ((v >> 1) & 0x5555u) | ((v & 0x5555u) << 1);
	v = ((v >> 2) & 0x3333u) | ((v & 0x3333u) << 2);
	v = ((v >> 4) & 0x0f0fu) | ((v & 0x0f0fu) << 4);
	v = ((v >> 8) & 0x00ffu) | ((v & 0x00ffu) << 8);
	return v >> (16 - n);
}

/* Canonical codes for the lengths of the symbols cs names, bit-reversed
 * (deflate sends a code's first bit first, the bit writer the lowest bit
 * first). */
static void make_codes(const uint8_t *len, const code_syms *cs, uint16_t *code)
{
	unsigned count[16] = {0}, next[16];
	unsigned c = 0;

	for (unsigned i = 0; i < cs->n; i++)
		count[len[cs->s[i]]]++;
	for (unsigned b = 1; b < 16; b++) {
		c = (c + count[b - 1]) << 1;
		next[b] = c;
	}
	for (unsigned i = 0; i < cs->n; i++) {
		unsigned s = cs->s[i];
		code[s] = (uint16_t)reverse_bits(next[len[s]]++, len[s]);
	}
}

/* Every symbol of an alphabet of n (the fixed code, the code-length code). */
static void all_symbols(unsigned n, const uint8_t *len, code_syms *cs)
{
	cs->n = 0;
	for (unsigned s = 0; s < n; s++)
		if (len[s])
			cs->s[cs->n++] = (uint16_t)s;
}

/* ---- the block ---- */

typedef struct bit_out {
	unsigned char *p, *end;
	uint64_t acc;
	unsigned nacc;
	int full; /* the output had no room (never, when the sizes are right) */
} bit_out;

/* The whole bytes held, written out. */
static void put_flush(bit_out *b)
{
	while (b->nacc >= 8) {
		if (b->p == b->end) {
			b->full = 1;
			b->nacc = 0;
			return;
		}
		*b->p++ = (unsigned char)b->acc;
		b->acc >>= 8;
		b->nacc -= 8;
	}
}

/* n <= 16 bits, the lowest first; written out 32 bits at a time. */
static inline void put_bits(bit_out *b, uint32_t v, unsigned n)
{
	b->acc |= (uint64_t)v << b->nacc;
	b->nacc += n;
	if (b->nacc < 32)
		return;
	if (b->end - b->p < 4) {
		put_flush(b);
		return;
	}
	b->p[0] = (unsigned char)b->acc;
	b->p[1] = (unsigned char)(b->acc >> 8);
	b->p[2] = (unsigned char)(b->acc >> 16);
	b->p[3] = (unsigned char)(b->acc >> 24);
	b->p += 4;
	b->acc >>= 32;
	b->nacc -= 32;
}

/* To the next byte, every bit written out. */
static void put_align(bit_out *b)
{
	if (b->nacc % 8)
		put_bits(b, 0, 8 - b->nacc % 8);
	put_flush(b);
}

/* The two codes of a block and how the dynamic header sends them. */
typedef struct block_codes {
	uint8_t lit_len[NLITLEN + 2], dist_len[NDIST];
	uint16_t lit_code[NLITLEN + 2], dist_code[NDIST];
	code_syms lit_cs, dist_cs; /* the symbols with a length */
	unsigned hlit, hdist, hclen, nrle;
	uint8_t rle_sym[NLITLEN + NDIST], rle_val[NLITLEN + NDIST];
	uint8_t pre_len[NPRE];
	uint16_t pre_code[NPRE];
} block_codes;

/* A run of r >= 1 lengths l, with symbols 16 (repeat the last), 17 and 18
 * (zeros) where they are shorter. */
static void rle_run(block_codes *bc, uint8_t l, unsigned r)
{
	unsigned k = bc->nrle;

	if (l) {
		bc->rle_sym[k] = l;
		bc->rle_val[k++] = 0;
		r--;
		for (; r >= 3; r -= r > 6 ? 6 : r) {
			bc->rle_sym[k] = 16;
			bc->rle_val[k++] = (uint8_t)((r > 6 ? 6 : r) - 3);
		}
	} else {
		for (; r >= 11; r -= r > 138 ? 138 : r) {
			bc->rle_sym[k] = 18;
			bc->rle_val[k++] = (uint8_t)((r > 138 ? 138 : r) - 11);
		}
		if (r >= 3) {
			bc->rle_sym[k] = 17;
			bc->rle_val[k++] = (uint8_t)(r - 3);
			r = 0;
		}
	}
	for (; r; r--) {
		bc->rle_sym[k] = l;
		bc->rle_val[k++] = 0;
	}
	bc->nrle = k;
}

/* The position of symbol i of the lengths sequence (the litlen code's
 * hlit lengths, then the distance code's) and its length. */
static unsigned seq_at(const block_codes *bc, unsigned i, uint8_t *l)
{
	if (i < bc->lit_cs.n) {
		*l = bc->lit_len[bc->lit_cs.s[i]];
		return bc->lit_cs.s[i];
	}
	i -= bc->lit_cs.n;
	*l = bc->dist_len[bc->dist_cs.s[i]];
	return bc->hlit + bc->dist_cs.s[i];
}

/* Both codes' lengths as one run-length coded sequence, from the symbols
 * that have one: the gaps between them are the runs of zeros. */
static void rle_lengths(block_codes *bc)
{
	unsigned n = bc->lit_cs.n + bc->dist_cs.n, at = 0, start = 0, run = 0;
	uint8_t cur = 0;

	bc->nrle = 0;
	for (unsigned i = 0; i < n; i++) {
		uint8_t l;
		unsigned p = seq_at(bc, i, &l);
		if (run && p == start + run && l == cur) {
			run++;
		} else {
			if (run)
				rle_run(bc, cur, run);
			if (p > at)
				rle_run(bc, 0, p - at);
			cur = l;
			start = p;
			run = 1;
		}
		at = p + 1;
	}
	if (run)
		rle_run(bc, cur, run);
	if (bc->hlit + bc->hdist > at)
		rle_run(bc, 0, bc->hlit + bc->hdist - at);
}

/* The dynamic codes for these counts and the size of the header that
 * sends them, in bits. */
static uint64_t dynamic_codes(const lz_counts *c, block_codes *bc)
{
	uint32_t pre_freq[NPRE] = {0};
	uint16_t used[NLITLEN];
	code_syms pre_cs;
	uint64_t bits = 5 + 5 + 4;
	unsigned n;

	memset(bc->lit_len, 0, sizeof(bc->lit_len));
	memset(bc->dist_len, 0, sizeof(bc->dist_len));
	n = bitmap_symbols(c->lit_used, sizeof(c->lit_used) / 8, used);
	lengths_for(c->lit, used, n, 15, bc->lit_len, &bc->lit_cs);
	n = bitmap_symbols(&c->dist_used, 1, used);
	lengths_for(c->dist, used, n, 15, bc->dist_len, &bc->dist_cs);
	bc->hlit = bc->lit_cs.s[bc->lit_cs.n - 1] + 1u;
	bc->hlit = bc->hlit < 257 ? 257 : bc->hlit;
	bc->hdist = bc->dist_cs.s[bc->dist_cs.n - 1] + 1u;
	rle_lengths(bc);
	for (unsigned i = 0; i < bc->nrle; i++)
		pre_freq[bc->rle_sym[i]]++;
	rq_deflate_code_lengths(pre_freq, NPRE, 7, bc->pre_len);
	for (bc->hclen = NPRE; bc->hclen > 4 && !bc->pre_len[pre_order[bc->hclen - 1]]; bc->hclen--)
		;
	bits += 3 * bc->hclen;
	for (unsigned s = 0; s < NPRE; s++)
		bits += (uint64_t)pre_freq[s] * (bc->pre_len[s] + pre_extra[s]);
	make_codes(bc->lit_len, &bc->lit_cs, bc->lit_code);
	make_codes(bc->dist_len, &bc->dist_cs, bc->dist_code);
	all_symbols(NPRE, bc->pre_len, &pre_cs);
	make_codes(bc->pre_len, &pre_cs, bc->pre_code);
	return bits;
}

/* Bits of the symbols (extra bits apart) with the lengths of a and of b;
 * a's symbols are every one used. */
static void symbol_bits(const lz_counts *c, const block_codes *a, const block_codes *b,
			uint64_t *abits, uint64_t *bbits)
{
	uint64_t x = 0, y = 0;

	for (unsigned i = 0; i < a->lit_cs.n; i++) {
		unsigned s = a->lit_cs.s[i];
		x += (uint64_t)c->lit[s] * a->lit_len[s];
		y += (uint64_t)c->lit[s] * b->lit_len[s];
	}
	for (unsigned i = 0; i < a->dist_cs.n; i++) {
		unsigned s = a->dist_cs.s[i];
		x += (uint64_t)c->dist[s] * a->dist_len[s];
		y += (uint64_t)c->dist[s] * b->dist_len[s];
	}
	*abits += x;
	*bbits += y;
}

/* The fixed code (RFC 1951, 3.2.6), made once. */
static block_codes g_fixed;
static pthread_once_t g_fixed_once = PTHREAD_ONCE_INIT;

static void make_fixed(void)
{
	for (unsigned s = 0; s < NLITLEN + 2; s++)
		g_fixed.lit_len[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
	memset(g_fixed.dist_len, 5, sizeof(g_fixed.dist_len));
	all_symbols(NLITLEN + 2, g_fixed.lit_len, &g_fixed.lit_cs);
	all_symbols(NDIST, g_fixed.dist_len, &g_fixed.dist_cs);
	make_codes(g_fixed.lit_len, &g_fixed.lit_cs, g_fixed.lit_code);
	make_codes(g_fixed.dist_len, &g_fixed.dist_cs, g_fixed.dist_code);
}

static const block_codes *fixed_codes(void)
{
	pthread_once(&g_fixed_once, make_fixed);
	return &g_fixed;
}

static void put_header(bit_out *b, const block_codes *bc)
{
	put_bits(b, bc->hlit - 257, 5);
	put_bits(b, bc->hdist - 1, 5);
	put_bits(b, bc->hclen - 4, 4);
	for (unsigned i = 0; i < bc->hclen; i++)
		put_bits(b, bc->pre_len[pre_order[i]], 3);
	for (unsigned i = 0; i < bc->nrle; i++) {
		unsigned s = bc->rle_sym[i];
		put_bits(b, bc->pre_code[s], bc->pre_len[s]);
		if (pre_extra[s])
			put_bits(b, bc->rle_val[i], pre_extra[s]);
	}
}

static void put_items(bit_out *b, const block_codes *bc, const lz_item *v, size_t k)
{
	for (size_t i = 0; i < k; i++) {
		const lz_item *it = &v[i];
		if (!it->len) {
			put_bits(b, bc->lit_code[it->val], bc->lit_len[it->val]);
			continue;
		}
		put_bits(b, bc->lit_code[257 + it->lsym], bc->lit_len[257 + it->lsym]);
		put_bits(b, (uint32_t)(it->len - len_base[it->lsym]), len_extra[it->lsym]);
		put_bits(b, bc->dist_code[it->dsym], bc->dist_len[it->dsym]);
		put_bits(b, (uint32_t)(it->val - dist_base[it->dsym]), dist_extra[it->dsym]);
	}
	put_bits(b, bc->lit_code[END_OF_BLOCK], bc->lit_len[END_OF_BLOCK]);
}

/* The block, as the smallest of dynamic, fixed and stored. */
static void put_block(bit_out *b, const unsigned char *in, size_t n, const lz_item *v, size_t k,
		      lz_counts *c)
{
	block_codes dyn;
	const block_codes *fix = fixed_codes();
	uint64_t dyn_bits, fix_bits, stored_bits = 3 + 5 + 32 + 8 * (uint64_t)n;

	count_lit(c, END_OF_BLOCK);
	dyn_bits = 3 + dynamic_codes(c, &dyn) + c->extra_bits;
	fix_bits = 3 + c->extra_bits;
	symbol_bits(c, &dyn, fix, &dyn_bits, &fix_bits);
	if (stored_bits <= dyn_bits && stored_bits <= fix_bits) {
		put_bits(b, 1, 3); /* the last block, stored */
		put_align(b);
		put_bits(b, (uint32_t)n, 16);
		put_bits(b, (uint32_t)n ^ 0xffffu, 16);
		for (size_t i = 0; i < n; i++)
			put_bits(b, in[i], 8);
		return;
	}
	if (dyn_bits < fix_bits) {
		put_bits(b, 1 | 2 << 1, 3);
		put_header(b, &dyn);
		put_items(b, &dyn, v, k);
	} else {
		put_bits(b, 1 | 1 << 1, 3);
		put_items(b, fix, v, k);
	}
	put_align(b);
}

size_t rq_deflate_small(const unsigned char *in, size_t n, unsigned char *out)
{
	return rq_deflate_small_span(in, n, 0, 0, out);
}

size_t rq_deflate_small_span(const unsigned char *in, size_t n, size_t lit_from, size_t lit_to,
			     unsigned char *out)
{
	lz_state s;
	lz_counts c;
	lz_item v[RQ_DEFLATE_SMALL_MAX];
	bit_out b = {out, out + RQ_DEFLATE_SMALL_BOUND(n), 0, 0, 0};
	uint32_t adler;
	size_t k;

	if (n > RQ_DEFLATE_SMALL_MAX)
		return 0;
	memset(&c, 0, sizeof(c));
	s.in = in;
	s.n = n;
	s.lit_from = lit_from < n ? lit_from : n;
	s.lit_to = lit_to < n ? lit_to : n;
	k = lz_parse(&s, v, &c);
	put_bits(&b, 0x78, 8); /* deflate, 32 KiB window */
	put_bits(&b, 0x01, 8); /* the fastest level; (0x78 << 8 | 1) % 31 == 0 */
	put_block(&b, in, n, v, k, &c);
	adler = libdeflate_adler32(1, in, n);
	for (int i = 3; i >= 0; i--)
		put_bits(&b, (adler >> (8 * i)) & 0xff, 8);
	put_flush(&b);
	return b.full ? 0 : (size_t)(b.p - out);
}
