/* SPDX-License-Identifier: GPL-2.0-only; follows git's replace-object.c, commit.c and shallow.c */
/*
 * rq_odb_view: the objects as git reads them (see rq_odb_view.h).
 */
#include "rq_odb_view.h"
#include "rq_buf.h"
#include "rq_cobj.h"
#include "rq_mem.h"
#include "rq_odb.h"
#include "rq_odb_read.h"
#include "rq_oidmap.h"
#include "rq_repofile.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <git2/sys/odb_backend.h>

#define REPLACE_DEPTH 5 /* git's MAXREPLACEDEPTH */
#define VIEW_PRIORITY 5 /* below the memory store (10), above the readers (1, 2) */
/* git's advice as it reads a graft file (commit.c, read_graft_file), as
 * git 2.55 words it */
#define GRAFT_HINT                                                                                 \
	"hint: Support for <GIT_DIR>/info/grafts is deprecated\n"                                  \
	"hint: and will be removed in a future Git version.\n"                                     \
	"hint:\n"                                                                                  \
	"hint: Please use \"git replace --convert-graft-file\"\n"                                  \
	"hint: to convert the grafts into replace refs.\n"                                         \
	"hint:\n"                                                                                  \
	"hint: Turn this message off by running\n"                                                 \
	"hint: \"git config set advice.graftFileDeprecated false\"\n"

typedef struct graft {
	int nparents; /* -1: shallow, no parents at all */
	rq_oid *parents;
} graft;

typedef struct view {
	git_odb_backend parent;
	git_odb_backend **lower; /* the readers, in the database's order */
	size_t nlower;
	const rq_oid_algo *algo; /* the database's format: the ids' width */
	rq_oidmap replaced;	 /* original -> index in repl */
	rq_oid *repl;
	size_t nrepl, caprepl;
	rq_oidmap grafted; /* commit -> index in grafts */
	graft *grafts;
	size_t ngrafts, capgrafts;
	git_odb *stored; /* replacements only (rq_odb_view_read_stored) */
} view;

typedef struct stored_backend {
	git_odb_backend parent;
	view *v;
} stored_backend;

static int set_error(const view *v, const char *fmt, const rq_oid *a, const rq_oid *b)
{
	char ha[RQ_OID_MAX_HEXSZ + 1], hb[RQ_OID_MAX_HEXSZ + 1], msg[256];

	rq_oid_fmt(ha, a, v->algo);
	rq_oid_fmt(hb, b ? b : a, v->algo);
	snprintf(msg, sizeof(msg), fmt, ha, hb);
	git_error_set_str(RQ_ERROR_GIT_CORRUPT, msg);
	return GIT_ERROR;
}

/* ---- reading through the readers ------------------------------------------ */

static int lower_read(const view *v, const git_oid *id, void **data, size_t *len,
		      git_object_t *type)
{
	for (size_t i = 0; i < v->nlower; i++) {
		git_odb_backend *b = v->lower[i];
		int rc;
		if (!b->read)
			continue;
		rc = b->read(data, len, type, b, id);
		if (rc != GIT_ENOTFOUND && rc != GIT_PASSTHROUGH)
			return rc;
	}
	return GIT_ENOTFOUND;
}

/* The id whose object a read of id gives (git's do_lookup_replace_object).
 * 0, or an error set as git's die(). */
static int replacement(const view *v, const rq_oid *id, rq_oid *out)
{
	size_t k;

	*out = *id;
	for (int depth = 0; depth < REPLACE_DEPTH; depth++) {
		if (!rq_oidmap_get(&v->replaced, out, &k))
			return 0;
		*out = v->repl[k];
	}
	/* five replacements in a row: git gives up, whatever comes next */
	return set_error(v, "replace depth too high for object %s", id, NULL);
}

/* Object id as git's read gives it through libgit2's interface (SHA-1:
 * rq_odb_read reads at any width, rq_odb_view_redirect): the replacement's
 * data under id. */
