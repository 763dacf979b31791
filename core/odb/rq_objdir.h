/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_objdir: the former name of rq_odb_tmpdir (core/odb/rq_odb_tmpdir.h),
 * kept only while callers outside core/odb still use it (worker/pool.c,
 * worker/cmd_replay.c, worker/cmd_worker.c, core/replay/rq_parallel.*).
 * Remove this file once they name rq_odb_tmpdir_* and rq_fs_rmtree.
 */
#ifndef RQ_OBJDIR_H
#define RQ_OBJDIR_H

#include "rq_fs.h"
#include "rq_odb_tmpdir.h"

typedef rq_odb_tmpdir rq_objdir;
#define rq_objdir_mark		  rq_odb_tmpdir_mark
#define rq_objdir_encode	  rq_odb_tmpdir_encode
#define rq_objdir_save_part	  rq_odb_tmpdir_save_part
#define rq_objdir_load_part	  rq_odb_tmpdir_load_part
#define rq_objdir_clean_stale	  rq_odb_tmpdir_clean_stale
#define rq_objdir_clean_stale_dir rq_odb_tmpdir_clean_stale_dir
#define rq_objdir_rmtree	  rq_fs_rmtree

#endif
