/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb: the replay's object database: the packs (replayq's reader, and
 * libgit2's pack backend for what it does not take), the loose objects
 * (rq_odb_loose), and alternates under a policy.
 */
#include "rq_odb.h"
#include "rq_odb_loose.h"
#include "rq_odb_packread.h"
#include "rq_odb_packset.h"
#include "rq_odb_read.h"
#include "rq_odb_view.h"
#include "rq_hindex.h"
#include "rq_mem.h"
#include "rq_oid.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#include "rq_confine.h"
#include "rq_fs.h"
#include "rq_sha1.h"

/* git reads an alternates file this many levels below the repository's
 * at most (odb.c, link_alt_odb_entries) */
#define ALTERNATE_DEPTH 5

/* --- packs --------------------------------------------------------------- */

/*
 * The packs: replayq's reader (rq_odb_packread over rq_odb_packset) answers,
 * and libgit2's pack backend only what it does not take (an abbreviated
 * id, an index of version 1): made the first time it is needed, since
 * making it lists the packs and looks at every one of them (a stat and a
 * .keep lookup each: 4 ms at 1,000 packs here). A failed read of an object
 * the packs hold is what it is: a damaged object, git's "packed object
 * <id> (stored in <pack dir>) is corrupt", not a name that does not
 * resolve.
 */
typedef struct packs {
	git_odb_backend parent;
	git_odb_backend *inner;	 /* libgit2's, once needed */
	rq_odb_packread *direct; /* reads first */
	char *dir;		 /* the objects directory */
	char *shown;		 /* the pack directory as messages name it */
	int no_dedup;		 /* a new object is written even when a pack has it */
	const rq_oid_algo *algo; /* the database's object format (rq_odb_algo) */
} packs;

/* libgit2's callbacks take 20-byte ids: in a SHA-256 database they fail,
 * naming the call, instead of misreading (0 in SHA-1). */
static int refused(const git_odb_backend *be, const char *what)
{
	return rq_odb_read_refused(((const packs *)be)->algo, what);
}

static int pack_failed(packs *b, const git_oid *id, int rc)
{
	const git_error *e = git_error_last();
	char hex[GIT_OID_HEXSZ + 1], msg[PATH_MAX + 128];

	if (rc == GIT_ENOTFOUND || rc == GIT_EAMBIGUOUS || rc == GIT_PASSTHROUGH ||
	    (e && e->klass == GIT_ERROR_NOMEMORY))
		return rc;
	git_oid_tostr(hex, sizeof(hex), id);
	snprintf(msg, sizeof(msg), "packed object %s (stored in %s) is corrupt", hex, b->shown);
	git_error_set_str(RQ_ERROR_GIT_CORRUPT, msg);
	return rc;
}

/* libgit2's backend, made now if it was not: NULL with its error set. */
static git_odb_backend *inner(git_odb_backend *be)
{
	packs *b = (packs *)be;

	if (!b->inner && git_odb_backend_pack(&b->inner, b->dir) < 0) {
		b->inner = NULL;
		return NULL;
	}
	b->inner->odb = be->odb;
	return b->inner;
}

static void *data_alloc(void *be, size_t n)
{
	return git_odb_backend_data_alloc(be, n);
}

/* What our reader said (rc <= 0) as the backend's answer: 1 to ask
 * libgit2, else the error (a damaged object is not handed to libgit2). */
static int direct_failed(packs *b, const git_oid *id, int rc)
{
	if (rc == 0)
		return 1;
	if (rc == RQ_ODB_PACKREAD_BADPACK) { /* git's words for the pack */
		git_error_set_str(RQ_ERROR_GIT_CORRUPT, rq_odb_packread_error(b->direct));
		return GIT_ERROR;
	}
	if (rc == RQ_ODB_PACKREAD_DAMAGED) {
		git_error_clear();
		return pack_failed(b, id, GIT_ERROR);
	}
	git_error_set_oom();
	return -1;
}