static int read_replaced(const view *v, const git_oid *id, void **data, size_t *len,
			 git_object_t *type)
{
	rq_oid rid, target;
	git_oid gt;
	int rc;

	if (v->algo->rawsz != GIT_OID_RAWSZ) /* the readers below refuse it in their words */
		return GIT_PASSTHROUGH;
	rq_oid_from_git(&rid, id);
	if (replacement(v, &rid, &target) < 0 || rq_oid_to_git(&gt, &target, v->algo) < 0)
		return GIT_ERROR;
	rc = lower_read(v, &gt, data, len, type);
	if (rc == GIT_ENOTFOUND && !rq_oid_eq(&target, &rid))
		return set_error(v, "replacement %s not found for %s", &target, &rid);
	return rc;
}

/* ---- commits libgit2 can read --------------------------------------------- */

/* Where the parts of a commit's header are (pointers into its data). */
typedef struct commit_parts {
	const char *parents, *parents_end; /* the parent lines */
	const char *author, *author_end;   /* the first author line's value; NULL: none */
	const char *committer, *committer_end;
	const char *rest; /* what follows the ident lines, as it is */
	int nauthors;
} commit_parts;

static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

static const char *next_line(const char *p, const char *end)
{
	const char *e = line_end(p, end);
	return e < end ? e + 1 : end;
}

static int starts(const char *p, const char *end, const char *key)
{
	size_t k = strlen(key);
	return (size_t)(end - p) >= k && !memcmp(p, key, k);
}

static int hex_line(const char *p, const char *end, size_t keylen, size_t hexsz)
{
	if (line_end(p, end) - p != (ptrdiff_t)(keylen + hexsz))
		return 0;
	for (size_t i = keylen; i < keylen + hexsz; i++)
		if (!isxdigit((unsigned char)p[i]))
			return 0;
	return 1;
}

/*
 * The header as libgit2 reads it: the tree line, the parent lines, the run
 * of author lines, the committer line, in that order. -1 when the tree or a
 * parent line is damaged (git refuses those too: left to libgit2).
 */
static int split_commit(const char *data, size_t len, size_t hexsz, commit_parts *cp)
{
	const char *end = data + len, *p = data;

	memset(cp, 0, sizeof(*cp));
	if (!starts(p, end, "tree ") || !hex_line(p, end, 5, hexsz))
		return -1;
	cp->parents = p = next_line(p, end);
	while (starts(p, end, "parent ")) {
		if (!hex_line(p, end, 7, hexsz))
			return -1;
		p = next_line(p, end);
	}
	cp->parents_end = p;
	for (; starts(p, end, "author "); p = next_line(p, end))
		if (!cp->nauthors++) {
			cp->author = p + 7;
			cp->author_end = line_end(p, end);
		}
	if (starts(p, end, "committer ")) {
		cp->committer = p + 10;
		cp->committer_end = line_end(p, end);
		p = next_line(p, end);
	}
	cp->rest = p;
	return 0;
}

/*
 * An ident line libgit2 and git read alike: "Name <email> <seconds> <tz>",
 * no angle bracket in the name or the email, seconds that fit 63 bits, a
 * time zone of a sign and four digits.
 */
static int ident_canonical(const char *v, const char *e)
{
	const char *lt = memchr(v, '<', (size_t)(e - v)), *gt, *d;

	if (!lt || (lt > v && lt[-1] != ' ') || memchr(v, '>', (size_t)(lt - v)))
		return 0;
	if (!(gt = memchr(lt + 1, '>', (size_t)(e - lt - 1))) ||
	    memchr(lt + 1, '<', (size_t)(gt - lt - 1)) || gt + 1 >= e || gt[1] != ' ')
		return 0;
	for (d = gt + 2; d < e && isdigit((unsigned char)*d); d++)
		;
	if (d == gt + 2 || d - (gt + 2) > 19 ||
	    (d - (gt + 2) == 19 && memcmp(gt + 2, "9223372036854775807", 19) > 0))
		return 0;
	return e - d == 6 && d[0] == ' ' && (d[1] == '+' || d[1] == '-') &&
	       isdigit((unsigned char)d[2]) && isdigit((unsigned char)d[3]) &&
	       isdigit((unsigned char)d[4]) && isdigit((unsigned char)d[5]);
}

/* The last c in [v, e), or NULL (v NULL: none). */
static const char *last_of(const char *v, const char *e, char c)
{
	for (const char *p = e; v && p > v; p--)
		if (p[-1] == c)
			return p - 1;
	return NULL;
}

/*
 * An ident line libgit2 reads: the value up to its last '>' when a '<'
 * comes before it (what git's --author matches), else the value without
 * angle brackets and an empty email; then the date (capped at 2^63 - 1,
 * libgit2's range) and +0000.
 */
