/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_packtab: replayq's table of the objects of a repository's small
 * packs (core/odb, see rq_odb.h for the family).
 *
 * Every push a platform keeps as a pack, and every pack a replay writes,
 * is small: a few to a few hundred objects. Searched pack by pack, a lookup
 * costs one index search per pack, and the first search of each maps its
 * index (an open, a map, a page fault: about 10 µs here); a replay on a
 * repository of 2,000 such packs spent most of its time there. When git's
 * multi-pack-index does not cover them (platforms write one at their
 * housekeeping; the pushes since are not in it), replayq keeps its own:
 * objects/replayq/pack-table, one sorted list of the ids of those packs
 * with, for each, the pack (a number) and the offset. It lists the packs
 * it has seen, the large ones too (without their objects: they are
 * searched on their own, and rewriting their ids into the table at every
 * change would cost more than it saves).
 *
 * It is derived data: anything may remove it, a table that does not parse
 * or checksum is not used, and it is never trusted alone. A pack it names
 * that is gone is skipped (the table is then rewritten without it); a pack
 * whose index records another checksum than the table is searched by its
 * own index. An id may be listed for several packs (a pack made of others
 * while they still existed): the first one still there answers. Format:
 * "RQPT", version 1, flags, the pack count, the entry count (big-endian
 * 32-bit),
 * per pack 20 bytes of its name's hex, 20 of its checksum, its object
 * count and its flags (32 bits each), the fan-out (256 counts), the ids,
 * per entry its pack's number and its offset (32 bits each), and a SHA-1
 * of all that.
 */
#ifndef RQ_ODB_PACKTAB_H
#define RQ_ODB_PACKTAB_H

#include <stddef.h>
#include <stdint.h>

#define RQ_ODB_PACKTAB_FILE  "pack-table"
#define RQ_ODB_PACKTAB_LARGE 1u /* a pack listed without its objects */
/* Packs of more objects than this are large (a table of many such packs
 * would be rewritten whole at every change). */
#define RQ_ODB_PACKTAB_SMALL_MAX 4096u

typedef struct rq_odb_packtab rq_odb_packtab;

/* One pack of a table. */
typedef struct rq_odb_packtab_pack {
	unsigned char name[20]; /* "pack-<hex>": the hex as bytes */
	unsigned char sum[20];	/* its checksum, as its index records it */
	uint32_t nr;		/* its objects */
	uint32_t flags;		/* RQ_ODB_PACKTAB_LARGE */
} rq_odb_packtab_pack;

/* A table flag: it was built from a listing of every pack of the
 * directory (none of a name it cannot hold): with git's
 * multi-pack-index, it names them all, as they were then. */
#define RQ_ODB_PACKTAB_COMPLETE 1u

/* A pack's name "pack-<40 hex digits>" as the 20 bytes a table holds:
 * 1, or 0 for a name of any other form. */
int rq_odb_packtab_name_bytes(const char *name, unsigned char out[20]);
/* Those 20 bytes as the name "pack-<hex>", into name (46 bytes). */
void rq_odb_packtab_name(const unsigned char *hex, char *name);

/* The table in the directory dirfd (objects/replayq), mapped: 1 with
 * *out, 0 none (or one that does not parse), -1 out of memory. */
int rq_odb_packtab_load(rq_odb_packtab **out, int dirfd);
void rq_odb_packtab_free(rq_odb_packtab *t);

uint32_t rq_odb_packtab_flags(const rq_odb_packtab *t);
size_t rq_odb_packtab_npacks(const rq_odb_packtab *t);
/* Pack k (k < npacks). */
void rq_odb_packtab_pack_at(const rq_odb_packtab *t, size_t k, rq_odb_packtab_pack *out);

/* The first entry for id whose pack usable(ctx, pack) accepts: 1 with
 * *pack and *off, or 0. */
int rq_odb_packtab_find(const rq_odb_packtab *t, const unsigned char *id,
			int (*usable)(void *ctx, uint32_t pack), void *ctx, uint32_t *pack,
			uint64_t *off);

/* A source of a new table: an old table's packs to keep (keep[k] of its
 * npacks) and new packs with their mapped indexes (idx NULL: large, listed
 * only). */
typedef struct rq_odb_packtab_new {
	rq_odb_packtab_pack pack;
	const unsigned char *idx; /* the index (parsed before: version 2) */
	size_t idx_len;
} rq_odb_packtab_new;

/*
 * A new table of old's kept packs (old may be NULL) and the new ones: 1
 * with *out (in memory), -1 out of memory. Its packs are numbered as
 * given: old's kept packs in their order, then the new ones. flags: the
 * table's (RQ_ODB_PACKTAB_COMPLETE).
 */
int rq_odb_packtab_build(rq_odb_packtab **out, const rq_odb_packtab *old, const unsigned char *keep,
			 const rq_odb_packtab_new *add, size_t nadd, uint32_t flags);

/* Write t as the table of dirfd (a temporary file, renamed): 0 or -1
 * (nothing changed). */
int rq_odb_packtab_save(const rq_odb_packtab *t, int dirfd);

#endif
