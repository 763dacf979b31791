/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_packset: the packs of a directory, found without per-pack work
 * (see the header): the listing, the multi-pack-index and the table that
 * cover packs, the packs searched one by one, each pack's files mapped
 * and checked when first needed.
 */
#include "rq_odb_packset.h"
#include "rq_fs.h"
#include "rq_hindex.h"
#include "rq_mem.h"
#include "rq_odb_midx.h"
#include "rq_odb_own.h"
#include "rq_odb_packtab.h"
#include "rq_trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Packs in neither git's multi-pack-index nor the table (or listed there
 * and gone) beyond which the table is rebuilt. */
#define UNKNOWN_MAX 16

enum { COVER_DIRECT, COVER_MIDX, COVER_TABLE };
/* A table pack taken to be there (the set trusts the table): its slot is
 * made when a lookup first finds an object in it. */
#define TAB_LAZY (SIZE_MAX - 1)
enum { MAP_NONE, MAP_OK, MAP_GONE, MAP_BAD };

typedef struct slot {
	char *name;	       /* "pack-<hex>" */
	unsigned char hex[20]; /* the name's hex as bytes */
	int has_hex;	       /* the name is pack-<40 hex digits> */
	int listed;	       /* in the last listing */
	int known;	       /* in git's multi-pack-index or the table (large ones too) */
	int cover;
	int idx_state, pack_state, freshened;
	uint32_t tab_no; /* its number in the table (COVER_TABLE) */
	const unsigned char *idx;
	size_t idx_len;
	rq_odb_packset_pair pair;
} slot;

struct rq_odb_packset {
	char *dir, *shown, *objects;
	const rq_oid_algo *algo; /* the repository's object format */
	unsigned flags;
	int scanned; /* 1 listed; -1 out of memory then */
	slot *slots;
	size_t n, cap;
	rq_hindex by_name; /* over the slots' names */
	rq_odb_midx *midx;
	size_t *midx_slot; /* midx pack number -> slot */
	rq_odb_packtab *tab;
	size_t *tab_slot; /* table pack number -> slot (SIZE_MAX: not listed, TAB_LAZY) */
	size_t *direct, ndirect, direct_cap;
	int trusted;	  /* started from the table, without a listing */
	size_t odd_names; /* listed packs of a name the table cannot hold */
	size_t idx_maps, pack_maps;
	int table_built;
	char err[PATH_MAX + 64];
};

/* The whole file (a pack or its index; a symbolic link followed, as git
 * follows it): MAP_OK, MAP_GONE or MAP_BAD. */
static int map_file(const char *path, const unsigned char **p, size_t *len)
{
	if (rq_fs_map_regular(path, 1, SIZE_MAX / 2, p, len) == 0)
		return MAP_OK;
	return errno == ENOENT ? MAP_GONE : MAP_BAD;
}

rq_odb_packset *rq_odb_packset_open(const char *pack_dir, const char *shown,
				    const rq_oid_algo *algo, unsigned flags)
{
	rq_odb_packset *ps = calloc(1, sizeof(*ps));
	char *slash;

	if (!ps)
		return NULL;
	ps->algo = algo ? algo : &rq_oid_sha1;
	ps->flags = flags;
	ps->dir = strdup(pack_dir);
	ps->shown = strdup(shown ? shown : pack_dir);
	ps->objects = strdup(pack_dir);
	if (!ps->dir || !ps->shown || !ps->objects) {
		rq_odb_packset_free(ps);
		return NULL;
	}
	/* the objects directory: the pack directory's parent */
	if ((slash = strrchr(ps->objects, '/')))
		*slash = '\0';
	return ps;
}

static void unmap(const unsigned char *p, size_t n)
{
	if (p)
		munmap((void *)(uintptr_t)p, n);
}

void rq_odb_packset_free(rq_odb_packset *ps)
{
	if (!ps)
		return;
	for (size_t k = 0; k < ps->n; k++) {
		unmap(ps->slots[k].idx, ps->slots[k].idx_len);
		unmap(ps->slots[k].pair.pack, ps->slots[k].pair.pack_len);
		free(ps->slots[k].name);
	}
	free(ps->slots);
	free(ps->by_name.slot);
	rq_odb_midx_free(ps->midx);
	rq_odb_packtab_free(ps->tab);
	free(ps->midx_slot);
	free(ps->tab_slot);
	free(ps->direct);
	free(ps->dir);
	free(ps->shown);
	free(ps->objects);
	free(ps);
}