static void put_ident(rq_buf *b, const char *key, const char *v, const char *e, uint64_t when)
{
	const char *lt = last_of(v, e, '<'), *gt = last_of(v, e, '>');
	char date[48];

	rq_buf_str(b, key);
	if (lt && gt && gt > lt) {
		rq_buf_add(b, v, (size_t)(gt + 1 - v));
	} else {
		for (const char *p = v; p && p < e; p++)
			if (*p != '<' && *p != '>')
				rq_buf_add(b, p, 1);
		rq_buf_str(b, v && v < e ? " <>" : "<>");
	}
	snprintf(date, sizeof(date), " %llu +0000\n",
		 (unsigned long long)(when > INT64_MAX ? (uint64_t)INT64_MAX : when));
	rq_buf_str(b, date);
}

/* The date after the last '>' of an ident value, read as git reads a
 * committer date (0 when there is none). */
static uint64_t ident_date(const char *v, const char *e)
{
	const char *p = e;

	if (!v)
		return 0;
	while (p > v && p[-1] != '>')
		p--;
	if (p == v)
		return 0;
	while (p < e && isspace((unsigned char)*p))
		p++;
	return p < e && (isdigit((unsigned char)*p) || *p == '-') ? rq_cobj_timestamp(p, e) : 0;
}

static const graft *graft_of(const view *v, const git_oid *id)
{
	size_t k;
	return rq_oidmap_get(&v->grafted, RQ_GIT_ID(id), &k) ? &v->grafts[k] : NULL;
}

/* The parent lines: the graft's when there is one, else the commit's. */
static void put_parents(rq_buf *b, const view *v, const commit_parts *cp, const graft *g)
{
	char hex[RQ_OID_MAX_HEXSZ + 1];

	if (!g) {
		rq_buf_add(b, cp->parents, (size_t)(cp->parents_end - cp->parents));
		return;
	}
	for (int i = 0; i < g->nparents; i++) {
		rq_oid_fmt(hex, &g->parents[i], v->algo);
		rq_buf_str(b, "parent ");
		rq_buf_str(b, hex);
		rq_buf_str(b, "\n");
	}
}

/*
 * The commit as libgit2 must see it: its graft's parents, and ident lines it
 * can read with the date git reads. Left as it is (the common case) when
 * neither applies. 0, or -1 out of memory (libgit2's error set).
 */
static int fix_commit(git_odb_backend *be, const git_oid *id, void **data, size_t *len)
{
	const view *v = (const view *)be;
	const graft *g = graft_of(v, id);
	const char *d = *data, *end = d + *len;
	commit_parts cp;
	rq_buf b = {NULL, 0, 0, 0};
	void *out;

	if (split_commit(d, *len, v->algo->hexsz, &cp) < 0)
		return 0;
	if (!g && cp.nauthors == 1 && cp.committer && ident_canonical(cp.author, cp.author_end) &&
	    ident_canonical(cp.committer, cp.committer_end))
		return 0;
	rq_buf_add(&b, d, (size_t)(cp.parents - d));
	put_parents(&b, v, &cp, g);
	put_ident(&b, "author ", cp.author, cp.author_end, ident_date(cp.author, cp.author_end));
	put_ident(&b, "committer ", cp.committer, cp.committer_end,
		  rq_cobj_commit_date(cp.parents_end, end));
	rq_buf_add(&b, cp.rest, (size_t)(end - cp.rest));
	if (b.oom || !(out = git_odb_backend_data_alloc(be, b.len + 1))) {
		free(b.p);
		git_error_set_oom();
		return GIT_ERROR;
	}
	memcpy(out, b.p, b.len + 1);
	git_odb_backend_data_free(be, *data);
	*data = out;
	*len = b.len;
	free(b.p);
	return 0;
}

/* ---- the backends ------------------------------------------------------------ */

static int view_read(void **data, size_t *len, git_object_t *type, git_odb_backend *be,
		     const git_oid *id)
{
	int rc = read_replaced((const view *)be, id, data, len, type);

	if (rc < 0 || *type != GIT_OBJECT_COMMIT)
		return rc;
	if ((rc = fix_commit(be, id, data, len)) < 0) {
		git_odb_backend_data_free(be, *data);
		*data = NULL;
	}
	return rc;
}