/* What libgit2's backend read (an index of version 1), checked as our
 * reader checks (rq_odb_packread_read): 0, or the damage. */
static int hash_checked(packs *b, const git_oid *id, void **data, size_t len, git_object_t type)
{
	unsigned char sum[20];

	if (len > RQ_SHA1_CHECK_MAX)
		return 0;
	rq_sha1_object(git_object_type2string(type), *data, len, sum);
	if (!memcmp(sum, id->id, sizeof(sum)))
		return 0;
	git_odb_backend_data_free(&b->parent, *data);
	*data = NULL;
	git_error_clear();
	return pack_failed(b, id, GIT_ERROR);
}

static int packs_read(void **data, size_t *len, git_object_t *type, git_odb_backend *be,
		      const git_oid *id)
{
	packs *b = (packs *)be;
	git_odb_backend *in;
	rq_oid rid;
	int rc;

	if (refused(be, "read of a packed object"))
		return GIT_ERROR;
	rq_oid_from_git(&rid, id);
	rc = rq_odb_packread_read(b->direct, &rid, data_alloc, be, data, len, type);

	if (rc > 0)
		return 0;
	if ((rc = direct_failed(b, id, rc)) <= 0)
		return rc;
	if (!(in = inner(be)))
		return GIT_ERROR;
	if ((rc = in->read(data, len, type, in, id)) < 0)
		return pack_failed(b, id, rc);
	return hash_checked(b, id, data, *len, *type);
}

static int packs_read_header(size_t *len, git_object_t *type, git_odb_backend *be,
			     const git_oid *id)
{
	packs *b = (packs *)be;
	git_odb_backend *in;
	rq_oid rid;
	int rc;

	if (refused(be, "read_header of a packed object"))
		return GIT_ERROR;
	rq_oid_from_git(&rid, id);
	rc = rq_odb_packread_read_header(b->direct, &rid, len, type);

	if (rc > 0)
		return 0;
	if ((rc = direct_failed(b, id, rc)) <= 0)
		return rc;
	if (!(in = inner(be)))
		return GIT_ERROR;
	rc = in->read_header(len, type, in, id);
	return rc < 0 ? pack_failed(b, id, rc) : rc;
}

static int packs_exists_prefix(git_oid *full, git_odb_backend *be, const git_oid *prefix,
			       size_t hexlen)
{
	git_odb_backend *in;

	if (refused(be, "exists_prefix in the packs"))
		return GIT_ERROR;
	in = inner(be);
	return in ? in->exists_prefix(full, in, prefix, hexlen) : GIT_ERROR;
}

/* An abbreviated id: libgit2 finds the object, our reader reads it. */
static int packs_read_prefix(git_oid *full, void **data, size_t *len, git_object_t *type,
			     git_odb_backend *be, const git_oid *prefix, size_t hexlen)
{
	int rc;

	if (refused(be, "read_prefix in the packs"))
		return GIT_ERROR;
	if ((rc = packs_exists_prefix(full, be, prefix, hexlen)) < 0)
		return pack_failed((packs *)be, prefix, rc);
	return packs_read(data, len, type, be, full);
}

/* Our indexes answer (one lookup for every new object a replay writes,
 * which no pack has): libgit2's would map every index a second time. */
static int packs_exists(git_odb_backend *be, const git_oid *id)
{
	packs *b = (packs *)be;
	git_odb_backend *in;
	rq_oid rid;
	int r;

	if (refused(be, "exists of a packed object"))
		return 0; /* libgit2 takes any answer for yes: the error is set */
	rq_oid_from_git(&rid, id);
	r = rq_odb_packread_has(b->direct, &rid);

	if (r >= 0)
		return r;
	return (in = inner(be)) ? in->exists(in, id) : 0;
}