const rq_oid_algo *rq_odb_packset_algo(const rq_odb_packset *ps)
{
	return ps->algo;
}

const char *rq_odb_packset_dir(const rq_odb_packset *ps)
{
	return ps->dir;
}

const char *rq_odb_packset_error(const rq_odb_packset *ps)
{
	return ps->err;
}

/* ---- one pack's files ---- */

/* Its index, mapped and checked: MAP_OK, MAP_GONE, MAP_BAD (err set). */
static int need_idx(rq_odb_packset *ps, slot *s)
{
	char path[PATH_MAX];
	int r;

	if (s->idx_state != MAP_NONE)
		return s->idx_state;
	if (snprintf(path, sizeof(path), "%s/%s.idx", ps->dir, s->name) >= (int)sizeof(path))
		return s->idx_state = MAP_BAD;
	if ((s->idx_state = map_file(path, &s->idx, &s->idx_len)) != MAP_OK)
		return s->idx_state;
	ps->idx_maps++;
	r = rq_odb_pack_idx_parse(s->idx, s->idx_len, ps->algo->rawsz, &s->pair.ix);
	if (r == 0)
		return MAP_OK;
	if (r == RQ_ODB_PACK_IDX_FANOUT)
		snprintf(ps->err, sizeof(ps->err), "non-monotonic index %s/%s.idx", ps->shown,
			 s->name);
	else if (r == RQ_ODB_PACK_IDX_SIZE)
		snprintf(ps->err, sizeof(ps->err), "wrong index v2 file size in %s/%s.idx",
			 ps->shown, s->name);
	else
		snprintf(ps->err, sizeof(ps->err), "index file %s/%s.idx is %s", ps->shown, s->name,
			 r == RQ_ODB_PACK_IDX_SHORT ? "too small" : "corrupt");
	return s->idx_state = MAP_BAD;
}

/* The pack's header and trailing checksum (of the index's width) against
 * its index. */
static int pair_matches(const rq_odb_packset_pair *p)
{
	const unsigned char *h = p->pack;
	size_t w = p->ix.rawsz;

	return p->pack_len >= 12 + w && !memcmp(h, "PACK", 4) &&
	       (rq_odb_pack_be32(h + 4) == 2 || rq_odb_pack_be32(h + 4) == 3) &&
	       rq_odb_pack_be32(h + 8) == p->ix.nr &&
	       !memcmp(p->ix.pack_sum, h + p->pack_len - w, w);
}

/* Its pack too, mapped and checked against the index: MAP_OK, MAP_GONE or
 * MAP_BAD (err set). */
static int need_pair(rq_odb_packset *ps, slot *s)
{
	char path[PATH_MAX];
	int r = need_idx(ps, s);

	if (r != MAP_OK || s->pack_state != MAP_NONE)
		return r != MAP_OK ? r : s->pack_state;
	if (snprintf(path, sizeof(path), "%s/%s.pack", ps->dir, s->name) >= (int)sizeof(path))
		return s->pack_state = MAP_BAD;
	r = map_file(path, &s->pair.pack, &s->pair.pack_len);
	if ((s->pack_state = r) != MAP_OK)
		return r; /* an index without its pack is not used, as in git */
	ps->pack_maps++;
	if (pair_matches(&s->pair))
		return MAP_OK;
	snprintf(ps->err, sizeof(ps->err), "packfile %s/%s.pack does not match index", ps->shown,
		 s->name);
	return s->pack_state = MAP_BAD;
}

/* ---- the listing ---- */

static int name_eq(const void *ctx, size_t i, const void *key)
{
	return !strcmp(((const rq_odb_packset *)ctx)->slots[i].name, key);
}

static size_t name_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_str(((const rq_odb_packset *)ctx)->slots[i].name);
}

/* The slot named name, or SIZE_MAX. */
static size_t slot_named(const rq_odb_packset *ps, const char *name)
{
	long k = rq_hindex_find(&ps->by_name, rq_hindex_hash_str(name), name_eq, ps, name);

	return k < 0 ? SIZE_MAX : (size_t)k;
}

/* The set keeps replayq's table of small packs: SHA-1 repositories only
 * (its format has 20-byte ids); a SHA-256 set searches the packs that no
 * multi-pack-index covers one by one. */
