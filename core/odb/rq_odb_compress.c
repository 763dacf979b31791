/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_compress: the thread that encodes a replay's new objects ahead
 * of the pack (see the header, which states who may free what while it
 * runs).
 */
#include "rq_odb_compress.h"
#include "rq_clock.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rq_mem.h"
#include "rq_testhook.h"
#include "rq_trace.h"

/* The thread starts once this much content waits (a small replay packs
 * faster alone). */
#define BG_START_BYTES (8 * 1024)
/* How long the thread polls for more work before it sleeps. Waking a
 * sleeping thread costs a system call, and on a virtual machine whose idle
 * CPU halts, up to 0.7 ms before it runs: objects come every 10-20 us
 * during the picks, and a thread that slept between them did most of its
 * work after the last one (the 50-pick topic waited 0.9 ms, median, for it). */
#define BG_SPIN_NS 100000
/* blobs this large are read back from their entry once encoded */
#define BG_DROP_BYTES 4096

/* Encode one object the thread took (a copy of its fields), with the
 * collision check its plain id still needs. 0, -1 or -2 as encode_one. */
static int bg_encode(rq_odb_compress *bg, const rq_odb_store_obj *o,
		     const rq_odb_store_base *blob_base, rq_odb_store_encoded *e)
{
	size_t ncand = 0;
	rq_odb_store_base cand[RQ_ODB_STORE_DELTA_WINDOW];

	if (o->unchecked == 1 && rq_odb_store_check_id(&o->id, o->data, o->len, o->type) < 0)
		return -2;
	if (blob_base)
		cand[ncand++] = *blob_base;
	/* the window, the latest tree first */
	for (size_t j = bg->nwin; j > 0 && o->type == GIT_OBJECT_TREE; j--)
		if (bg->win[j - 1].depth < RQ_ODB_STORE_DELTA_DEPTH)
			cand[ncand++] = bg->win[j - 1];
	if (rq_odb_store_encode(bg->enc, o->type, o->data, o->len, cand, ncand, e) < 0)
		return -1;
	return 0;
}

/* A tree the thread encoded (object k) joins its window; the oldest one
 * leaves it: 1 + its index (0: none), to give its content up. */
static size_t bg_remember(rq_odb_compress *bg, const rq_odb_store_obj *o, size_t k,
			  const rq_odb_store_encoded *e)
{
	size_t gone = 0;

	if (o->type != GIT_OBJECT_TREE)
		return 0;
	if (bg->nwin == RQ_ODB_STORE_DELTA_WINDOW) {
		gone = bg->win[0].idx + 1;
		memmove(bg->win, bg->win + 1, (RQ_ODB_STORE_DELTA_WINDOW - 1) * sizeof(bg->win[0]));
		bg->nwin--;
	}
	bg->win[bg->nwin++] = (rq_odb_store_base){o->id, o->data, o->len, e->depth, k};
	return gone;
}

/*
 * A large blob or a commit the thread encoded gives its content up: the
 * pack needs only the entry, and a replay seldom reads an object it wrote
 * (the next pick's side of a file changed again, the next pick's parent:
 * inflated from the entry; the next version's delta base, bg_content).
 * Most of a replay's memory would otherwise be these copies. Trees stay
 * while they are in the window (its delta bases).
 */
static void bg_drop(rq_odb_store_obj *o)
{
	int large_blob = o->type == GIT_OBJECT_BLOB && o->len >= BG_DROP_BYTES;

	/* trees: when they leave the window (bg_drop_tree) */
	if (!(large_blob || o->type == GIT_OBJECT_COMMIT) || !o->own_data)
		return;
	free(o->data);
	o->data = NULL;
	o->own_data = 0;
	o->dropped = 1;
}

/*
 * The content of object k for the thread, under the lock: its data, or, for
 * a blob that gave it up, inflated from its entry (a delta: applied to its
 * base's content, the earlier version of the file, the same way). *own:
 * the caller frees it. NULL: it cannot be had (out of memory, damaged).
 */
