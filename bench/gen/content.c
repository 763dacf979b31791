/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * content: writes a `git fast-import` stream for the content-heavy replay
 * benchmark (issue: speed on real-content workloads).
 *
 *   content NFILES SEED
 *
 * The repository looks like a large C project: NFILES files under
 * src/modNN/, an eighth of them large (50-200 KB of source-like lines), the
 * rest small (1-6 KB). Branches:
 *
 *   fork          the end of a long history (HISTORY commits, each editing
 *                 1-3 large files anywhere and now and then adding a small
 *                 one): the point every topic forked from
 *   main          MAIN_COMMITS commits after fork editing large files, in
 *                 the even 64-line blocks of each file only; some commits
 *                 rename a large file (to another module, with an edit)
 *   t-clean-N     N commits from fork editing the large files main edited,
 *                 in the odd blocks only: each pick is a clean content
 *                 merge of 50-200 KB files (N = 5, 10, 20, 30)
 *   t-rename-N    the same on files main renamed: rename detection and a
 *                 content merge per pick (N = 8, 15)
 *   t-conflict-N  N - 1 clean commits, then one that edits a line main
 *                 changed in a large file: the last pick conflicts
 *                 (N = 6, 12)
 *
 * Lines are made from a 64-bit seed each, so a file is an array of seeds;
 * an edit replaces seeds (and sometimes inserts and deletes as many in the
 * same region), which keeps every block's position fixed and the topics'
 * merges clean by construction. Deterministic for (NFILES, SEED).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

#define HISTORY	     400
#define MAIN_COMMITS 300
#define BLOCK	     64
#define T0	     1600000000L
#define NMODS	     40

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		perror("realloc");
		exit(1);
	}
	return q;
}

/* One file as one branch sees it. */
struct file {
	char path[64];
	uint64_t *line; /* one seed a line */
	size_t n;
	int large;
	int deleted;
};

/* A branch: all files (copied on write is not worth it at this size). */
struct branch {
	struct file *f;
	size_t n;
	uint32_t mark;
	long when;
};

static void file_copy(struct file *dst, const struct file *src)
{
	*dst = *src;
	dst->line = xrealloc(NULL, src->n * sizeof(uint64_t));
	memcpy(dst->line, src->line, src->n * sizeof(uint64_t));
}

static struct branch branch_copy(const struct branch *b)
{
	struct branch c = *b;
	c.f = xrealloc(NULL, b->n * sizeof(*b->f));
	for (size_t i = 0; i < b->n; i++)
		file_copy(&c.f[i], &b->f[i]);
	return c;
}

static void branch_free(struct branch *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->f[i].line);
	free(b->f);
	b->f = NULL;
	b->n = 0;
}

/* ---- source-like text ---- */

static const char *const idents[32] = {
    "buf",    "len",	"ctx",	  "node",  "entry", "count", "offset", "flags",
    "state",  "result", "table",  "index", "item",  "limit", "cursor", "path",
    "parent", "child",	"hash",	  "key",   "value", "size",  "error",  "lock",
    "queue",  "list",	"stream", "block", "frame", "token", "slot",   "range"};
static const char *const funcs[16] = {"lookup", "insert", "update", "release", "resolve", "parse",
				      "emit",	"flush",  "reset",  "grow",    "shrink",  "merge",
				      "split",	"scan",	  "check",  "commit"};

static size_t line_text(uint64_t s, char *out)
{
	int depth = (int)(s & 3);
	const char *a = idents[(s >> 2) & 31], *b = idents[(s >> 7) & 31];
	const char *fn = funcs[(s >> 12) & 15];
	unsigned v = (unsigned)((s >> 16) & 0xffff), w = (unsigned)((s >> 32) & 0xfff);
	size_t n = 0;

	for (int i = 0; i < depth + 1; i++)
		out[n++] = '\t';
	switch ((s >> 44) & 7) {
	case 0:
		n += (size_t)sprintf(out + n, "if (%s_%u->%s > %u)\n", a, w, b, v);
		break;
	case 1:
		n += (size_t)sprintf(out + n, "%s_%u = %s_%s(%s, %u);\n", a, w, fn, b, a, v);
		break;
	case 2:
		n += (size_t)sprintf(out + n, "/* %s the %s before the %s (%u) */\n", fn, a, b, v);
		break;
	case 3:
		n += (size_t)sprintf(out + n, "for (size_t i_%u = 0; i_%u < %s; i_%u++)\n", w, w, a,
				     w);
		break;
	case 4:
		n += (size_t)sprintf(out + n, "return %s_%s(%s_%u, %s + %u);\n", b, fn, a, w, b, v);
		break;
	case 5:
		n += (size_t)sprintf(out + n, "}\n");
		break;
	case 6:
		n += (size_t)sprintf(out + n, "%s->%s_%u |= 0x%04x;\n", a, b, w, v);
		break;
	default:
		n += (size_t)sprintf(out + n, "err = %s_%s(&%s->%s, %u);\n", a, fn, b, a, w);
		break;
	}
	return n;
}