static int packs_refresh(git_odb_backend *be)
{
	packs *b = (packs *)be;

	if (rq_odb_packset_rescan(rq_odb_packread_set(b->direct)) < 0) {
		git_error_set_oom();
		return -1;
	}
	return b->inner && b->inner->refresh ? b->inner->refresh(b->inner) : 0;
}

/* git's freshening of the pack that holds id: 0, or GIT_ENOTFOUND. */
static int packs_freshen(git_odb_backend *be, const git_oid *id)
{
	packs *b = (packs *)be;
	rq_oid rid;
	int r;

	if (refused(be, "freshen of a packed object"))
		return GIT_ERROR;
	rq_oid_from_git(&rid, id);
	r = rq_odb_packread_freshen(b->direct, &rid);

	if (r < 0) {
		git_error_set_oom();
		return -1;
	}
	return r ? 0 : GIT_ENOTFOUND;
}

static void packs_free(git_odb_backend *be)
{
	packs *b = (packs *)be;

	if (b->inner)
		b->inner->free(b->inner);
	rq_odb_packread_free(b->direct);
	free(b->dir);
	free(b->shown);
	free(b);
}

/* The packs of objects directory dir (the repository's own at depth 0:
 * its table of small packs may be saved there). */
int rq_odb_dedup(const git_odb_backend *b)
{
	return !b || b->read != packs_read || !((const packs *)b)->no_dedup;
}

static int packs_new(git_odb_backend **out, const char *dir, const char *shown, int depth,
		     const rq_odb_opts *o, const rq_oid_algo *algo)
{
	packs *b = calloc(1, sizeof(*b));
	char pd[PATH_MAX + 8], spd[PATH_MAX + 8];

	snprintf(pd, sizeof(pd), "%s/pack", dir);
	snprintf(spd, sizeof(spd), "%s/pack", shown);
	if (!b || git_odb_init_backend(&b->parent, GIT_ODB_BACKEND_VERSION) < 0 ||
	    !(b->shown = strdup(spd)) || !(b->dir = strdup(dir)) ||
	    !(b->direct =
		  rq_odb_packread_open_set(pd, spd, algo, depth ? 0 : RQ_ODB_PACKSET_WRITE))) {
		if (b)
			packs_free(&b->parent);
		git_error_set_oom();
		return -1;
	}
	b->no_dedup = o && o->keep_pack;
	b->algo = rq_odb_packread_algo(b->direct);
	b->parent.read = packs_read;
	b->parent.read_header = packs_read_header;
	b->parent.read_prefix = packs_read_prefix;
	b->parent.exists = packs_exists;
	b->parent.exists_prefix = packs_exists_prefix;
	b->parent.refresh = packs_refresh;
	b->parent.freshen = packs_freshen;
	b->parent.free = packs_free;
	*out = &b->parent;
	return 0;
}

/* The pack reader of a packs backend of `from` over the same directory. */
static rq_odb_packread *shared_reader(git_odb *from, const char *dir)
{
	size_t n = git_odb_num_backends(from);

	for (size_t i = 0; i < n; i++) {
		git_odb_backend *b = NULL;
		if (git_odb_get_backend(&b, from, i) == 0 && b && b->read == packs_read &&
		    ((packs *)b)->direct && !strcmp(rq_odb_packread_dir(((packs *)b)->direct), dir))
			return ((packs *)b)->direct;
	}
	return NULL;
}

int rq_odb_whole_blob(git_odb *odb, const rq_oid *id, size_t min, size_t max, unsigned char **entry,
		      size_t *entry_len, unsigned char **content, size_t *len)
{
	size_t n = git_odb_num_backends(odb);
	for (size_t i = 0; i < n; i++) {
		git_odb_backend *b = NULL;
		int r;
		if (git_odb_get_backend(&b, odb, i) < 0 || !b || b->read != packs_read ||
		    !((packs *)b)->direct)
			continue;
		r = rq_odb_packread_whole_blob(((packs *)b)->direct, id, min, max, entry, entry_len,
					       content, len);
		if (r != 0)
			return r > 0 ? 1 : -1;
	}
	return 0;
}

