/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_loose: loose objects read and checked (see the header).
 */
#include "rq_odb_loose.h"
#include "rq_error.h"
#include "rq_hash.h"
#include "rq_odb_read.h"
#include "rq_sha1.h"

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

#define HEADER_MAX     32		 /* git's limit on a loose object's header */
#define ZLIB_RATIO_MAX 1032		 /* deflate cannot expand more than this */
#define STEP	       ((size_t)1 << 30) /* zlib's counts are 32 bits: a call's most */
#define CHUNK	       16384		 /* bytes read, or inflated only to be hashed */
#define LOOSE_NOMEM    (-2)

typedef struct loose {
	git_odb_backend parent;
	char *dir;		 /* the objects directory */
	char *shown;		 /* how messages name it */
	const rq_oid_algo *algo; /* its object format */
} loose;

static int corrupt(const loose *b, const rq_oid *id)
{
	char hex[RQ_OID_MAX_HEXSZ + 1], msg[PATH_MAX + 160];

	rq_oid_fmt(hex, id, b->algo);
	snprintf(msg, sizeof(msg), "loose object %s (stored in %s/%.2s/%s) is corrupt", hex,
		 b->shown, hex, hex + 2);
	git_error_set_str(RQ_ERROR_GIT_CORRUPT, msg);
	return GIT_ERROR;
}

/* dir/xx/<the other hexsz - 2 digits> */
static void object_path(const loose *b, const rq_oid *id, char *out, size_t n)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];

	rq_oid_fmt(hex, id, b->algo);
	snprintf(out, n, "%s/%.2s/%s", b->dir, hex, hex + 2);
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
 * One loose object being inflated from its file: the input read CHUNK
 * bytes at a time, the output handed to zlib at most STEP bytes a call
 * (its counts are 32 bits), every byte of content hashed after
 * "<type> <size>\0".
 */
typedef struct inflater {
	z_stream z;
	int fd, eof;
	unsigned char in[CHUNK];
	unsigned char head[64]; /* the first bytes out: the header */
	size_t have, hl;	/* bytes in head, of them the header */
	git_object_t type;
	size_t size, done; /* the content's size, bytes of it out */
	int ret;	   /* zlib's last answer */
	rq_hash_ctx sum;
} inflater;

/* More input for zlib when it has none left (a read error ends it). */
static void refill(inflater *f)
{
	ssize_t r;

	if (f->z.avail_in || f->eof)
		return;
	do
		r = read(f->fd, f->in, sizeof(f->in));
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		f->eof = r < 0 ? -1 : 1;
		return;
	}
	f->z.next_in = f->in;
	f->z.avail_in = (uInt)r;
}

/* Inflate into out (n bytes at most): the bytes made. */
static size_t inflate_some(inflater *f, unsigned char *out, size_t n)
{
	size_t room = n < STEP ? n : STEP;

	refill(f);
	f->z.next_out = out;
	f->z.avail_out = (uInt)room;
	f->ret = inflate(&f->z, Z_NO_FLUSH);
	return room - f->z.avail_out;
}

/* The header of the file of flen bytes at f->fd: 0, -1 damaged, or
 * LOOSE_NOMEM. */
static int inflate_header(inflater *f, const rq_oid_algo *algo, size_t flen)
{
	int r;

	if ((r = inflateInit(&f->z)) != Z_OK)
		return r == Z_MEM_ERROR ? LOOSE_NOMEM : -1;
	f->ret = Z_OK;
	while (f->have < sizeof(f->head) && f->ret == Z_OK && !memchr(f->head, '\0', f->have))
		f->have += inflate_some(f, f->head + f->have, sizeof(f->head) - f->have);
	if ((f->ret != Z_OK && f->ret != Z_STREAM_END) ||
	    (r = parse_header(f->head, f->have, &f->type, &f->size)) < 0)
		return -1;
	f->hl = (size_t)r;
	if (f->size / ZLIB_RATIO_MAX > flen || f->have - f->hl > f->size)
		return -1;
	f->done = f->have - f->hl;
	rq_hash_object_init(&f->sum, algo, git_object_type2string(f->type), f->size);
	rq_hash_update(&f->sum, f->head + f->hl, f->done);
	return 0;
}

/*
 * The rest of the content: into buf (room for all of it) when buf, else
 * through a small buffer, hashed either way. The stream must end exactly
 * at the content's size with nothing after it (a byte of room more shows a
 * longer stream); a stream that stops making progress (a truncated file)
 * ends the loop: zlib says Z_BUF_ERROR. 0, or -1 damaged.
 */
