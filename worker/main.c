/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * replayq: the program. Global options (-C <path>), then a subcommand.
 */
#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"

#define RQ_VERSION "0.1.0"

static const char usage_text[] = "usage: replayq [-C <path>] <command> [<args>]\n"
				 "\n"
				 "commands:\n"
				 "   replay     replay commits onto a new base (like git replay)\n"
				 "   version    print the version\n";

int main(int argc, char **argv)
{
	int i = 1, rc;

	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "-C")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "error: no directory given for -C\n%s", usage_text);
				return 129;
			}
			if (argv[i + 1][0] && chdir(argv[i + 1]) < 0) {
				fprintf(stderr, "fatal: cannot change to '%s': %s\n", argv[i + 1],
					strerror(errno));
				return 128;
			}
			i += 2;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			printf("replayq version %s\n", RQ_VERSION);
			return 0;
		} else {
			fprintf(stderr, "unknown option: %s\n%s", argv[i], usage_text);
			return 129;
		}
	}
	if (i >= argc) {
		fputs(usage_text, stderr);
		return 129;
	}
	if (!strcmp(argv[i], "version")) {
		printf("replayq version %s\n", RQ_VERSION);
		return 0;
	}
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {{"replay", cmd_replay}, {"worker", cmd_worker}, {"run", cmd_run},
		    {"submit", cmd_submit}, {"result", cmd_result}, {"queue", cmd_queue}};
	int (*fn)(int, char **) = NULL;
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++)
		if (!strcmp(argv[i], cmds[k].name))
			fn = cmds[k].fn;
	if (!fn) {
		fprintf(stderr, "replayq: '%s' is not a replayq command.\n%s", argv[i], usage_text);
		return 129;
	}
	git_libgit2_init();
	/* objects read are not hashed again to check their id: git's merge
	 * machinery reads trees and commits that way too, and zlib's checksum
	 * still catches a corrupt entry (5-10% of a mass replay's CPU) */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	rc = fn(argc - i, argv + i);
	git_libgit2_shutdown();
	return rc;
}