const rq_oid_algo *rq_odb_algo(git_odb *odb)
{
	size_t n = odb ? git_odb_num_backends(odb) : 0;

	for (size_t i = 0; i < n; i++) {
		git_odb_backend *b = NULL;
		if (git_odb_get_backend(&b, odb, i) == 0 && b && b->read == packs_read)
			return ((packs *)b)->algo;
	}
	return &rq_oid_sha1;
}

void rq_odb_share_packs(git_odb *odb, git_odb *from)
{
	size_t n = odb && from ? git_odb_num_backends(odb) : 0;

	for (size_t i = 0; i < n; i++) {
		git_odb_backend *b = NULL;
		rq_odb_packread *other;
		if (git_odb_get_backend(&b, odb, i) < 0 || !b || b->read != packs_read ||
		    !((packs *)b)->direct)
			continue;
		other = shared_reader(from, rq_odb_packread_dir(((packs *)b)->direct));
		if (other && other != ((packs *)b)->direct) {
			rq_odb_packread_free(((packs *)b)->direct);
			((packs *)b)->direct = rq_odb_packread_ref(other);
		}
	}
}

/* --- building the database --------------------------------------------- */

static int under_root(const char *root, const char *real)
{
	size_t rl = strlen(root);

	return !strncmp(real, root, rl) && (real[rl] == '/' || real[rl] == '\0');
}

/*
 * The directories of a database being built, as git links alternates
 * (odb.c: link_alt_odb_entry): each entry resolved with its symbolic links
 * and taken once (the repository's own directory included: a loop A -> B
 * -> A reads A and B once each, and a fan-out of the same directories
 * costs what they are, not the paths to them), an alternates file read
 * ALTERNATE_DEPTH levels below the repository's at most (deeper ones are
 * ignored, as git ignores them: git says so on stderr, the core says
 * nothing).
 */
typedef struct build {
	git_odb *odb;
	const rq_odb_opts *o;
	rq_error *err;
	const rq_oid_algo *algo; /* the object format of every directory */
	char **dirs;		 /* the directories taken, resolved */
	size_t n, cap;
	rq_hindex seen;
} build;

static int dir_eq(const void *ctx, size_t i, const void *key)
{
	return !strcmp(((const build *)ctx)->dirs[i], key);
}

static size_t dir_hash(const void *ctx, size_t i)
{
	return rq_hindex_hash_str(((const build *)ctx)->dirs[i]);
}

/* Take the resolved directory real: 1 when new, 0 when taken before, -1
 * out of memory. */
static int take_dir(build *bd, const char *real)
{
	size_t h = rq_hindex_hash_str(real);
	char **v;

	if (rq_hindex_find(&bd->seen, h, dir_eq, bd, real) >= 0)
		return 0;
	if (!(v = rq_mem_grow(bd->dirs, &bd->cap, bd->n + 1, sizeof(*v), 16)))
		return -1;
	bd->dirs = v;
	if (rq_hindex_reserve(&bd->seen, 16, bd->n, dir_hash, bd) < 0 || !(v[bd->n] = strdup(real)))
		return -1;
	rq_hindex_add(&bd->seen, h, bd->n++);
	return 1;
}

static void build_free(build *bd)
{
	for (size_t i = 0; i < bd->n; i++)
		free(bd->dirs[i]);
	free(bd->dirs);
	free(bd->seen.slot);
}

/* Loose and pack backends for one objects directory (an alternate when
 * depth > 0), then the alternates it names. */
static int add_dir(build *bd, const char *dir, const char *shown, int depth);

/* One line of dir's alternates file (trimmed): followed when it resolves,
 * is new and is allowed. 0 or -1. */
