/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq train: a merge train in one call (core/replay/rq_train). Each
 * argument is a car, "[<name>=]<revision>[ <revision>...]" in train order
 * (a branch alone means <target>..<branch>; the name defaults to the
 * branch's); --method=rebase replays each car's commits onto the previous
 * car's result, --method=merge makes one merge commit per car. Each car
 * that goes in gets the ref <prefix><name> (default refs/train/<target>/),
 * applied in one checked transaction or printed (--ref-action=print).
 *
 * Text output, one line per car on stdout ("ok <name> <commit>",
 * "conflict <name> <commit>: <path> (<kind>), ...", "skipped <name>"),
 * then with --ref-action=print the update lines; --format=json prints the
 * result object instead. Exit status: 0 every car went in, 1 a car
 * conflicted (the others went in), 128 error, 129 usage.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cli.h"
#include "rq_odb_tmpdir.h"
#include "opt.h"
#include "rq_refproto.h"
#include "rq_refs.h"
#include "rq_refdb.h"
#include "rq_repofmt.h"
#include "rq_result_json.h"
#include "rq_testhook.h"
#include "rq_train.h"
#include "sign_cli.h"

#define SKIP_MAX 256

static const char train_synopsis[] =
    "usage: replayq [-C <path>] train --target=<branch> [--method=rebase|merge]\n"
    "                                 [--message=<template>] [--ref-prefix=<prefix> | --no-refs]\n"
    "                                 [--ref-action=update|print] [--empty=drop|keep|abort]\n"
    "                                 [--skip=<name>]... [--format=text|json]\n"
    "                                 [-S[<key-id>] | --gpg-sign[=<key-id>] | --no-gpg-sign]\n"
    "                                 [<name>=]<revision>...\n";

/* The cars named by --skip. */
typedef struct skip_list {
	const char *v[SKIP_MAX];
	size_t n;
} skip_list;

typedef struct train_cli {
	const char *target, *method, *message, *prefix, *ref_action, *empty, *format;
	const char *sign; /* -S: rq_sign_cli_unset, NULL, "" or a key */
	int refs;
	skip_list skips;
	rq_opt opts[11];
	rq_opt_spec spec;
	rq_opt_args args;
} train_cli;

/* One train: its cars (names and revisions owned here) and its outcome. */
typedef struct train_run {
	git_repository *repo;
	rq_train_car *cars;
	char **names;
	char ***revs; /* each car's revisions, NULL-terminated */
	size_t ncars;
	rq_train_opts opts;
	rq_ident committer;
	rq_sign *signer;
	rq_train_result res;
	rq_odb_opts odb_opts;
	rq_error err;
	int json, print, applied;
} train_run;

static int add_skip(const char *arg, void *value)
{
	skip_list *s = value;

	if (s->n == SKIP_MAX) {
		fprintf(stderr, "error: at most %d --skip options\n", SKIP_MAX);
		return RQ_OPT_USAGE_STATUS;
	}
	s->v[s->n++] = arg;
	return 0;
}

static void cli_init(train_cli *c)
{
	const rq_opt opts[] = {
	    RQ_OPT_STRING("target", &c->target, "<branch>", "the branch the train goes onto"),
	    RQ_OPT_STRING("method", &c->method, "<how>",
			  "rebase (default): replay each car onto the one before;\n"
			  "merge: one merge commit per car"),
	    RQ_OPT_STRING("message", &c->message, "<template>",
			  "merge message; {name} and {target} are filled in"),
	    RQ_OPT_STRING("ref-prefix", &c->prefix, "<prefix>",
			  "each car's ref (default refs/train/<target>/)"),
	    RQ_OPT_BOOL("refs", &c->refs, "give each car that goes in a ref (default)"),
	    RQ_OPT_STRING("ref-action", &c->ref_action, "<mode>",
			  "update the refs (default) or print the updates"),
	    RQ_OPT_STRING("empty", &c->empty, "<mode>",
			  "commits that become empty: drop (default), keep, abort"),
	    {.kind = RQ_OPT_KIND_CALLBACK,
	     .name = "skip",
	     .value = &c->skips,
	     .argh = "<name>",
	     .help = "leave this car out (reported as skipped)",
	     .callback = add_skip},
	    RQ_OPT_STRING("format", &c->format, "<fmt>", "text (default) or json"),
	    RQ_SIGN_CLI_OPTION(&c->sign),
	    RQ_OPT_END};

	memset(c, 0, sizeof(*c));
	_Static_assert(sizeof(opts) == sizeof(c->opts), "the table fills c->opts exactly");
	memcpy(c->opts, opts, sizeof(opts));
	c->refs = 1;
	c->sign = rq_sign_cli_unset;
	c->spec.usage = train_synopsis;
	c->spec.opts = c->opts;
	c->spec.help_status = 0;
}

/* One of the values a choice option takes (NULL: not given): its index, or
 * -1 (usage error said). */
static int choice(const train_cli *c, const char *opt, const char *v, const char *const *names)
{
	if (!v)
		return 0;
	for (int i = 0; names[i]; i++)
		if (!strcmp(v, names[i]))
			return i;
	rq_opt_usage_error(&c->spec, "invalid --%s value '%s'", opt, v);
	return -1;
}

/* The options that need no repository: 0, or an exit status. */
static int cli_check(const train_cli *c, train_run *run)
{
	static const char *const methods[] = {"rebase", "merge", NULL},
				 *const actions[] = {"update", "print", NULL},
				 *const formats[] = {"text", "json", NULL};
	int m, a, e, f;

	if (!c->target)
		return rq_opt_usage_error(&c->spec, "%s", "--target is required");
	if (!c->args.n)
		return rq_opt_usage_error(&c->spec, "%s", "a train needs at least one car");
	if ((m = choice(c, "method", c->method, methods)) < 0 ||
	    (a = choice(c, "ref-action", c->ref_action, actions)) < 0 ||
	    (e = choice(c, "empty", c->empty, rq_replay_empty_names)) < 0 ||
	    (f = choice(c, "format", c->format, formats)) < 0)
		return RQ_OPT_USAGE_STATUS;
	run->opts.method = (rq_train_method)m;
	run->print = a == 1;
	run->opts.empty = (rq_empty)e;
	run->json = f == 1;
	return 0;
}

/* The name a car gets from its revision: the part after the last "..",
 * its last path component, with '-' for what a name cannot hold. */
static void default_name(const char *rev, char *out, size_t size)
{
	const char *s = rev, *p;

	while ((p = strstr(s, "..")))
		s = p + 2;
	if (*s == '^')
		s++;
	if ((p = strrchr(s, '/')))
		s = p + 1;
	snprintf(out, size, "%s", s);
	for (char *q = out; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		      (*q >= '0' && *q <= '9') || *q == '.' || *q == '_' || *q == '-'))
			*q = '-';
}

