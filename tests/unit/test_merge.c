/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_merge: differential test of the tree merge against git's merge-ort.
 *
 * Thousands of random 3-way situations (seeded, reproducible) are written
 * with `git fast-import` as base, ours (child of base) and theirs (child of
 * base) commits: line edits on the same and on different lines, adds,
 * deletes, renames with and without edits (on either side, with the other
 * side editing the renamed file or not), directory renames, mode changes,
 * symlinks, binary files, submodule entries, files replaced by directories
 * and back. `git merge-tree --write-tree --stdin` (merge-ort) merges every
 * pair; merge_git() merges the same trees; the outcomes must agree:
 * the same tree when clean, a conflict when git reports one. Every object of
 * a clean result must exist in the repository (written by rq_merge, which
 * runs before git).
 *
 * Variants run with merge.directoryRenames=true, merge.directoryRenames=
 * false with merge.conflictStyle=diff3, and a tiny merge.renameLimit.
 * RQ_MERGE_SEEDS=<n> multiplies the number of situations (default 1).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2/sys/mempack.h>

#include "rq_merge.h"

/* ---- random situations ------------------------------------------------ */

#define GMAX 40
#define PMAX 96

typedef struct gfile {
	char path[PMAX];
	unsigned mode;
	char *data;
	size_t len;
} gfile;

typedef struct gtree {
	gfile f[GMAX];
	int n;
} gtree;

typedef struct rng {
	unsigned long long s;
} rng;

static unsigned rnd(rng *r)
{
	r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(r->s >> 33);
}

static int chance(rng *r, int percent)
{
	return (int)(rnd(r) % 100) < percent;
}

static char *xmemdup(const char *p, size_t n)
{
	char *d = malloc(n + 1);
	assert_non_null(d);
	memcpy(d, p, n);
	d[n] = '\0';
	return d;
}

static void tree_free(gtree *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->f[i].data);
	t->n = 0;
}

static void tree_copy(gtree *dst, const gtree *src)
{
	dst->n = src->n;
	for (int i = 0; i < src->n; i++) {
		dst->f[i] = src->f[i];
		dst->f[i].data = xmemdup(src->f[i].data, src->f[i].len);
	}
}

static void del(gtree *t, int i)
{
	free(t->f[i].data);
	t->f[i] = t->f[--t->n];
}

/* Remove whatever is in the way of a file at path (files that are its
 * parent directories, files under it). */
static void clear_way(gtree *t, const char *path)
{
	size_t pl = strlen(path);
	for (int i = 0; i < t->n;) {
		const char *q = t->f[i].path;
		size_t ql = strlen(q);
		int in_way = !strcmp(q, path) ||
			     (ql < pl && !strncmp(q, path, ql) && path[ql] == '/') ||
			     (pl < ql && !strncmp(q, path, pl) && q[pl] == '/');
		if (in_way)
			del(t, i);
		else
			i++;
	}
}

static void put(gtree *t, const char *path, unsigned mode, const char *data, size_t len)
{
	clear_way(t, path);
	if (t->n == GMAX)
		del(t, 0);
	gfile *f = &t->f[t->n++];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->mode = mode;
	f->data = xmemdup(data, len);
	f->len = len;
}

static const char *const dirs[] = {"", "d", "d/e", "f", "g", "d/e/h", "x/y"};
static const char *const names[] = {"a", "b", "c", "m.txt", "n.txt", "k.c", "d", "e", "z"};

static void random_path(rng *r, char *out, size_t n)
{
	const char *d = dirs[rnd(r) % (sizeof(dirs) / sizeof(dirs[0]))];
	const char *b = names[rnd(r) % (sizeof(names) / sizeof(names[0]))];
	snprintf(out, n, "%s%s%s", d, *d ? "/" : "", b);
}

static char *text(rng *r, size_t *len)
{
	static const char *const common[] = {"{", "}", "", "return 0;", "/* - */"};
	unsigned id = rnd(r) % 100000, lines = 3 + rnd(r) % 14;
	char *buf = malloc(lines * 32 + 1);
	size_t k = 0;
	assert_non_null(buf);
	for (unsigned i = 0; i < lines; i++) {
		if (chance(r, 20))
			k += (size_t)sprintf(buf + k, "%s\n", common[rnd(r) % 5]);
		else
			k += (size_t)sprintf(buf + k, "line %u.%u\n", id, i);
	}
	*len = k;
	return buf;
}

/* Edit some lines: replace, insert, delete; maybe drop the final LF. */
static void edit_text(rng *r, gfile *f, int heavy)
{
	char *lines[64];
	size_t ll[64];
	int nl = 0, ops = heavy ? 4 + (int)(rnd(r) % 6) : 1 + (int)(rnd(r) % 3);
	size_t i = 0, total = 0;
	char *out;

	while (i < f->len && nl < 60) {
		const char *e = memchr(f->data + i, '\n', f->len - i);
		size_t end = e ? (size_t)(e - f->data) + 1 : f->len;
		lines[nl] = xmemdup(f->data + i, end - i);
		ll[nl++] = end - i;
		i = end;
	}
	for (int o = 0; o < ops; o++) {
		int at = nl ? (int)(rnd(r) % (unsigned)nl) : 0, op = (int)(rnd(r) % 3);
		char tmp[32];
		if (op == 0 && nl < 60) {
			memmove(&lines[at + 1], &lines[at], (size_t)(nl - at) * sizeof(lines[0]));
			memmove(&ll[at + 1], &ll[at], (size_t)(nl - at) * sizeof(ll[0]));
			ll[at] = (size_t)sprintf(tmp, "ins %u\n", rnd(r) % 1000);
			lines[at] = xmemdup(tmp, ll[at]);
			nl++;
		} else if (op == 1 && nl > 1) {
			free(lines[at]);
			memmove(&lines[at], &lines[at + 1],
				(size_t)(nl - at - 1) * sizeof(lines[0]));
			memmove(&ll[at], &ll[at + 1], (size_t)(nl - at - 1) * sizeof(ll[0]));
			nl--;
		} else if (nl) {
			free(lines[at]);
			ll[at] = (size_t)sprintf(tmp, "chg %u\n", rnd(r) % 1000);
			lines[at] = xmemdup(tmp, ll[at]);
		}
	}
	for (int k = 0; k < nl; k++)
		total += ll[k];
	out = malloc(total + 1);
	assert_non_null(out);
	total = 0;
	for (int k = 0; k < nl; k++) {
		memcpy(out + total, lines[k], ll[k]);
		total += ll[k];
		free(lines[k]);
	}
	if (total && chance(r, 5) && out[total - 1] == '\n')
		total--;
	free(f->data);
	f->data = out;
	f->len = total;
}

