/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_memodb: the former name of rq_odb_mem (core/odb/rq_odb_mem.h), kept
 * only while core/merge/rq_treemerge.c still uses it. Remove this file
 * once it names rq_odb_mem_write.
 */
#ifndef RQ_MEMODB_H
#define RQ_MEMODB_H

#include "rq_odb_mem.h"

#define rq_memodb_write rq_odb_mem_write

#endif