static char *text_buf;
static size_t text_cap;

static void emit_file(const struct file *f)
{
	size_t len = 0;
	if (text_cap < f->n * 96 + 1) {
		text_cap = f->n * 96 + 1;
		text_buf = xrealloc(text_buf, text_cap);
	}
	for (size_t i = 0; i < f->n; i++)
		len += line_text(f->line[i], text_buf + len);
	printf("M 100644 inline %s\ndata %zu\n", f->path, len);
	fwrite(text_buf, 1, len, stdout);
	putchar('\n');
}

/* ---- commits ---- */

static uint32_t mark;
static const char *const authors[4] = {
    "Ada Lovelace <ada@example.com>", "Alan Turing <alan@example.com>",
    "Grace Hopper <grace@example.com>", "Edsger Dijkstra <edsger@example.com>"};

static void commit_begin(struct branch *b, const char *ref, const char *subject, unsigned n)
{
	b->when += 60 + rndn(3600);
	printf("commit %s\nmark :%u\n", ref, ++mark);
	printf("author %s %ld +0000\n", authors[rndn(4)], b->when);
	printf("committer C O Mitter <committer@example.com> %ld +0000\n", b->when);
	char msg[160];
	int len = snprintf(msg, sizeof(msg), "%s %u\n\nGenerated change %u of the corpus.\n",
			   subject, n, mark);
	printf("data %d\n%s", len, msg);
	if (b->mark)
		printf("from :%u\n", b->mark);
	b->mark = mark;
}

static void new_file(struct branch *b, int large)
{
	struct file f = {0};
	size_t id = b->n;
	f.large = large;
	f.n = large ? (size_t)(1300 + rndn(3800)) : (size_t)(25 + rndn(130));
	f.line = xrealloc(NULL, f.n * sizeof(uint64_t));
	for (size_t i = 0; i < f.n; i++)
		f.line[i] = rnd();
	snprintf(f.path, sizeof(f.path), "src/mod%02zu/%s_%zu.c", id % NMODS, funcs[id % 16], id);
	b->f = xrealloc(b->f, (b->n + 1) * sizeof(*b->f));
	b->f[b->n++] = f;
}

/*
 * Edits lines of f in blocks of the given parity (0: even, 1: odd, -1: any),
 * in the middle half of a block, so that edits of the two parities are
 * always at least 16 unchanged lines apart. Returns the last line changed.
 */
static size_t edit_file(struct file *f, int parity)
{
	size_t nblocks = f->n / BLOCK, at = 0;
	int hunks = 1 + (int)rndn(4);
	for (int h = 0; h < hunks && nblocks >= 2; h++) {
		size_t blk = rndn((uint32_t)nblocks);
		if (parity >= 0 && (int)(blk & 1) != parity)
			blk = blk ^ 1;
		if (blk >= nblocks)
			blk -= 2;
		size_t lo = blk * BLOCK + BLOCK / 4, span = 1 + rndn(6);
		at = lo + rndn(BLOCK / 2 - (uint32_t)span);
		for (size_t i = 0; i < span; i++)
			f->line[at + i] = rnd();
		if (rndn(3) == 0 && span >= 2) {
			/* move a line within the region: a delete and an insert */
			uint64_t t = f->line[at];
			memmove(&f->line[at], &f->line[at + 1], (span - 1) * sizeof(uint64_t));
			f->line[at + span - 1] = t ^ 0x5555;
		}
	}
	return at;
}

static struct file *pick_large(struct branch *b, int want_touched, const unsigned char *touched)
{
	for (;;) {
		size_t i = rndn((uint32_t)b->n);
		if (!b->f[i].large || b->f[i].deleted)
			continue;
		if (want_touched >= 0 && (touched[i] != 0) != (want_touched != 0))
			continue;
		return &b->f[i];
	}
}

/* ---- the branches ---- */

static size_t nfiles;
static unsigned char *touched; /* main edited it */
static unsigned char *renamed; /* main renamed it */
static size_t *main_line;      /* a line main changed in it */

