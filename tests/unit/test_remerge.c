/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_remerge and the merges under it.
 *
 * 1. The conflicted text of an accepting merge against git's: random text
 *    conflicts (small alphabets, so that hunks overlap, touch and repeat;
 *    some files with CRLF ends, some without a last newline) merged by
 *    `git merge-tree --write-tree --stdin` (merge-ort, which writes the
 *    conflicted blobs) and by rq_merger_merge_accept with git's labels:
 *    every conflicted blob must be byte for byte git's, in the styles
 *    merge, diff3 and zdiff3; with the union driver, no conflict and git's
 *    text.
 * 2. The rules of a remerge (rq_remerge.h), one hand-made history each: a
 *    resolution carried where N has R's conflict, a conflict where N's
 *    differs ("resolution") or is new (its own kind), R's conflict with
 *    none in N, an evil change, modify/delete alike and not, a hunk of N
 *    left where the author did nothing, an octopus clean and not, the
 *    union driver in all three merges.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2/sys/mempack.h>

#include "rq_commits.h"
#include "rq_remerge.h"

/* ---- 1. conflicted text against git ---------------------------------------------- */

typedef struct rng {
	unsigned long long s;
} rng;

static unsigned rnd(rng *r, unsigned n)
{
	r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((r->s >> 33) % n);
}

#define LMAX 40

typedef struct text {
	char line[LMAX][8];
	int n;
} text;

/* A base of 6-20 lines from a small alphabet (repeats make the diffs
 * ambiguous, as real code does). */
static void gen_base(rng *r, text *t)
{
	t->n = 6 + (int)rnd(r, 15);
	for (int i = 0; i < t->n; i++)
		snprintf(t->line[i], sizeof(t->line[i]), "%c", "abcdefgh"[rnd(r, 8)]);
}

/* A side: 1-4 edits (replace, insert, delete) of the base. */
static void gen_side(rng *r, const text *base, text *t, char tag)
{
	*t = *base;
	for (int e = 1 + (int)rnd(r, 4); e > 0; e--) {
		int at = (int)rnd(r, (unsigned)t->n + 1), op = (int)rnd(r, 3);
		if (op == 0 && at < t->n) {
			snprintf(t->line[at], sizeof(t->line[at]), "%c%u", tag, rnd(r, 5));
		} else if (op == 1 && t->n < LMAX) {
			memmove(t->line[at + 1], t->line[at],
				(size_t)(t->n - at) * sizeof(t->line[0]));
			snprintf(t->line[at], sizeof(t->line[at]), "%c%u", tag, rnd(r, 5));
			t->n++;
		} else if (at < t->n && t->n > 1) {
			memmove(t->line[at], t->line[at + 1],
				(size_t)(t->n - at - 1) * sizeof(t->line[0]));
			t->n--;
		}
	}
}

/* Its file: lines ending in eol, the last one without when cut. */
static void emit_text(FILE *fp, const text *t, const char *eol, int cut)
{
	char buf[LMAX * 12];
	size_t n = 0;

	for (int i = 0; i < t->n; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", t->line[i],
				      cut && i == t->n - 1 ? "" : eol);
	fprintf(fp, "M 100644 inline f\ndata %zu\n", n);
	fwrite(buf, 1, n, fp);
	fputc('\n', fp);
}

static void emit_commit(FILE *fp, int mark, int from, const text *t, const char *eol, int cut)
{
	fprintf(fp, "commit refs/heads/s\nmark :%d\ncommitter C <c@e> 1700000000 +0000\n", mark);
	fprintf(fp, "data 1\nx\n");
	if (from)
		fprintf(fp, "from :%d\n", from);
	else
		fprintf(fp, "from 0000000000000000000000000000000000000000\n");
	fprintf(fp, "deleteall\n");
	emit_text(fp, t, eol, cut);
}

#define NSIT 300

