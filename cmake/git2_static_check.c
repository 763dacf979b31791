/* SPDX-License-Identifier: GPL-2.0-only */
/* Links and runs with the static libgit2 and core/base/rq_git2_nonet.c. */
#include <git2.h>

int main(void)
{
	git_repository *repo = NULL;
	if (git_libgit2_init() < 0)
		return 1;
	if (git_repository_open_ext(&repo, ".", GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0)
		git_repository_free(repo);
	git_libgit2_shutdown();
	return 0;
}
