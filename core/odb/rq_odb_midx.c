/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_midx: git's multi-pack-index, read (see the header). The layout
 * follows git's Documentation/gitformat-pack.txt and gitformat-chunk.txt.
 */
#include "rq_odb_midx.h"
#include "rq_fs.h"
#include "rq_odb_pack.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIDX_HEAD  12 /* signature, version, hash, chunks, bases, packs */
#define CHUNK_ROW  12 /* id and 64-bit offset */
#define PACKS_MAX  (1u << 20)
#define CHUNK_PNAM 0x504e414du
#define CHUNK_OIDF 0x4f494446u
#define CHUNK_OIDL 0x4f49444cu
#define CHUNK_OOFF 0x4f4f4646u
#define CHUNK_LOFF 0x4c4f4646u

struct rq_odb_midx {
	const unsigned char *map;
	size_t len;
	uint32_t npacks, nr;
	const char **names; /* into the PNAM chunk */
	const unsigned char *fanout, *ids, *offs, *loffs;
	size_t nloffs;
	size_t rawsz; /* the ids' width, the trailer's */
};

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)rq_odb_pack_be32(p) << 32 | rq_odb_pack_be32(p + 4);
}

/* A chunk: its start and size (0 when absent). */
typedef struct chunk {
	const unsigned char *p;
	size_t n;
} chunk;

/* The chunk table: each chunk ends where the next row's offset says. 0
 * or -1 (an offset outside the file, or going back). */
static int read_chunks(const unsigned char *map, size_t len, size_t rawsz, unsigned count,
		       chunk found[5])
{
	static const uint32_t ids[5] = {CHUNK_PNAM, CHUNK_OIDF, CHUNK_OIDL, CHUNK_OOFF, CHUNK_LOFF};
	const unsigned char *row = map + MIDX_HEAD;

	memset(found, 0, 5 * sizeof(*found));
	if (len < MIDX_HEAD + (size_t)(count + 1) * CHUNK_ROW + rawsz)
		return -1;
	for (unsigned c = 0; c < count; c++, row += CHUNK_ROW) {
		uint64_t at = be64(row + 4), end = be64(row + CHUNK_ROW + 4);
		if (at > end || end > len - rawsz)
			return -1;
		for (int k = 0; k < 5; k++)
			if (rq_odb_pack_be32(row) == ids[k])
				found[k] = (chunk){map + at, (size_t)(end - at)};
	}
	return 0;
}

/* The pack names: npacks NUL-ended strings, each "<name>.idx". */
static int read_names(rq_odb_midx *m, chunk pnam)
{
	const unsigned char *p = pnam.p, *end = pnam.p + pnam.n;

	if (!(m->names = calloc(m->npacks ? m->npacks : 1, sizeof(*m->names))))
		return -1;
	for (uint32_t k = 0; k < m->npacks; k++) {
		const unsigned char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t n = nul ? (size_t)(nul - p) : 0;
		if (!nul || n < 5 || n > NAME_MAX || memchr(p, '/', n) ||
		    memcmp(p + n - 4, ".idx", 4))
			return 1;
		m->names[k] = (const char *)p;
		p = nul + 1;
	}
	return 0;
}

/* The header and the chunks, each the size its counts say. 0 parsed, 1
 * not usable, -1 out of memory. */
static int parse(rq_odb_midx *m)
{
	const unsigned char *h = m->map;
	chunk c[5];
	int r;

	/* the hash version: 1 SHA-1, 2 SHA-256 (one of the other format is
	 * not used, as git does not use it) */
	if (m->len < MIDX_HEAD || memcmp(h, "MIDX", 4) || (h[4] != 1 && h[4] != 2) ||
	    h[5] != (m->rawsz == 20 ? 1 : 2) || h[7] != 0 ||
	    read_chunks(m->map, m->len, m->rawsz, h[6], c) < 0)
		return 1;
	m->npacks = rq_odb_pack_be32(h + 8);
	if (m->npacks > PACKS_MAX || !c[0].p || !c[1].p || c[1].n != 256 * 4 || !c[2].p || !c[3].p)
		return 1;
	m->fanout = c[1].p;
	m->nr = rq_odb_pack_be32(m->fanout + 255 * 4);
	/* git: "oid fanout out of order", and the packs are read without it */
	if (!rq_odb_pack_fanout_ok(m->fanout, m->nr) || c[2].n != (size_t)m->nr * m->rawsz ||
	    c[3].n != (size_t)m->nr * 8 || c[4].n % 8)
		return 1;
	m->ids = c[2].p;
	m->offs = c[3].p;
	m->loffs = c[4].p;
	m->nloffs = c[4].n / 8;
	r = read_names(m, c[0]);
	return r;
}

int rq_odb_midx_open(rq_odb_midx **out, const char *pack_dir, size_t rawsz)
{
	char path[PATH_MAX];
	rq_odb_midx *m;
	int r;

	*out = NULL;
	if (snprintf(path, sizeof(path), "%s/multi-pack-index", pack_dir) >= (int)sizeof(path))
		return 0;
	if (!(m = calloc(1, sizeof(*m))))
		return -1;
	m->rawsz = rawsz;
	if (rq_fs_map_regular(path, 0, SIZE_MAX / 2, &m->map, &m->len) < 0) {
		free(m);
		return 0;
	}
	if ((r = parse(m)) != 0) {
		rq_odb_midx_free(m);
		return r < 0 ? -1 : 0;
	}
	*out = m;
	return 1;
}

void rq_odb_midx_free(rq_odb_midx *m)
{
	if (!m)
		return;
	if (m->map)
		munmap((void *)(uintptr_t)m->map, m->len);
	free(m->names);
	free(m);
}

uint32_t rq_odb_midx_npacks(const rq_odb_midx *m)
{
	return m->npacks;
}

const char *rq_odb_midx_pack(const rq_odb_midx *m, uint32_t k)
{
	return k < m->npacks ? m->names[k] : NULL;
}

int rq_odb_midx_find(const rq_odb_midx *m, const unsigned char *id, uint32_t *pack, uint64_t *off)
{
	uint32_t pos, o;
	const unsigned char *row;

	if (!rq_odb_pack_fanout_find(m->fanout, m->ids, m->rawsz, m->nr, id, m->rawsz, &pos))
		return 0;
	row = m->offs + (size_t)pos * 8;
	*pack = rq_odb_pack_be32(row);
	o = rq_odb_pack_be32(row + 4);
	if (*pack >= m->npacks)
		return 0;
	if (!(o & 0x80000000u)) {
		*off = o;
		return 1;
	}
	o &= 0x7fffffffu;
	if (o >= m->nloffs)
		return 0;
	*off = be64(m->loffs + (size_t)o * 8);
	return 1;
}
