/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb: the replay's object database: libgit2's pack backend, a loose
 * backend that checks what it reads, and alternates under a policy.
 *
 * Why a loose backend of our own: libgit2 1.5's loose reader spins forever
 * on a truncated loose object (its inflate loop makes no progress and never
 * gives up), and with hash verification off (replayq turns it off so that
 * packed objects are not re-hashed) it hands out whatever a loose file
 * holds. git checks a loose object's id on every read; so do we. A loose
 * file is read whole (it is small, and its size bounds everything), the
 * header "<type> <size>\0" is parsed with git's limit of 32 bytes, the
 * content is inflated in one zlib call that must end the stream exactly
 * at <size> bytes with no input left over, and SHA-1 of header and
 * content must give the id. Anything else is "loose object <id> (stored
 * in <path>) is corrupt", git's words.
 */
#include "rq_odb.h"
#include "rq_odb_packread.h"
#include "rq_odb_packset.h"
#include "rq_odb_view.h"

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

#define HEADER_MAX	32   /* git's limit on a loose object's header */
#define ALTERNATE_DEPTH 5    /* git follows alternates five deep */
#define ZLIB_RATIO_MAX	1032 /* deflate cannot expand more than this */

typedef struct loose {
	git_odb_backend parent;
	char *dir;   /* the objects directory */
	char *shown; /* how messages name it */
} loose;

static int corrupt(const loose *b, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1], msg[PATH_MAX + 128];

	git_oid_tostr(hex, sizeof(hex), id);
	snprintf(msg, sizeof(msg), "loose object %s (stored in %s/%.2s/%s) is corrupt", hex,
		 b->shown, hex, hex + 2);
	git_error_set_str(RQ_ERROR_GIT_CORRUPT, msg);
	return GIT_ERROR;
}

static void object_path(const loose *b, const git_oid *id, char *out, size_t n)
{
	char hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), id);
	snprintf(out, n, "%s/%.2s/%s", b->dir, hex, hex + 2);
}

/* The whole file (not followed through a symbolic link). 0, GIT_ENOTFOUND,
 * or GIT_ERROR. */
static int slurp(const char *path, unsigned char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	size_t got = 0;

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? GIT_ENOTFOUND : GIT_ERROR;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !(*out = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return GIT_ERROR;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, *out + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return 0;
}

/* "<type> <size>\0" at the head of h (n bytes). Header length, or -1. */
static int parse_header(const unsigned char *h, size_t n, git_object_t *type, size_t *size)
{
	static const char *const names[] = {"commit", "tree", "blob", "tag"};
	static const git_object_t types[] = {GIT_OBJECT_COMMIT, GIT_OBJECT_TREE, GIT_OBJECT_BLOB,
					     GIT_OBJECT_TAG};
	const unsigned char *nul = memchr(h, '\0', n < HEADER_MAX ? n : HEADER_MAX);
	size_t v = 0, i = 0, t;

	if (!nul)
		return -1;
	for (t = 0; t < 4; t++) {
		size_t l = strlen(names[t]);
		if (!memcmp(h, names[t], l) && h[l] == ' ') {
			i = l + 1;
			break;
		}
	}
	if (t == 4 || h + i == nul || (h[i] == '0' && h + i + 1 != nul))
		return -1;
	for (; h + i < nul; i++) {
		if (h[i] < '0' || h[i] > '9' || v > (SIZE_MAX - 9) / 10)
			return -1;
		v = v * 10 + (size_t)(h[i] - '0');
	}
	*type = types[t];
	*size = v;
	return (int)i + 1;
}

/*
 * Inflate file (flen bytes) into a header and content. *out (size + 1
 * bytes, from git_odb_backend_data_alloc) holds the content. 0 or -1.
 */
static int inflate_object(git_odb_backend *be, const unsigned char *file, size_t flen,
			  git_object_t *type, size_t *size, unsigned char **out)
{
	unsigned char head[64];
	z_stream z;
	size_t have, hl;
	int ret, rc = -1;

	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)(uintptr_t)file;
	z.avail_in = (uInt)(flen > UINT_MAX ? UINT_MAX : flen);
	z.next_out = head;
	z.avail_out = sizeof(head);
	ret = inflate(&z, Z_NO_FLUSH);
	have = sizeof(head) - z.avail_out;
	if ((ret != Z_OK && ret != Z_STREAM_END) || flen > UINT_MAX)
		goto out;
	if ((int)(hl = (size_t)parse_header(head, have, type, size)) < 0)
		goto out;
	if (*size > flen * ZLIB_RATIO_MAX + sizeof(head) || have - hl > *size)
		goto out;
	if (!(*out = git_odb_backend_data_alloc(be, *size + 1)))
		goto out;
	memcpy(*out, head + hl, have - hl);
	if (ret != Z_STREAM_END) {
		z.next_out = *out + (have - hl);
		z.avail_out = (uInt)(*size - (have - hl) + 1); /* one more: a longer stream shows */
		ret = inflate(&z, Z_FINISH);
	}
	if (ret == Z_STREAM_END && z.total_out == hl + *size && z.avail_in == 0)
		rc = 0;
	else
		git_odb_backend_data_free(be, *out);
out:
	inflateEnd(&z);
	return rc;
}