/* The situations: base, ours, theirs commits (marks 3k+1..3k+3). */
static void write_situations(tu_repo *r, unsigned long long seed, git_oid (*c)[3])
{
	char path[PATH_MAX + 32], line[128];
	rng g = {seed};
	FILE *fp;

	snprintf(path, sizeof(path), "%s/stream", r->path);
	assert_non_null(fp = fopen(path, "w"));
	for (int k = 0; k < NSIT; k++) {
		text base, ours, theirs;
		const char *eol = k % 5 == 4 ? "\r\n" : "\n";
		int cut = k % 7 == 3;
		gen_base(&g, &base);
		gen_side(&g, &base, &ours, 'o');
		gen_side(&g, &base, &theirs, 't');
		emit_commit(fp, 3 * k + 1, 0, &base, eol, cut);
		emit_commit(fp, 3 * k + 2, 3 * k + 1, &ours, eol, cut);
		emit_commit(fp, 3 * k + 3, 3 * k + 1, &theirs, eol, cut);
	}
	fclose(fp);
	tu_git(r, "git fast-import --quiet --export-marks=marks <stream");
	snprintf(path, sizeof(path), "%s/marks", r->path);
	assert_non_null(fp = fopen(path, "r"));
	while (fgets(line, sizeof(line), fp)) {
		int mark;
		char hex[41];
		if (sscanf(line, ":%d %40s", &mark, hex) == 2)
			assert_int_equal(git_oid_fromstr(&c[(mark - 1) / 3][(mark - 1) % 3], hex),
					 0);
	}
	fclose(fp);
}

static void tree_of(git_repository *g, const git_oid *commit, git_oid *out)
{
	git_commit *c = NULL;
	assert_int_equal(git_commit_lookup(&c, g, commit), 0);
	git_oid_cpy(out, git_commit_tree_id(c));
	git_commit_free(c);
}

/* The blob at f of tree (NULL: none), as a malloc'ed string. */
static char *blob_f(git_repository *g, const git_oid *tree, size_t *len)
{
	git_tree *t = NULL;
	git_tree_entry *e = NULL;
	git_blob *b = NULL;
	char *s = NULL;

	assert_int_equal(git_tree_lookup(&t, g, tree), 0);
	if (git_tree_entry_bypath(&e, t, "f") == 0 &&
	    git_blob_lookup(&b, g, git_tree_entry_id(e)) == 0) {
		*len = (size_t)git_blob_rawsize(b);
		s = malloc(*len + 1);
		assert_non_null(s);
		memcpy(s, git_blob_rawcontent(b), *len);
		s[*len] = '\0';
	}
	git_blob_free(b);
	git_tree_entry_free(e);
	git_tree_free(t);
	return s;
}

/* rq's accepting merge of situation c, labelled as git labels it. */
static int rq_accept(git_repository *g, rq_merger *m, const git_oid *c, git_oid *out)
{
	char ours[GIT_OID_HEXSZ + 1], theirs[GIT_OID_HEXSZ + 1];
	git_object *base = NULL;
	git_buf shortid = GIT_BUF_INIT;
	git_oid t[3];
	rq_oid rt[3], rout = {{0}};
	rq_conflicts conf = {0};
	rq_conflict_details det = {0};
	rq_merge_marks marks;
	rq_error err;
	int rc;

	for (int s = 0; s < 3; s++) {
		tree_of(g, &c[s], &t[s]);
		rq_oid_from_git(&rt[s], &t[s]);
	}
	git_oid_tostr(ours, sizeof(ours), &c[1]);
	git_oid_tostr(theirs, sizeof(theirs), &c[2]);
	assert_int_equal(git_object_lookup(&base, g, &c[0], GIT_OBJECT_COMMIT), 0);
	assert_int_equal(git_object_short_id(&shortid, base), 0);
	marks = (rq_merge_marks){ours, shortid.ptr, theirs, 0};
	rc = rq_merger_merge_accept(m, &rt[0], &rt[1], &rt[2], &marks, &rout, &conf, &det, &err);
	assert_true(rc == 0 || rc == 1);
	assert_int_equal(rq_oid_to_git(out, &rout, &rq_oid_sha1), 0);
	assert_int_equal(conf.n, rc ? det.n : 0);
	rq_conflicts_free(&conf);
	rq_conflict_details_free(&det);
	git_buf_dispose(&shortid);
	git_object_free(base);
	return rc;
}