static int inflate_rest(inflater *f, unsigned char *buf)
{
	unsigned char scratch[CHUNK], extra;

	while (f->done < f->size && f->ret == Z_OK) {
		unsigned char *to = buf ? buf + f->done : scratch;
		size_t room = f->size - f->done, got;
		if (!buf && room > sizeof(scratch))
			room = sizeof(scratch);
		got = inflate_some(f, to, room);
		rq_hash_update(&f->sum, to, got);
		f->done += got;
	}
	if (f->done != f->size || (f->ret != Z_OK && f->ret != Z_STREAM_END))
		return -1;
	if (f->ret != Z_STREAM_END && inflate_some(f, &extra, 1) != 0)
		return -1;
	if (f->ret != Z_STREAM_END || f->z.avail_in)
		return -1;
	refill(f);
	return f->eof > 0 && !f->z.avail_in ? 0 : -1;
}

/* The content hashed to id. */
static int hash_matches(inflater *f, const rq_oid *id)
{
	unsigned char sum[RQ_OID_MAX_RAWSZ];

	rq_hash_final(&f->sum, sum);
	return !memcmp(sum, id->id, f->sum.algo->rawsz);
}

/* The object's file (not through a symbolic link): 0 with f->fd and
 * *flen, GIT_ENOTFOUND, or -1. */