/* Sizes and types of the objects the view changes are those it reads;
 * the rest are the readers' to answer. */
static int view_read_header(size_t *len, git_object_t *type, git_odb_backend *be, const git_oid *id)
{
	const view *v = (const view *)be;
	size_t k;
	void *data = NULL;
	int rc;

	if (v->algo->rawsz != GIT_OID_RAWSZ) /* libgit2's 20-byte ids: SHA-1 only */
		return GIT_PASSTHROUGH;
	if (!rq_oidmap_get(&v->replaced, RQ_GIT_ID(id), &k) &&
	    !rq_oidmap_get(&v->grafted, RQ_GIT_ID(id), &k))
		return GIT_PASSTHROUGH;
	rc = view_read(&data, len, type, be, id);
	git_odb_backend_data_free(be, data);
	return rc;
}

/* The readers refresh themselves; the view is then asked again. */
static int view_refresh(git_odb_backend *be)
{
	(void)be;
	return 0;
}

static void view_free(git_odb_backend *be)
{
	view *v = (view *)be;

	git_odb_free(v->stored);
	rq_oidmap_free(&v->replaced);
	rq_oidmap_free(&v->grafted);
	for (size_t i = 0; i < v->ngrafts; i++)
		free(v->grafts[i].parents);
	free(v->grafts);
	free(v->repl);
	free(v->lower);
	free(v);
}

static int stored_read(void **data, size_t *len, git_object_t *type, git_odb_backend *be,
		       const git_oid *id)
{
	return read_replaced(((stored_backend *)be)->v, id, data, len, type);
}

static void stored_free(git_odb_backend *be)
{
	free(be);
}

int rq_odb_view_read_stored(git_odb_object **out, git_odb *odb, const rq_oid *oid)
{
	size_t n = git_odb_num_backends(odb);
	git_oid gid, *id = &gid;

	if (rq_oid_to_git(&gid, oid, rq_odb_algo(odb)) < 0) {
		git_error_set_str(GIT_ERROR_ODB, "libgit2 reads SHA-1 objects only");
		return GIT_ERROR;
	}

	for (size_t i = 0; i < n; i++) {
		git_odb_backend *b = NULL;
		int rc;
		if (git_odb_get_backend(&b, odb, i) < 0 || !b || b->read != view_read)
			continue;
		rc = git_odb_read(out, ((view *)b)->stored, id);
		if (rc != GIT_ENOTFOUND)
			return rc;
		break;
	}
	return git_odb_read(out, odb, id);
}

/* ---- what the view substitutes -------------------------------------------- */

static int add_replacement(view *v, const rq_oid *from, const rq_oid *to)
{
	rq_oid *nv = rq_mem_grow(v->repl, &v->caprepl, v->nrepl + 1, sizeof(*nv), 8);

	if (!nv)
		return -1;
	v->repl = nv;
	v->repl[v->nrepl] = *to;
	if (rq_oidmap_put(&v->replaced, from, v->nrepl) < 0)
		return -1;
	v->nrepl++;
	return 0;
}

/* Are replace refs read? Not with GIT_NO_REPLACE_OBJECTS or
 * core.useReplaceRefs=false (git_default_core_config). */
static int replace_refs_on(git_repository *repo)
{
	git_config *cfg = NULL;
	int on = 1, b;

	if (getenv("GIT_NO_REPLACE_OBJECTS"))
		return 0;
	if (git_repository_config_snapshot(&cfg, repo) == 0 &&
	    git_config_get_bool(&b, cfg, "core.useReplaceRefs") == 0)
		on = b;
	git_config_free(cfg);
	return on;
}

typedef struct replace_load {
	view *v;
	size_t baselen;
	rq_error *err;
} replace_load;

/*
 * One replace ref (git's register_replace_ref) and the id it resolves to:
 * the replaced id is the hex at the start of the name's last component (a
 * name without one is skipped, as git warns and skips it); two refs for
 * one id are git's fatal error.
 */