static unsigned char *bg_content(rq_odb_store *s, size_t k, unsigned guard, int *own)
{
	const rq_odb_store_obj *o = &s->objs[k];
	rq_odb_pack_entry_info info;
	unsigned char *raw, *base, *full = NULL;
	size_t base_len, full_len = 0;
	int base_own = 0;

	*own = 0;
	if (o->data)
		return o->data;
	if (!guard || !o->entry ||
	    rq_odb_pack_entry_parse(o->entry, o->entry_len, rq_odb_store_algo(s)->rawsz, &info) <
		0 ||
	    rq_odb_pack_inflate(info.zdata, info.zlen, info.size, &raw) < 0)
		return NULL;
	*own = 1;
	if (info.code != 7)
		return raw;
	if (!o->like || o->like - 1 >= k ||
	    !(base = bg_content(s, o->like - 1, guard - 1, &base_own))) {
		free(raw);
		return NULL;
	}
	base_len = s->objs[o->like - 1].len;
	if (rq_odb_pack_apply_delta(base, base_len, raw, info.size, &full, &full_len) < 0 ||
	    full_len != o->len) {
		free(full);
		full = NULL;
	}
	free(raw);
	if (base_own)
		free(base);
	return full;
}

/* Take object bg->done (under the lock): a copy of it, and its blob base
 * when that can be one (*tmp: its content, when it had to be inflated). */
static const rq_odb_store_base *bg_take(rq_odb_compress *bg, rq_odb_store_obj *o,
					rq_odb_store_base *base, unsigned char **tmp)
{
	rq_odb_store *s = bg->store;
	const rq_odb_store_obj *b;
	unsigned char *data;
	int own = 0;

	*tmp = NULL;
	*o = s->objs[bg->done];
	if (o->unchecked == 1)
		s->objs[bg->done].unchecked = 2;
	if (!o->like || o->like > bg->done)
		return NULL;
	b = &s->objs[o->like - 1];
	/* one bg_help encodes is whole (depth 0), its content kept until the
	 * join: the same base either way */
	if (!(b->entry || b->claimed) || b->depth >= RQ_ODB_STORE_DELTA_DEPTH ||
	    !(data = bg_content(s, o->like - 1, RQ_ODB_STORE_DELTA_DEPTH + 1, &own)))
		return NULL;
	if (own)
		*tmp = data;
	*base = (rq_odb_store_base){b->id, data, b->len, b->depth, 0};
	return base;
}

/* A tree that left the thread's window gives its content up, unless its
 * collision check is being run by bg_help. */
static void bg_drop_tree(rq_odb_store_obj *o)
{
	if (o->type != GIT_OBJECT_TREE || !o->own_data || !o->entry || o->unchecked == 2)
		return;
	free(o->data);
	o->data = NULL;
	o->own_data = 0;
	o->dropped = 1;
}

/* Under the lock, nothing to do: poll for more (the lock released) for up
 * to BG_SPIN_NS. 1 when something came (or the stop), 0 when not. */
static int bg_spin(rq_odb_compress *bg)
{
	size_t seen = bg->handed;
	uint64_t t0 = rq_clock_mono_ns();
	unsigned i = 0;

	if (bg->no_poll)
		return 0;
	pthread_mutex_unlock(&bg->store->mu);
	while (atomic_load_explicit(&bg->posted, memory_order_acquire) == seen) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		if (++i % 64 == 0 && rq_clock_mono_ns() - t0 >= BG_SPIN_NS)
			break;
	}
	pthread_mutex_lock(&bg->store->mu);
	return bg->handed != seen || bg->stop;
}