static int hash_matches(const git_oid *id, git_object_t type, const unsigned char *data,
			size_t size)
{
	char head[HEADER_MAX + 8];
	int hl = snprintf(head, sizeof(head), "%s %zu", git_object_type2string(type), size);
	unsigned char sum[20];
	rq_sha1 s;

	rq_sha1_init(&s);
	rq_sha1_update(&s, head, (size_t)hl + 1);
	rq_sha1_update(&s, data, size);
	rq_sha1_final(&s, sum);
	return !memcmp(sum, id->id, sizeof(sum));
}

static int loose_read(void **data, size_t *len, git_object_t *type, git_odb_backend *be,
		      const git_oid *id)
{
	loose *b = (loose *)be;
	char path[PATH_MAX];
	unsigned char *file = NULL, *out = NULL;
	size_t flen = 0, size = 0;
	int rc;

	object_path(b, id, path, sizeof(path));
	if ((rc = slurp(path, &file, &flen)) == GIT_ENOTFOUND)
		return GIT_ENOTFOUND;
	if (rc < 0 || inflate_object(be, file, flen, type, &size, &out) < 0) {
		free(file);
		return corrupt(b, id);
	}
	free(file);
	if (!hash_matches(id, *type, out, size)) {
		git_odb_backend_data_free(be, out);
		return corrupt(b, id);
	}
	out[size] = '\0';
	*data = out;
	*len = size;
	return 0;
}

/* A header is read only to be believed: read and check the whole object. */
static int loose_read_header(size_t *len, git_object_t *type, git_odb_backend *be,
			     const git_oid *id)
{
	void *data;
	int rc = loose_read(&data, len, type, be, id);

	if (rc == 0)
		git_odb_backend_data_free(be, data);
	return rc;
}

