/* SPDX-License-Identifier: GPL-2.0-only; follows git's attr.c, dir.c (path patterns) and ll-merge.c
 */
/*
 * rq_attr: the merge driver of a path from git's attribute files (see
 * rq_attr.h).
 */
#include "rq_attr.h"
#include "rq_hindex.h"
#include "rq_mem.h"
#include "rq_ortodb.h"
#include "rq_repofile.h"
#include "rq_revname.h"
#include "rq_tree.h"
#include "rq_wildmatch.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ATTR_LINE_MAX 2048		     /* git skips longer lines */
#define ATTR_FILE_MAX (100u * 1024u * 1024u) /* and larger files */
#define MACRO_DEPTH   64		     /* macros expanding macros: bounded here */

enum { V_TRUE, V_FALSE, V_UNSET, V_STRING };

/* One "name", "-name", "!name" or "name=value" of a line. */
typedef struct assign {
	char *name;
	int kind;
	char *value; /* V_STRING */
} assign;

/* A line: a path pattern (or a macro's name) and what it assigns. */
typedef struct rule {
	char *pattern;
	size_t plen;
	int is_macro, nodir, mustbedir;
	assign *a;
	size_t na;
} rule;

/* One attribute file; origin: the directory its patterns are relative to. */
typedef struct frame {
	char *origin;
	rule *rules;
	size_t n, cap;
} frame;

typedef struct user_driver {
	char *name;
	int has_cmd;
} user_driver;

struct rq_attr {
	git_repository *repo;
	const rq_oid_algo *algo;    /* the repository's object format */
	rq_odb_read *const *reader; /* the merger's (rq_ortodb.h) */
	const rq_tree_reader *trees;
	char *root, *workdir, *common;
	int ignorecase, loaded, source_known, have_source;
	rq_oid source; /* attr.tree / GIT_ATTR_SOURCE */
	char *merge_default, *attr_tree, *global_file;
	user_driver *drivers;
	size_t ndrivers, capdrivers;
	frame builtin, system, global, info;
	frame **dirs; /* the .gitattributes of directories, read once */
	size_t ndirs, capdirs;
	rq_hindex dir_index; /* over dirs, by origin */
};

static void rule_free(rule *r)
{
	for (size_t i = 0; i < r->na; i++) {
		free(r->a[i].name);
		free(r->a[i].value);
	}
	free(r->a);
	free(r->pattern);
}

static void frame_clear(frame *f)
{
	for (size_t i = 0; i < f->n; i++)
		rule_free(&f->rules[i]);
	free(f->rules);
	free(f->origin);
	memset(f, 0, sizeof(*f));
}

void rq_attr_free(rq_attr *a)
{
	if (!a)
		return;
	frame_clear(&a->builtin);
	frame_clear(&a->system);
	frame_clear(&a->global);
	frame_clear(&a->info);
	for (size_t i = 0; i < a->ndirs; i++) {
		frame_clear(a->dirs[i]);
		free(a->dirs[i]);
	}
	for (size_t i = 0; i < a->ndrivers; i++)
		free(a->drivers[i].name);
	free(a->drivers);
	free(a->dirs);
	free(a->dir_index.slot);
	free(a->root);
	free(a->workdir);
	free(a->common);
	free(a->merge_default);
	free(a->attr_tree);
	free(a->global_file);
	free(a);
}

/* ---- reading attribute files ------------------------------------------------ */

static const char BLANK[] = " \t\r\n";

/* git's attr_name_valid(): [-._0-9A-Za-z], not starting with '-'; names
 * starting with "builtin_" are git's own. */
static int name_valid(const char *s, size_t n)
{
	if (!n || *s == '-' || (n >= 8 && !memcmp(s, "builtin_", 8)))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '.' && s[i] != '_')
			return 0;
	return 1;
}

/* One assignment token [s, s + n) into as. 0, or -1 when not valid (git
 * drops the whole line then) or out of memory. */