/* git merge-tree on every situation; each record's status and tree. */
static void git_merges(tu_repo *r, git_oid (*c)[3], int *clean, git_oid *trees)
{
	char path[PATH_MAX + 32], *out, *p, *end;
	size_t len;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/pairs", r->path);
	assert_non_null(fp = fopen(path, "w"));
	for (int k = 0; k < NSIT; k++) {
		fprintf(fp, "%s ", tu_hex(&c[k][1]));
		fprintf(fp, "%s\n", tu_hex(&c[k][2]));
	}
	fclose(fp);
	tu_git(r, "git merge-tree --write-tree --no-messages -z --stdin <pairs >out");
	assert_non_null(out = tu_capture_raw(r, &len, "cat out"));
	p = out;
	end = out + len;
	for (int k = 0; k < NSIT; k++) {
		assert_true(p < end);
		clean[k] = *p == '1';
		p += strlen(p) + 1;
		assert_int_equal(git_oid_fromstr(&trees[k], p), 0);
		p += strlen(p) + 1;
		while (p < end && *p) /* the conflicted entries */
			p += strlen(p) + 1;
		p++;
	}
	free(out);
}

/* union: f merges with the union driver (info/attributes), which git's
 * merge-tree takes too: no conflict at all, the same text. */
static void compare_style(const char *style, unsigned long long seed, int with_union)
{
	tu_repo *r = tu_repo_new(1);
	git_repository *g;
	git_odb *odb = NULL;
	git_odb_backend *mem = NULL;
	git_oid(*c)[3] = calloc(NSIT, sizeof(*c)), *trees = calloc(NSIT, sizeof(*trees)), mine;
	int *clean = calloc(NSIT, sizeof(*clean)), conflicts = 0;
	rq_merger *m = NULL;
	rq_error err;

	assert_non_null(c);
	assert_non_null(trees);
	assert_non_null(clean);
	tu_git(r, "git config merge.conflictStyle %s", style);
	if (with_union)
		tu_git(r, "mkdir -p info && echo 'f merge=union' >info/attributes");
	write_situations(r, seed, c);
	g = tu_repo_open(r);
	assert_int_equal(git_repository_odb(&odb, g), 0);
	assert_int_equal(git_mempack_new(&mem), 0);
	assert_int_equal(git_odb_add_backend(odb, mem, 1000), 0);
	git_odb_free(odb);
	assert_int_equal(rq_merger_new(&m, g, NULL, &err), 0);
	git_merges(r, c, clean, trees);
	for (int k = 0; k < NSIT; k++) {
		int rc = rq_accept(g, m, c[k], &mine);
		size_t la = 0, lb = 0;
		char *a = blob_f(g, &trees[k], &la), *b = blob_f(g, &mine, &lb);
		if (rc != !clean[k] || !a || !b || la != lb || memcmp(a, b, la))
			fail_msg("%s #%d (%s %s): git %s\n%s\nrq %s\n%s", style, k,
				 tu_hex(&c[k][1]), tu_hex(&c[k][2]),
				 clean[k] ? "clean" : "conflict", a ? a : "-",
				 rc ? "conflict" : "clean", b ? b : "-");
		conflicts += !clean[k];
		free(a);
		free(b);
	}
	/* the test tests conflicts (the same seeds make a quarter of them
	 * conflict without the union driver) */
	assert_true(with_union ? conflicts == 0 : conflicts > NSIT / 4);
	rq_merger_free(m);
	free(c);
	free(trees);
	free(clean);
	tu_repo_free(r);
}

static void test_marked_merge(void **state)
{
	(void)state;
	compare_style("merge", 1, 0);
}

static void test_marked_diff3(void **state)
{
	(void)state;
	compare_style("diff3", 2, 0);
}

static void test_marked_zdiff3(void **state)
{
	(void)state;
	compare_style("zdiff3", 3, 0);
}

/* An accepting merge of a union path writes no conflict: git's union text,
 * in each style (the conflicts refined and joined, trimmed, or whole). */
static void test_marked_union(void **state)
{
	(void)state;
	compare_style("merge", 1, 1);
	compare_style("diff3", 2, 1);
	compare_style("zdiff3", 3, 1);
}

/* ---- 2. the rules of a remerge ------------------------------------------------- */

