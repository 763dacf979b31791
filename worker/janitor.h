/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * janitor: at a worker's start, a forked process removes the temporary
 * object directories that killed processes left in the repositories under
 * the root (rq_odb_tmpdir_clean_stale_dir on every objects/ directory up
 * to three levels down, older than 300 s), so that the worker itself never
 * opens a repository and never waits for the sweep.
 */
#ifndef RQ_JANITOR_H
#define RQ_JANITOR_H

/* Start the sweep of root in a process of its own (nothing to reap). */
void rq_janitor_start(const char *root);

#endif