static void binary(rng *r, char *buf, size_t *len)
{
	size_t n = 8 + rnd(r) % 24;
	memcpy(buf, "BIN", 3);
	buf[3] = '\0';
	for (size_t i = 4; i < n; i++)
		buf[i] = (char)('a' + rnd(r) % 4);
	*len = n;
}

static void gitlink(rng *r, char *buf, size_t *len)
{
	for (int i = 0; i < 40; i++)
		buf[i] = "0123456789abcdef"[rnd(r) % 16];
	*len = 40;
}

static int pick(rng *r, const gtree *t, unsigned mode_mask)
{
	int cand[GMAX], n = 0;
	for (int i = 0; i < t->n; i++) {
		unsigned m = t->f[i].mode;
		int ok = (mode_mask & 1 && (m == 0100644 || m == 0100755)) ||
			 (mode_mask & 2 && m == 0120000) || (mode_mask & 4 && m == 0160000);
		if (ok && !(mode_mask & 8 && memchr(t->f[i].data, 0, t->f[i].len)))
			cand[n++] = i;
	}
	return n ? cand[rnd(r) % (unsigned)n] : -1;
}

static void op_rename_dir(rng *r, gtree *t)
{
	int i = pick(r, t, 1 | 2);
	char from[PMAX], to[PMAX];
	const char *slash;
	gtree moved;

	if (i < 0 || !(slash = strrchr(t->f[i].path, '/')))
		return;
	snprintf(from, sizeof(from), "%.*s", (int)(slash - t->f[i].path), t->f[i].path);
	snprintf(to, sizeof(to), "%s", chance(r, 50) ? "q" : chance(r, 50) ? "g/w" : "d/r");
	if (!strcmp(from, to) || !strncmp(to, from, strlen(from)))
		return;
	moved.n = 0;
	for (int k = 0; k < t->n;) {
		size_t fl = strlen(from);
		if (!strncmp(t->f[k].path, from, fl) && t->f[k].path[fl] == '/') {
			gfile f = t->f[k];
			snprintf(f.path, sizeof(f.path), "%s%s", to, t->f[k].path + fl);
			moved.f[moved.n++] = f;
			t->f[k] = t->f[--t->n];
		} else {
			k++;
		}
	}
	for (int k = 0; k < moved.n; k++) {
		if (chance(r, 20) && moved.f[k].mode != 0120000 && moved.f[k].mode != 0160000 &&
		    !memchr(moved.f[k].data, 0, moved.f[k].len))
			edit_text(r, &moved.f[k], 0);
		put(t, moved.f[k].path, moved.f[k].mode, moved.f[k].data, moved.f[k].len);
		free(moved.f[k].data);
	}
}

/* A new file at a random path: a copy of another (maybe edited), or new
 * text. */
static void op_add(rng *r, gtree *t)
{
	char path[PMAX], *d;
	size_t len;
	int i;

	random_path(r, path, sizeof(path));
	if (chance(r, 30) && (i = pick(r, t, 1 | 8)) >= 0) {
		gfile c = t->f[i];
		c.data = xmemdup(c.data, c.len);
		if (chance(r, 50))
			edit_text(r, &c, 0);
		put(t, path, c.mode, c.data, c.len);
		free(c.data);
	} else {
		d = text(r, &len);
		put(t, path, chance(r, 10) ? 0100755 : 0100644, d, len);
		free(d);
	}
}

/* A file moved to a known directory or a random path, maybe edited. */
static void op_rename(rng *r, gtree *t)
{
	char path[PMAX];
	int i = pick(r, t, 1 | 2);
	gfile f;
	const char *base;

	if (i < 0)
		return;
	f = t->f[i];
	base = strrchr(f.path, '/');
	base = base ? base + 1 : f.path;
	if (chance(r, 50)) {
		const char *d = dirs[rnd(r) % (sizeof(dirs) / sizeof(dirs[0]))];
		snprintf(path, sizeof(path), "%s%s%.40s", d, *d ? "/" : "", base);
	} else {
		random_path(r, path, sizeof(path));
	}
	f.data = xmemdup(f.data, f.len);
	if (f.mode != 0120000 && !memchr(f.data, 0, f.len) && chance(r, 40))
		edit_text(r, &f, chance(r, 15));
	del(t, i);
	put(t, path, f.mode, f.data, f.len);
	free(f.data);
}