static int take_replace_ref(const char *refname, const rq_oid *to, void *arg)
{
	replace_load *l = arg;
	const char *name = refname + l->baselen, *slash = strrchr(name, '/');
	const char *hex = slash ? slash + 1 : name;
	rq_oid from;
	size_t k;

	if (rq_oid_parse_git(&from, l->v->algo, hex, strlen(hex)) < 0)
		return 0;
	if (rq_oidmap_get(&l->v->replaced, &from, &k))
		return rq_error_set(l->err, RQ_E_BAD_REPO, "duplicate replace ref: %s", name);
	if (add_replacement(l->v, &from, to) < 0)
		return rq_error_set(l->err, RQ_E_NOMEM, "out of memory");
	return 0;
}

static int load_replace_refs(view *v, git_repository *repo, rq_odb_refs_fn refs, void *refs_arg,
			     rq_error *err)
{
	const char *base = getenv("GIT_REPLACE_REF_BASE");
	replace_load l = {.v = v, .err = err};
	int rc;

	if (!base || !*base)
		base = "refs/replace/";
	l.baselen = strlen(base);
	if (!refs || !replace_refs_on(repo) || l.baselen + 2 > 1024)
		return 0;
	rc = refs(refs_arg, base, take_replace_ref, &l, err);
	if (rc < 0 && err->code != RQ_E_BAD_REPO && err->code != RQ_E_NOMEM) {
		char msg[RQ_ERROR_MSG_MAX];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		return rq_error_set(err, RQ_E_GIT, "cannot read the replace refs: %s", msg);
	}
	return rc < 0 ? -1 : 0;
}

/* Register a graft: a shallow one (nparents -1) replaces a graft of the
 * same commit, another keeps the first (git's ignore_dups). 0, 1 when
 * it was a graft file's second line for the commit, -1 out of memory. */
static int add_graft(view *v, const rq_oid *id, int nparents, const rq_oid *parents)
{
	graft *nv;
	size_t k;

	if (rq_oidmap_get(&v->grafted, id, &k)) {
		if (nparents >= 0)
			return 1;
		v->grafts[k].nparents = -1;
		return 0;
	}
	if (!(nv = rq_mem_grow(v->grafts, &v->capgrafts, v->ngrafts + 1, sizeof(*nv), 8)))
		return -1;
	v->grafts = nv;
	nv[v->ngrafts].nparents = nparents;
	nv[v->ngrafts].parents = NULL;
	if (nparents > 0) {
		if (!(nv[v->ngrafts].parents = malloc((size_t)nparents * sizeof(rq_oid))))
			return -1;
		memcpy(nv[v->ngrafts].parents, parents, (size_t)nparents * sizeof(rq_oid));
	}
	if (rq_oidmap_put(&v->grafted, id, v->ngrafts) < 0) {
		free(nv[v->ngrafts].parents);
		return -1;
	}
	v->ngrafts++;
	return 0;
}

/*
 * One line of the graft file (git's read_graft_line): "<commit>
 * <parent>...", ids of the format's width (a 40-digit line in a SHA-256
 * repository is bad data, as in git) apart by one white-space character;
 * blank lines and '#' comments are nothing. n: the line without its
 * trailing white space. 0 taken or nothing, GRAFT_BAD (git says "bad
 * graft data" and goes on), GRAFT_DUP (git's "duplicate graft data": the
 * first graft stays), -1 out of memory.
 */
enum { GRAFT_BAD = 1, GRAFT_DUP = 2 };
static int graft_line(view *v, const char *line, size_t n)
{
	size_t hx = v->algo->hexsz, k;
	rq_oid id, *parents;
	int rc;

	if (!n || line[0] == '#')
		return 0;
	if (n < hx || (n - hx) % (hx + 1) || rq_oid_parse_git(&id, v->algo, line, n) < 0)
		return GRAFT_BAD;
	k = (n - hx) / (hx + 1);
	if (k > INT32_MAX || !(parents = malloc((k ? k : 1) * sizeof(*parents))))
		return -1;
	for (size_t i = 0; i < k; i++) {
		const char *p = line + hx + i * (hx + 1);
		if (!isspace((unsigned char)p[0]) ||
		    rq_oid_parse_git(&parents[i], v->algo, p + 1, hx) < 0) {
			free(parents);
			return GRAFT_BAD;
		}
	}
	rc = add_graft(v, &id, (int)k, parents);
	free(parents);
	return rc == 1 ? GRAFT_DUP : rc;
}

/* A shallow line (shallow.c): an id at its start, or git's fatal error
 * (the line as git's fgets gives it, with its newline). */