static int parse_assign(const char *s, size_t n, assign *as)
{
	const char *eq = memchr(s, '=', n);
	size_t nl = eq ? (size_t)(eq - s) : n;

	memset(as, 0, sizeof(*as));
	as->kind = eq ? V_STRING : V_TRUE;
	if (*s == '-' || *s == '!') {
		as->kind = *s == '-' ? V_FALSE : V_UNSET;
		s++;
		nl--;
		n--;
	}
	if (!name_valid(s, nl) || (eq && as->kind != V_STRING))
		return -1;
	if (!(as->name = strndup(s, nl)))
		return -1;
	if (eq && !(as->value = strndup(eq + 1, n - nl - 1))) {
		free(as->name);
		return -1;
	}
	return 0;
}

/* The assignments after the pattern. 0, or -1 (the line is dropped). */
static int parse_states(const char *p, const char *e, rule *r)
{
	while (p < e) {
		size_t n;
		assign *nv;
		p += strspn(p, BLANK);
		if (p >= e)
			break;
		n = strcspn(p, BLANK);
		if (p + n > e)
			n = (size_t)(e - p);
		if (!(nv = realloc(r->a, (r->na + 1) * sizeof(*nv))))
			return -1;
		r->a = nv;
		if (parse_assign(p, n, &r->a[r->na]) < 0)
			return -1;
		r->na++;
		p += n;
	}
	return 0;
}

/* git's unquote_c_style() of the pattern at p ('"'): the text, *end past
 * the closing quote; NULL when it is no valid quoted string. */
static char *unquote(const char *p, const char *e, const char **end)
{
	char *out = malloc((size_t)(e - p) + 1), *o = out;
	static const char esc[] = "abfnrtv", val[] = "\a\b\f\n\r\t\v";

	for (p++; out && p < e && *p != '"'; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		if (++p >= e)
			break;
		if (*p == '\\' || *p == '"') {
			*o++ = *p;
		} else if (strchr(esc, *p) && *p) {
			*o++ = val[strchr(esc, *p) - esc];
		} else if (p + 2 < e && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
			   p[2] >= '0' && p[2] <= '7') {
			*o++ = (char)(((p[0] - '0') << 6) | ((p[1] - '0') << 3) | (p[2] - '0'));
			p += 2;
		} else {
			break;
		}
	}
	if (!out || p >= e || *p != '"') {
		free(out);
		return NULL;
	}
	*o = '\0';
	*end = p + 1;
	return out;
}

/* The pattern part of a line (git's parse_path_pattern): a trailing '/'
 * matches only directories (never a file to merge), a pattern without '/'
 * matches basenames. 0, or -1 for a negative pattern (git ignores it). */
static int set_pattern(rule *r, char *pattern)
{
	size_t n = strlen(pattern);

	r->pattern = pattern;
	if (*pattern == '!')
		return -1;
	if (n && pattern[n - 1] == '/') {
		r->mustbedir = 1;
		pattern[--n] = '\0';
	}
	r->plen = n;
	r->nodir = !memchr(pattern, '/', n);
	return 0;
}

/* The name part of a line: a quoted or plain pattern, or "[attr]name".
 * *rest: where the assignments start. NULL to drop the line. */
static char *line_name(const char *p, const char *e, const char **rest)
{
	size_t n;

	if (*p == '"') {
		char *q = unquote(p, e, rest);
		if (q)
			return q;
	}
	n = strcspn(p, BLANK);
	if (p + n > e)
		n = (size_t)(e - p);
	*rest = p + n;
	return strndup(p, n);
}

/* git's parse_attr_line() for [p, e), appended to f. Lines it rejects are
 * left out (git warns). 0, or -1 out of memory. */