/*
 * The template: f (11 lines), g (modified on one topic, deleted on
 * another), then topics off A:
 *   t1, t2: lines 3 and 7 of f, each differently (they conflict: one
 *           hunk, the lines between joined); t1x, t2x on them: its last
 *           line, each differently (a second hunk, far from the first);
 *   t3:     line 10 of f (no conflict with t1);
 *   t4, t5: g modified, g deleted;
 *   x, y, z: files x, y, z (an octopus);
 * merges: o12 (t1 + t2, resolved THREE12/SEVEN12, and an evil change: a
 * file evil), o13 (t1 + t3, clean), o45 (t4 + t5, g deleted), oct (x, y,
 * z); bases: far (the first line of f), near (line 5: inside the hunk),
 * g2 (g changed differently); and the topics picked onto far and near
 * (<topic>@far, ...), t4 onto g2.
 */
static tu_repo *rules;

#define F_TAIL "tail\nt1\nt2\nt3\nt4\nend\n"
#define F_BASE "head\n1\n2\n3\n4\n5\n6\n7\n8\n9\n" F_TAIL

static void topic(tu_repo *r, const char *name, const char *path, const char *content)
{
	tu_git(r, "git checkout -q -b %s A", name);
	tu_commit_file(r, path, content, name);
}

static void merge(tu_repo *r, const char *name, const char *ours, const char *theirs)
{
	tu_git(r, "git checkout -q -b %s %s", name, ours);
	tu_tick(r);
	tu_run(r, "git merge -q --no-ff -m %s %s >/dev/null 2>&1", name, theirs);
}

/* name@base: topic picked onto base (git cherry-pick). */
static void pick_onto(tu_repo *r, const char *t, const char *base)
{
	tu_tick(r);
	tu_git(r, "git checkout -q -b %s@%s %s && git cherry-pick %s >/dev/null 2>&1", t, base,
	       base, t);
}

static void make_rules(tu_repo *r)
{
	tu_commit_file(r, "f", F_BASE, "A");
	tu_commit_file(r, "g", "g1\ng2\n", "A2");
	tu_git(r, "git tag A");
	topic(r, "t1", "f", "head\n1\n2\nTHREE1\n4\n5\n6\nSEVEN1\n8\n9\n" F_TAIL);
	tu_git(r, "git branch t1x");
	topic(r, "t2", "f", "head\n1\n2\nTHREE2\n4\n5\n6\nSEVEN2\n8\n9\n" F_TAIL);
	tu_git(r, "git branch t2x");
	topic(r, "t3", "f", "head\n1\n2\n3\n4\n5\n6\n7\n8\n9\nTAIL\nt1\nt2\nt3\nt4\nend\n");
	topic(r, "t4", "g", "g1\ng2 changed\n");
	tu_git(r, "git checkout -q -b t5 A && git rm -q g && git commit -q -m t5");
	topic(r, "x", "x", "x\n");
	topic(r, "y", "y", "y\n");
	topic(r, "z", "z", "z\n");
	merge(r, "o12", "t1", "t2");
	tu_git(r, "printf 'head\\n1\\n2\\nTHREE12\\n4\\n5\\n6\\nSEVEN12\\n8\\n9\\n" F_TAIL
		  "' >f && echo evil >evil && git add f evil && git commit -q --no-edit");
	merge(r, "o13", "t1", "t3");
	merge(r, "o45", "t4", "t5");
	tu_git(r, "git rm -q g && git commit -q --no-edit");
	tu_git(r, "git checkout -q -b oct x && git merge -q --no-ff -m oct y z");
	topic(r, "far", "f", "HEAD\n1\n2\n3\n4\n5\n6\n7\n8\n9\n" F_TAIL);
	topic(r, "near", "f", "head\n1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n" F_TAIL);
	tu_git(r, "git checkout -q t1x && sed -i s/end/END1/ f && git commit -q -am t1x && "
		  "git checkout -q t2x && sed -i s/end/END2/ f && git commit -q -am t2x");
	topic(r, "g2", "g", "g0\ng1\ng2\n");
	for (int b = 0; b < 2; b++) {
		static const char *const bases[] = {"far", "near"};
		static const char *const topics[] = {"t1", "t2", "t4", "t5", "x", "y", "z"};
		for (int t = 0; t < 7; t++)
			pick_onto(r, topics[t], bases[b]);
	}
	pick_onto(r, "t4", "g2");
	tu_git(r, "git checkout -q -b zz@x x && git commit -q --allow-empty -m keep");
	tu_commit_file(r, "x", "x changed\n", "x again");
}