static void *bg_main(void *arg)
{
	rq_odb_compress *bg = arg;
	rq_odb_store *s = bg->store;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		rq_odb_store_obj o;
		rq_odb_store_base base;
		const rq_odb_store_base *blob_base;
		unsigned char *tmp;
		size_t gone, k;
		rq_odb_store_encoded e;
		int r;
		while (!bg->stop && bg->done == bg->handed && !bg_spin(bg)) {
			bg->sleeping = 1;
			pthread_cond_wait(&bg->wake, &s->mu);
			bg->sleeping = 0;
		}
		if (bg->done == bg->handed)
			break; /* stopped, and all done */
		if (s->objs[bg->done].claimed) {
			bg->done++; /* bg_help encodes it */
			continue;
		}
		blob_base = bg_take(bg, &o, &base, &tmp);
		k = bg->done;
		pthread_mutex_unlock(&s->mu);
		rq_testhook_at("thread-encode", k);
		r = bg_encode(bg, &o, blob_base, &e);
		free(tmp);
		gone = r == 0 ? bg_remember(bg, &o, bg->done, &e) : 0;
		pthread_mutex_lock(&s->mu);
		if (gone)
			bg_drop_tree(&s->objs[gone - 1]);
		if (r == 0) {
			rq_odb_store_set_entry(&s->objs[bg->done], &e);
			/* a borrowed base has served: read back from its entry if need be */
			if (o.like && s->objs[o.like - 1].borrowed)
				bg_drop(&s->objs[o.like - 1]);
			/* bg_help may be checking it: then it gives the content up */
			if (o.unchecked != 2) {
				s->objs[bg->done].unchecked = 0;
				bg_drop(&s->objs[bg->done]);
			}
		} else if (!bg->failed) {
			bg->failed = r;
		}
		bg->done++;
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Start the thread over the objects written so far. 0, or -1 (it does
 * not run: the objects are encoded at the end, as without it). */
static int bg_start(rq_odb_compress *bg)
{
	rq_odb_store *s = bg->store;

	if (pthread_mutex_init(&s->mu, NULL) != 0)
		return -1;
	if (pthread_cond_init(&bg->wake, NULL) != 0) {
		pthread_mutex_destroy(&s->mu);
		return -1;
	}
	bg->handed = s->n;
	atomic_store_explicit(&bg->posted, s->n, memory_order_relaxed);
	bg->owner = getpid();
	rq_mem_one_arena();
	if (pthread_create(&bg->thread, NULL, bg_main, bg) != 0) {
		pthread_cond_destroy(&bg->wake);
		pthread_mutex_destroy(&s->mu);
		return -1;
	}
	bg->running = 1;
	s->shared = 1;
	RQ_TRACE_AT("compressor: started");
	return 0;
}

/* A new object of len bytes: the thread's to encode (started when enough
 * waits; woken if it sleeps). */
void rq_odb_compress_hand(rq_odb_compress *bg, size_t len)
{
	rq_odb_store *s = bg->store;

	if (!bg->enc || bg->closed)
		return;
	bg->pending_bytes += len;
	if (!bg->running) {
		if (bg->pending_bytes >= BG_START_BYTES && bg_start(bg) < 0)
			bg->closed = 1;
		if (bg->running)
			bg->pending_bytes = 0;
		return;
	}
	pthread_mutex_lock(&s->mu);
	bg->handed = s->n;
	atomic_store_explicit(&bg->posted, s->n, memory_order_release);
	if (bg->sleeping)
		pthread_cond_signal(&bg->wake);
	pthread_mutex_unlock(&s->mu);
}

/* Help with a copy of an object: its collision check (check), and the
 * whole encoding of a blob with no earlier version (whole) with this
 * process's own encoder (*enc, made at the first use). 0, -1 or -2. */
static int help_one(rq_odb_compress *bg, const rq_odb_store_obj *o, int check, int whole,
		    rq_odb_pack_encoder **enc, rq_odb_store_encoded *e)
{
	if (check && rq_odb_store_check_id(&o->id, o->data, o->len, o->type) < 0)
		return -2;
	if (!whole)
		return 0;
	if (!*enc) {
		if (!(*enc = rq_odb_pack_encoder_new_level(rq_odb_pack_encoder_level(bg->enc))))
			return -1;
		rq_odb_pack_encoder_set_algo(*enc, rq_odb_store_algo(bg->store));
	}
	return rq_odb_store_encode(*enc, o->type, o->data, o->len, NULL, 0, e) < 0 ? -1 : 0;
}

/*
 * bg_help's work on object k, under the lock (released meanwhile): its
 * collision check if it still needs one, and its whole encoding if it is a
 * blob with no earlier version that nobody encoded yet.
 */
static void help_with(rq_odb_compress *bg, size_t k, rq_odb_pack_encoder **enc)
{
	rq_odb_store *s = bg->store;
	rq_odb_store_obj *o = &s->objs[k], copy;
	int check = o->unchecked == 1, r;
	int whole = o->type == GIT_OBJECT_BLOB && !o->like && o->data && !o->entry && !o->claimed;
	rq_odb_store_encoded e = {0};

	if (!check && !whole)
		return;
	o->unchecked = check ? 2 : o->unchecked;
	o->claimed = (unsigned char)(o->claimed || whole);
	copy = *o;
	pthread_mutex_unlock(&s->mu);
	rq_testhook_at("help-unlocked", k);
	r = help_one(bg, &copy, check, whole, enc, &e);
	pthread_mutex_lock(&s->mu);
	if (r < 0 && !bg->failed)
		bg->failed = r;
	if (check && r != -2)
		o->unchecked = 0;
	/* an object the thread encoded meanwhile keeps its content, freed with
	 * the store: the thread may be reading it as the next version's delta
	 * base right now (it does not give it up while this check runs) */
	if (e.entry)
		rq_odb_store_set_entry(o, &e);
	rq_testhook_at("help-done", k);
}

typedef struct sized {
	size_t len, k;
} sized;

/* The largest first (then in write order). */
static int larger_first(const void *a_, const void *b_)
{
	const sized *a = a_, *b = b_;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

/* The blobs with no earlier version the thread has not reached, the
 * largest first: malloc'd, *n of them (NULL when none or out of memory:
 * bg_help then takes them from the last one down). Under the lock. */
static sized *whole_blobs(const rq_odb_compress *bg, size_t *n)
{
	sized *v = NULL;
	size_t cap = 0;

	*n = 0;
	for (size_t k = bg->done + 1; k < bg->handed; k++) {
		const rq_odb_store_obj *o = &bg->store->objs[k];
		if (o->type != GIT_OBJECT_BLOB || o->like || !o->data || o->entry)
			continue;
		if (*n == cap) {
			sized *nv = rq_mem_grow(v, &cap, *n + 1, sizeof(*v), 16);
			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = (sized){o->len, k};
	}
	if (*n)
		qsort(v, *n, sizeof(*v), larger_first);
	return v;
}

/*
 * The picks are over and the thread has objects left: this process takes
 * some while the thread goes on in write order. First the blobs that have
 * no earlier version (whole: the same bytes whichever side encodes them),
 * the largest first, so that neither side is left with a large one at the
 * end; then, from the last object down, the collision checks. Trees and
 * later versions stay the thread's, in write order, so the pack is the
 * same as the thread alone would make. The thread skips what is claimed,
 * and uses a claimed blob as a delta base as it would use it encoded.
 */
static void bg_help(rq_odb_compress *bg)
{
	rq_odb_pack_encoder *enc = NULL;
	sized *order;
	size_t n;

	pthread_mutex_lock(&bg->store->mu);
	pthread_cond_signal(&bg->wake);
	order = whole_blobs(bg, &n);
	for (size_t j = 0; j < n; j++)
		if (order[j].k > bg->done)
			help_with(bg, order[j].k, &enc);
	for (size_t k = bg->handed; k > bg->done + 1; k--)
		help_with(bg, k - 1, &enc);
	pthread_mutex_unlock(&bg->store->mu);
	free(order);
	rq_odb_pack_encoder_free(enc);
}

/*
 * Stop compressing ahead: the thread encodes what it was handed, and is
 * joined; objects it did not encode are encoded by the caller. In a
 * process forked while it ran (never a replay's case: its workers fork
 * before any object is written) the thread is not there: its state is
 * left alone. 0, or what the thread failed with (-1, -2).
 */
int rq_odb_compress_finish(rq_odb_compress *bg)
{
	rq_odb_store *s = bg->store;

	bg->closed = 1;
	if (!bg->running)
		return bg->failed;
	bg->running = 0;
	s->shared = 0;
	if (bg->owner != getpid())
		return 0;
	RQ_TRACE_AT("compressor: help");
	bg_help(bg);
	RQ_TRACE_AT("compressor: helped");
	pthread_mutex_lock(&s->mu);
	bg->stop = 1;
	atomic_store_explicit(&bg->posted, SIZE_MAX, memory_order_release);
	pthread_cond_signal(&bg->wake);
	pthread_mutex_unlock(&s->mu);
	pthread_join(bg->thread, NULL);
	RQ_TRACE_AT("compressor: joined");
	pthread_cond_destroy(&bg->wake);
	pthread_mutex_destroy(&s->mu);
	for (size_t k = 0; k < s->n; k++)
		if (s->objs[k].claimed && s->objs[k].entry)
			bg_drop(&s->objs[k]);
	return bg->failed;
}

void rq_odb_compress_ahead(rq_odb_compress *c, rq_odb_store *store, rq_odb_pack_encoder *enc)
{
	if (!c->closed && !c->running) {
		c->enc = enc;
		c->store = store;
	}
}

int rq_odb_compress_on(const rq_odb_compress *c)
{
	return c->enc && !c->closed;
}

void rq_odb_compress_no_poll(rq_odb_compress *c)
{
	c->no_poll = 1;
}
