/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq: the program. Global options (-C <path>, -c <name>=<value>), then a
 * subcommand.
 */
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "opt.h"
#include "rq_build_info.h"
#include "rq_trace.h"
#include "rq_cfgparams.h"

#define RQ_VERSION	      RQ_BUILD_VERSION /* CMakeLists.txt: project() */
#define RQ_OBJECT_CACHE_BYTES ((size_t)4 << 20)

static const char usage_text[] =
    "usage: replayq [-C <path>] [-c <name>=<value>] [--no-replace-objects] <command> [<args>]\n";

static const char commands_text[] =
    "commands:\n"
    "   replay     replay commits onto a new base (like git replay)\n"
    "   train      build a merge train: each car onto the one before, in one call\n"
    "   worker     run jobs from a Redis queue in forked children\n"
    "   run        run JSON-lines jobs from a file, without Redis\n"
    "   submit     enqueue jobs (and wait for their results)\n"
    "   result     print stored results\n"
    "   queue      show a queue's counters, dead letters or pending jobs\n"
    "   maintain   consolidate the packs replayq wrote in a repository\n"
    "   help       show a command's manual page (replayq help <command>)\n"
    "   version    print the version\n";

static const struct {
	const char *name;
	int (*fn)(int, char **);
} commands[] = {{"replay", cmd_replay}, {"train", cmd_train},	   {"worker", cmd_worker},
		{"run", cmd_run},	{"submit", cmd_submit},	   {"result", cmd_result},
		{"queue", cmd_queue},	{"maintain", cmd_maintain}};

/* -C <path>: run as if started in <path> (an empty path: here), as git. */
static int change_dir(const char *path, void *unused)
{
	(void)unused;
	if (path[0] && chdir(path) < 0) {
		fprintf(stderr, "fatal: cannot change to '%s': %s\n", path, strerror(errno));
		return 128;
	}
	return 0;
}

/* -c <name>=<value>: configuration for this command, passed on as git
 * passes it (GIT_CONFIG_PARAMETERS, read when the repository is opened). */
static int add_config(const char *arg, void *unused)
{
	rq_error err;
	char *env;

	(void)unused;
	if (rq_cfgparams_check(arg, &err) < 0) {
		fprintf(stderr, "error: %s\nfatal: unable to parse command-line config\n", err.msg);
		return 128;
	}
	if (!(env = rq_cfgparams_append(getenv("GIT_CONFIG_PARAMETERS"), arg)) ||
	    setenv("GIT_CONFIG_PARAMETERS", env, 1) < 0) {
		free(env);
		fputs("fatal: out of memory\n", stderr);
		return 128;
	}
	free(env);
	return 0;
}

static int print_version(void)
{
#ifdef RQ_TEST_HOOKS
	printf("replayq version %s (test build: test hooks compiled in)\n", RQ_VERSION);
#else
	printf("replayq version %s\n", RQ_VERSION);
#endif
	return 0;
}

/* The manual page of a command, or of a topic ("jobs": the job and
 * result format), or NULL. */
static const char *man_page_of(const char *name)
{
	static const char *const pages[][2] = {
	    {"replay", "replayq-replay"}, {"train", "replayq-train"},
	    {"worker", "replayq-worker"}, {"run", "replayq-worker"},
	    {"submit", "replayq-submit"}, {"result", "replayq-submit"},
	    {"queue", "replayq-submit"},  {"maintain", "replayq-maintain"},
	    {"jobs", "replayq-jobs"},	  {"replayq", "replayq"}};

	for (size_t k = 0; k < sizeof(pages) / sizeof(pages[0]); k++)
		if (!strcmp(name, pages[k][0]))
			return pages[k][1];
	return NULL;
}

/* man <page>, when stdout is a terminal (as git help does): 0 when man
 * showed it, -1 when it could not (no man, no page, not a terminal). */