static int shallow_line(view *v, const char *line, size_t n, int nl, rq_error *err)
{
	rq_oid id;

	if (rq_oid_parse_git(&id, v->algo, line, n) < 0)
		return rq_error_set(err, RQ_E_BAD_REPO, "bad shallow line: %.*s%s",
				    (int)(n > 200 ? 200 : n), line, nl ? "\n" : "");
	return add_graft(v, &id, -1, NULL) < 0 ? rq_error_set(err, RQ_E_NOMEM, "out of memory") : 0;
}

/* What a graft line said (graft_line's GRAFT_BAD, GRAFT_DUP), in git's
 * words, to say (NULL: nothing). */
static void say_graft(rq_odb_view_say_fn say, void *arg, int what, const char *line, size_t n)
{
	char msg[RQ_OID_MAX_HEXSZ * 4 + 64];

	if (!say || !what)
		return;
	snprintf(msg, sizeof(msg), "error: %s graft data: %.*s\n",
		 what == GRAFT_BAD ? "bad" : "duplicate", (int)(n > 512 ? 512 : n), line);
	say(arg, msg);
}

/* Each line of the file text (len bytes) to graft_line (what it says to
 * say) or shallow_line. 0, or -1 with err set. */
static int read_lines(view *v, const char *text, size_t len, int shallow, rq_odb_view_say_fn say,
		      void *arg, rq_error *err)
{
	int rc = 0;

	for (const char *p = text, *end = text + len; rc == 0 && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		size_t n = (size_t)(e - p);
		if (shallow) {
			rc = shallow_line(v, p, n, nl != NULL, err);
		} else {
			while (n && isspace((unsigned char)p[n - 1]))
				n--;
			if ((rc = graft_line(v, p, n)) < 0)
				return rq_error_set(err, RQ_E_NOMEM, "out of memory");
			say_graft(say, arg, rc, p, n);
			rc = 0;
		}
		p = nl ? nl + 1 : end;
	}
	return rc;
}

/* GIT_ADVICE as git's git_env_bool reads it: advice is on unless it is
 * false, no, off, an empty value or a number that is 0. */
static int advice_on(void)
{
	const char *e = getenv("GIT_ADVICE");
	char *end;
	long n;

	if (!e)
		return 1;
	if (!*e || !strcasecmp(e, "false") || !strcasecmp(e, "no") || !strcasecmp(e, "off"))
		return 0;
	n = strtol(e, &end, 10);
	return end == e || *end || n != 0;
}

/* The file at path (absent: nothing) read as above. 1 when it was there,
 * 0 when not, -1 with err set. */
static int read_graft_file(view *v, const char *path, const char *root, const char *shown,
			   int shallow, rq_odb_view_say_fn say, void *arg, rq_error *err)
{
	char *text;
	size_t len;
	int rc = rq_repofile_read(path, root, 0, SIZE_MAX, shown, &text, &len, err);

	if (rc <= 0)
		return rc;
	if (!shallow && say && advice_on()) /* git's advice as it opens the file */
		say(arg, GRAFT_HINT);
	rc = read_lines(v, text, len, shallow, say, arg, err);
	free(text);
	return rc < 0 ? -1 : 1;
}

/* The graft file's path (GIT_GRAFT_FILE, when no root): 0, or -1 when the
 * repository has no common directory. */
static int graft_path(git_repository *repo, const char *root, char *path, size_t size)
{
	const char *common = git_repository_commondir(repo), *env = getenv("GIT_GRAFT_FILE");

	if (!common)
		return -1;
	if (!root && env && *env)
		snprintf(path, size, "%s", env);
	else
		snprintf(path, size, "%s/info/grafts", common);
	return 0;
}