/* Split "a b c" into revisions (NULL-terminated, owned); NULL out of
 * memory. */
static char **split_revisions(const char *s, size_t *n)
{
	char *copy = strdup(s), *save = NULL, *tok;
	char **v = calloc(strlen(s) / 2 + 2, sizeof(*v));
	int oom = !copy || !v;

	*n = 0;
	for (tok = oom ? NULL : strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (!(v[(*n)++] = strdup(tok))) {
			oom = 1;
			break;
		}
	free(copy);
	if (oom) {
		for (size_t i = 0; v && i < *n; i++)
			free(v[i]);
		free(v);
		*n = 0;
		return NULL;
	}
	return v;
}

/* Car k from its argument "[<name>=]<revision>...": 0, or -1 out of memory. */
static int parse_car(train_run *run, size_t k, const char *arg)
{
	const char *eq = strchr(arg, '='), *revs = arg;
	char name[RQ_TRAIN_NAME_MAX * 2 + 2];
	size_t n;

	if (eq && eq > arg && (size_t)(eq - arg) < sizeof(name)) {
		snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
		if (rq_train_name_valid(name))
			revs = eq + 1;
	}
	if (revs == arg)
		default_name(arg, name, sizeof(name));
	if (!(run->names[k] = strdup(name)) || !(run->revs[k] = split_revisions(revs, &n)))
		return -1;
	run->cars[k].name = run->names[k];
	run->cars[k].revisions = (const char *const *)run->revs[k];
	run->cars[k].nrevisions = n;
	return 0;
}

/* The cars from the arguments, --skip applied: 0 or an exit status. */
static int make_cars(const train_cli *c, train_run *run)
{
	run->ncars = c->args.n;
	run->cars = calloc(run->ncars + 1, sizeof(*run->cars));
	run->names = calloc(run->ncars + 1, sizeof(*run->names));
	run->revs = calloc(run->ncars + 1, sizeof(*run->revs));
	if (!run->cars || !run->names || !run->revs)
		return fputs("fatal: out of memory\n", stderr), 128;
	for (size_t k = 0; k < run->ncars; k++)
		if (parse_car(run, k, c->args.v[k]) < 0)
			return fputs("fatal: out of memory\n", stderr), 128;
	for (size_t s = 0; s < c->skips.n; s++) {
		int found = 0;
		for (size_t k = 0; k < run->ncars; k++)
			if (!strcmp(run->names[k], c->skips.v[s]))
				found = run->cars[k].skip = 1;
		if (!found)
			return rq_opt_usage_error(&c->spec, "--skip=%s names no car",
						  c->skips.v[s]);
	}
	run->opts.cars = run->cars;
	run->opts.ncars = run->ncars;
	return 0;
}

/* The repository (as git finds it) and the identity: 0, or 128 (said). */
static int open_repository(const train_cli *c, train_run *run)
{
	int status = rq_cli_open_repo(&run->repo, NULL);

	if (status)
		return status;
	if (rq_ident_default(run->repo, &run->committer, &run->err) < 0 ||
	    rq_sign_cli_open(c->sign, &run->signer, &run->err) < 0) {
		fprintf(stderr, "fatal: %s\n", run->err.msg);
		return 128;
	}
	run->opts.sign = run->signer;
	run->opts.target = c->target;
	run->opts.message = c->message;
	run->opts.ref_prefix = c->prefix;
	run->opts.no_refs = !c->refs;
	run->opts.committer = &run->committer;
	/* the pack is kept from git's repack and gc until its refs moved */
	run->odb_opts.keep_pack = !run->print;
	run->odb_opts.algo = rq_repofmt_algo(run->repo);
	run->odb_opts.refs = rq_refdb_odb_refs;
	run->odb_opts.refs_arg = run->repo;
	run->opts.objects = &run->odb_opts;
	return 0;
}

/* One line per car. */
static void print_cars(const rq_train_result *res)
{
	for (size_t k = 0; k < res->ncars; k++) {
		const rq_car_result *car = &res->cars[k];
		char hex[RQ_OID_MAX_HEXSZ + 1];
		if (car->status == RQ_CAR_SKIPPED) {
			printf("skipped %s\n", car->name);
			continue;
		}
		rq_oid_fmt(hex, car->status == RQ_CAR_OK ? &car->commit : &car->conflict_commit,
			   rq_ref_updates_algo(&res->replay.upd));
		printf("%s %s %s", rq_train_car_status_name(car->status), car->name, hex);
		for (size_t i = 0; i < car->conflicts.n; i++)
			printf("%s %s (%s)", i ? "," : ":", car->conflicts.v[i].path,
			       rq_conflict_kind_name(car->conflicts.v[i].kind));
		putchar('\n');
	}
}

/* The outcome on stdout (stderr for an error): the exit status. */
static int report(const train_run *run, int rc)
{
	char *lines = NULL;

	if (run->json) {
		json_t *o = rq_result_train_to_json(&run->res, rc, &run->err, run->applied);
		char *s = o && (!run->signer || rq_result_set_signed(o) == 0)
			      ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6))
			      : NULL;
		json_decref(o);
		if (!s)
			return fputs("fatal: out of memory\n", stderr), 128;
		rq_testhook_doc("result", "ok", s, strlen(s), NULL); /* the suite's schemas */
		puts(s);
		free(s);
	}
	if (rc < 0) {
		fprintf(stderr, "fatal: %s\n", run->err.msg);
		return run->err.code == RQ_E_INTERRUPTED ? 130 : 128;
	}
	if (run->json)
		return rc;
	print_cars(&run->res);
	if (run->print && !(lines = rq_refs_format_updates(&run->res.replay.upd)))
		return fputs("fatal: out of memory\n", stderr), 128;
	if (lines)
		fputs(lines, stdout);
	free(lines);
	return rc;
}