static int has_table(const rq_odb_packset *ps)
{
	return ps->algo->rawsz == 20;
}

/* The slot of name, made when new: its number, or SIZE_MAX (memory). */
static size_t slot_for(rq_odb_packset *ps, const char *name, size_t len)
{
	slot *v;
	size_t k;
	char *copy = strndup(name, len);

	if (!copy)
		return SIZE_MAX;
	if ((k = slot_named(ps, copy)) != SIZE_MAX) {
		free(copy);
		return k;
	}
	if ((v = rq_mem_grow(ps->slots, &ps->cap, ps->n + 1, sizeof(*v), 64)))
		ps->slots = v;
	if (!v || rq_hindex_reserve(&ps->by_name, 64, ps->n, name_hash, ps) < 0) {
		free(copy);
		return SIZE_MAX;
	}
	memset(&v[ps->n], 0, sizeof(*v));
	v[ps->n].name = copy;
	/* the table holds SHA-1 packs only (20-byte names and checksums) */
	v[ps->n].has_hex = has_table(ps) && rq_odb_packtab_name_bytes(copy, v[ps->n].hex);
	rq_hindex_add(&ps->by_name, rq_hindex_hash_str(copy), ps->n);
	return ps->n++;
}

/* One entry of the listing: a pack's index (its slot marked listed), or,
 * for the sweep, a temporary file or a .keep. 0 or -1. */
static int list_entry(rq_odb_packset *ps, const char *name, rq_odb_own_leftovers *lo)
{
	size_t n = strlen(name), k;

	if (n >= 9 && !strncmp(name, "pack-", 5) && !strcmp(name + n - 4, ".idx")) {
		if ((k = slot_for(ps, name, n - 4)) == SIZE_MAX)
			return -1;
		ps->slots[k].listed = 1;
		ps->odd_names += !ps->slots[k].has_hex;
	} else if (ps->flags & RQ_ODB_PACKSET_WRITE) {
		rq_odb_own_leftover(lo, name);
	}
	return 0;
}

/*
 * Every pack-*.idx of the directory: its slot, marked listed. The set of
 * the repository's own directory also removes what killed replays left
 * there (temporary files, their .keep files): this listing is the one the
 * replay makes of that directory (at 2,000 packs, 6,000 entries: a second
 * listing cost 2 ms). 0 or -1.
 */
static int list_dir(rq_odb_packset *ps)
{
	rq_odb_own_leftovers lo = {0};
	struct dirent *d;
	DIR *dh;
	int rc = 0;

	for (size_t k = 0; k < ps->n; k++)
		ps->slots[k].listed = 0;
	ps->odd_names = 0;
	if (!(dh = opendir(ps->dir)))
		return 0;
	while (rc == 0 && (d = readdir(dh)))
		rc = list_entry(ps, d->d_name, &lo);
	if (rc == 0)
		rq_odb_own_leftovers_sweep(&lo, ps->objects, dirfd(dh));
	else
		rq_odb_own_leftovers_sweep(&lo, NULL, -1); /* (frees it) */
	closedir(dh);
	return rc;
}

/* The slot of a listed pack by name, or SIZE_MAX. A set that trusts the
 * table takes every pack named to be there (its slot made now). */
static size_t listed_slot(rq_odb_packset *ps, const char *name)
{
	size_t k;

	if (ps->trusted) {
		if ((k = slot_for(ps, name, strlen(name))) != SIZE_MAX)
			ps->slots[k].listed = 1;
		return k;
	}
	k = slot_named(ps, name);
	return k != SIZE_MAX && ps->slots[k].listed ? k : SIZE_MAX;
}

/* git's multi-pack-index, when every pack it names is listed (one that
 * names a pack gone is not used: git rewrites it when it removes packs). */