/* A symlink: a new target for one, a new one, or one replacing a file. */
static void op_symlink(rng *r, gtree *t)
{
	char path[PMAX], buf[64];
	size_t len;
	int i;

	if (chance(r, 50) && (i = pick(r, t, 2)) >= 0) {
		len = (size_t)sprintf(buf, "target%u", rnd(r) % 5);
		free(t->f[i].data);
		t->f[i].data = xmemdup(buf, len);
		t->f[i].len = len;
		return;
	}
	if (chance(r, 50) && (i = pick(r, t, 1)) >= 0)
		snprintf(path, sizeof(path), "%s", t->f[i].path);
	else
		random_path(r, path, sizeof(path));
	len = (size_t)sprintf(buf, "target%u", rnd(r) % 5);
	put(t, path, 0120000, buf, len);
}

/* A binary file, new or replacing a file. */
static void op_binary(rng *r, gtree *t)
{
	char path[PMAX], buf[64];
	size_t len;
	int i;

	if (chance(r, 50) && (i = pick(r, t, 1)) >= 0)
		snprintf(path, sizeof(path), "%s", t->f[i].path);
	else
		random_path(r, path, sizeof(path));
	binary(r, buf, &len);
	put(t, path, 0100644, buf, len);
}

/* A submodule entry: a new commit for one, or a new one. */
static void op_submodule(rng *r, gtree *t)
{
	char path[PMAX], buf[64];
	size_t len;
	int i;

	if (chance(r, 50) && (i = pick(r, t, 4)) >= 0) {
		gitlink(r, buf, &len);
		free(t->f[i].data);
		t->f[i].data = xmemdup(buf, len);
		return;
	}
	random_path(r, path, sizeof(path));
	gitlink(r, buf, &len);
	put(t, path, 0160000, buf, len);
}

/* A file becomes a directory (a file is added under its path), or a
 * directory becomes a file (a file at a file's directory). */
static void op_file_dir_swap(rng *r, gtree *t, int to_dir)
{
	char path[PMAX], *d;
	size_t len;
	int i = pick(r, t, 1 | 2);

	if (i < 0 || (!to_dir && !strchr(t->f[i].path, '/')))
		return;
	d = text(r, &len);
	if (to_dir)
		snprintf(path, sizeof(path), "%.80s/%s", t->f[i].path, chance(r, 50) ? "a" : "in");
	else
		snprintf(path, sizeof(path), "%.*s",
			 (int)(strrchr(t->f[i].path, '/') - t->f[i].path), t->f[i].path);
	put(t, path, 0100644, d, len);
	free(d);
}

/* One random change, by a percentage: edit 30, add 12, delete 8, rename 16,
 * directory rename 6, mode 7, symlink 6, binary 5, submodule 2, file to
 * directory 4, directory to file 4. */
static void random_op(rng *r, gtree *t)
{
	int i, op = (int)(rnd(r) % 100);

	if (op < 30) {
		if ((i = pick(r, t, 1 | 8)) >= 0)
			edit_text(r, &t->f[i], chance(r, 10));
	} else if (op < 42) {
		op_add(r, t);
	} else if (op < 50) {
		if (t->n && (i = (int)(rnd(r) % (unsigned)t->n)) >= 0)
			del(t, i);
	} else if (op < 66) {
		op_rename(r, t);
	} else if (op < 72) {
		op_rename_dir(r, t);
	} else if (op < 79) {
		if ((i = pick(r, t, 1)) >= 0)
			t->f[i].mode = t->f[i].mode == 0100644 ? 0100755 : 0100644;
	} else if (op < 85) {
		op_symlink(r, t);
	} else if (op < 90) {
		op_binary(r, t);
	} else if (op < 92) {
		op_submodule(r, t);
	} else {
		op_file_dir_swap(r, t, op < 96);
	}
}

static void gen_base(rng *r, gtree *t)
{
	int n = chance(r, 3) ? 0 : 2 + (int)(rnd(r) % 10);
	t->n = 0;
	for (int i = 0; i < n; i++) {
		char path[PMAX];
		size_t len;
		char *d;
		random_path(r, path, sizeof(path));
		if (chance(r, 8)) {
			char buf[64];
			binary(r, buf, &len);
			put(t, path, 0100644, buf, len);
			continue;
		}
		if (chance(r, 6)) {
			put(t, path, 0120000, "target0", 7);
			continue;
		}
		d = text(r, &len);
		put(t, path, chance(r, 10) ? 0100755 : 0100644, d, len);
		free(d);
	}
}

static void gen_side(rng *r, const gtree *from, gtree *out)
{
	int ops = 1 + (int)(rnd(r) % 4);
	tree_copy(out, from);
	for (int i = 0; i < ops; i++)
		random_op(r, out);
}

/* ---- fast-import ----------------------------------------------------------- */

/* glibc gives memory back to the system eagerly; on some virtual machines
 * the resulting brk() churn makes git fast-import 50x slower */
#define GIT_MALLOC                                                                                 \
	"GLIBC_TUNABLES=glibc.malloc.top_pad=268435456:glibc.malloc.trim_threshold=268435456 "

static void emit_commit(FILE *fp, int mark, int from, const gtree *t)
{
	if (!from)
		fprintf(fp, "reset refs/heads/gen\n");
	fprintf(fp, "commit refs/heads/gen\nmark :%d\ncommitter T <t@t> 1700000000 +0000\ndata 0\n",
		mark);
	if (from)
		fprintf(fp, "from :%d\n", from);
	fprintf(fp, "deleteall\n");
	for (int i = 0; i < t->n; i++) {
		const gfile *f = &t->f[i];
		if (f->mode == 0160000) {
			fprintf(fp, "M 160000 %.*s %s\n", 40, f->data, f->path);
			continue;
		}
		fprintf(fp, "M %o inline %s\ndata %zu\n", f->mode, f->path, f->len);
		fwrite(f->data, 1, f->len, fp);
		fputc('\n', fp);
	}
	fputc('\n', fp);
}