static int add_alternate(build *bd, const char *dir, const char *line, int depth)
{
	char full[PATH_MAX * 2], real[PATH_MAX];
	const rq_odb_opts *o = bd->o;
	int r;

	snprintf(full, sizeof(full), "%s%s%s", line[0] == '/' ? "" : dir, line[0] == '/' ? "" : "/",
		 line);
	if (!realpath(full, real))
		return 0; /* git skips an alternate it cannot find */
	if ((r = take_dir(bd, real)) <= 0)
		return r < 0 ? rq_error_set(bd->err, RQ_E_NOMEM, "out of memory") : 0;
	if (o && o->root && !o->alternates_anywhere && !under_root(o->root, real))
		return rq_error_set(bd->err, RQ_E_BAD_REPO,
				    "alternate object directory '%.200s' is outside the "
				    "repository root (followed only with --alternates=any)",
				    line);
	if (o && o->root &&
	    rq_confine_objects(real, o->alternates_anywhere ? "/" : o->root, bd->err) < 0)
		return -1; /* nothing there can block a reader */
	return add_dir(bd, real, real, depth + 1);
}

static int add_alternates(build *bd, const char *dir, int depth)
{
	char path[PATH_MAX], line[PATH_MAX];
	FILE *f;
	int rc = 0, fd;

	snprintf(path, sizeof(path), "%s/info/alternates", dir);
	if ((fd = rq_fs_open_regular(path, 1, NULL)) < 0) /* (a FIFO would block) */
		return errno == ENOENT || errno == ENOTDIR
			   ? 0
			   : rq_error_set(bd->err, RQ_E_BAD_REPO, "%s: %s", path,
					  rq_fs_strerror(errno));
	if (!(f = fdopen(fd, "re"))) {
		close(fd);
		return rq_error_set(bd->err, RQ_E_NOMEM, "out of memory");
	}
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		if (depth > ALTERNATE_DEPTH)
			break; /* git: "ignoring alternate object stores, nesting too deep" */
		rc = add_alternate(bd, dir, line, depth);
	}
	fclose(f);
	return rc;
}

static int add_dir(build *bd, const char *dir, const char *shown, int depth)
{
	git_odb_backend *lb = NULL, *pb = NULL;
	git_odb *odb = bd->odb;

	if (rq_odb_loose_open(&lb, dir, shown, bd->algo) < 0)
		return rq_error_git(bd->err, "cannot read loose objects");
	if ((depth ? git_odb_add_alternate(odb, lb, 1) : git_odb_add_backend(odb, lb, 1)) < 0) {
		lb->free(lb);
		return rq_error_git(bd->err, "cannot read loose objects");
	}
	if (packs_new(&pb, dir, shown, depth, bd->o, bd->algo) < 0)
		return rq_error_git(bd->err, "cannot read packs");
	if ((depth ? git_odb_add_alternate(odb, pb, 2) : git_odb_add_backend(odb, pb, 2)) < 0) {
		pb->free(pb);
		return rq_error_git(bd->err, "cannot read packs");
	}
	return add_alternates(bd, dir, depth);
}

/* The repository's objects directory dir and its alternates into odb. */
static int add_all(git_odb *odb, const char *dir, const char *shown, const rq_odb_opts *o,
		   const rq_oid_algo *algo, rq_error *err)
{
	build bd = {.odb = odb, .o = o, .err = err, .algo = algo};
	char real[PATH_MAX];
	int rc = 0;

	if (realpath(dir, real) && take_dir(&bd, real) < 0)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (rc == 0)
		rc = add_dir(&bd, dir, shown, 0);
	build_free(&bd);
	return rc;
}

/* The database in the object format algo (NULL: SHA-1): its packs and
 * loose objects read at that width (rq_odb_read), libgit2's callbacks
 * refused when it is not SHA-1. */