static int load_midx(rq_odb_packset *ps)
{
	uint32_t np;
	int r;

	rq_odb_midx_free(ps->midx);
	ps->midx = NULL;
	free(ps->midx_slot);
	ps->midx_slot = NULL;
	if ((r = rq_odb_midx_open(&ps->midx, ps->dir, ps->algo->rawsz)) <= 0)
		return r;
	np = rq_odb_midx_npacks(ps->midx);
	if (!(ps->midx_slot = calloc(np + 1, sizeof(*ps->midx_slot))))
		return -1;
	for (uint32_t k = 0; k < np; k++) {
		const char *idx = rq_odb_midx_pack(ps->midx, k);
		char name[NAME_MAX + 1];
		snprintf(name, sizeof(name), "%.*s", (int)strlen(idx) - 4, idx);
		if ((ps->midx_slot[k] = listed_slot(ps, name)) == SIZE_MAX) {
			rq_odb_midx_free(ps->midx);
			ps->midx = NULL;
			return 0;
		}
	}
	for (uint32_t k = 0; k < np; k++) {
		ps->slots[ps->midx_slot[k]].cover = COVER_MIDX;
		ps->slots[ps->midx_slot[k]].known = 1;
	}
	return 0;
}

/* The table's packs to slots; a listed small one is covered by it. The
 * number of table packs that are not listed. */
static size_t map_table(rq_odb_packset *ps)
{
	size_t np = rq_odb_packtab_npacks(ps->tab), dead = 0;

	for (size_t k = 0; k < np; k++) {
		rq_odb_packtab_pack p;
		char name[64];
		size_t s;
		rq_odb_packtab_pack_at(ps->tab, k, &p);
		if (ps->trusted && !(p.flags & RQ_ODB_PACKTAB_LARGE) && !ps->n) {
			ps->tab_slot[k] = TAB_LAZY; /* its slot when first used */
			continue;
		}
		rq_odb_packtab_name(p.name, name);
		s = ps->tab_slot[k] = listed_slot(ps, name);
		if (s == SIZE_MAX) {
			dead++;
			continue;
		}
		if (ps->slots[s].cover != COVER_MIDX && !(p.flags & RQ_ODB_PACKTAB_LARGE)) {
			ps->slots[s].cover = COVER_TABLE;
			ps->slots[s].tab_no = (uint32_t)k;
		}
		ps->slots[s].known = 1;
	}
	return dead;
}

/* Use t as the table (taken). The number of its packs not listed. */
static size_t install_table(rq_odb_packset *ps, rq_odb_packtab *t)
{
	rq_odb_packtab_free(ps->tab);
	free(ps->tab_slot);
	ps->tab = t;
	ps->tab_slot = NULL;
	if (!t)
		return 0;
	if (!(ps->tab_slot = calloc(rq_odb_packtab_npacks(t) + 1, sizeof(*ps->tab_slot)))) {
		rq_odb_packtab_free(t);
		ps->tab = NULL;
		return 0; /* searched one by one */
	}
	return map_table(ps);
}

/* The table saved in objects/replayq: 1 with *t, 0 none, -1 out of
 * memory. */
static int load_table(rq_odb_packset *ps, rq_odb_packtab **t)
{
	int fd = has_table(ps) ? rq_odb_own_dir(ps->objects, 0) : -1, r = 0;

	*t = NULL;
	if (fd >= 0) {
		r = rq_odb_packtab_load(t, fd);
		close(fd);
	}
	return r;
}

/* A listed pack's index as a new pack of the table: 1, or 0 when it
 * cannot be (no index, a name of another form). */
static int table_source(rq_odb_packset *ps, slot *s, rq_odb_packtab_new *out)
{
	if (!s->has_hex || need_idx(ps, s) != MAP_OK)
		return 0;
	memset(out, 0, sizeof(*out));
	memcpy(out->pack.name, s->hex, 20);
	memcpy(out->pack.sum, s->pair.ix.pack_sum, 20);
	out->pack.nr = s->pair.ix.nr;
	out->pack.flags = s->pair.ix.nr > RQ_ODB_PACKTAB_SMALL_MAX ? RQ_ODB_PACKTAB_LARGE : 0;
	out->idx = s->idx;
	out->idx_len = s->idx_len;
	return 1;
}

/* A new table: the old one's listed packs and the listed packs it did not
 * know; saved for the next process when the set may. 0 or -1. */