typedef struct scen {
	git_oid c[3]; /* base, ours, theirs commits */
	int empty_base;
} scen;

static void read_marks(tu_repo *repo, scen *sc, int n)
{
	char path[PATH_MAX + 16], line[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/marks", repo->path);
	fp = fopen(path, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		int mark;
		char hex[41];
		if (sscanf(line, ":%d %40s", &mark, hex) != 2)
			continue;
		mark -= 1;
		if (mark / 3 < n)
			assert_int_equal(git_oid_fromstr(&sc[mark / 3].c[mark % 3], hex), 0);
	}
	fclose(fp);
}

/* ---- checking ----------------------------------------------------------------- */

static int walk_cb(const char *root, const git_tree_entry *e, void *payload)
{
	git_odb *odb = payload;
	(void)root;
	if (git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT)
		return 0;
	return git_odb_exists(odb, git_tree_entry_id(e)) ? 0 : -1;
}

/* Every object of the tree exists. */
static int tree_complete(git_repository *repo, const git_oid *id)
{
	git_tree *t = NULL;
	git_odb *odb = NULL;
	int ok;
	if (git_tree_lookup(&t, repo, id) < 0)
		return 0;
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	ok = git_tree_walk(t, GIT_TREEWALK_PRE, walk_cb, odb) == 0;
	git_odb_free(odb);
	git_tree_free(t);
	return ok;
}

typedef struct marker_walk {
	git_repository *repo;
	int found;
} marker_walk;

static int marker_cb(const char *root, const git_tree_entry *e, void *payload)
{
	marker_walk *w = payload;
	git_blob *b = NULL;
	(void)root;
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;
	if (git_blob_lookup(&b, w->repo, git_tree_entry_id(e)) == 0) {
		const char *p = git_blob_rawcontent(b);
		size_t n = (size_t)git_blob_rawsize(b);
		for (size_t i = 0; i + 7 <= n && !w->found; i++)
			w->found = (i == 0 || p[i - 1] == '\n') && !memcmp(p + i, "<<<<<<<", 7);
		git_blob_free(b);
	}
	return w->found ? -1 : 0; /* negative: stop the walk */
}

/* A blob of the tree has conflict markers. */
static int has_markers(git_repository *repo, const git_oid *id)
{
	git_tree *t = NULL;
	marker_walk w = {repo, 0};
	if (git_tree_lookup(&t, repo, id) < 0)
		return 0;
	git_tree_walk(t, GIT_TREEWALK_PRE, marker_cb, &w);
	git_tree_free(t);
	return w.found;
}

typedef struct totals {
	long compared, agreed, clean, conflicts, fallback, trivial, git_failed, markers;
} totals;

static char *read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;
	assert_non_null(fp);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	assert_true(n >= 0);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	buf[n] = '\0';
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

/* One batch of the differential: its situations and both sides' results. */
typedef struct batch {
	const char *config; /* git config commands run first, or NULL */
	unsigned long long seed;
	int n;
	tu_repo *repo;
	git_repository *g;
	scen *sc;
	git_oid *mine; /* rq_merge's result trees */
	int *mine_rc;  /* and statuses */
	long mismatches;
	totals *tot;
} batch;

/* Generate the batch's situations and import them with git fast-import. */
static void write_situations(batch *b)
{
	char path[PATH_MAX + 32];
	rng r = {b->seed};
	FILE *fp;

	snprintf(path, sizeof(path), "%s/stream", b->repo->path);
	fp = fopen(path, "w");
	assert_non_null(fp);
	for (int k = 0; k < b->n; k++) {
		gtree base, ours, theirs;
		gen_base(&r, &base);
		gen_side(&r, &base, &ours);
		if (chance(&r, 20))
			gen_side(&r, &ours, &theirs); /* partly the same changes */
		else
			gen_side(&r, &base, &theirs);
		b->sc[k].empty_base = base.n == 0;
		emit_commit(fp, 3 * k + 1, 0, &base);
		emit_commit(fp, 3 * k + 2, 3 * k + 1, &ours);
		emit_commit(fp, 3 * k + 3, 3 * k + 1, &theirs);
		tree_free(&base);
		tree_free(&ours);
		tree_free(&theirs);
	}
	fclose(fp);
	tu_git(b->repo, GIT_MALLOC "git fast-import --quiet --export-marks=marks <stream");
	read_marks(b->repo, b->sc, b->n);
}

/* New objects in memory: the repository's object directory is git's
 * alone, and loose objects are slow to write. */
static void add_memory_backend(git_repository *g)
{
	git_odb *odb = NULL;
	git_odb_backend *mem = NULL;

	assert_int_equal(git_repository_odb(&odb, g), 0);
	assert_int_equal(git_mempack_new(&mem), 0);
	assert_int_equal(git_odb_add_backend(odb, mem, 1000), 0);
	git_odb_free(odb);
}

/* rq_merger_merge over libgit2's ids (the tests read their trees with
 * libgit2 and git): converted at the call, SHA-1. */
static int merge_git(rq_merger *m, const git_oid *base, const git_oid *ours, const git_oid *theirs,
		     git_oid *out, rq_conflicts *conf, rq_error *err)
{
	rq_oid b, o, t, r = {{0}};
	int rc;

	if (base)
		rq_oid_from_git(&b, base);
	rq_oid_from_git(&o, ours);
	rq_oid_from_git(&t, theirs);
	rc = rq_merger_merge(m, base ? &b : NULL, &o, &t, &r, conf, err);
	if (rc == 0)
		assert_int_equal(rq_oid_to_git(out, &r, &rq_oid_sha1), 0);
	return rc;
}

/* rq_merge's merge of situation k (a root-commit base for every other
 * empty base), checked for consistency on its own. */
static void merge_one(batch *b, rq_merger *m, int k)
{
	git_oid trees[3];
	rq_conflicts conf = {0};
	rq_error err;
	size_t fb = rq_merger_stats(m)->fallback;

	for (int s = 0; s < 3; s++) {
		git_commit *c = NULL;
		assert_int_equal(git_commit_lookup(&c, b->g, &b->sc[k].c[s]), 0);
		git_oid_cpy(&trees[s], git_commit_tree_id(c));
		git_commit_free(c);
	}
	b->mine_rc[k] = merge_git(m, b->sc[k].empty_base && (k & 1) ? NULL : &trees[0], &trees[1],
				  &trees[2], &b->mine[k], &conf, &err);
	if (rq_merger_stats(m)->fallback != fb && getenv("RQ_MERGE_VERBOSE")) {
		char h[3][GIT_OID_HEXSZ + 1];
		for (int s = 0; s < 3; s++)
			git_oid_tostr(h[s], sizeof(h[s]), &b->sc[k].c[s]);
		fprintf(stderr, "fallback: %s %s %s\n", h[0], h[1], h[2]);
	}
	if (b->mine_rc[k] < 0)
		fail_msg("merge %d failed: %s", k, err.msg);
	if (b->mine_rc[k] == 1)
		assert_true(conf.n > 0);
	if (b->mine_rc[k] == 0 && !tree_complete(b->g, &b->mine[k]))
		fail_msg("merge %d: result tree %s is incomplete", k, tu_hex(&b->mine[k]));
	rq_conflicts_free(&conf);
}

/* replayq's merges first: their objects must not come from git. Returns
 * the number of picks that fell back. */
static long merge_all(batch *b)
{
	rq_merger *m = NULL;
	rq_error err;
	long fallback;

	add_memory_backend(b->g);
	assert_int_equal(rq_merger_new(&m, b->g, NULL, &err), 0);
	for (int k = 0; k < b->n; k++)
		merge_one(b, m, k);
	fallback = (long)rq_merger_stats(m)->fallback;
	b->tot->fallback += fallback;
	b->tot->trivial += (long)rq_merger_stats(m)->trivial;
	rq_merger_free(m);
	return fallback;
}

/* One record of git merge-tree --stdin's output at p (NUL-terminated
 * fields: status, tree, conflicted entries, an empty field): *clean and
 * *tree, and the next record; NULL when the record is incomplete (git
 * stopped there). */
static char *parse_record(char *p, char *end, int *clean, git_oid *tree)
{
	char *q = p;

	if (q >= end)
		return NULL;
	q += strlen(q) + 1;
	if (q >= end || git_oid_fromstr(tree, q) < 0)
		return NULL;
	q += strlen(q) + 1;
	while (q < end && *q)
		q += strlen(q) + 1;
	if (q >= end)
		return NULL;
	*clean = *p == '1';
	return q + 1;
}

/* Say how situation k differs (the first five of a batch). */
static void report_mismatch(batch *b, int k, int clean, const git_oid *tree)
{
	char h[5][GIT_OID_HEXSZ + 1];

	if (++b->mismatches > 5)
		return;
	git_oid_tostr(h[0], sizeof(h[0]), &b->sc[k].c[0]);
	git_oid_tostr(h[1], sizeof(h[1]), &b->sc[k].c[1]);
	git_oid_tostr(h[2], sizeof(h[2]), &b->sc[k].c[2]);
	git_oid_tostr(h[3], sizeof(h[3]), tree);
	git_oid_tostr(h[4], sizeof(h[4]), &b->mine[k]);
	fprintf(stderr,
		"MISMATCH %s seed %llu #%d: base %s ours %s theirs %s: git %s %s, rq %s %s\n",
		b->config && *b->config ? b->config : "default", b->seed, k, h[0], h[1], h[2],
		clean ? "clean" : "conflict", h[3],
		b->mine_rc[k] == 0   ? "clean"
		: b->mine_rc[k] == 1 ? "conflict"
				     : "error",
		b->mine_rc[k] == 0 ? h[4] : "-");
}

/* Compare git's outcome for situation k with rq_merge's. */
static void compare_one(batch *b, int k, int clean, const git_oid *tree)
{
	b->tot->compared++;
	if (clean)
		b->tot->clean++;
	else
		b->tot->conflicts++;
	if ((clean && b->mine_rc[k] == 0 && git_oid_equal(tree, &b->mine[k])) ||
	    (!clean && b->mine_rc[k] == 1)) {
		b->tot->agreed++;
		return;
	}
	if (clean && b->mine_rc[k] == 1 && has_markers(b->g, tree)) {
		/* merge-ort wrote conflict markers into a "clean" result (a
		 * rename colliding with an identical add while its content merge
		 * conflicts): a conflict */
		b->tot->agreed++;
		b->tot->markers++;
		return;
	}
	report_mismatch(b, k, clean, tree);
}

/* git merge-tree --stdin on the pairs from first on; returns the first
 * pair it did not answer (n when it answered all). */
static int compare_stdin_batch(batch *b, int first)
{
	char path[PATH_MAX + 32], *out, *p, *end;
	size_t outlen;
	FILE *fp;
	int k = first;

	snprintf(path, sizeof(path), "%s/pairs", b->repo->path);
	fp = fopen(path, "w");
	assert_non_null(fp);
	for (int j = first; j < b->n; j++) {
		fprintf(fp, "%s ", tu_hex(&b->sc[j].c[1]));
		fprintf(fp, "%s\n", tu_hex(&b->sc[j].c[2]));
	}
	fclose(fp);
	tu_run(b->repo,
	       GIT_MALLOC "git merge-tree --write-tree --no-messages --stdin <pairs >out 2>err");
	snprintf(path, sizeof(path), "%s/out", b->repo->path);
	out = read_file(path, &outlen);
	p = out;
	end = out + outlen;
	for (; k < b->n; k++) {
		int clean;
		git_oid tree;
		char *next = parse_record(p, end, &clean, &tree);
		if (!next)
			break;
		p = next;
		compare_one(b, k, clean, &tree);
	}
	free(out);
	return k;
}

/* git stopped at pair k: merge it alone (git may still die on it). */
static void compare_alone(batch *b, int k)
{
	char path[PATH_MAX + 32], *out;
	size_t outlen;
	git_oid tree;
	int st = tu_run(b->repo, "git merge-tree --write-tree %s %s >one 2>/dev/null",
			tu_hex(&b->sc[k].c[1]), tu_hex(&b->sc[k].c[2]));

	if (st != 0 && st != 1) {
		b->tot->git_failed++;
		return;
	}
	snprintf(path, sizeof(path), "%s/one", b->repo->path);
	out = read_file(path, &outlen);
	assert_true(outlen >= GIT_OID_HEXSZ);
	out[GIT_OID_HEXSZ] = '\0';
	assert_int_equal(git_oid_fromstr(&tree, out), 0);
	free(out);
	b->tot->compared++;
	if (st == 0 ? b->mine_rc[k] == 0 && git_oid_equal(&tree, &b->mine[k]) : b->mine_rc[k] == 1)
		b->tot->agreed++;
	else if (++b->mismatches <= 5)
		fprintf(stderr, "MISMATCH %s seed %llu #%d (alone)\n",
			b->config && *b->config ? b->config : "default", b->seed, k);
}

/* git merge-tree (merge-ort) on the same pairs; git itself dies on a few
 * states (merge-ort assertions): such a pair is skipped. */
static void compare_with_git(batch *b)
{
	for (int first = 0; first < b->n;) {
		int k = compare_stdin_batch(b, first);
		if (k < b->n)
			compare_alone(b, k++);
		first = k;
	}
}

static void run_batch(const char *config, unsigned long long seed, int n, totals *tot)
{
	batch b = {config, seed, n, tu_repo_new(1), NULL, NULL, NULL, NULL, 0, tot};
	long fallback;

	b.sc = calloc((size_t)n, sizeof(*b.sc));
	b.mine = calloc((size_t)n, sizeof(*b.mine));
	b.mine_rc = calloc((size_t)n, sizeof(*b.mine_rc));
	assert_non_null(b.sc);
	assert_non_null(b.mine);
	assert_non_null(b.mine_rc);
	if (config && *config)
		tu_git(b.repo, "%s", config);
	write_situations(&b);
	b.g = tu_repo_open(b.repo);
	fallback = merge_all(&b);
	compare_with_git(&b);
	free(b.mine);
	free(b.mine_rc);
	free(b.sc);
	if ((b.mismatches || fallback) && getenv("RQ_MERGE_KEEP")) {
		fprintf(stderr, "kept %s\n", b.repo->path);
		b.repo->root[0] = '\0';
	}
	tu_repo_free(b.repo);
	if (b.mismatches)
		fail_msg("%ld of %d merges differ from git merge-tree", b.mismatches, n);
}

/* ---- targeted cases ------------------------------------------------------------ */

/* Merge base..ours and base..theirs (branch names) with rq_merge and with
 * git merge-tree; both must agree; returns rq's result tree and status. */
static int merge_both(tu_repo *r, const char *base, const char *ours, const char *theirs,
		      git_oid *out, rq_merge_stats *stats)
{
	git_repository *g = tu_repo_open(r);
	git_oid c[3], t[3], gt;
	const char *revs[3] = {base, ours, theirs};
	rq_merger *m = NULL;
	rq_error err;
	rq_conflicts conf = {0};
	char *git_tree;
	int rc, st;

	for (int i = 0; i < 3; i++) {
		git_commit *cm = NULL;
		tu_rev_parse(r, revs[i], &c[i]);
		assert_int_equal(git_commit_lookup(&cm, g, &c[i]), 0);
		git_oid_cpy(&t[i], git_commit_tree_id(cm));
		git_commit_free(cm);
	}
	assert_int_equal(rq_merger_new(&m, g, NULL, &err), 0);
	rc = merge_git(m, &t[0], &t[1], &t[2], out, &conf, &err);
	if (stats)
		*stats = *rq_merger_stats(m);
	rq_merger_free(m);
	rq_conflicts_free(&conf);
	st = tu_run(r, "git merge-tree --write-tree %s %s >mt.out", ours, theirs);
	assert_true(st == 0 || st == 1);
	git_tree = tu_capture(r, "head -1 mt.out");
	assert_non_null(git_tree);
	assert_int_equal(git_oid_fromstr(&gt, git_tree), 0);
	free(git_tree);
	assert_int_equal(rc, st);
	if (rc == 0)
		assert_true(git_oid_equal(&gt, out));
	return rc;
}

static char *blob_at(tu_repo *r, const git_oid *tree, const char *path)
{
	return tu_capture_raw(r, NULL, "git cat-file -p %s:%s", tu_hex(tree), path);
}

/* merge-ort diffs with the histogram algorithm, not myers: here myers would
 * give an extra "}" line */
static void test_histogram_content_merge(void **state)
{
	tu_repo *r = tu_repo_new(0);
	git_oid out;
	char *text;
	(void)state;
	tu_commit_file(r, "a", "x\nc\n}\n", "base");
	tu_git(r, "git branch base && git checkout -q -b ours");
	tu_commit_file(r, "a", "x\nc\n}\n}\n", "ours");
	tu_git(r, "git checkout -q base && git checkout -q -b theirs");
	tu_commit_file(r, "a", "c\nc\n}\n}\n", "theirs");
	assert_int_equal(merge_both(r, "base", "ours", "theirs", &out, NULL), 0);
	text = blob_at(r, &out, "a");
	assert_string_equal(text, "c\nc\n}\n}\n");
	free(text);
	tu_repo_free(r);
}

/* upstream renamed (and moved) the file the topic edits: the edit lands at
 * the new path; a file added next to it follows a directory rename only
 * with merge.directoryRenames=true */
static void test_rename_takes_the_edit(void **state)
{
	tu_repo *r = tu_repo_new(0);
	git_oid out;
	rq_merge_stats st;
	char *text;
	(void)state;
	tu_commit_file(r, "src/util.c", "one\ntwo\nthree\nfour\nfive\nsix\n", "base");
	tu_commit_file(r, "src/other.c", "1\n2\n3\n4\n", "base 2");
	tu_git(r, "git branch base && git checkout -q -b upstream && "
		  "git mv src lib && git commit -q -m move");
	tu_commit_file(r, "lib/util.c", "zero\none\ntwo\nthree\nfour\nfive\nsix\n",
		       "upstream edit");
	tu_git(r, "git checkout -q base && git checkout -q -b topic");
	tu_commit_file(r, "src/util.c", "one\ntwo\nthree\nfour\nFIVE\nsix\n", "topic edit");
	assert_int_equal(merge_both(r, "base", "upstream", "topic", &out, &st), 0);
	assert_int_equal(st.full, 1);
	assert_int_equal(st.fallback, 0);
	text = blob_at(r, &out, "lib/util.c");
	assert_string_equal(text, "zero\none\ntwo\nthree\nfour\nFIVE\nsix\n");
	free(text);
	assert_int_not_equal(tu_run(r, "git cat-file -e %s:src/util.c 2>/dev/null", tu_hex(&out)),
			     0);

	/* a new file in the old directory: a conflict by default */
	tu_commit_file(r, "src/new.c", "new\n", "topic add");
	assert_int_equal(merge_both(r, "base", "upstream", "topic", &out, NULL), 1);
	tu_git(r, "git config merge.directoryRenames true");
	assert_int_equal(merge_both(r, "base", "upstream", "topic", &out, NULL), 0);
	assert_int_equal(tu_run(r, "git cat-file -e %s:lib/new.c", tu_hex(&out)), 0);
	tu_repo_free(r);
}

/* trivial picks read no tree; conflicts name their paths and kinds */
static void test_trivial_and_conflicts(void **state)
{
	tu_repo *r = tu_repo_new(0);
	git_repository *g;
	git_oid t[3], out, empty;
	rq_merger *m = NULL;
	rq_error err;
	rq_conflicts conf = {0};
	(void)state;
	tu_commit_file(r, "a", "1\n2\n3\n", "base");
	tu_commit_file(r, "b", "b\n", "base 2");
	tu_git(r, "git branch base && git checkout -q -b ours");
	tu_commit_file(r, "a", "1\nours\n3\n", "ours");
	tu_git(r, "git rm -q b && git commit -q -m rm");
	tu_git(r, "git checkout -q base && git checkout -q -b theirs");
	tu_commit_file(r, "a", "1\ntheirs\n3\n", "theirs");
	tu_commit_file(r, "b", "b changed\n", "theirs 2");
	g = tu_repo_open(r);
	tu_rev_parse(r, "base^{tree}", &t[0]);
	tu_rev_parse(r, "ours^{tree}", &t[1]);
	tu_rev_parse(r, "theirs^{tree}", &t[2]);
	git_oid_fromraw(&empty, rq_oid_sha1.empty_tree.id);
	assert_int_equal(rq_merger_new(&m, g, NULL, &err), 0);
	assert_int_equal(merge_git(m, &t[0], &t[1], &t[0], &out, &conf, &err), 0);
	assert_true(git_oid_equal(&out, &t[1]));
	assert_int_equal(merge_git(m, &t[0], &t[0], &t[2], &out, &conf, &err), 0);
	assert_true(git_oid_equal(&out, &t[2]));
	assert_int_equal(merge_git(m, NULL, &empty, &t[2], &out, &conf, &err), 0);
	assert_true(git_oid_equal(&out, &t[2]));
	assert_int_equal(rq_merger_stats(m)->trivial, 3);
	assert_int_equal(rq_merger_stats(m)->full, 0);
	assert_int_equal(merge_git(m, &t[0], &t[1], &t[2], &out, &conf, &err), 1);
	assert_int_equal(rq_merger_stats(m)->full, 1);
	assert_int_equal(rq_merger_stats(m)->fallback, 0);
	assert_int_equal(conf.n, 2);
	for (size_t i = 0; i < conf.n; i++) {
		if (!strcmp(conf.v[i].path, "a"))
			assert_string_equal(rq_conflict_kind_name(conf.v[i].kind), "content");
		else if (!strcmp(conf.v[i].path, "b"))
			assert_string_equal(rq_conflict_kind_name(conf.v[i].kind), "modify/delete");
		else
			fail_msg("unexpected conflict %s", conf.v[i].path);
	}
	rq_conflicts_free(&conf);
	rq_merger_free(m);
	tu_repo_free(r);
}

static int scale(void)
{
	const char *s = getenv("RQ_MERGE_SEEDS");
	int n = s ? atoi(s) : 1;
	return n > 0 ? n : 1;
}

static totals grand;

static void test_differential_default(void **state)
{
	(void)state;
	for (int i = 0; i < scale(); i++)
		run_batch(NULL, 1000 + (unsigned long long)i, 5000, &grand);
}

static void test_differential_dir_renames_true(void **state)
{
	(void)state;
	for (int i = 0; i < scale(); i++)
		run_batch("git config merge.directoryRenames true", 2000 + (unsigned long long)i,
			  1500, &grand);
}

static void test_differential_no_dir_renames_diff3(void **state)
{
	(void)state;
	for (int i = 0; i < scale(); i++)
		run_batch("git config merge.directoryRenames false && "
			  "git config merge.conflictStyle diff3",
			  3000 + (unsigned long long)i, 1500, &grand);
}

static void test_differential_rename_limit(void **state)
{
	(void)state;
	for (int i = 0; i < scale(); i++)
		run_batch("git config merge.renameLimit 1", 4000 + (unsigned long long)i, 1000,
			  &grand);
}

/* The conflict list: paths copied, kinds kept, names stable. */
static void test_conflict_list(void **state)
{
	rq_conflicts c = {0};
	char path[] = "a/b";

	(void)state;
	assert_int_equal(rq_conflicts_add(&c, path, RQ_CONFLICT_RENAME_DELETE), 0);
	path[0] = 'x';
	for (int i = 0; i < 20; i++)
		assert_int_equal(rq_conflicts_add(&c, "c", RQ_CONFLICT_CONTENT), 0);
	assert_int_equal(c.n, 21);
	assert_string_equal(c.v[0].path, "a/b");
	assert_int_equal(c.v[0].kind, RQ_CONFLICT_RENAME_DELETE);
	assert_string_equal(rq_conflict_kind_name(c.v[0].kind), "rename/delete");
	assert_string_equal(rq_conflict_kind_name(RQ_CONFLICT_DIR_RENAME), "directory rename");
	assert_string_equal(rq_conflict_kind_name((rq_conflict_kind)-1), "content");
	rq_conflicts_free(&c);
	assert_int_equal(c.n, 0);
	assert_null(c.v);
}

static void test_summary(void **state)
{
	(void)state;
	fprintf(stderr,
		"differential: %ld merges compared with git merge-tree, %ld agreed "
		"(%ld clean, %ld conflicts in git); rq trivial %ld, fallback %ld; "
		"%ld skipped (git merge-tree itself failed); %ld conflicts where git wrote "
		"conflict markers into a clean result\n",
		grand.compared, grand.agreed, grand.clean, grand.conflicts, grand.trivial,
		grand.fallback, grand.git_failed, grand.markers);
	assert_int_equal(grand.compared, grand.agreed);
	assert_true(grand.compared > 0);
}

/* A merger of SHA-256 ids: the empty tree of a root pick is the format's
 * (a trivial pick here, where the SHA-1 empty tree would make it a full
 * merge), and its reads go by the whole id through core/odb's reader (in
 * this SHA-1 database: not found, never a misread 20-byte prefix). */
static void test_sha256_merger(void **state)
{
	tu_repo *r = tu_repo_new(0);
	rq_merger_opts opts = {NULL, &rq_oid_sha256};
	rq_merger *m = NULL;
	rq_conflicts conf = {0};
	rq_error err;
	rq_oid a, b, c, out;
	(void)state;
	memset(&a, 0x11, sizeof(a));
	memset(&b, 0x22, sizeof(b));
	memset(&c, 0x33, sizeof(c));
	assert_int_equal(rq_merger_new(&m, tu_repo_open(r), &opts, &err), 0);
	assert_ptr_equal(rq_merger_algo(m), &rq_oid_sha256);
	rq_error_clear(&err);
	assert_int_equal(rq_merger_merge(m, NULL, &rq_oid_sha256.empty_tree, &c, &out, &conf, &err),
			 -1);
	assert_int_equal(rq_merger_stats(m)->trivial, 1);
	/* (the reader formats ids at the database's width: SHA-1 here) */
	assert_non_null(
	    strstr(err.msg, "cannot read tree: object not found - no match for id (3333"));
	rq_error_clear(&err);
	assert_int_equal(rq_merger_merge(m, &a, &b, &c, &out, &conf, &err), -1);
	assert_int_equal(rq_merger_stats(m)->full, 1);
	assert_int_equal(err.code, RQ_E_GIT);
	assert_non_null(strstr(err.msg, "object not found - no match for id (1111"));
	assert_int_equal(conf.n, 0);
	rq_merger_free(m);
	/* NULL options: SHA-1 */
	assert_int_equal(rq_merger_new(&m, tu_repo_open(r), NULL, &err), 0);
	assert_ptr_equal(rq_merger_algo(m), &rq_oid_sha1);
	rq_merger_free(m);
	tu_repo_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_histogram_content_merge),
	    cmocka_unit_test(test_rename_takes_the_edit),
	    cmocka_unit_test(test_trivial_and_conflicts),
	    cmocka_unit_test(test_sha256_merger),
	    cmocka_unit_test(test_conflict_list),
	    cmocka_unit_test(test_differential_default),
	    cmocka_unit_test(test_differential_dir_renames_true),
	    cmocka_unit_test(test_differential_no_dir_renames_diff3),
	    cmocka_unit_test(test_differential_rename_limit),
	    cmocka_unit_test(test_summary),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
