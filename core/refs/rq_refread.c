/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_refread: one ref of a files repository (see the header).
 *
 * The rules followed are git's refs/files-backend.c (files_read_raw_ref,
 * parse_loose_ref_contents: the content trimmed at its end, "ref:" and
 * white space, hex digits of either case then the end or white space, a
 * symbolic link into refs/ taken as a symbolic ref, a directory read as
 * no loose ref), refs.c (refs_resolve_ref_unsafe's SYMREF_MAXDEPTH,
 * is_per_worktree_ref) and refs/packed-backend.c (the header and its
 * "sorted" trait, find_start_of_record/find_end_of_record for the search
 * by halves, the "^" peeled lines, an unterminated last line refused).
 * The code is replayq's own.
 */
#define _GNU_SOURCE
#include "rq_refread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_fs.h"
#include "rq_refname.h"

#define LOOSE_MAX 4096 /* more of a loose ref is never needed */
#define HEADER	  "# pack-refs with: "

/* git's isspace. */
static int ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int rq_refread_own(const char *ref)
{
	return strncmp(ref, "refs/", 5) != 0 || rq_refname_worktree_prefix(ref);
}

/* 1 when name may be read: git's check-ref-format with --allow-onelevel. */
static int name_ok(const char *name)
{
	char two[LOOSE_MAX + 8];

	if (rq_refname_format_ok(name))
		return 1;
	if (!*name || strchr(name, '/') || strlen(name) > LOOSE_MAX)
		return 0;
	snprintf(two, sizeof(two), "refs/%s", name);
	return rq_refname_format_ok(two);
}

#define BROKEN ": reference broken"

static int broken(rq_error *err, const char *ref)
{
	return rq_error_set(err, RQ_E_BAD_REPO, "unable to resolve reference '%s'" BROKEN, ref);
}

int rq_refread_is_broken(const rq_error *err)
{
	size_t n = strlen(err->msg), k = strlen(BROKEN);

	return err->code == RQ_E_BAD_REPO && n > k && !strcmp(err->msg + n - k, BROKEN);
}

static int io_error(rq_error *err, const char *ref, const char *what, int e)
{
	rq_error_set(err, RQ_E_IO, "cannot read ref '%s': %s: %s", ref, what, strerror(e));
	errno = e;
	return -1;
}

/* A loose ref's content buf[0..n) (NUL after it; whole: not cut at
 * LOOSE_MAX) as rq_refread_raw answers. */
static int parse_loose(const rq_refread *r, const char *ref, char *buf, size_t n, int whole,
		       rq_oid *id, char **target, rq_error *err)
{
	size_t hexsz = r->algo->hexsz;

	while (n && ws(buf[n - 1]))
		buf[--n] = '\0';
	if (!strncmp(buf, "ref:", 4)) {
		const char *t = buf + 4;
		while (ws(*t))
			t++;
		if (!whole || !name_ok(t))
			return broken(err, ref);
		if (!(*target = strdup(t)))
			return rq_error_set(err, RQ_E_NOMEM, "out of memory");
		return RQ_REFREAD_FOUND;
	}
	if (rq_oid_parse_git(id, r->algo, buf, n) < 0 || (buf[hexsz] && !ws(buf[hexsz])))
		return broken(err, ref);
	return RQ_REFREAD_FOUND;
}

/* A symbolic link where the ref is, as "ref: <its target>" into buf: only
 * a link into refs/ is a ref (git's rule; replayq follows no link). */
static int read_link(int dir, const char *leaf, const char *ref, char *buf, size_t size, size_t *n,
		     rq_error *err)
{
	ssize_t k = readlinkat(dir, leaf, buf + 5, size - 6);

	if (k < 0)
		return io_error(err, ref, "readlink", errno);
	buf[5 + k] = '\0';
	if ((size_t)k >= size - 6 || strncmp(buf + 5, "refs/", 5) || !rq_refname_format_ok(buf + 5))
		return rq_error_set(err, RQ_E_BAD_REPO,
				    "cannot read ref '%s': a symbolic link out of refs/", ref);
	memcpy(buf, "ref: ", 5);
	*n = 5 + (size_t)k;
	return 0;
}

/* Up to size - 1 bytes of fd (a regular file) into buf, NUL-terminated:
 * 0 (*whole when that is all of it), or -1 with errno. */
static int read_some(int fd, char *buf, size_t size, size_t *n, int *whole)
{
	ssize_t k = 0;
	char more;

	*n = 0;
	while (*n < size - 1 && (k = read(fd, buf + *n, size - 1 - *n)) != 0) {
		if (k < 0 && errno != EINTR)
			return -1;
		*n += k > 0 ? (size_t)k : 0;
	}
	buf[*n] = '\0';
	*whole = k == 0 || read(fd, &more, 1) == 0;
	return 0;
}