static int parse_line(frame *f, const char *p, const char *e, int macro_ok)
{
	const char *rest = NULL;
	rule r;
	rule *nv;

	memset(&r, 0, sizeof(r));
	p += strspn(p, " \t\r");
	if (p >= e || *p == '#' || *p == '\n')
		return 0;
	if (!(r.pattern = line_name(p, e, &rest)))
		return -1;
	if (strlen(r.pattern) > 6 && !memcmp(r.pattern, "[attr]", 6)) {
		r.is_macro = 1;
		memmove(r.pattern, r.pattern + 6, strlen(r.pattern + 6) + 1);
		r.plen = strlen(r.pattern);
		if (!macro_ok || !name_valid(r.pattern, r.plen))
			goto drop;
	} else if (set_pattern(&r, r.pattern) < 0) {
		goto drop;
	}
	if (parse_states(rest, e, &r) < 0)
		goto drop;
	if (!(nv = rq_mem_grow(f->rules, &f->cap, f->n + 1, sizeof(*nv), 8))) {
		rule_free(&r);
		return -1;
	}
	f->rules = nv;
	f->rules[f->n++] = r;
	return 0;
drop:
	rule_free(&r);
	return 0;
}

/* A whole file (git's read_attr_from_buf): lines up to a NUL, a UTF-8 BOM
 * before the first, lines over ATTR_LINE_MAX skipped. 0, or -1. */
