/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_queue_msg: the entries of a queue's jobs stream (rq_queue.h), read
 * for a consumer or reclaimed from another, as messages whose fields are
 * checked before anything is built from them.
 */
#ifndef RQ_QUEUE_MSG_H
#define RQ_QUEUE_MSG_H

#include <stddef.h>

#include "rq_qerror.h"
#include "rq_redis.h"

typedef struct rq_queue rq_queue;

typedef struct rq_queue_msg {
	char sid[64]; /* stream entry id */
	char *id;     /* job id (NULL if the entry has none) */
	char *job;    /* job JSON text (NULL if missing) */
	size_t job_len;
	long deliveries;
	/* The entry's own fields checked with the job's rules: id_ok when it
	 * has one "id" field (or several alike) that is a valid job id, so
	 * that keys can be built from it; problem: why the entry is not a
	 * job ("" when it is one as far as its fields go). */
	int id_ok;
	char problem[160];
	/* A copy submitted with --force after the id had a result: that
	 * result ("prior", NULL if none) and the sha1 of the content it was
	 * for ("prior_digest"; rq_queue_claim says whether it is this one's). */
	char *prior;
	char prior_digest[41];
	/* A dead letter requeued (rq_group_requeue): the "history" its
	 * result gets (a JSON array), NULL if none. */
	char *history;
} rq_queue_msg;

/* A prior result bigger than this is not kept (the copy replays anew). */
#define RQ_QUEUE_PRIOR_MAX (4 << 20)

/*
 * The name a stream entry is answered under when its own id cannot be
 * trusted (missing, invalid, given twice, or not the job's): "!<entry
 * id>", which no job id can be ('!' is not allowed in ids), so that its
 * result (replayq:{Q}:result:!<entry id>) never takes a real job's place.
 */
void rq_queue_msg_anon_id(const rq_queue_msg *m, char *buf, size_t size);

/*
 * New jobs for this consumer (XREADGROUP ... BLOCK block_ms), read in two
 * halves, for an event loop (see rq_redis_send): send it, poll
 * rq_redis_fd(rq_queue_redis(q)), then receive: 1 done (*msgs, *n set;
 * none on a timeout), 0 not complete yet, -1 error. Use a connection of
 * its own: nothing else may run on it meanwhile.
 */
int rq_queue_msg_read_send(rq_queue *q, const char *consumer, size_t count, int block_ms,
			   rq_error *err);
int rq_queue_msg_read_recv(rq_queue *q, rq_queue_msg **msgs, size_t *n, rq_error *err);

/* Jobs idle longer than min_idle_ms in any consumer, claimed for this one. */
int rq_queue_msg_reclaim(rq_queue *q, const char *consumer, long min_idle_ms, size_t count,
			 rq_queue_msg **msgs, size_t *n, rq_error *err);

/*
 * The entries pending under this consumer's name that it is not handling
 * (known: the entry ids of the tasks it holds, nknown of them), at most
 * count, claimed again by it (a new delivery each, as a reclaim is),
 * whatever their idle time: what a worker left pending when Redis went
 * away (a read whose answer was lost, a claim that failed), taken back
 * once Redis answers instead of after the visibility timeout. An entry
 * another consumer took meanwhile is not taken. 0 (*msgs, *n set), -1.
 */
int rq_queue_msg_own(rq_queue *q, const char *consumer, const char *const *known, size_t nknown,
		     size_t count, rq_queue_msg **msgs, size_t *n, rq_error *err);

/* Free what one message holds (it is left empty). */
void rq_queue_msg_clear(rq_queue_msg *m);

/* An XPENDING entry [id, consumer, idle ms, deliveries], as Redis sends
 * it: 1, else 0. */
int rq_queue_msg_pending_ok(const redisReply *e);

#endif
