/* SPDX-License-Identifier: GPL-2.0-only */
/* rq_replay_result: a replay's result, its updates added and freed. */
#include "rq_replay_result.h"

#include <stdlib.h>
#include <string.h>

#include "rq_mem.h"
#include "rq_outcome.h"

int rq_replay_result_add_update(rq_replay_result *r, size_t *cap, const char *ref,
				const rq_oid *new_id, const rq_oid *old_id, rq_error *err)
{
	rq_ref_update *v = rq_mem_grow(r->upd.updates, cap, r->upd.nupdates + 1, sizeof(*v), 8);

	if (!v)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	r->upd.updates = v;
	if (!(r->upd.updates[r->upd.nupdates].ref = strdup(ref)))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	r->upd.updates[r->upd.nupdates].new_id = *new_id;
	r->upd.updates[r->upd.nupdates].old_id = *old_id;
	r->upd.nupdates++;
	return 0;
}

void rq_replay_result_free_updates(rq_replay_result *r)
{
	for (size_t i = 0; i < r->upd.nupdates; i++)
		free(r->upd.updates[i].ref);
	free(r->upd.updates);
	r->upd.updates = NULL;
	r->upd.nupdates = 0;
}

void rq_replay_result_free(rq_replay_result *result)
{
	if (!result)
		return;
	rq_replay_result_free_updates(result);
	rq_conflicts_free(&result->conflicts);
	rq_outcome_result_free(result);
}
