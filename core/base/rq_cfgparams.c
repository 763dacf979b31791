/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_cfgparams: command-line configuration (see rq_cfgparams.h). The items
 * become a read-only libgit2 configuration backend at the application
 * level, above the repository's files; the key rules and the quoting
 * follow git's config.c (git_config_parse_key, git_config_from_parameters)
 * and quote.c (sq_quote, sq_dequote).
 */
#include "rq_cfgparams.h"

#include <ctype.h>
#include <git2/sys/config.h>
#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"

/* The items, as libgit2 entries (names normalised). */
typedef struct param_list {
	git_config_entry *v;
	size_t n, cap;
} param_list;

/* A backend over a list; a snapshot is a backend over a copy. */
typedef struct params_backend {
	git_config_backend parent;
	param_list list;
} params_backend;

typedef struct params_iter {
	git_config_iterator parent;
	size_t next;
} params_iter;

static void list_free(param_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free((char *)l->v[i].name);
		free((char *)l->v[i].value);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * Normalise a key as git and libgit2 do: section and variable lowercased,
 * the subsection between them kept. 0, or -1 with git's message.
 */
static int normalise_key(const char *key, size_t len, char **out, rq_error *err)
{
	const char *first = memchr(key, '.', len), *last = key + len;
	char *k;

	while (last > key && last[-1] != '.')
		last--;
	if (!len)
		return rq_error_set(err, RQ_E_USAGE, "empty config key");
	if (!first)
		return rq_error_set(err, RQ_E_USAGE, "key does not contain a section: %.*s",
				    (int)len, key);
	if (last == key + len)
		return rq_error_set(err, RQ_E_USAGE, "key does not contain variable name: %.*s",
				    (int)len, key);
	for (const char *p = key; p < first; p++)
		if (!isalnum((unsigned char)*p) && *p != '-')
			return rq_error_set(err, RQ_E_USAGE, "invalid key: %.*s", (int)len, key);
	if (!isalpha((unsigned char)*last))
		return rq_error_set(err, RQ_E_USAGE, "invalid key: %.*s", (int)len, key);
	for (const char *p = last; p < key + len; p++)
		if (!isalnum((unsigned char)*p) && *p != '-')
			return rq_error_set(err, RQ_E_USAGE, "invalid key: %.*s", (int)len, key);
	if (!(k = malloc(len + 1)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	memcpy(k, key, len);
	k[len] = '\0';
	for (char *p = k; p < k + (first - key); p++)
		*p = (char)tolower((unsigned char)*p);
	for (char *p = k + (last - key); *p; p++)
		*p = (char)tolower((unsigned char)*p);
	*out = k;
	return 0;
}

int rq_cfgparams_check(const char *arg, rq_error *err)
{
	const char *eq = strchr(arg, '=');
	char *k = NULL;

	if (normalise_key(arg, eq ? (size_t)(eq - arg) : strlen(arg), &k, err) < 0)
		return -1;
	free(k);
	return 0;
}

/* s single-quoted as git's sq_quote writes it, added at b's end. */
static void put_quoted(char *b, size_t *n, const char *s, size_t len)
{
	b[(*n)++] = '\'';
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\'' || s[i] == '!') {
			b[(*n)++] = '\'';
			b[(*n)++] = '\\';
			b[(*n)++] = s[i];
			b[(*n)++] = '\'';
		} else {
			b[(*n)++] = s[i];
		}
	}
	b[(*n)++] = '\'';
}

char *rq_cfgparams_append(const char *prev, const char *arg)
{
	size_t plen = prev ? strlen(prev) : 0, alen = strlen(arg), n = 0;
	const char *eq = strchr(arg, '=');
	char *b = malloc(plen + 4 * alen + 8);

	if (!b)
		return NULL;
	if (plen) {
		memcpy(b, prev, plen);
		n = plen;
		b[n++] = ' ';
	}
	put_quoted(b, &n, arg, eq ? (size_t)(eq - arg) : alen);
	if (eq) {
		b[n++] = '=';
		put_quoted(b, &n, eq + 1, strlen(eq + 1));
	}
	b[n] = '\0';
	return b;
}

/*
 * One single-quoted word at *pp (git's sq_dequote_step): its text into
 * out (as long as the input at most), *pp past it. 0, or -1 when *pp does
 * not hold one.
 */
static int dequote(const char **pp, char *out)
{
	const char *p = *pp;
	size_t n = 0;

	if (*p != '\'')
		return -1;
	for (p++;;) {
		if (!*p)
			return -1;
		if (*p != '\'') {
			out[n++] = *p++;
			continue;
		}
		/* a closing quote: the end, or an escaped character and a reopening */
		if (p[1] == '\\' && p[2] && p[3] == '\'') {
			out[n++] = p[2];
			p += 4;
			continue;
		}
		out[n] = '\0';
		*pp = p + 1;
		return 0;
	}
}

static int list_add(param_list *l, const char *key, size_t klen, const char *value, rq_error *err)
{
	git_config_entry *e, *grown;
	char *k = NULL, *v = NULL;

	if (normalise_key(key, klen, &k, err) < 0)
		return -1;
	grown = rq_mem_grow(l->v, &l->cap, l->n + 1, sizeof(*l->v), 4);
	if ((value && !(v = strdup(value))) || !grown) {
		free(k);
		free(v);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	l->v = grown;
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->name = k;
	e->value = v;
	e->level = GIT_CONFIG_LEVEL_APP;
	return 0;
}

/* One item: 'key'='value', 'key' or 'key=value'. */
static int parse_item(param_list *l, const char **pp, char *w1, char *w2, rq_error *err)
{
	const char *eq;

	if (dequote(pp, w1) < 0)
		return -1;
	if (**pp == '=') {
		(*pp)++;
		if (dequote(pp, w2) < 0)
			return -1;
		return list_add(l, w1, strlen(w1), w2, err);
	}
	eq = strchr(w1, '=');
	return list_add(l, w1, eq ? (size_t)(eq - w1) : strlen(w1), eq ? eq + 1 : NULL, err);
}

static int parse_params(const char *params, param_list *l, rq_error *err)
{
	size_t len = strlen(params);
	char *w1 = malloc(len + 1), *w2 = malloc(len + 1);
	const char *p = params;
	int rc = 0;

	rq_error_clear(err);
	if (!w1 || !w2)
		rc = rq_error_set(err, RQ_E_NOMEM, "out of memory");
	while (rc == 0) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		rc = parse_item(l, &p, w1, w2, err);
		if (rc < 0 && err->code == RQ_OK)
			rq_error_set(err, RQ_E_USAGE, "bogus format in GIT_CONFIG_PARAMETERS");
	}
	free(w1);
	free(w2);
	if (rc < 0)
		list_free(l);
	return rc;
}

/* ---- the libgit2 backend: read-only, its entries copied out on get ---- */

static void entry_free(git_config_entry *e)
{
	free(e);
}

static int backend_open(git_config_backend *b, git_config_level_t level, const git_repository *repo)
{
	(void)b;
	(void)level;
	(void)repo;
	return 0;
}

/* The last item of the key wins, as for git's "command" scope. */
static int backend_get(git_config_backend *b, const char *key, git_config_entry **out)
{
	const param_list *l = &((params_backend *)b)->list;

	for (size_t i = l->n; i-- > 0;)
		if (!strcmp(l->v[i].name, key)) {
			git_config_entry *e = malloc(sizeof(*e));
			if (!e)
				return -1;
			*e = l->v[i];
			e->free = entry_free;
			*out = e;
			return 0;
		}
	return GIT_ENOTFOUND;
}

static int backend_readonly(git_config_backend *b, const char *key)
{
	(void)b;
	(void)key;
	git_error_set_str(GIT_ERROR_CONFIG, "command-line configuration is read-only");
	return -1;
}

static int backend_set(git_config_backend *b, const char *key, const char *value)
{
	(void)value;
	return backend_readonly(b, key);
}

static int backend_set_multivar(git_config_backend *b, const char *name, const char *re,
				const char *value)
{
	(void)re;
	(void)value;
	return backend_readonly(b, name);
}

static int backend_del_multivar(git_config_backend *b, const char *key, const char *re)
{
	(void)re;
	return backend_readonly(b, key);
}

static int iter_next(git_config_entry **out, git_config_iterator *it)
{
	params_iter *pi = (params_iter *)it;
	param_list *l = &((params_backend *)it->backend)->list;

	if (pi->next >= l->n)
		return GIT_ITEROVER;
	*out = &l->v[pi->next++];
	return 0;
}

static void iter_free(git_config_iterator *it)
{
	free(it);
}

static int backend_iterator(git_config_iterator **out, git_config_backend *b)
{
	params_iter *it = calloc(1, sizeof(*it));

	if (!it)
		return -1;
	it->parent.backend = b;
	it->parent.next = iter_next;
	it->parent.free = iter_free;
	*out = &it->parent;
	return 0;
}

static int backend_lock(git_config_backend *b)
{
	return backend_readonly(b, NULL);
}

static int backend_unlock(git_config_backend *b, int success)
{
	(void)success;
	return backend_readonly(b, NULL);
}

static void backend_free(git_config_backend *b)
{
	params_backend *pb = (params_backend *)b;

	if (!pb)
		return;
	list_free(&pb->list);
	free(pb);
}

static int backend_snapshot(git_config_backend **out, git_config_backend *b);

/* A backend that owns a copy of l. */
static params_backend *backend_new(const param_list *l)
{
	params_backend *pb = calloc(1, sizeof(*pb));
	rq_error e;

	if (!pb || git_config_init_backend(&pb->parent, GIT_CONFIG_BACKEND_VERSION) < 0) {
		free(pb);
		return NULL;
	}
	pb->parent.readonly = 1;
	pb->parent.open = backend_open;
	pb->parent.get = backend_get;
	pb->parent.set = backend_set;
	pb->parent.set_multivar = backend_set_multivar;
	pb->parent.del = backend_readonly;
	pb->parent.del_multivar = backend_del_multivar;
	pb->parent.iterator = backend_iterator;
	pb->parent.snapshot = backend_snapshot;
	pb->parent.lock = backend_lock;
	pb->parent.unlock = backend_unlock;
	pb->parent.free = backend_free;
	for (size_t i = 0; i < l->n; i++)
		if (list_add(&pb->list, l->v[i].name, strlen(l->v[i].name), l->v[i].value, &e) <
		    0) {
			backend_free(&pb->parent);
			return NULL;
		}
	return pb;
}

static int backend_snapshot(git_config_backend **out, git_config_backend *b)
{
	params_backend *copy = backend_new(&((params_backend *)b)->list);

	if (!copy)
		return -1;
	*out = &copy->parent;
	return 0;
}

int rq_cfgparams_add(git_config *cfg, git_repository *repo, const char *params, rq_error *err)
{
	param_list l = {0};
	params_backend *pb;

	if (!params || !*params)
		return 0;
	if (parse_params(params, &l, err) < 0)
		return -1;
	pb = backend_new(&l);
	list_free(&l);
	if (!pb)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	if (git_config_add_backend(cfg, &pb->parent, GIT_CONFIG_LEVEL_APP, repo, 0) < 0) {
		backend_free(&pb->parent);
		return rq_error_git(err, "cannot read the configuration");
	}
	return 0;
}

int rq_cfgparams_apply(git_repository *repo, const char *params, rq_error *err)
{
	git_config *cfg = NULL;
	int rc;

	if (!params || !*params)
		return 0;
	if (git_repository_config(&cfg, repo) < 0)
		return rq_error_git(err, "cannot read the configuration");
	rc = rq_cfgparams_add(cfg, repo, params, err);
	git_config_free(cfg);
	return rc;
}