static int loose_exists(git_odb_backend *be, const git_oid *id)
{
	char path[PATH_MAX];
	struct stat st;

	object_path((loose *)be, id, path, sizeof(path));
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/*
 * The one loose object whose id starts with the first hexlen digits of
 * prefix, in *full. 0, GIT_ENOTFOUND or GIT_EAMBIGUOUS.
 */
static int find_prefix(loose *b, const git_oid *prefix, size_t hexlen, git_oid *full)
{
	char hex[GIT_OID_HEXSZ + 1], dir[PATH_MAX];
	struct dirent *d;
	DIR *dh;
	int found = 0;

	git_oid_tostr(hex, sizeof(hex), prefix);
	if (hexlen < 2)
		return GIT_ENOTFOUND; /* libgit2 asks for at least 4 digits */
	snprintf(dir, sizeof(dir), "%s/%.2s", b->dir, hex);
	if (!(dh = opendir(dir)))
		return GIT_ENOTFOUND;
	while ((d = readdir(dh)) && found < 2) {
		char whole[GIT_OID_HEXSZ + 1];
		if (strlen(d->d_name) != GIT_OID_HEXSZ - 2 ||
		    strncmp(d->d_name, hex + 2, hexlen - 2) != 0)
			continue;
		memcpy(whole, hex, 2);
		memcpy(whole + 2, d->d_name, GIT_OID_HEXSZ - 2);
		whole[GIT_OID_HEXSZ] = '\0';
		if (git_oid_fromstr(full, whole) == 0)
			found++;
	}
	closedir(dh);
	if (found > 1) {
		git_error_set_str(GIT_ERROR_ODB, "ambiguous sha1 prefix");
		return GIT_EAMBIGUOUS;
	}
	return found ? 0 : GIT_ENOTFOUND;
}

static int loose_read_prefix(git_oid *full, void **data, size_t *len, git_object_t *type,
			     git_odb_backend *be, const git_oid *prefix, size_t hexlen)
{
	int rc;

	if (hexlen >= GIT_OID_HEXSZ) {
		git_oid_cpy(full, prefix);
		return loose_read(data, len, type, be, prefix);
	}
	if ((rc = find_prefix((loose *)be, prefix, hexlen, full)) < 0)
		return rc;
	return loose_read(data, len, type, be, full);
}

static int loose_exists_prefix(git_oid *full, git_odb_backend *be, const git_oid *prefix,
			       size_t hexlen)
{
	if (hexlen >= GIT_OID_HEXSZ) {
		git_oid_cpy(full, prefix);
		return loose_exists(be, prefix) ? 0 : GIT_ENOTFOUND;
	}
	return find_prefix((loose *)be, prefix, hexlen, full);
}

static void loose_free(git_odb_backend *be)
{
	loose *b = (loose *)be;

	free(b->dir);
	free(b->shown);
	free(b);
}

static int loose_new(git_odb_backend **out, const char *dir, const char *shown)
{
	loose *b = calloc(1, sizeof(*b));

	if (!b || git_odb_init_backend(&b->parent, GIT_ODB_BACKEND_VERSION) < 0)
		goto fail;
	b->dir = strdup(dir);
	b->shown = strdup(shown ? shown : dir);
	if (!b->dir || !b->shown)
		goto fail;
	b->parent.read = loose_read;
	b->parent.read_header = loose_read_header;
	b->parent.read_prefix = loose_read_prefix;
	b->parent.exists = loose_exists;
	b->parent.exists_prefix = loose_exists_prefix;
	b->parent.free = loose_free;
	*out = &b->parent;
	return 0;
fail:
	if (b) {
		free(b->dir);
		free(b->shown);
	}
	free(b);
	git_error_set_oom();
	return -1;
}

int rq_odb_is_loose(const git_odb_backend *b)
{
	return b && b->read == loose_read;
}

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
} packs;

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

static int packs_read(void **data, size_t *len, git_object_t *type, git_odb_backend *be,
		      const git_oid *id)
{
	packs *b = (packs *)be;
	git_odb_backend *in;
	int rc = rq_odb_packread_read(b->direct, id, data_alloc, be, data, len, type);

	if (rc > 0)
		return 0;
	if ((rc = direct_failed(b, id, rc)) <= 0)
		return rc;
	if (!(in = inner(be)))
		return GIT_ERROR;
	rc = in->read(data, len, type, in, id);
	return rc < 0 ? pack_failed(b, id, rc) : rc;
}

static int packs_read_header(size_t *len, git_object_t *type, git_odb_backend *be,
			     const git_oid *id)
{
	packs *b = (packs *)be;
	git_odb_backend *in;
	int rc = rq_odb_packread_read_header(b->direct, id, len, type);

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
	git_odb_backend *in = inner(be);

	return in ? in->exists_prefix(full, in, prefix, hexlen) : GIT_ERROR;
}

/* An abbreviated id: libgit2 finds the object, our reader reads it. */
static int packs_read_prefix(git_oid *full, void **data, size_t *len, git_object_t *type,
			     git_odb_backend *be, const git_oid *prefix, size_t hexlen)
{
	int rc = packs_exists_prefix(full, be, prefix, hexlen);

	if (rc < 0)
		return pack_failed((packs *)be, prefix, rc);
	return packs_read(data, len, type, be, full);
}

/* Our indexes answer (one lookup for every new object a replay writes,
 * which no pack has): libgit2's would map every index a second time. */
