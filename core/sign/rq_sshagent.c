/* SPDX-License-Identifier: GPL-2.0-only */
/* follows the SSH agent protocol (draft-miller-ssh-agent, OpenSSH's
 * PROTOCOL.agent): requests 11 and 13, answers 12, 14 and 5 */
/*
 * rq_sshagent: an ssh-agent client (see rq_sshagent.h).
 */
#include "rq_sshagent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "rq_sshwire.h"

#define REQUEST_IDENTITIES 11
#define IDENTITIES_ANSWER  12
#define SIGN_REQUEST	   13
#define SIGN_RESPONSE	   14
#define ANSWER_MAX	   (256 * 1024) /* as OpenSSH's client */

struct rq_sshagent {
	struct sockaddr_un addr;
	int fd;	   /* -1: not connected */
	pid_t pid; /* the process whose connection fd is */
};

int rq_sshagent_new(rq_sshagent **out, const char *socket, rq_error *err)
{
	rq_sshagent *a;

	*out = NULL;
	if (!socket)
		socket = getenv("SSH_AUTH_SOCK");
	if (!socket || !*socket)
		return rq_error_set(err, RQ_E_SIGN_KEY, "no ssh-agent: SSH_AUTH_SOCK is not set");
	if (strlen(socket) >= sizeof(a->addr.sun_path))
		return rq_error_set(err, RQ_E_SIGN_KEY, "the ssh-agent socket path is too long");
	if (!(a = calloc(1, sizeof(*a))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	a->addr.sun_family = AF_UNIX;
	strcpy(a->addr.sun_path, socket);
	a->fd = -1;
	*out = a;
	return 0;
}

static void disconnect(rq_sshagent *a)
{
	if (a->fd >= 0 && a->pid == getpid())
		close(a->fd);
	a->fd = -1; /* another process's: not ours to close (the number may be reused) */
}

/* This process's connection: 0, or -1 with errno. */
static int connect_agent(rq_sshagent *a)
{
	struct timeval tv = {RQ_SSHAGENT_TIMEOUT_S, 0};
	int fd, e;

	if (a->fd >= 0 && a->pid == getpid())
		return 0;
	a->fd = -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&a->addr, sizeof(a->addr)) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	a->fd = fd;
	a->pid = getpid();
	return 0;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int recv_all(int fd, char *p, size_t n)
{
	while (n) {
		ssize_t r = recv(fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = r < 0 ? (errno == EAGAIN ? ETIMEDOUT : errno) : ECONNRESET;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* One request (its body) and its answer's body into reply: 0, or -1 with
 * errno (the connection is dropped). */
static int request(rq_sshagent *a, const rq_buf *body, rq_buf *reply)
{
	unsigned char len[4];
	uint32_t n;

	if (connect_agent(a) < 0)
		return -1;
	rq_sshwire_be32(len, (uint32_t)body->len);
	if (send_all(a->fd, (const char *)len, 4) < 0 || send_all(a->fd, body->p, body->len) < 0 ||
	    recv_all(a->fd, (char *)len, 4) < 0)
		goto fail;
	n = (uint32_t)len[0] << 24 | (uint32_t)len[1] << 16 | (uint32_t)len[2] << 8 | len[3];
	if (!n || n > ANSWER_MAX) {
		errno = EPROTO;
		goto fail;
	}
	free(reply->p);
	memset(reply, 0, sizeof(*reply));
	if (!(reply->p = malloc(n))) {
		errno = ENOMEM;
		goto fail;
	}
	reply->cap = n;
	if (recv_all(a->fd, reply->p, n) < 0)
		goto fail;
	reply->len = n;
	return 0;
fail:
	n = (uint32_t)errno;
	disconnect(a);
	errno = (int)n;
	return -1;
}

int rq_sshagent_identities(rq_sshagent *a, rq_buf *ids, uint32_t *count, rq_error *err)
{
	char type = REQUEST_IDENTITIES;
	rq_buf body = {&type, 1, 1, 0}, reply = {0};
	rq_sshwire r;
	int rc = 0;

	if (request(a, &body, &reply) < 0)
		return rq_error_set(err, RQ_E_SIGN_KEY, "cannot ask the ssh-agent at %s: %s",
				    a->addr.sun_path, strerror(errno));
	disconnect(a); /* a one-off: signing connects when it needs to */
	rq_sshwire_init(&r, reply.p + 1, reply.len - 1);
	*count = rq_sshwire_u32(&r);
	if (reply.p[0] != IDENTITIES_ANSWER || r.bad)
		rc = rq_error_set(err, RQ_E_SIGN_KEY, "the ssh-agent did not list its keys");
	else
		rq_buf_add(ids, (const char *)r.p, rq_sshwire_left(&r));
	free(reply.p);
	if (rc == 0 && ids->oom)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	return rc;
}

int rq_sshagent_sign(rq_sshagent *a, const void *key, size_t key_len, const void *data, size_t len,
		     uint32_t flags, rq_buf *out, rq_error *err)
{
	char type = SIGN_REQUEST;
	rq_buf body = {0}, reply = {0};
	rq_sshwire r;
	const unsigned char *sig;
	size_t sl;
	int rc;

	rq_buf_add(&body, &type, 1);
	rq_sshwire_put_string(&body, key, key_len);
	rq_sshwire_put_string(&body, data, len);
	rq_sshwire_put_u32(&body, flags);
	if (body.oom) {
		free(body.p);
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	}
	rc = request(a, &body, &reply);
	free(body.p);
	if (rc < 0)
		return rq_error_set(err, RQ_E_SIGN_FAILED, "cannot ask the ssh-agent at %s: %s",
				    a->addr.sun_path, strerror(errno));
	rq_sshwire_init(&r, reply.p + 1, reply.len - 1);
	sig = rq_sshwire_string(&r, &sl);
	if (reply.p[0] != SIGN_RESPONSE || !sig)
		rc = rq_error_set(err, RQ_E_SIGN_FAILED, "the ssh-agent refused to sign");
	else
		rq_buf_add(out, (const char *)sig, sl);
	free(reply.p);
	return rc;
}

void rq_sshagent_free(rq_sshagent *a)
{
	if (!a)
		return;
	disconnect(a);
	free(a);
}