int rq_odb_new_at(git_odb **out, git_repository *repo, const rq_odb_opts *opts,
		  const rq_oid_algo *algo, rq_error *err)
{
	git_buf dir = GIT_BUF_INIT;
	git_odb *odb = NULL;
	char shown[PATH_MAX];
	int rc = -1;

	*out = NULL;
	if (git_repository_item_path(&dir, repo, GIT_REPOSITORY_ITEM_OBJECTS) < 0)
		return rq_error_git(err, "cannot find the objects directory");
	while (dir.size > 1 && dir.ptr[dir.size - 1] == '/')
		dir.ptr[--dir.size] = '\0';
	snprintf(shown, sizeof(shown), "%s",
		 opts && opts->objects_shown ? opts->objects_shown : dir.ptr);
	if (git_odb_new(&odb) < 0) {
		rq_error_git(err, "cannot make an object database");
		goto out;
	}
	if (!algo)
		algo = &rq_oid_sha1;
	/* the view (replace refs, grafts, shallow) at the database's width */
	if (add_all(odb, dir.ptr, shown, opts, algo, err) < 0 ||
	    rq_odb_view_add(odb, repo, opts ? opts->root : NULL, opts ? opts->refs : NULL,
			    opts ? opts->refs_arg : NULL, err) < 0)
		goto out;
	*out = odb;
	odb = NULL;
	rc = 0;
out:
	git_odb_free(odb);
	git_buf_dispose(&dir);
	return rc;
}

int rq_odb_new(git_odb **out, git_repository *repo, const rq_odb_opts *opts, rq_error *err)
{
	return rq_odb_new_at(out, repo, opts, opts ? opts->algo : NULL, err);
}

int rq_odb_install(git_repository *repo, const rq_odb_opts *opts, rq_error *err)
{
	git_odb *odb;
	int rc = 0;

	if (rq_odb_new(&odb, repo, opts, err) < 0)
		return -1;
	if (git_repository_set_odb(repo, odb) < 0)
		rc = rq_error_git(err, "cannot use the object database");
	git_odb_free(odb);
	return rc;
}

struct rq_odb_packread *rq_odb_packs_reader(const git_odb_backend *b)
{
	return b && b->read == packs_read ? ((const packs *)b)->direct : NULL;
}

int rq_odb_packs_failed(const git_odb_backend *be, const rq_oid *id, int rc)
{
	const packs *b = (const packs *)be;
	char hex[RQ_OID_MAX_HEXSZ + 1], msg[PATH_MAX + 160];

	if (rc == RQ_ODB_PACKREAD_BADPACK) {
		git_error_set_str(RQ_ERROR_GIT_CORRUPT, rq_odb_packread_error(b->direct));
		return GIT_ERROR;
	}
	if (rc != RQ_ODB_PACKREAD_DAMAGED) {
		git_error_set_oom();
		return GIT_ERROR;
	}
	rq_oid_fmt(hex, id, b->algo);
	snprintf(msg, sizeof(msg), "packed object %s (stored in %s) is corrupt", hex, b->shown);
	git_error_set_str(RQ_ERROR_GIT_CORRUPT, msg);
	return GIT_ERROR;
}

int rq_odb_packs_fallback(git_odb_backend *be, const rq_oid *id, void **data, size_t *len,
			  git_object_t *type)
{
	packs *b = (packs *)be;
	git_odb_backend *in;
	git_oid gid;
	int rc;

	/* libgit2's pack backend reads only what our reader leaves: SHA-1 */
	if (rq_oid_to_git(&gid, id, b->algo) < 0)
		return GIT_ENOTFOUND;
	if (!(in = inner(be)))
		return GIT_ERROR;
	if (!data) {
		rc = in->read_header(len, type, in, &gid);
		return rc < 0 ? pack_failed(b, &gid, rc) : rc;
	}
	if ((rc = in->read(data, len, type, in, &gid)) < 0)
		return pack_failed(b, &gid, rc);
	return hash_checked(b, &gid, data, *len, *type);
}
