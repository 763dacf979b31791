/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_child: forking a helper with a report pipe, the message frame, the
 * reader and reaping (see rq_child.h).
 */
#define _GNU_SOURCE /* pipe2 */
#include "rq_child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_pipe(int fds[2])
{
	int e = errno;

	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	errno = e;
}

/* Fork with a report pipe (child to parent) and, when answer_fd is not
 * NULL, an answer pipe (parent to child). */
static pid_t fork_with_pipes(int *fd, int *answer_fd)
{
	int report[2] = {-1, -1}, answer[2] = {-1, -1};
	pid_t pid;

	if (pipe2(report, O_CLOEXEC) < 0)
		return -1;
	if (answer_fd && pipe2(answer, O_CLOEXEC) < 0) {
		close_pipe(report);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close_pipe(report);
		close_pipe(answer);
		return -1;
	}
	/* the child writes reports and reads answers; the parent the reverse */
	close(report[pid == 0 ? 0 : 1]);
	*fd = report[pid == 0 ? 1 : 0];
	if (answer_fd) {
		close(answer[pid == 0 ? 1 : 0]);
		*answer_fd = answer[pid == 0 ? 0 : 1];
	}
	return pid;
}

pid_t rq_child_fork(int *fd)
{
	return fork_with_pipes(fd, NULL);
}

pid_t rq_child_fork_asking(int *fd, int *answer_fd)
{
	return fork_with_pipes(fd, answer_fd);
}

void rq_child_frame(rq_buf *b, char type, const void *data, size_t len)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "%c%zu:", type, len);

	rq_buf_add(b, head, (size_t)n);
	rq_buf_add(b, data, len);
	rq_buf_add(b, "", 1);
}

int rq_child_write(int fd, const void *p, size_t len)
{
	const char *s = p;

	while (len) {
		ssize_t w = write(fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

int rq_child_sendv(int fd, char type, const struct iovec *parts, int nparts)
{
	char head[32];
	size_t len = 0;
	int n;

	for (int k = 0; k < nparts; k++)
		len += parts[k].iov_len;
	n = snprintf(head, sizeof(head), "%c%zu:", type, len);
	if (rq_child_write(fd, head, (size_t)n) < 0)
		return -1;
	for (int k = 0; k < nparts; k++)
		if (rq_child_write(fd, parts[k].iov_base, parts[k].iov_len) < 0)
			return -1;
	return rq_child_write(fd, "", 1);
}

int rq_child_ask(int fd, int answer_fd, char type, const struct iovec *parts, int nparts)
{
	char answer = 0;
	ssize_t r;

	if (rq_child_sendv(fd, type, parts, nparts) < 0)
		return -1;
	while ((r = read(answer_fd, &answer, 1)) < 0 && errno == EINTR)
		;
	return r == 1 ? (unsigned char)answer : 0;
}

int rq_child_answer(int answer_fd, char answer)
{
	return rq_child_write(answer_fd, &answer, 1);
}

void rq_child_in_init(rq_child_in *in, int fd)
{
	memset(in, 0, sizeof(*in));
	in->fd = fd;
}

void rq_child_in_free(rq_child_in *in)
{
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
	free(in->buf.p);
	memset(&in->buf, 0, sizeof(in->buf));
	in->head = 0;
}

/* Make room for one more read: drop what was consumed, then grow. */
static int in_room(rq_child_in *in, size_t want)
{
	rq_buf *b = &in->buf;

	if (in->head) {
		memmove(b->p, b->p + in->head, b->len - in->head);
		b->len -= in->head;
		in->head = 0;
	}
	if (b->cap - b->len < want + 1) {
		size_t ncap = b->cap ? b->cap * 2 : 8192;
		char *np;
		while (ncap - b->len < want + 1)
			ncap *= 2;
		if (!(np = realloc(b->p, ncap)))
			return -1;
		b->p = np;
		b->cap = ncap;
	}
	return 0;
}

int rq_child_in_read(rq_child_in *in)
{
	int blocking = !(fcntl(in->fd, F_GETFL) & O_NONBLOCK);

	for (;;) {
		ssize_t r;
		if (in_room(in, 4096) < 0)
			return -1;
		r = read(in->fd, in->buf.p + in->buf.len, in->buf.cap - in->buf.len - 1);
		if (r > 0) {
			in->buf.len += (size_t)r;
			in->buf.p[in->buf.len] = '\0';
			if (blocking)
				return 1;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return 1;
		close(in->fd); /* end of file, or a broken pipe: nothing more comes */
		in->fd = -1;
		return 0;
	}
}

int rq_child_in_next(const rq_child_in *in, rq_child_msg *m)
{
	const char *p = in->buf.p + in->head, *end = in->buf.p + in->buf.len;
	size_t len = 0;
	const char *q;

	if (!in->buf.p || p >= end)
		return 0;
	for (q = p + 1; q < end && *q >= '0' && *q <= '9'; q++) {
		len = len * 10 + (size_t)(*q - '0');
		if (len > RQ_CHILD_MSG_MAX)
			return -1;
	}
	if (q == end)
		return 0;
	if (q == p + 1 || *q != ':')
		return -1;
	q++;
	if ((size_t)(end - q) < len + 1)
		return 0;
	if (q[len] != '\0')
		return -1;
	m->type = p[0];
	m->data = q;
	m->len = len;
	return 1;
}

void rq_child_in_drop(rq_child_in *in)
{
	rq_child_msg m;

	if (rq_child_in_next(in, &m) == 1)
		in->head = (size_t)(m.data + m.len + 1 - in->buf.p);
}

int rq_child_reap(pid_t pid, int *status)
{
	pid_t r;

	do
		r = waitpid(pid, status, 0);
	while (r < 0 && errno == EINTR);
	return r == pid || (r < 0 && errno == ECHILD);
}

int rq_child_try_reap(pid_t pid, int *status)
{
	return waitpid(pid, status, WNOHANG) == pid;
}

int rq_child_exit_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
#else
	(void)pid;
	return -1;
#endif
}

void rq_child_kill(pid_t pid, int *status)
{
	kill(pid, SIGKILL);
	rq_child_reap(pid, status);
}