static int group_setup(void **state)
{
	if (tu_group_setup(state) < 0)
		return -1;
	rules = tu_repo_new(0);
	make_rules(rules);
	return 0;
}

static int group_teardown(void **state)
{
	tu_repo_free(rules);
	rules = NULL;
	return tu_group_teardown(state);
}

/* rq_remerge of merge o onto the new parents named in np (n of them). 0
 * clean (*tree), 1 conflict (*conf). */
static int remerge(const char *o, const char *const *np, size_t n, git_oid *tree,
		   rq_conflicts *conf)
{
	git_repository *g = tu_repo_open(rules);
	git_oid orig[4], nw[4], otree;
	rq_oid rorig[4], rnw[4], rotree, rtree = {{0}};
	rq_merger *m = NULL;
	rq_commits *commits = NULL;
	rq_error err;
	char rev[64];
	int rc;

	for (size_t k = 0; k < n; k++) {
		snprintf(rev, sizeof(rev), "%s^%zu", o, k + 1);
		tu_rev_parse(rules, rev, &orig[k]);
		tu_rev_parse(rules, np[k], &nw[k]);
	}
	snprintf(rev, sizeof(rev), "%s^{tree}", o);
	tu_rev_parse(rules, rev, &otree);
	for (size_t k = 0; k < n; k++) {
		rq_oid_from_git(&rorig[k], &orig[k]);
		rq_oid_from_git(&rnw[k], &nw[k]);
	}
	rq_oid_from_git(&rotree, &otree);
	assert_int_equal(rq_merger_new(&m, g, NULL, &err), 0);
	assert_int_equal(rq_commits_open(&commits, g, NULL, &err), 0);
	rc = rq_remerge(m, g, rq_commits_cache(commits), NULL, rorig, rnw, n, &rotree, &rtree, conf,
			&err);
	rq_commits_free(commits);
	if (rc < 0)
		fail_msg("remerge failed: %s", err.msg);
	if (rc == 0)
		assert_int_equal(rq_oid_to_git(tree, &rtree, &rq_oid_sha1), 0);
	rq_merger_free(m);
	return rc;
}

/* The text of path in tree, or NULL. */
static char *text_at(const git_oid *tree, const char *path)
{
	return tu_capture_raw(rules, NULL, "git cat-file -p %s:%s 2>/dev/null", tu_hex(tree), path);
}

static void expect_clean(const char *o, const char *const *np, size_t n, const char *path,
			 const char *want)
{
	rq_conflicts conf = {0};
	git_oid tree;
	char *t;

	if (remerge(o, np, n, &tree, &conf) != 0)
		fail_msg("%s onto %s, %s: %s (%s)", o, np[0], np[1], conf.v[0].path,
			 rq_conflict_kind_name(conf.v[0].kind));
	t = text_at(&tree, path);
	if (want && (!t || strcmp(t, want)))
		fail_msg("%s: %s is\n%s\nwant\n%s", o, path, t ? t : "(none)", want);
	if (!want && t)
		fail_msg("%s: %s should be gone", o, path);
	free(t);
}

static void expect_conflict(const char *o, const char *const *np, size_t n, const char *path,
			    rq_conflict_kind kind)
{
	rq_conflicts conf = {0};
	git_oid tree;

	assert_int_equal(remerge(o, np, n, &tree, &conf), 1);
	assert_true(conf.n >= 1);
	assert_string_equal(conf.v[0].path, path);
	assert_string_equal(rq_conflict_kind_name(conf.v[0].kind), rq_conflict_kind_name(kind));
	rq_conflicts_free(&conf);
}

/* N has R's conflict (the base does not touch those lines): O's
 * resolution is taken, clean, and the evil change comes along. */
static void test_resolution_carried(void **state)
{
	static const char *const np[] = {"t1@far", "t2@far"};
	(void)state;
	expect_clean("o12", np, 2, "f", "HEAD\n1\n2\nTHREE12\n4\n5\n6\nSEVEN12\n8\n9\n" F_TAIL);
	expect_clean("o12", np, 2, "evil", "evil\n");
}

/* The base rewrote a line inside the hunk: N's conflict differs from R's,
 * the resolution no longer applies. */