static void gen_base(struct branch *b)
{
	for (size_t i = 0; i < nfiles; i++)
		new_file(b, i % 8 == 3);
	commit_begin(b, "refs/heads/main", "Import the tree", 0);
	for (size_t i = 0; i < b->n; i++)
		emit_file(&b->f[i]);
	putchar('\n');
}

static void gen_history(struct branch *b)
{
	for (unsigned c = 1; c <= HISTORY; c++) {
		if (c % 10 == 0) {
			new_file(b, 0);
			commit_begin(b, "refs/heads/main", "Add a helper", c);
			emit_file(&b->f[b->n - 1]);
		} else {
			commit_begin(b, "refs/heads/main", "Rework a module", c);
		}
		for (int k = 1 + (int)rndn(3); k > 0; k--) {
			struct file *f = pick_large(b, -1, NULL);
			edit_file(f, -1);
			emit_file(f);
		}
		putchar('\n');
	}
	printf("reset refs/heads/fork\nfrom :%u\n\n", b->mark);
}

static void rename_large(struct branch *b, struct file *f, unsigned c)
{
	size_t i = (size_t)(f - b->f);
	printf("D %s\n", f->path);
	snprintf(f->path, sizeof(f->path), "src/mod%02zu/moved_%zu_%u.c", (i + 7) % NMODS, i, c);
	renamed[i] = 1;
}

static void gen_main(struct branch *b)
{
	for (unsigned c = 1; c <= MAIN_COMMITS; c++) {
		commit_begin(b, "refs/heads/main", "Upstream change", c);
		for (int k = 1 + (int)rndn(3); k > 0; k--) {
			struct file *f = pick_large(b, -1, NULL);
			size_t i = (size_t)(f - b->f);
			if (renamed[i])
				continue;
			if (c % 15 == 0 && k == 1)
				rename_large(b, f, c);
			main_line[i] = edit_file(f, 0);
			touched[i] = 1;
			emit_file(f);
		}
		putchar('\n');
	}
}

/* A large file main edited (renamed or not, as asked). */
static struct file *pick_merged(struct branch *t, int want_renamed)
{
	for (;;) {
		struct file *f = pick_large(t, 1, touched);
		if ((renamed[f - t->f] != 0) == (want_renamed != 0))
			return f;
	}
}

static void gen_topic(const struct branch *fork, const char *kind, unsigned n)
{
	struct branch t = branch_copy(fork);
	char ref[64];
	snprintf(ref, sizeof(ref), "refs/heads/t-%s-%u", kind, n);
	for (unsigned c = 1; c <= n; c++) {
		int conflict = !strcmp(kind, "conflict") && c == n;
		commit_begin(&t, ref, conflict ? "Topic change (conflicts)" : "Topic change", c);
		for (int k = conflict ? 1 : 1 + (int)rndn(2); k > 0; k--) {
			struct file *f = pick_merged(&t, !strcmp(kind, "rename") && k == 1);
			if (conflict)
				f->line[main_line[f - t.f]] = rnd();
			else
				edit_file(f, 1);
			emit_file(f);
		}
		putchar('\n');
	}
	branch_free(&t);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: content NFILES SEED\n");
		return 2;
	}
	nfiles = strtoul(argv[1], NULL, 10);
	rng_state = strtoull(argv[2], NULL, 10) * 0x2545f4914f6cdd1dULL + 7;
	if (nfiles < 64) {
		fprintf(stderr, "content: NFILES must be at least 64\n");
		return 2;
	}
	struct branch b = {NULL, 0, 0, T0};
	gen_base(&b);
	gen_history(&b);
	struct branch fork = branch_copy(&b);
	touched = calloc(b.n, 1);
	renamed = calloc(b.n, 1);
	main_line = calloc(b.n, sizeof(size_t));
	if (!touched || !renamed || !main_line)
		return 1;
	gen_main(&b);
	static const unsigned clean[] = {5, 10, 20, 30}, ren[] = {8, 15}, conf[] = {6, 12};
	for (size_t i = 0; i < 4; i++)
		gen_topic(&fork, "clean", clean[i]);
	for (size_t i = 0; i < 2; i++)
		gen_topic(&fork, "rename", ren[i]);
	for (size_t i = 0; i < 2; i++)
		gen_topic(&fork, "conflict", conf[i]);
	printf("done\n");
	branch_free(&b);
	branch_free(&fork);
	free(touched);
	free(renamed);
	free(main_line);
	free(text_buf);
	return 0;
}