/* git's prepare_commit_graft(): the graft file, then the shallow file. */
static int load_grafts(view *v, git_repository *repo, const char *root, rq_error *err)
{
	char path[4096];

	if (graft_path(repo, root, path, sizeof(path)) < 0)
		return 0;
	if (read_graft_file(v, path, root, "info/grafts", 0, NULL, NULL, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/shallow", git_repository_commondir(repo));
	return read_graft_file(v, path, root, "shallow", 1, NULL, NULL, err) < 0 ? -1 : 0;
}

int rq_odb_view_graft_notes(git_repository *repo, const char *root, const rq_oid_algo *algo,
			    rq_odb_view_say_fn say, void *arg, rq_error *err)
{
	view v;
	char path[4096];
	int rc;

	memset(&v, 0, sizeof(v));
	v.algo = algo ? algo : &rq_oid_sha1;
	rq_oidmap_init(&v.grafted);
	if (graft_path(repo, root, path, sizeof(path)) < 0)
		return 0;
	rc = read_graft_file(&v, path, root, "info/grafts", 0, say, arg, err);
	rq_oidmap_free(&v.grafted);
	for (size_t i = 0; i < v.ngrafts; i++)
		free(v.grafts[i].parents);
	free(v.grafts);
	return rc < 0 ? -1 : 0;
}

static int make_stored(view *v, rq_error *err)
{
	stored_backend *sb;

	if (git_odb_new(&v->stored) < 0)
		return rq_error_git(err, "cannot make an object database");
	if (!(sb = calloc(1, sizeof(*sb))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	sb->parent.version = GIT_ODB_BACKEND_VERSION;
	sb->parent.read = stored_read;
	sb->parent.free = stored_free;
	sb->v = v;
	if (git_odb_add_backend(v->stored, &sb->parent, 1) < 0) {
		free(sb);
		return rq_error_git(err, "cannot make an object database");
	}
	return 0;
}

static int take_readers(view *v, git_odb *odb, rq_error *err)
{
	size_t n = git_odb_num_backends(odb);

	if (!(v->lower = calloc(n ? n : 1, sizeof(*v->lower))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		git_odb_backend *b = NULL;
		if (git_odb_get_backend(&b, odb, i) == 0 && b)
			v->lower[v->nlower++] = b;
	}
	return 0;
}

int rq_odb_view_add(git_odb *odb, git_repository *repo, const char *root, rq_odb_refs_fn refs,
		    void *refs_arg, rq_error *err)
{
	view *v = calloc(1, sizeof(*v));

	if (!v)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	rq_oidmap_init(&v->replaced);
	rq_oidmap_init(&v->grafted);
	v->algo = rq_odb_algo(odb); /* ids at the database's width */
	v->parent.version = GIT_ODB_BACKEND_VERSION;
	v->parent.read = view_read;
	v->parent.read_header = view_read_header;
	v->parent.refresh = view_refresh;
	v->parent.free = view_free;
	if (take_readers(v, odb, err) < 0 || load_replace_refs(v, repo, refs, refs_arg, err) < 0 ||
	    load_grafts(v, repo, root, err) < 0 || make_stored(v, err) < 0) {
		view_free(&v->parent);
		return -1;
	}
	if (git_odb_add_backend(odb, &v->parent, VIEW_PRIORITY) < 0) {
		view_free(&v->parent);
		return rq_error_git(err, "cannot add the object view");
	}
	return 0;
}

int rq_odb_view_redirect(const git_odb_backend *b, const rq_oid *id, rq_oid *to)
{
	const view *v = (const view *)b;

	if (!b || b->read != view_read)
		return 0;
	*to = *id;
	if (!v->nrepl)
		return 1;
	return replacement(v, id, to) < 0 ? -1 : 1;
}

git_odb_backend *rq_odb_view_find(git_odb *odb)
{
	size_t n = odb ? git_odb_num_backends(odb) : 0;

	for (size_t i = 0; i < n; i++) {
		git_odb_backend *b = NULL;
		if (git_odb_get_backend(&b, odb, i) == 0 && b && b->read == view_read)
			return b;
	}
	return NULL;
}

long rq_odb_view_graft(const git_odb_backend *b, const rq_oid *id, rq_oid *parents, size_t max)
{
	const view *v = (const view *)b;
	size_t k;

	if (!b || b->read != view_read || !v->ngrafts)
		return -1;
	if (!id) {
		long most = 0;
		for (size_t j = 0; j < v->ngrafts; j++)
			most = v->grafts[j].nparents > most ? v->grafts[j].nparents : most;
		return most;
	}
	if (!rq_oidmap_get(&v->grafted, id, &k))
		return -1;
	if (v->grafts[k].nparents < 0)
		return 0;
	for (size_t j = 0; j < (size_t)v->grafts[k].nparents && j < max; j++)
		parents[j] = v->grafts[k].parents[j];
	return v->grafts[k].nparents;
}