static int parse_text(frame *f, const char *text, size_t len, int macro_ok)
{
	const char *p = text, *end = text + strnlen(text, len);

	if (end - p >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		if ((size_t)(e - p) < ATTR_LINE_MAX && parse_line(f, p, e, macro_ok) < 0)
			return -1;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* The file at path into f (absent: f stays empty). 0, or -1 with err. */
static int read_file(rq_attr *a, frame *f, const char *path, int nofollow, int macro_ok,
		     const char *shown, rq_error *err)
{
	char *text;
	size_t len;
	int rc = rq_repofile_read(path, a->root, nofollow, ATTR_FILE_MAX, shown, &text, &len, err);

	if (rc <= 0)
		return rc;
	rc = parse_text(f, text, len, macro_ok);
	free(text);
	return rc < 0 ? rq_error_set(err, RQ_E_NOMEM, "out of memory") : 0;
}

/* ---- the configuration ------------------------------------------------------ */

static int add_driver(rq_attr *a, const char *name, size_t n, int has_cmd)
{
	user_driver *nv;

	for (size_t i = 0; i < a->ndrivers; i++)
		if (strlen(a->drivers[i].name) == n && !memcmp(a->drivers[i].name, name, n)) {
			a->drivers[i].has_cmd |= has_cmd;
			return 0;
		}
	if (!(nv = rq_mem_grow(a->drivers, &a->capdrivers, a->ndrivers + 1, sizeof(*nv), 4)))
		return -1;
	a->drivers = nv;
	if (!(nv[a->ndrivers].name = strndup(name, n)))
		return -1;
	nv[a->ndrivers++].has_cmd = has_cmd;
	return 0;
}

/* git's read_merge_config(): every merge.<name>.<key> defines driver
 * <name>; merge.<name>.driver gives its command. */
static int driver_entry(const git_config_entry *e, void *payload)
{
	const char *sub = e->name + 6, *key = strrchr(e->name, '.');

	if (key <= sub)
		return 0;
	return add_driver(payload, sub, (size_t)(key - sub), !strcmp(key, ".driver") && e->value);
}

static char *config_string(git_config *cfg, const char *name, int path)
{
	git_buf b = GIT_BUF_INIT;
	char *s = NULL;

	if ((path ? git_config_get_path(&b, cfg, name)
		  : git_config_get_string_buf(&b, cfg, name)) == 0)
		s = strdup(b.ptr);
	git_buf_dispose(&b);
	return s;
}

static int read_config(rq_attr *a, rq_error *err)
{
	git_config *cfg = NULL;
	int b, rc = 0;

	if (git_repository_config_snapshot(&cfg, a->repo) < 0)
		return rq_error_git(err, "cannot read the configuration");
	if (git_config_get_bool(&b, cfg, "core.ignoreCase") == 0)
		a->ignorecase = b;
	a->merge_default = config_string(cfg, "merge.default", 0);
	a->attr_tree = config_string(cfg, "attr.tree", 0);
	if (!a->root)
		a->global_file = config_string(cfg, "core.attributesFile", 1);
	if (git_config_foreach_match(cfg, "^merge\\..+\\..+$", driver_entry, a) < 0)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	git_config_free(cfg);
	return rc;
}

/* git's env bool: unset is false, else anything but a false word. */
static int env_true(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcasecmp(v, "false") && strcasecmp(v, "no") && strcasecmp(v, "off") &&
	       strcmp(v, "0");
}

/* The files read once: info/attributes and, without a root, the global
 * and system files (and the built-in macro). 0, or -1. */
static int load_fixed(rq_attr *a, rq_error *err)
{
	char path[4096];
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	a->loaded = 1;
	if (parse_text(&a->builtin, "[attr]binary -diff -merge -text", 32, 1) < 0 ||
	    read_config(a, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/info/attributes", a->common);
	if (read_file(a, &a->info, path, 0, 1, "info/attributes", err) < 0)
		return -1;
	if (a->root) /* a job's merge follows its repository alone */
		return 0;
	if (a->global_file)
		snprintf(path, sizeof(path), "%s", a->global_file);
	else if (xdg && *xdg)
		snprintf(path, sizeof(path), "%s/git/attributes", xdg);
	else
		snprintf(path, sizeof(path), "%s/.config/git/attributes", home ? home : "");
	if ((a->global_file || (xdg && *xdg) || home) &&
	    read_file(a, &a->global, path, 0, 1, path, err) < 0)
		return -1;
	if (!env_true("GIT_ATTR_NOSYSTEM") &&
	    read_file(a, &a->system, "/etc/gitattributes", 0, 1, "/etc/gitattributes", err) < 0)
		return -1;
	return 0;
}

/* ---- the .gitattributes of the tree ---------------------------------------------- */

/*
 * The tree attributes come from (git's compute_default_attr_source):
 * GIT_ATTR_SOURCE, which must name an object, else attr.tree when it
 * names one (one with no tree under it gives no attributes, as in git).
 * The name is resolved by replayq's revision names (rq_revname_tree,
 * either object format), through the repository's database of now. 0,
 * or -1 with err.
 */
static int find_source(rq_attr *a, rq_error *err)
{
	const char *env = getenv("GIT_ATTR_SOURCE"), *name = env && *env ? env : a->attr_tree;
	rq_commits *commits = NULL;
	rq_error e;
	int rc;

	a->source_known = 1;
	if (!name)
		return 0;
	if (rq_commits_open(&commits, a->repo, a->algo, err) < 0)
		return -1;
	rq_error_clear(&e);
	rc = rq_revname_tree(a->repo, commits, a->algo, name, &a->source, &e);
	rq_commits_free(commits);
	if (rc == 1) /* an object with no tree under it: a source with nothing in it */
		a->source = a->algo->empty_tree;
	a->have_source = rc >= 0;
	if (!a->have_source && e.code == RQ_E_NOMEM)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (!a->have_source && env && *env)
		return rq_error_set(err, RQ_E_BAD_REVISION, "bad --attr-source or GIT_ATTR_SOURCE");
	return 0;
}

/* The entry name (n bytes) of tree id: 1 with *e (the tree stays open in
 * t for e's name), 0 when absent, -1 with err. */
static int tree_entry(const rq_tree_reader *trees, const rq_oid_algo *algo, const rq_oid *id,
		      const char *name, size_t n, rq_tree *t, rq_tree_entry *e, rq_error *err)
{
	size_t pos = 0;

	if (rq_tree_open_with(t, trees, algo, id, err) < 0)
		return -1;
	while (rq_tree_next(t, &pos, e))
		if (e->len == n && !memcmp(e->name, name, n))
			return 1;
	rq_tree_close(t);
	return 0;
}

/* The tree of directory dir under the source tree: 1 with *id, 0 when
 * there is no such directory, -1 with err. */
static int source_dir(rq_attr *a, const char *dir, rq_oid *id, rq_error *err)
{
	rq_tree t;
	rq_tree_entry e;

	*id = a->source;
	for (const char *p = dir; *p;) {
		size_t n = strcspn(p, "/");
		int rc = tree_entry(a->trees, a->algo, id, p, n, &t, &e, err), is_dir;
		if (rc <= 0)
			return rc;
		is_dir = (e.mode & 0170000u) == 0040000u;
		*id = e.id;
		rq_tree_close(&t);
		if (!is_dir)
			return 0;
		p += n + (p[n] == '/');
	}
	return 1;
}

/* The .gitattributes blob of tree id (a regular file) into f. 0, or -1. */
static int read_blob_attrs(rq_attr *a, const rq_oid *id, frame *f, int macro_ok, rq_error *err)
{
	rq_odb_read_obj blob = {0};
	rq_tree t;
	rq_tree_entry e;
	char *text = NULL;
	int rc = tree_entry(a->trees, a->algo, id, ".gitattributes", 14, &t, &e, err);

	if (rc <= 0)
		return rc;
	if ((e.mode & 0170000u) == 0100000u && rq_ortodb_read(&blob, *a->reader, &e.id) == 0 &&
	    blob.len <= ATTR_FILE_MAX) {
		size_t n = blob.len;
		if (!(text = malloc(n + 1)))
			rc = -1;
		else {
			memcpy(text, blob.data, n);
			text[n] = '\0';
			rc = parse_text(f, text, n, macro_ok);
		}
	}
	free(text);
	rq_odb_read_obj_free(&blob);
	rq_tree_close(&t);
	return rc < 0 ? rq_error_set(err, RQ_E_NOMEM, "out of memory") : 0;
}

/* dir/.gitattributes from the source tree into f. 0, or -1 with err. */
static int read_from_tree(rq_attr *a, frame *f, const char *dir, int macro_ok, rq_error *err)
{
	rq_oid id;
	int rc = source_dir(a, dir, &id, err);

	if (rc > 0)
		rc = read_blob_attrs(a, &id, f, macro_ok, err);
	return rc < 0 ? -1 : 0;
}

/* A directory's key: its path (dlen bytes, no NUL needed). */
typedef struct dir_key {
	const char *dir;
	size_t dlen;
} dir_key;

static int dir_eq(const void *ctx, size_t i, const void *key)
{
	const frame *f = ((const rq_attr *)ctx)->dirs[i];
	const dir_key *k = key;
	return strlen(f->origin) == k->dlen && !memcmp(f->origin, k->dir, k->dlen);
}

static size_t dir_hash(const void *ctx, size_t i)
{
	const char *o = ((const rq_attr *)ctx)->dirs[i]->origin;
	return (size_t)rq_hindex_hash_bytes(o, strlen(o));
}

/* Read the .gitattributes of f's directory into f: from the source tree,
 * else from the working tree (a bare repository has none). 0, or -1. */
static int load_dir(rq_attr *a, frame *f, size_t dlen, rq_error *err)
{
	char path[4096], shown[4096];

	if (a->have_source)
		return read_from_tree(a, f, f->origin, dlen == 0, err);
	if (!a->workdir)
		return 0;
	snprintf(shown, sizeof(shown), "%s%s.gitattributes", f->origin, dlen ? "/" : "");
	snprintf(path, sizeof(path), "%s%s", a->workdir, shown);
	return read_file(a, f, path, 1, dlen == 0, shown, err);
}

/* The .gitattributes of directory dir ("" the top), read once. NULL with
 * err set on failure. */
static frame *dir_frame(rq_attr *a, const char *dir, size_t dlen, rq_error *err)
{
	dir_key key = {dir, dlen};
	size_t hash = (size_t)rq_hindex_hash_bytes(dir, dlen);
	long k = rq_hindex_find(&a->dir_index, hash, dir_eq, a, &key);
	frame *f, **nv;

	if (k >= 0)
		return a->dirs[k];
	if (!(nv = rq_mem_grow(a->dirs, &a->capdirs, a->ndirs + 1, sizeof(*nv), 8)) ||
	    rq_hindex_reserve(&a->dir_index, 64, a->ndirs, dir_hash, a) < 0 ||
	    !(f = calloc(1, sizeof(*f)))) {
		if (nv)
			a->dirs = nv;
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		return NULL;
	}
	a->dirs = nv;
	if (!(f->origin = strndup(dir, dlen))) {
		free(f);
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		return NULL;
	}
	a->dirs[a->ndirs] = f;
	rq_hindex_add(&a->dir_index, hash, a->ndirs++);
	return load_dir(a, f, dlen, err) < 0 ? NULL : f;
}

/* git's path_matches() for a file path (never a directory). */
static int rule_matches(const rq_attr *a, const rule *r, const frame *f, const char *path)
{
	int flags = a->ignorecase ? RQ_WM_CASEFOLD : 0;
	const char *base = strrchr(path, '/'), *pat = r->pattern, *name = path;
	size_t blen = f->origin ? strlen(f->origin) : 0, plen = r->plen;

	if (r->mustbedir)
		return 0;
	if (r->nodir) {
		base = base ? base + 1 : path;
		return rq_wildmatch(pat, plen, base, strlen(base), flags) == 1;
	}
	if (*pat == '/') {
		pat++;
		plen--;
	}
	if (blen) {
		if (strncmp(path, f->origin, blen) || path[blen] != '/')
			return 0;
		name = path + blen + 1;
	}
	return rq_wildmatch(pat, plen, name, strlen(name), flags | RQ_WM_PATHNAME) == 1;
}

/* ---- looking an attribute up ------------------------------------------------- */

/* The attributes decided so far (git's all_attrs), highest rule first. */
typedef struct decided {
	const assign **v;
	size_t n, cap;
	int oom;
} decided;

static const assign *decided_get(const decided *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i]->name, name))
			return d->v[i];
	return NULL;
}

/* The definition of macro name in force: the highest one. */
static const rule *find_macro(const frame *const *fs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = fs[i]->n; k > 0; k--)
			if (fs[i]->rules[k - 1].is_macro &&
			    !strcmp(fs[i]->rules[k - 1].pattern, name))
				return &fs[i]->rules[k - 1];
	return NULL;
}

