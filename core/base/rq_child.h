/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_child: the one way replayq forks a helper process and hears from it.
 *
 * Two places fork: the worker's pool (one child per job) and a parallel
 * replay (one child per share of the groups). Both give the child the
 * write end of a pipe and read framed messages from the other end, and
 * both reap with the same care for EINTR. A message is
 *
 *     <type byte> <payload length in decimal> ':' <payload> '\0'
 *
 * so a reader knows where each ends without trusting the payload, a
 * payload may hold any byte (paths, JSON), and the NUL after it lets the
 * reader use a payload as a C string in place. A child that dies halfway
 * leaves an incomplete last frame, which rq_child_in_next() never returns:
 * whatever it does return was sent whole.
 *
 * A child may also ask and wait: the worker's pool forks with a second
 * pipe, parent to child, on which the parent answers a question (a
 * message) with one byte; the child blocks on it (rq_child_ask). The
 * parent closing its end is a refusal.
 */
#ifndef RQ_CHILD_H
#define RQ_CHILD_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "rq_buf.h"

/* Largest payload a reader accepts (a bigger length is a broken frame). */
#define RQ_CHILD_MSG_MAX ((size_t)1 << 30)

/*
 * Fork with a report pipe (both ends close-on-exec). In the parent:
 * returns the child's pid and *fd is the read end. In the child: returns
 * 0 and *fd is the write end. -1 (errno set, nothing left open) when no
 * pipe or process could be had. stdio is flushed first, so that nothing
 * buffered is written twice.
 */
pid_t rq_child_fork(int *fd);

/*
 * rq_child_fork() with a second pipe for the parent's answers: in the
 * parent *answer_fd is its write end, in the child its read end (both
 * close-on-exec).
 */
pid_t rq_child_fork_asking(int *fd, int *answer_fd);

/* Append one frame to b (b->oom set when memory runs out). */
void rq_child_frame(rq_buf *b, char type, const void *data, size_t len);

/* Write all of p (retrying on EINTR); 0, or -1 when the pipe failed. */
int rq_child_write(int fd, const void *p, size_t len);

/* Frame and write one message whose payload is the parts one after the
 * other, allocating nothing (a child out of memory can still report);
 * 0 or -1. */
int rq_child_sendv(int fd, char type, const struct iovec *parts, int nparts);

/*
 * In a child forked with rq_child_fork_asking(): send a question (one
 * message, as rq_child_sendv) and wait for the parent's answer: the
 * answer byte (never 0), 0 when none came (the parent closed its end, or
 * the pipe failed), -1 when the question could not be sent.
 */
int rq_child_ask(int fd, int answer_fd, char type, const struct iovec *parts, int nparts);

/* In the parent: answer a child's question with one byte (any but 0);
 * 0 or -1. */
int rq_child_answer(int answer_fd, char answer);

/* The parent's side of a report pipe. */
typedef struct rq_child_in {
	int fd;	     /* -1 once the child closed its end (or the read failed) */
	rq_buf buf;  /* what has arrived and not been dropped */
	size_t head; /* start of the first message not yet dropped */
} rq_child_in;

typedef struct rq_child_msg {
	char type;
	const char *data; /* NUL-terminated, inside the reader's buffer */
	size_t len;
} rq_child_msg;

void rq_child_in_init(rq_child_in *in, int fd);
/* Close the pipe (if open) and free the buffer. */
void rq_child_in_free(rq_child_in *in);

/*
 * Read what the pipe holds: on a non-blocking descriptor until it is
 * empty, on a blocking one a single read. 1: the pipe is still open; 0:
 * end of file (in->fd closed and set to -1); -1: out of memory (the pipe
 * stays open; the caller gives the child up).
 */
int rq_child_in_read(rq_child_in *in);

/*
 * The first message not yet dropped: 1 and *m set; 0 when no whole
 * message is there yet; -1 when what is there is not a frame.
 */
int rq_child_in_next(const rq_child_in *in, rq_child_msg *m);

/* Drop the first message (after rq_child_in_next() returned 1). */
void rq_child_in_drop(rq_child_in *in);

/* Wait for a child (retrying on EINTR). 1 reaped (status set), 0 not ours. */
int rq_child_reap(pid_t pid, int *status);

/* Reap a child that has exited, without waiting: 1 reaped (status set),
 * 0 still running. */
int rq_child_try_reap(pid_t pid, int *status);

/* A descriptor (close-on-exec) that becomes readable when the child
 * exits, for poll(): a pidfd; -1 when the kernel has none. */
int rq_child_exit_fd(pid_t pid);

/* SIGKILL a child and reap it. */
void rq_child_kill(pid_t pid, int *status);

#endif