static void test_resolution_stale(void **state)
{
	static const char *const np[] = {"t1@near", "t2@near"};
	(void)state;
	expect_conflict("o12", np, 2, "f", RQ_CONFLICT_RESOLUTION);
}

/* R has a conflict, N none: merged normally. Against a parent that has
 * neither side's change the hunk's place differs: a conflict; against
 * O itself, O. */
static void test_r_only(void **state)
{
	static const char *const np1[] = {"t1", "t1"}, *const np2[] = {"o12", "o12"};
	(void)state;
	expect_conflict("o12", np1, 2, "f", RQ_CONFLICT_RESOLUTION);
	expect_clean("o12", np2, 2, "f", "head\n1\n2\nTHREE12\n4\n5\n6\nSEVEN12\n8\n9\n" F_TAIL);
}

/* A conflict N has and R had not (the author resolved nothing there): a
 * conflict, of its own kind where R had none at the path. A hunk of N
 * beside one O resolved is left in the merge's result: a conflict too. */
static void test_new_conflict(void **state)
{
	static const char *const np[] = {"t1", "t2"}, *const md[] = {"t4", "t5"},
				 *const x[] = {"t1x", "t2x"};
	(void)state;
	expect_conflict("o13", np, 2, "f", RQ_CONFLICT_CONTENT);
	expect_conflict("o13", md, 2, "g", RQ_CONFLICT_MODIFY_DELETE);
	expect_conflict("o12", x, 2, "f", RQ_CONFLICT_RESOLUTION);
}

/* modify/delete alike in R and N (same three versions): O's version (g
 * deleted); with g changed differently by the base: a conflict. */
static void test_modify_delete(void **state)
{
	static const char *const alike[] = {"t4@far", "t5@far"}, *const other[] = {"t4@g2", "t5"};
	(void)state;
	static const char *const none[] = {"t4", "t4"};

	expect_clean("o45", alike, 2, "g", NULL);
	expect_conflict("o45", other, 2, "g", RQ_CONFLICT_RESOLUTION);
	/* R's conflict, none in N */
	expect_conflict("o45", none, 2, "g", RQ_CONFLICT_RESOLUTION);
}

/* f merged by the union driver in all three merges: R and N have no
 * conflict (each the union of t1's and t2's lines 3-7), and where the
 * third merge meets the base's change (5 became FIVE in the second copy)
 * inside what O's resolution rewrote, it keeps both, N's lines first, where
 * the text driver gives the stale resolution's conflict. */
static void test_union(void **state)
{
	static const char *const np[] = {"t1@near", "t2@near"};
	(void)state;
	tu_git(rules, "mkdir -p .git/info && echo 'f merge=union' >.git/info/attributes");
	expect_clean("o12", np, 2, "f",
		     "head\n1\n2\nTHREE12\n4\nFIVE\n6\nSEVEN1\nTHREE2\n4\nFIVE\n6\nSEVEN2\n"
		     "SEVEN12\n8\n9\n" F_TAIL);
	tu_git(rules, "rm .git/info/attributes");
}

/* An octopus: replayed when its remerges are clean; a conflict when the
 * new parents conflict. */
static void test_octopus(void **state)
{
	static const char *const np[] = {"x@far", "y@far", "z@far"}, *const bad[] = {
									 "x@far", "zz@x", "z@far"};
	(void)state;
	expect_clean("oct", np, 3, "f", "HEAD\n1\n2\n3\n4\n5\n6\n7\n8\n9\n" F_TAIL);
	expect_clean("oct", np, 3, "y", "y\n");
	expect_conflict("oct", bad, 3, "x", RQ_CONFLICT_ADD_ADD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_marked_merge),
	    cmocka_unit_test(test_marked_diff3),
	    cmocka_unit_test(test_marked_zdiff3),
	    cmocka_unit_test(test_marked_union),
	    cmocka_unit_test(test_resolution_carried),
	    cmocka_unit_test(test_resolution_stale),
	    cmocka_unit_test(test_r_only),
	    cmocka_unit_test(test_new_conflict),
	    cmocka_unit_test(test_modify_delete),
	    cmocka_unit_test(test_octopus),
	    cmocka_unit_test(test_union),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