/* git's fill_one(): the rule's assignments, last first, each decided once;
 * a macro set to true brings its own. */
static void fill_rule(const frame *const *fs, size_t n, const rule *r, decided *d, int depth)
{
	for (size_t i = r->na; i > 0; i--) {
		const assign *as = &r->a[i - 1];
		const assign **nv;
		const rule *m;
		if (decided_get(d, as->name))
			continue;
		if (!(nv = rq_mem_grow(d->v, &d->cap, d->n + 1, sizeof(*nv), 8))) {
			d->oom = 1;
			return;
		}
		d->v = nv;
		d->v[d->n++] = as;
		if (as->kind == V_TRUE && depth < MACRO_DEPTH && (m = find_macro(fs, n, as->name)))
			fill_rule(fs, n, m, d, depth + 1);
	}
}

/* The frames that apply to path, highest first (git's attribute stack):
 * info/attributes, the directories' files deepest first, the global and
 * system files, the built-in macro. The count, or 0 with err set. */
static size_t frames_of(rq_attr *a, const char *path, const frame **fs, rq_error *err)
{
	size_t n = 0, len = strlen(path);

	fs[n++] = &a->info;
	for (size_t k = len; k > 0; k--) {
		if (path[k - 1] != '/')
			continue;
		if (!(fs[n++] = dir_frame(a, path, k - 1, err)))
			return 0;
	}
	if (!(fs[n++] = dir_frame(a, path, 0, err)))
		return 0;
	fs[n++] = &a->global;
	fs[n++] = &a->system;
	fs[n++] = &a->builtin;
	return n;
}