static int show_man_page(const char *page)
{
	pid_t pid;
	int st;

	if (!isatty(STDOUT_FILENO) || (pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO); /* man's "no manual entry": we fall back */
		execlp("man", "man", page, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int run_command(const rq_opt_spec *spec, int argc, const char **argv);

/*
 * help [<command>|jobs]: the manual page (docs/man, installed with the
 * program); without a terminal or man, the command's -h text and the
 * page's name. help alone: the usage and the list of commands.
 */
static int help(const rq_opt_spec *spec, int argc, const char **argv)
{
	const char *page = argc > 1 ? man_page_of(argv[1]) : "replayq";
	const char *dash_h[] = {argc > 1 ? argv[1] : "", "-h", NULL};

	if (argc > 2)
		return rq_opt_usage_error(spec, "help takes one command");
	if (!page)
		return rq_opt_usage_error(spec, "no help for '%s': not a replayq command", argv[1]);
	if (show_man_page(page) == 0)
		return 0;
	if (argc < 2 || !strcmp(argv[1], "jobs")) {
		if (argc < 2)
			rq_opt_usage(spec, stdout);
		printf("%smanual: man %s\n", argc < 2 ? "\n" : "",
		       argc < 2 ? "replayq" : "5 replayq-jobs");
		return 0;
	}
	fflush(stdout);
	int rc = run_command(spec, 2, dash_h);
	printf("\nmanual: man %s\n", page);
	return rc;
}

/* Run the named command with its arguments; 129 when there is none. */
static int run_command(const rq_opt_spec *spec, int argc, const char **argv)
{
	int (*fn)(int, char **) = NULL;
	int rc;

	if (!strcmp(argv[0], "version"))
		return print_version();
	if (!strcmp(argv[0], "help"))
		return help(spec, argc, argv);
	for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
		if (!strcmp(argv[0], commands[k].name))
			fn = commands[k].fn;
	if (!fn) {
		fprintf(stderr, "replayq: '%s' is not a replayq command.\n", argv[0]);
		rq_opt_usage(spec, stderr);
		return RQ_OPT_USAGE_STATUS;
	}
	git_libgit2_init();
	/* objects read are not hashed again to check their id: git's merge
	 * machinery reads trees and commits that way too, and zlib's checksum
	 * still catches a corrupt entry (5-10% of a mass replay's CPU) */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	/* libgit2's cache of parsed trees and commits: at most 4 MiB of their
	 * raw bytes. Its default (256 MiB) kept every tree a 2,000-branch
	 * replay parsed, 12 of its 27 MiB of heap, for no time saved: peak
	 * 39-47 MiB with it, 34 MiB without, the same time */
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)RQ_OBJECT_CACHE_BYTES);
	rc = fn(argc, (char **)argv);
	git_libgit2_shutdown();
	return rc;
}

/* Descriptors 0-2 open, on /dev/null where they were closed (as git
 * does): a connection or a file opened later must not become one of them,
 * which every job child keeps. */
static void standard_fds_open(void)
{
	int fd;

	do
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	while (fd >= 0 && fd <= 2 && fcntl(fd, F_SETFD, 0) == 0);
	if (fd > 2)
		close(fd);
}

int main(int argc, char **argv)
{
	int version = 0, no_replace = 0, status;
	rq_opt_args args;
	const rq_opt opts[] = {
	    {.kind = RQ_OPT_KIND_CALLBACK,
	     .short_name = 'C',
	     .argh = "<path>",
	     .help = "run as if replayq was started in <path>",
	     .callback = change_dir},
	    {.kind = RQ_OPT_KIND_CALLBACK,
	     .short_name = 'c',
	     .argh = "<name>=<value>",
	     .help = "pass a configuration parameter to the command",
	     .callback = add_config},
	    RQ_OPT_FLAG("no-replace-objects", &no_replace,
			"do not use replace refs (as git's; GIT_NO_REPLACE_OBJECTS)"),
	    RQ_OPT_FLAG("version", &version, "print the version"),
	    RQ_OPT_END};
	const rq_opt_spec spec = {.usage = usage_text,
				  .opts = opts,
				  .footer = commands_text,
				  .flags = RQ_OPT_STOP_AT_ARG};

	RQ_TRACE_AT("main");
	standard_fds_open();
	if (rq_opt_parse(&spec, argc, argv, &args, &status) < 0)
		return status;
	if (no_replace) /* git's --no-replace-objects does the same */
		setenv("GIT_NO_REPLACE_OBJECTS", "1", 1);
	if (version)
		status = print_version();
	else if (!args.n)
		status = rq_opt_usage_error(&spec, "no command given");
	else
		status = run_command(&spec, (int)args.n, args.v);
	rq_opt_args_free(&args);
	RQ_TRACE_AT("exit");
	return status;
}