static int rebuild(rq_odb_packset *ps)
{
	size_t np = ps->tab ? rq_odb_packtab_npacks(ps->tab) : 0, nadd = 0;
	rq_odb_packtab_new *add = calloc(ps->n + 1, sizeof(*add));
	unsigned char *keep = calloc(np + 1, 1);
	rq_odb_packtab *t = NULL;
	int fd;

	if (!add || !keep) {
		free(add);
		free(keep);
		return -1;
	}
	for (size_t k = 0; k < np; k++)
		keep[k] = ps->tab_slot[k] != SIZE_MAX;
	for (size_t k = 0; k < ps->n; k++)
		if (ps->slots[k].listed && !ps->slots[k].known)
			nadd += (size_t)table_source(ps, &ps->slots[k], &add[nadd]);
	if (rq_odb_packtab_build(&t, ps->tab, keep, add, nadd,
				 ps->odd_names ? 0 : RQ_ODB_PACKTAB_COMPLETE) > 0 &&
	    (ps->flags & RQ_ODB_PACKSET_WRITE) && (fd = rq_odb_own_dir(ps->objects, 1)) >= 0) {
		(void)rq_odb_packtab_save(t, fd); /* read-only: the next process builds it */
		close(fd);
	}
	free(add);
	free(keep);
	if (!t)
		return -1;
	for (size_t k = 0; k < ps->n; k++)
		ps->slots[k].cover = ps->slots[k].cover == COVER_MIDX ? COVER_MIDX : COVER_DIRECT;
	install_table(ps, t);
	ps->table_built = 1;
	return 0;
}

/* The listed packs neither index covers, to be searched one by one. */
static int make_direct(rq_odb_packset *ps)
{
	size_t *v = rq_mem_grow(ps->direct, &ps->direct_cap, ps->n + 1, sizeof(*v), 16);

	if (!v)
		return -1;
	ps->direct = v;
	ps->ndirect = 0;
	for (size_t k = 0; k < ps->n; k++)
		if (ps->slots[k].listed && ps->slots[k].cover == COVER_DIRECT)
			v[ps->ndirect++] = k;
	return 0;
}

/*
 * What covers each pack. A full scan lists the directory; the first scan
 * of a set whose table was built from a complete listing trusts the table
 * instead: the packs it names are taken to be there (one that is gone is
 * skipped when needed) and a pack added since is not seen until a read
 * misses and lists the directory (has() may then say no for an object it
 * holds: the caller writes it once more). At 2,000 packs the listing of
 * 6,000 entries took 3 ms of a 10 ms replay. 0 or -1.
 */
static int scan(rq_odb_packset *ps, int full)
{
	rq_odb_packtab *t = NULL;
	size_t unknown = 0, dead;

	ps->scanned = -1;
	for (size_t k = 0; k < ps->n; k++) {
		ps->slots[k].cover = COVER_DIRECT;
		ps->slots[k].known = 0;
	}
	if (load_table(ps, &t) < 0)
		return -1;
	ps->trusted = !full && t && (rq_odb_packtab_flags(t) & RQ_ODB_PACKTAB_COMPLETE);
	if ((!ps->trusted && list_dir(ps) < 0) || load_midx(ps) < 0) {
		rq_odb_packtab_free(t);
		return -1;
	}
	RQ_TRACE_AT("packs: listed");
	dead = install_table(ps, t);
	for (size_t k = 0; k < ps->n && !ps->trusted; k++)
		unknown += ps->slots[k].listed && !ps->slots[k].known && ps->slots[k].has_hex;
	if (unknown + dead > UNKNOWN_MAX && rebuild(ps) < 0)
		return -1;
	RQ_TRACE_AT("packs: indexes");
	if (make_direct(ps) < 0)
		return -1;
	ps->scanned = 1;
	return 0;
}

static int need_scan(rq_odb_packset *ps)
{
	if (ps->scanned)
		return ps->scanned < 0 ? -1 : 0;
	return scan(ps, 0);
}

int rq_odb_packset_rescan(rq_odb_packset *ps)
{
	return scan(ps, 1);
}

/* ---- lookups ---- */

static int usable(const slot *s)
{
	return s->idx_state != MAP_GONE && s->idx_state != MAP_BAD && s->pack_state != MAP_GONE &&
	       s->pack_state != MAP_BAD;
}

static int table_usable(void *ctx, uint32_t p)
{
	rq_odb_packset *ps = ctx;
	size_t s = ps->tab_slot[p];

	if (s == TAB_LAZY)
		return 1;
	return s != SIZE_MAX && ps->slots[s].cover == COVER_TABLE && usable(&ps->slots[s]);
}

/* The packs searched one by one, the last hit's first (it moves to the
 * front). */