static int open_object(const loose *b, const rq_oid *id, inflater *f, size_t *flen)
{
	char path[PATH_MAX];
	struct stat st;

	object_path(b, id, path, sizeof(path));
	if ((f->fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return errno == ENOENT || errno == ENOTDIR ? GIT_ENOTFOUND : -1;
	if (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	*flen = (size_t)st.st_size;
	return 0;
}

/*
 * Loose object id: its content (size + 1 bytes, from
 * git_odb_backend_data_alloc) in *out when out, else its type and size
 * alone (checked through a small buffer up to RQ_SHA1_CHECK_MAX bytes,
 * believed above). 0, GIT_ENOTFOUND, or GIT_ERROR with "is corrupt" or
 * out of memory set.
 */
static int loose_load(git_odb_backend *be, const rq_oid *id, git_object_t *type, size_t *size,
		      unsigned char **out)
{
	loose *b = (loose *)be;
	unsigned char *buf = NULL;
	size_t flen = 0;
	inflater f;
	int rc;

	memset(&f.z, 0, sizeof(f.z));
	f.eof = 0;
	f.have = 0;
	if ((rc = open_object(b, id, &f, &flen)) == 0 &&
	    (rc = inflate_header(&f, b->algo, flen)) == 0 && out &&
	    !(buf = git_odb_backend_data_alloc(be, f.size + 1)))
		rc = LOOSE_NOMEM;
	if (rc == 0 && buf)
		memcpy(buf, f.head + f.hl, f.done);
	if (rc == 0 && (out || f.size <= RQ_SHA1_CHECK_MAX) &&
	    (inflate_rest(&f, buf) < 0 || !hash_matches(&f, id)))
		rc = -1;
	inflateEnd(&f.z);
	if (f.fd >= 0)
		close(f.fd);
	if (rc < 0 && buf)
		git_odb_backend_data_free(be, buf);
	if (rc == GIT_ENOTFOUND)
		return rc;
	if (rc == LOOSE_NOMEM) {
		git_error_set_oom();
		return GIT_ERROR;
	}
	if (rc < 0)
		return corrupt(b, id);
	if (out) {
		buf[f.size] = '\0';
		*out = buf;
	}
	*type = f.type;
	*size = f.size;
	return 0;
}

/* ---- the direct API (either format) ---- */

int rq_odb_loose_read(git_odb_backend *be, const rq_oid *id, void **data, size_t *len,
		      git_object_t *type)
{
	unsigned char *out = NULL;
	int rc = loose_load(be, id, type, len, &out);

	if (rc == 0)
		*data = out;
	return rc;
}

int rq_odb_loose_read_header(git_odb_backend *be, const rq_oid *id, size_t *len, git_object_t *type)
{
	return loose_load(be, id, type, len, NULL);
}

int rq_odb_loose_exists(git_odb_backend *be, const rq_oid *id)
{
	char path[PATH_MAX];
	struct stat st;

	object_path((loose *)be, id, path, sizeof(path));
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* git's words for a prefix that names more than one object */
static int ambiguous(const char *hex, size_t hexlen)
{
	char msg[RQ_OID_MAX_HEXSZ + 64];

	snprintf(msg, sizeof(msg), "short object ID %.*s is ambiguous", (int)hexlen, hex);
	git_error_set_str(GIT_ERROR_ODB, msg);
	return GIT_EAMBIGUOUS;
}

int rq_odb_loose_find_prefix(git_odb_backend *be, const rq_oid *prefix, size_t hexlen, rq_oid *full)
{
	const loose *b = (const loose *)be;
	size_t hexsz = b->algo->hexsz;
	char hex[RQ_OID_MAX_HEXSZ + 1], dir[PATH_MAX], whole[RQ_OID_MAX_HEXSZ];
	struct dirent *d;
	DIR *dh;
	int found = 0;

	if (hexlen < 2 || hexlen > hexsz)
		return GIT_ENOTFOUND; /* callers ask for at least 4 digits */
	rq_oid_fmt(hex, prefix, b->algo);
	snprintf(dir, sizeof(dir), "%s/%.2s", b->dir, hex);
	if (!(dh = opendir(dir)))
		return GIT_ENOTFOUND;
	while ((d = readdir(dh)) && found < 2) {
		/* a name of the format's width only (a SHA-1 name in a
		 * SHA-256 repository is no object of it) */
		if (strlen(d->d_name) != hexsz - 2 || strncmp(d->d_name, hex + 2, hexlen - 2) != 0)
			continue;
		memcpy(whole, hex, 2);
		memcpy(whole + 2, d->d_name, hexsz - 2);
		if (rq_oid_parse(full, b->algo, whole, hexsz) == 0)
			found++;
	}
	closedir(dh);
	if (found > 1)
		return ambiguous(hex, hexlen);
	return found ? 0 : GIT_ENOTFOUND;
}

const rq_oid_algo *rq_odb_loose_algo(const git_odb_backend *be)
{
	return ((const loose *)be)->algo;
}

/* ---- libgit2's backend interface (SHA-1: its ids are 20 bytes) ---- */

/* In a SHA-256 directory every call fails, naming itself (0 in SHA-1). */
static int refused(const git_odb_backend *be, const char *what)
{
	return rq_odb_read_refused(((const loose *)be)->algo, what);
}

static int loose_read(void **data, size_t *len, git_object_t *type, git_odb_backend *be,
		      const git_oid *id)
{
	rq_oid rid;

	if (refused(be, "read of a loose object"))
		return GIT_ERROR;
	rq_oid_from_git(&rid, id);
	return rq_odb_loose_read(be, &rid, data, len, type);
}

static int loose_read_header(size_t *len, git_object_t *type, git_odb_backend *be,
			     const git_oid *id)
{
	rq_oid rid;

	if (refused(be, "read_header of a loose object"))
		return GIT_ERROR;
	rq_oid_from_git(&rid, id);
	return rq_odb_loose_read_header(be, &rid, len, type);
}

static int loose_exists(git_odb_backend *be, const git_oid *id)
{
	rq_oid rid;

	if (refused(be, "exists of a loose object"))
		return 0; /* libgit2 takes any answer for yes: the error is set */
	rq_oid_from_git(&rid, id);
	return rq_odb_loose_exists(be, &rid);
}

/* The one object of an abbreviated id (hexlen digits of prefix): 0 with
 * *full, GIT_ENOTFOUND or GIT_EAMBIGUOUS. */
static int git_prefix(git_odb_backend *be, const git_oid *prefix, size_t hexlen, git_oid *full)
{
	rq_oid p, id;
	int rc;

	if (refused(be, "an abbreviated id among the loose objects"))
		return GIT_ERROR;
	rq_oid_from_git(&p, prefix);
	if (hexlen >= GIT_OID_HEXSZ) {
		git_oid_cpy(full, prefix);
		return rq_odb_loose_exists(be, &p) ? 0 : GIT_ENOTFOUND;
	}
	if ((rc = rq_odb_loose_find_prefix(be, &p, hexlen, &id)) == 0)
		rc = rq_oid_to_git(full, &id, &rq_oid_sha1);
	return rc;
}

static int loose_read_prefix(git_oid *full, void **data, size_t *len, git_object_t *type,
			     git_odb_backend *be, const git_oid *prefix, size_t hexlen)
{
	int rc = git_prefix(be, prefix, hexlen, full);

	return rc < 0 ? rc : loose_read(data, len, type, be, full);
}

static int loose_exists_prefix(git_oid *full, git_odb_backend *be, const git_oid *prefix,
			       size_t hexlen)
{
	return git_prefix(be, prefix, hexlen, full);
}

static void loose_free(git_odb_backend *be)
{
	loose *b = (loose *)be;

	free(b->dir);
	free(b->shown);
	free(b);
}

int rq_odb_loose_open(git_odb_backend **out, const char *dir, const char *shown,
		      const rq_oid_algo *algo)
{
	loose *b = calloc(1, sizeof(*b));

	if (!b || git_odb_init_backend(&b->parent, GIT_ODB_BACKEND_VERSION) < 0)
		goto fail;
	b->algo = algo ? algo : &rq_oid_sha1;
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

int rq_odb_loose_new(git_odb_backend **out, const char *dir, const char *shown)
{
	return rq_odb_loose_open(out, dir, shown, &rq_oid_sha1);
}

int rq_odb_loose_is(const git_odb_backend *b)
{
	return b && b->read == loose_read;
}