static int packs_exists(git_odb_backend *be, const git_oid *id)
{
	packs *b = (packs *)be;
	int r = rq_odb_packread_has(b->direct, id);
	git_odb_backend *in;

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
	int r = rq_odb_packread_freshen(b->direct, id);

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
		     const rq_odb_opts *o)
{
	packs *b = calloc(1, sizeof(*b));
	char pd[PATH_MAX + 8], spd[PATH_MAX + 8];

	snprintf(pd, sizeof(pd), "%s/pack", dir);
	snprintf(spd, sizeof(spd), "%s/pack", shown);
	if (!b || git_odb_init_backend(&b->parent, GIT_ODB_BACKEND_VERSION) < 0 ||
	    !(b->shown = strdup(spd)) || !(b->dir = strdup(dir)) ||
	    !(b->direct = rq_odb_packread_open_set(pd, spd, depth ? 0 : RQ_ODB_PACKSET_WRITE))) {
		if (b)
			packs_free(&b->parent);
		git_error_set_oom();
		return -1;
	}
	b->no_dedup = o && o->keep_pack;
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

int rq_odb_whole_blob(git_odb *odb, const git_oid *id, size_t min, size_t max,
		      unsigned char **entry, size_t *entry_len, unsigned char **content,
		      size_t *len)
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

/* Loose and pack backends for one objects directory (an alternate when
 * depth > 0), then the alternates it names. */
static int add_dir(git_odb *odb, const char *dir, const char *shown, const rq_odb_opts *o,
		   int depth, rq_error *err);

static int add_alternates(git_odb *odb, const char *dir, const rq_odb_opts *o, int depth,
			  rq_error *err)
{
	char path[PATH_MAX], line[PATH_MAX];
	FILE *f;
	int rc = 0, fd;

	snprintf(path, sizeof(path), "%s/info/alternates", dir);
	if ((fd = rq_fs_open_regular(path, 1, NULL)) < 0) /* (a FIFO would block) */
		return errno == ENOENT || errno == ENOTDIR
			   ? 0
			   : rq_error_set(err, RQ_E_BAD_REPO, "%s: %s", path,
					  rq_fs_strerror(errno));
	if (!(f = fdopen(fd, "re"))) {
		close(fd);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char full[PATH_MAX * 2], real[PATH_MAX];
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		snprintf(full, sizeof(full), "%s%s%s", line[0] == '/' ? "" : dir,
			 line[0] == '/' ? "" : "/", line);
		if (!realpath(full, real))
			continue; /* git skips an alternate it cannot find */
		if (o && o->root && !o->alternates_anywhere && !under_root(o->root, real))
			rc = rq_error_set(err, RQ_E_BAD_REPO,
					  "alternate object directory '%.200s' is outside the "
					  "repository root (followed only with --alternates=any)",
					  line);
		else if (depth >= ALTERNATE_DEPTH)
			rc = rq_error_set(err, RQ_E_BAD_REPO, "alternates nested more than %d deep",
					  ALTERNATE_DEPTH);
		else if (o && o->root &&
			 rq_confine_objects(real, o->alternates_anywhere ? "/" : o->root, err) < 0)
			rc = -1; /* nothing there can block a reader */
		else
			rc = add_dir(odb, real, real, o, depth + 1, err);
	}
	fclose(f);
	return rc;
}

static int add_dir(git_odb *odb, const char *dir, const char *shown, const rq_odb_opts *o,
		   int depth, rq_error *err)
{
	git_odb_backend *lb = NULL, *pb = NULL;

	if (loose_new(&lb, dir, shown) < 0)
		return rq_error_git(err, "cannot read loose objects");
	if ((depth ? git_odb_add_alternate(odb, lb, 1) : git_odb_add_backend(odb, lb, 1)) < 0) {
		lb->free(lb);
		return rq_error_git(err, "cannot read loose objects");
	}
	if (packs_new(&pb, dir, shown, depth, o) < 0)
		return rq_error_git(err, "cannot read packs");
	if ((depth ? git_odb_add_alternate(odb, pb, 2) : git_odb_add_backend(odb, pb, 2)) < 0) {
		pb->free(pb);
		return rq_error_git(err, "cannot read packs");
	}
	return add_alternates(odb, dir, o, depth, err);
}

int rq_odb_new(git_odb **out, git_repository *repo, const rq_odb_opts *opts, rq_error *err)
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
	if (add_dir(odb, dir.ptr, shown, opts, 0, err) < 0 ||
	    rq_odb_view_add(odb, repo, opts ? opts->root : NULL, err) < 0)
		goto out;
	*out = odb;
	odb = NULL;
	rc = 0;
out:
	git_odb_free(odb);
	git_buf_dispose(&dir);
	return rc;
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