static int find_direct(rq_odb_packset *ps, const unsigned char *id, size_t *k, uint64_t *off)
{
	for (size_t i = 0; i < ps->ndirect; i++) {
		slot *s = &ps->slots[ps->direct[i]];
		if (!usable(s) || need_idx(ps, s) != MAP_OK ||
		    !rq_odb_pack_idx_find(&s->pair.ix, id, off))
			continue;
		*k = ps->direct[i];
		ps->direct[i] = ps->direct[0];
		ps->direct[0] = *k;
		return 1;
	}
	return 0;
}

/* The slot of table pack p, taken to be there: 1 with *k, or -1. */
static int lazy_slot(rq_odb_packset *ps, uint32_t p, size_t *k)
{
	rq_odb_packtab_pack tp;
	char name[64];

	rq_odb_packtab_pack_at(ps->tab, p, &tp);
	rq_odb_packtab_name(tp.name, name);
	if ((*k = slot_for(ps, name, strlen(name))) == SIZE_MAX)
		return -1;
	ps->slots[*k].listed = ps->slots[*k].known = 1;
	ps->slots[*k].cover = COVER_TABLE;
	ps->slots[*k].tab_no = p;
	ps->tab_slot[p] = *k;
	return 1;
}

/* A pack that holds id as the indexes say (its pack not necessarily
 * mapped): 1 with *k and *off, or 0. */
static int find(rq_odb_packset *ps, const unsigned char *id, size_t *k, uint64_t *off)
{
	uint32_t p;

	if (ps->midx && rq_odb_midx_find(ps->midx, id, &p, off) &&
	    ps->slots[ps->midx_slot[p]].cover == COVER_MIDX &&
	    usable(&ps->slots[ps->midx_slot[p]])) {
		*k = ps->midx_slot[p];
		return 1;
	}
	if (ps->tab && rq_odb_packtab_find(ps->tab, id, table_usable, ps, &p, off)) {
		if (ps->tab_slot[p] == TAB_LAZY)
			return lazy_slot(ps, p, k);
		*k = ps->tab_slot[p];
		return 1;
	}
	return find_direct(ps, id, k, off);
}

/*
 * A hit of git's multi-pack-index or of the table, checked against the
 * pack's own index (mapped for the read anyway; one binary search): an
 * index that does not hold id at off (a pack rewritten under the same
 * name, a table gone wrong) means the pack is searched by its own index
 * from now. 1 the hit stands, 0 not.
 */
static int hit_holds(rq_odb_packset *ps, slot *s, size_t k, const unsigned char *id, uint64_t off)
{
	uint64_t at;
	size_t *v;

	if (s->cover == COVER_DIRECT || (rq_odb_pack_idx_find(&s->pair.ix, id, &at) && at == off))
		return 1;
	s->cover = COVER_DIRECT;
	if ((v = rq_mem_grow(ps->direct, &ps->direct_cap, ps->ndirect + 1, sizeof(*v), 16))) {
		ps->direct = v;
		ps->direct[ps->ndirect++] = k;
	}
	return 0;
}

/* A lookup through the indexes, with the packs mapped: 1, 0 or -1. */
static int locate_once(rq_odb_packset *ps, const unsigned char *id, size_t *k, uint64_t *off)
{
	int r;

	while ((r = find(ps, id, k, off)) == 1) {
		slot *s = &ps->slots[*k];
		/* gone or failing git's checks: skipped from now on */
		if (need_pair(ps, s) == MAP_OK && hit_holds(ps, s, *k, id, *off))
			return 1;
	}
	return r;
}

/* The table was wrong: set aside (its packs searched one by one), its
 * file removed (the next listing builds it again). */
static int drop_table(rq_odb_packset *ps)
{
	int fd;

	for (size_t j = 0; j < ps->n; j++)
		if (ps->slots[j].cover == COVER_TABLE)
			ps->slots[j].cover = COVER_DIRECT;
	install_table(ps, NULL);
	if ((ps->flags & RQ_ODB_PACKSET_WRITE) && (fd = rq_odb_own_dir(ps->objects, 0)) >= 0) {
		unlinkat(fd, RQ_ODB_PACKTAB_FILE, 0);
		close(fd);
	}
	return make_direct(ps);
}