/* The assignment that decides attribute name for path (NULL: none),
 * pointing into a's rules. 0, or -1 with err. */
static int lookup(rq_attr *a, const char *path, const char *name, const assign **out, rq_error *err)
{
	size_t slashes = 0, n;
	const frame **fs;
	decided d = {NULL, 0, 0, 0};

	*out = NULL;
	for (const char *p = path; *p; p++)
		slashes += *p == '/';
	if (!(fs = malloc((slashes + 6) * sizeof(*fs))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (!(n = frames_of(a, path, fs, err))) {
		free(fs);
		return -1;
	}
	for (size_t i = 0; i < n && !*out && !d.oom; i++)
		for (size_t k = fs[i]->n; k > 0 && !*out && !d.oom; k--) {
			const rule *r = &fs[i]->rules[k - 1];
			if (r->is_macro || !rule_matches(a, r, fs[i], path))
				continue;
			fill_rule(fs, n, r, &d, 0);
			*out = decided_get(&d, name);
		}
	free(d.v);
	free(fs);
	return d.oom ? rq_error_set(err, RQ_E_NOMEM, "out of memory") : 0;
}

static char *dup_dir(const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return dir ? strndup(dir, n) : NULL;
}

int rq_attr_new(rq_attr **out, git_repository *repo, const rq_oid_algo *algo,
		rq_odb_read *const *reader, const rq_tree_reader *trees, const char *root,
		rq_error *err)
{
	rq_attr *a = calloc(1, sizeof(*a));
	const char *wd = git_repository_workdir(repo);

	*out = NULL;
	if (!a)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	a->repo = repo;
	a->algo = algo;
	a->reader = reader;
	a->trees = trees;
	a->common = dup_dir(git_repository_commondir(repo));
	if ((root && !(a->root = strdup(root))) || (wd && !(a->workdir = strdup(wd))) ||
	    !a->common) {
		rq_attr_free(a);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	*out = a;
	return 0;
}

/* find_ll_merge_driver() for a driver name: one the configuration defines
 * first, then git's own, else text. */
static rq_attr_driver named_driver(const rq_attr *a, const char *name)
{
	for (size_t i = 0; i < a->ndrivers; i++)
		if (!strcmp(a->drivers[i].name, name))
			return a->drivers[i].has_cmd ? RQ_ATTR_DRIVER_EXTERNAL
						     : RQ_ATTR_DRIVER_NO_COMMAND;
	if (!strcmp(name, "binary"))
		return RQ_ATTR_DRIVER_BINARY;
	if (!strcmp(name, "union"))
		return RQ_ATTR_DRIVER_UNION;
	return RQ_ATTR_DRIVER_TEXT;
}

int rq_attr_merge_driver(rq_attr *a, const char *path, rq_attr_driver *out, const char **name,
			 rq_error *err)
{
	const assign *as;

	*out = RQ_ATTR_DRIVER_TEXT;
	*name = NULL;
	if ((!a->loaded && load_fixed(a, err) < 0) ||
	    (!a->source_known && find_source(a, err) < 0) || lookup(a, path, "merge", &as, err) < 0)
		return -1;
	if (as && as->kind == V_TRUE)
		return 0;
	if (as && as->kind == V_FALSE) {
		*out = RQ_ATTR_DRIVER_BINARY;
		return 0;
	}
	*name = as && as->kind == V_STRING ? as->value : a->merge_default;
	if (*name)
		*out = named_driver(a, *name);
	return 0;
}