static int train(const train_cli *c, train_run *run)
{
	int status, rc;

	if ((status = cli_check(c, run)) != 0 || (status = make_cars(c, run)) != 0 ||
	    (status = open_repository(c, run)) != 0)
		return status;
	run->opts.cancel = rq_cli_catch_signals();
	rc = rq_train_run(run->repo, &run->opts, &run->res, &run->err);
	if (rq_refproto_applies(rc, &run->res.replay, 1) && !run->print) {
		if (rq_cli_apply_refs(run->repo, &run->res.replay, &run->committer, &run->err) < 0)
			rc = -1;
		else
			run->applied = 1;
	}
	rq_odb_tmpdir_release(run->repo, run->res.replay.stats.pack_name);
	return report(run, rc);
}

static void run_free(train_run *run)
{
	for (size_t k = 0; k < run->ncars; k++) {
		if (run->names)
			free(run->names[k]);
		for (size_t i = 0; run->revs && run->revs[k] && run->revs[k][i]; i++)
			free(run->revs[k][i]);
		if (run->revs)
			free(run->revs[k]);
	}
	free(run->names);
	free(run->revs);
	free(run->cars);
	rq_train_result_free(&run->res);
	rq_sign_free(run->signer);
	git_repository_free(run->repo);
}

int cmd_train(int argc, char **argv)
{
	train_cli c;
	train_run run;
	int status;

	cli_init(&c);
	memset(&run, 0, sizeof(run));
	rq_error_clear(&run.err);
	if (rq_opt_parse(&c.spec, argc, argv, &c.args, &status) == 0) {
		status = train(&c, &run);
		rq_opt_args_free(&c.args);
	}
	if (fflush(stdout) != 0 && status == 0)
		status = 128;
	if (run.res.replay.stats.pack_name[0])
		rq_cli_consolidate(run.repo);
	run_free(&run);
	return status;
}