/*
 * The last resort of a read that found nothing: the table's packs searched
 * by their own indexes (on a genuine miss only: it maps every index). When
 * one holds the object, the table was wrong (it left out what a pack
 * holds): it is dropped. 1, 0 or -1.
 */
static int locate_without_table(rq_odb_packset *ps, const unsigned char *id, size_t *k,
				uint64_t *off)
{
	size_t np = ps->tab ? rq_odb_packtab_npacks(ps->tab) : 0, j;

	for (uint32_t p = 0; p < np; p++)
		if (ps->tab_slot[p] == TAB_LAZY && lazy_slot(ps, p, &j) < 0)
			return -1;
	for (j = 0; j < ps->n; j++) {
		slot *s = &ps->slots[j];
		if (!s->listed || s->cover != COVER_TABLE || !usable(s) ||
		    need_idx(ps, s) != MAP_OK || !rq_odb_pack_idx_find(&s->pair.ix, id, off))
			continue;
		if (drop_table(ps) < 0)
			return -1;
		return locate_once(ps, id, k, off);
	}
	return 0;
}

int rq_odb_packset_locate(rq_odb_packset *ps, const unsigned char *id, int rescan, size_t *k,
			  uint64_t *off)
{
	int r = 0;

	for (int round = 0; round < 2 && r == 0; round++) {
		if (need_scan(ps) < 0)
			return -1;
		if ((r = locate_once(ps, id, k, off)) != 0 || !rescan)
			break;
		if (round == 0 && rq_odb_packset_rescan(ps) < 0)
			return -1;
	}
	if (r == 0 && rescan)
		r = locate_without_table(ps, id, k, off);
	if (r != 0)
		return r;
	return ps->err[0] ? RQ_ODB_PACKSET_BAD : 0;
}

const rq_odb_packset_pair *rq_odb_packset_pair_of(const rq_odb_packset *ps, size_t k)
{
	return &ps->slots[k].pair;
}

int rq_odb_packset_has(rq_odb_packset *ps, const unsigned char *id)
{
	uint64_t off;
	size_t k;

	if (need_scan(ps) < 0)
		return -1;
	return find(ps, id, &k, &off);
}

int rq_odb_packset_freshen(rq_odb_packset *ps, const unsigned char *id)
{
	char path[PATH_MAX];
	uint64_t off;
	size_t k;
	int r = rq_odb_packset_locate(ps, id, 0, &k, &off);
	slot *s;

	if (r <= 0)
		return r == -1 ? -1 : 0;
	s = &ps->slots[k];
	if (!s->freshened &&
	    snprintf(path, sizeof(path), "%s/%s.pack", ps->dir, s->name) < (int)sizeof(path))
		(void)utimensat(AT_FDCWD, path, NULL, 0);
	s->freshened = 1;
	return 1;
}

void rq_odb_packset_stats_get(rq_odb_packset *ps, rq_odb_packset_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (need_scan(ps) < 0)
		return;
	for (size_t k = 0; k < ps->n; k++) {
		const slot *s = &ps->slots[k];
		if (!s->listed)
			continue;
		out->listed++;
		out->midx += s->cover == COVER_MIDX;
		out->table += s->cover == COVER_TABLE;
		out->direct += s->cover == COVER_DIRECT;
	}
	for (size_t k = 0; ps->tab && k < rq_odb_packtab_npacks(ps->tab); k++)
		if (ps->tab_slot[k] == TAB_LAZY) { /* taken to be there, not used yet */
			out->listed++;
			out->table++;
		}
	out->idx_maps = ps->idx_maps;
	out->pack_maps = ps->pack_maps;
	out->table_built = ps->table_built;
	out->trusted = ps->trusted;
}

/* ---- abbreviated ids ---- */

int rq_odb_packset_find_prefix(rq_odb_packset *ps, const rq_oid *prefix, size_t nhex, rq_oid *full)
{
	int found = 0;

	/* an abbreviation is rare: every pack listed and its index searched */
	if (need_scan(ps) < 0 || (ps->trusted && scan(ps, 1) < 0))
		return -1;
	for (size_t k = 0; k < ps->n && found < 2; k++) {
		slot *s = &ps->slots[k];
		if (s->listed && usable(s) && need_idx(ps, s) == MAP_OK)
			rq_odb_pack_idx_prefix(&s->pair.ix, ps->algo, prefix, nhex, full, &found);
	}
	return found;
}