/* ref's loose file into buf: 0 (*n bytes), RQ_REFREAD_MISSING (none, or a
 * directory), -1 with err set. */
static int read_loose(const rq_refread *r, const char *ref, char *buf, size_t size, size_t *n,
		      int *whole, rq_error *err)
{
	const char *leaf;
	struct stat st;
	int dir = rq_fs_parent_at(rq_refread_own(ref) ? r->own : r->common, ref, &leaf), fd, e;

	*whole = 1;
	if (dir < 0)
		return errno == ENOENT || errno == ENOTDIR ? RQ_REFREAD_MISSING
							   : io_error(err, ref, "open", errno);
	e = fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 ? errno : 0;
	if (e || S_ISDIR(st.st_mode)) {
		e = e ? e : ENOENT; /* a directory: no loose ref */
		close(dir);
		return e == ENOENT || e == ENOTDIR ? RQ_REFREAD_MISSING
						   : io_error(err, ref, "stat", e);
	}
	if (S_ISLNK(st.st_mode)) {
		e = read_link(dir, leaf, ref, buf, size, n, err);
		close(dir);
		return e;
	}
	fd = openat(dir, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	e = errno;
	close(dir);
	if (fd < 0)
		return e == ENOENT ? RQ_REFREAD_MISSING : io_error(err, ref, "open", e);
	e = fstat(fd, &st) < 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
	if (e || read_some(fd, buf, size, n, whole) < 0) {
		e = e ? e : errno;
		close(fd);
		return io_error(err, ref, "not a regular file or unreadable", e);
	}
	close(fd);
	return 0;
}

/* ---- packed-refs ---- */

/* packed-refs mapped, and what is looked for in it. */
typedef struct packed {
	const char *buf, *end;
	const rq_oid_algo *algo;
	const char *ref;
	size_t reflen;
} packed;

static int bad_line(rq_error *err, const char *what, const char *p, const char *eol)
{
	return rq_error_set(err, RQ_E_BAD_REPO, "%s in packed-refs: '%.*s'", what,
			    (int)(eol - p > 200 ? 200 : eol - p), p);
}

/* The "<hex> <name>" line at p (up to eol): its id into *id; its name's
 * order against the ref looked for (<0, 0, >0). 0, or -1 malformed. */
static int record(const packed *k, const char *p, const char *eol, rq_oid *id, int *cmp)
{
	size_t hexsz = k->algo->hexsz, nlen, m;
	const char *name = p + hexsz + 1;

	if ((size_t)(eol - p) < hexsz + 2 || !ws(p[hexsz]) ||
	    rq_oid_parse_git(id, k->algo, p, hexsz) < 0)
		return -1;
	nlen = (size_t)(eol - name);
	m = nlen < k->reflen ? nlen : k->reflen;
	*cmp = memcmp(name, k->ref, m);
	if (!*cmp)
		*cmp = (nlen > k->reflen) - (nlen < k->reflen);
	return 0;
}

/* 1 when the line at p (up to eol) is a well-formed "^<hex>" line. */
static int peeled_ok(const packed *k, const char *p, const char *eol)
{
	rq_oid peeled;

	return (size_t)(eol - p) == k->algo->hexsz + 1 &&
	       rq_oid_parse_git(&peeled, k->algo, p + 1, k->algo->hexsz) == 0;
}

/* Every line from p on checked, the first record of the ref taken. */
static int by_lines(const packed *k, const char *p, rq_oid *id, rq_error *err)
{
	int prev = 0, found = 0, cmp;
	rq_oid cur;

	while (p < k->end) {
		const char *eol = memchr(p, '\n', (size_t)(k->end - p));
		if (*p == '^') {
			if (!prev || !peeled_ok(k, p, eol))
				return bad_line(err, "unexpected line", p, eol);
			prev = 0;
		} else if (record(k, p, eol, &cur, &cmp) < 0) {
			return bad_line(err, "unexpected line", p, eol);
		} else {
			prev = 1;
			if (!found && cmp == 0) {
				*id = cur;
				found = 1;
			}
		}
		p = eol + 1;
	}
	return found ? RQ_REFREAD_FOUND : RQ_REFREAD_MISSING;
}

/* The start of the record whose line holds p (peeled lines belong to the
 * record before them). */
static const char *record_start(const char *lo, const char *p)
{
	while (p > lo && p[-1] != '\n')
		p--;
	while (p > lo && *p == '^') {
		p--;
		while (p > lo && p[-1] != '\n')
			p--;
	}
	return p;
}

/* Past the record at p and its peeled line. */
static const char *record_end(const char *p, const char *hi)
{
	p = (const char *)memchr(p, '\n', (size_t)(hi - p)) + 1;
	while (p < hi && *p == '^')
		p = (const char *)memchr(p, '\n', (size_t)(hi - p)) + 1;
	return p;
}

/* The ref searched by halves in sorted records from lo on. */
static int by_halves(const packed *k, const char *lo, rq_oid *id, rq_error *err)
{
	const char *hi = k->end;

	while (lo < hi) {
		const char *rec = record_start(lo, lo + (hi - lo) / 2);
		const char *eol = memchr(rec, '\n', (size_t)(hi - rec));
		int cmp;
		if (record(k, rec, eol, id, &cmp) < 0)
			return bad_line(err, "unexpected line", rec, eol);
		if (cmp == 0)
			return RQ_REFREAD_FOUND;
		if (cmp < 0)
			lo = record_end(rec, hi);
		else
			hi = rec;
	}
	return RQ_REFREAD_MISSING;
}

/* 1 when the header's traits (p up to eol) hold "sorted". */
static int sorted_trait(const char *p, const char *eol)
{
	while (p < eol) {
		const char *w = p;
		while (p < eol && *p != ' ')
			p++;
		if (p - w == 6 && !memcmp(w, "sorted", 6))
			return 1;
		p++;
	}
	return 0;
}

/* The ref in packed-refs' bytes k->buf..k->end (not empty). */
static int packed_search(const packed *k, rq_oid *id, rq_error *err)
{
	const char *p = k->buf, *eol;

	if (k->end[-1] != '\n') {
		for (p = k->end - 1; p > k->buf && p[-1] != '\n'; p--)
			;
		return bad_line(err, "unterminated line", p, k->end);
	}
	if (*p != '#')
		return by_lines(k, p, id, err);
	eol = memchr(p, '\n', (size_t)(k->end - p));
	if ((size_t)(eol - p) < strlen(HEADER) || memcmp(p, HEADER, strlen(HEADER)))
		return bad_line(err, "unknown header", p, eol);
	if (sorted_trait(p + strlen(HEADER), eol))
		return by_halves(k, eol + 1, id, err);
	return by_lines(k, eol + 1, id, err);
}

/* ref in the common directory's packed-refs. */
static int packed_lookup(const rq_refread *r, const char *ref, rq_oid *id, rq_error *err)
{
	packed k = {.algo = r->algo, .ref = ref, .reflen = strlen(ref)};
	struct stat st;
	void *map;
	int fd = rq_fs_open_at(r->common, "packed-refs", O_RDONLY | O_NONBLOCK, 0), rc;

	if (fd < 0)
		return errno == ENOENT ? RQ_REFREAD_MISSING
				       : io_error(err, ref, "packed-refs", errno);
	rc = fstat(fd, &st) < 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
	if (rc) {
		close(fd);
		return io_error(err, ref, "packed-refs is not a regular file", rc);
	}
	if (st.st_size == 0) {
		close(fd);
		return RQ_REFREAD_MISSING;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	rc = errno;
	close(fd);
	if (map == MAP_FAILED)
		return io_error(err, ref, "packed-refs", rc);
	k.buf = map;
	k.end = k.buf + st.st_size;
	rc = packed_search(&k, id, err);
	munmap(map, (size_t)st.st_size);
	return rc;
}

/* ---- one ref, and its chain ---- */

int rq_refread_raw(const rq_refread *r, const char *ref, rq_oid *id, char **target, rq_error *err)
{
	char buf[LOOSE_MAX + 1];
	size_t n = 0;
	int whole, rc;

	*target = NULL;
	if (!name_ok(ref))
		return rq_error_set(err, RQ_E_BAD_REF, "'%s' is not a valid refname", ref);
	rc = read_loose(r, ref, buf, sizeof(buf), &n, &whole, err);
	if (rc == 0)
		return parse_loose(r, ref, buf, n, whole, id, target, err);
	return rc == RQ_REFREAD_MISSING ? packed_lookup(r, ref, id, err) : -1;
}

int rq_refread_resolve(const rq_refread *r, const char *ref, rq_oid *id, rq_error *err)
{
	char *name = NULL, *target;

	for (int depth = 0; depth < RQ_REFREAD_MAXDEPTH; depth++) {
		int rc = rq_refread_raw(r, name ? name : ref, id, &target, err);
		free(name);
		if (rc != RQ_REFREAD_FOUND || !target)
			return rc;
		name = target;
	}
	free(name);
	return rq_error_set(err, RQ_E_BAD_REPO,
			    "unable to resolve reference '%s': more than %d symbolic refs", ref,
			    RQ_REFREAD_MAXDEPTH - 1);
}
