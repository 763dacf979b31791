/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * http: the non-blocking HTTP/1.x responder (see http.h). The parts: the
 * listening socket; the connection slots; reading and judging a request;
 * writing the answer; the lingering close; the loop's two calls.
 */
#define _GNU_SOURCE /* accept4, memmem */
#include "http.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rq_clock.h"
#include "opt.h"

/* accepted at most per turn of the loop, so that a flood cannot hold it */
#define ACCEPT_BURST 32
/* out of descriptors with no connection of ours to close: the listener
 * rests that long (its waiting connections would wake every poll at once,
 * for nothing) */
#define ACCEPT_REST_MS 100
/* after the answer: how long, and how much, is read and dropped */
#define LINGER_MS    1000
#define LINGER_BYTES 65536

enum conn_state { CONN_FREE, CONN_READING, CONN_WRITING, CONN_LINGER };

typedef struct conn {
	int fd;
	enum conn_state state;
	long long since, deadline; /* accepted at; closed at */
	size_t len;		   /* bytes of req (reading), or dropped (lingering) */
	char req[RQ_HTTP_MAX_REQUEST + 1];
	char *out; /* the answer, whole */
	size_t outlen, outoff;
} conn;

struct rq_http {
	int fd;
	long long accept_rest_until; /* out of descriptors: not polled until then */
	char address[80];
	rq_http_handler handler;
	void *arg;
	conn conns[RQ_HTTP_MAX_CONNS];
};

/* ===================== the listening socket ===================== */

/* Split "host:port", "[v6]:port" or ":port" into host (empty: any) and
 * port: 0, or -1 when it does not parse. */
static int split_address(const char *addr, char *host, size_t hsize, char *port, size_t psize)
{
	const char *colon, *h = addr;
	size_t hlen;
	long portnum;

	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		if (!close || close[1] != ':')
			return -1;
		h = addr + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		if (!(colon = strrchr(addr, ':')))
			return -1;
		hlen = (size_t)(colon - addr);
	}
	if (hlen >= hsize || strlen(colon + 1) >= psize ||
	    rq_opt_number(colon + 1, 0, 65535, &portnum) < 0)
		return -1;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	strcpy(port, colon + 1);
	return 0;
}

/* A listening socket on one of the addresses: its descriptor, or -1. */
static int bind_first(const struct addrinfo *ai, int *saved_errno)
{
	for (; ai; ai = ai->ai_next) {
		int one = 1;
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
				ai->ai_protocol);
		if (fd < 0) {
			*saved_errno = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
			return fd;
		*saved_errno = errno;
		close(fd);
	}
	return -1;
}

/* The bound address, numeric, into h->address. */
static void note_address(rq_http *h)
{
	struct sockaddr_storage ss = {0}; /* (its family read even when getsockname fails) */
	socklen_t len = sizeof(ss);
	char host[64] = "?", port[16] = "?";

	if (getsockname(h->fd, (struct sockaddr *)&ss, &len) == 0)
		getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), port, sizeof(port),
			    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(h->address, sizeof(h->address), "%s%s%s:%s", ss.ss_family == AF_INET6 ? "[" : "",
		 host, ss.ss_family == AF_INET6 ? "]" : "", port);
}

static int open_listener(rq_http *h, const char *addr, rq_error *err)
{
	struct addrinfo hints, *ai = NULL;
	char host[64], port[8];
	int rc, saved = 0;

	if (split_address(addr, host, sizeof(host), port, sizeof(port)) < 0)
		return rq_error_set(
		    err, RQ_E_USAGE,
		    "bad listen address '%.200s': want host:port, [v6]:port or :port", addr);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai)) != 0)
		return rq_error_set(err, RQ_E_USAGE, "listen address '%.200s': %s", addr,
				    gai_strerror(rc));
	h->fd = bind_first(ai, &saved);
	freeaddrinfo(ai);
	if (h->fd < 0)
		return rq_error_set(err, RQ_E_IO, "cannot listen on %.200s: %s", addr,
				    strerror(saved));
	note_address(h);
	return 0;
}

int rq_http_listen(rq_http **out, const char *addr, rq_http_handler handler, void *arg,
		   rq_error *err)
{
	rq_http *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (int i = 0; i < RQ_HTTP_MAX_CONNS; i++)
		h->conns[i].fd = -1;
	h->handler = handler;
	h->arg = arg;
	if (open_listener(h, addr, err) < 0) {
		free(h);
		return -1;
	}
	*out = h;
	return 0;
}

const char *rq_http_address(const rq_http *h)
{
	return h->address;
}

/* ===================== connection slots ===================== */

/* Shut down before the close: a process that holds a copy of the socket
 * cannot keep the client waiting for the end of the answer. */
static void conn_close(conn *c)
{
	if (c->fd >= 0) {
		shutdown(c->fd, SHUT_RDWR);
		close(c->fd);
	}
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->state = CONN_FREE;
	c->len = c->outlen = c->outoff = 0;
}

void rq_http_free(rq_http *h)
{
	if (!h)
		return;
	for (int i = 0; i < RQ_HTTP_MAX_CONNS; i++)
		conn_close(&h->conns[i]);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}

/* Out of descriptors: close our oldest connection, so that the next
 * accept has one; with none open, rest the listener a while. */
static void out_of_descriptors(rq_http *h, long long now)
{
	conn *oldest = NULL;

	for (int i = 0; i < RQ_HTTP_MAX_CONNS; i++)
		if (h->conns[i].state != CONN_FREE &&
		    (!oldest || h->conns[i].since < oldest->since))
			oldest = &h->conns[i];
	if (oldest)
		conn_close(oldest);
	else
		h->accept_rest_until = now + ACCEPT_REST_MS;
}

/* A free slot, or the oldest connection's, closed to make room. */
static conn *slot_for_new(rq_http *h)
{
	conn *oldest = &h->conns[0];

	for (int i = 0; i < RQ_HTTP_MAX_CONNS; i++) {
		if (h->conns[i].state == CONN_FREE)
			return &h->conns[i];
		if (h->conns[i].since < oldest->since)
			oldest = &h->conns[i];
	}
	conn_close(oldest);
	return oldest;
}

/* Take the connections waiting on the listener (at most a burst). */
static void accept_some(rq_http *h, long long now)
{
	for (int i = 0; i < ACCEPT_BURST; i++) {
		int fd = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 &&
		    (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM))
			out_of_descriptors(h, now);
		if (fd < 0)
			return; /* none left (EAGAIN), or a passing error */
		conn *c = slot_for_new(h);
		c->fd = fd;
		c->state = CONN_READING;
		c->since = now;
		c->deadline = now + RQ_HTTP_TIMEOUT_MS;
	}
}

/* ===================== writing the answer ===================== */

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 431:
		return "Request Header Fields Too Large";
	case 503:
		return "Service Unavailable";
	default:
		return "Internal Server Error";
	}
}

/* Write what the socket takes now; the whole answer sent: shut the
 * writing side and linger. */
static void conn_write(conn *c, long long now)
{
	while (c->outoff < c->outlen) {
		ssize_t k = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (k <= 0) {
			conn_close(c);
			return;
		}
		c->outoff += (size_t)k;
	}
	shutdown(c->fd, SHUT_WR);
	free(c->out);
	c->out = NULL;
	c->state = CONN_LINGER;
	c->len = 0;
	if (c->deadline > now + LINGER_MS)
		c->deadline = now + LINGER_MS;
}

/* Make the whole answer (status line, headers, body) and start sending. */
static void conn_answer(conn *c, rq_http_response *res, long long now)
{
	rq_buf b = {0};
	char head[256];

	if (res->body.oom) {
		res->status = 503;
		res->content_type = "text/plain; charset=utf-8";
		res->body.len = 0;
	}
	snprintf(head, sizeof(head),
		 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n",
		 res->status, reason(res->status), res->content_type, res->body.len);
	rq_buf_str(&b, head);
	if (res->body.len)
		rq_buf_add(&b, res->body.p, res->body.len);
	free(res->body.p);
	if (b.oom) {
		free(b.p);
		conn_close(c);
		return;
	}
	c->out = b.p;
	c->outlen = b.len;
	c->outoff = 0;
	c->state = CONN_WRITING;
	conn_write(c, now);
}

/* An answer of our own: a status and a one-line text. */
static void conn_answer_text(conn *c, int status, const char *text, long long now)
{
	rq_http_response res = {.status = status, .content_type = "text/plain; charset=utf-8"};

	rq_buf_str(&res.body, text);
	conn_answer(c, &res, now);
}

/* ===================== reading a request ===================== */

/* The request line "METHOD SP target SP HTTP/1.x" (its end at eol, a
 * '\r' before it allowed) into method and path (the target without its
 * query): 0, or -1 when it is not one. */
static int parse_request_line(const char *line, const char *eol, char *method, char *path)
{
	size_t mlen = strspn(line, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
	const char *target = line + mlen + 1, *sp, *v;

	if (eol > line && eol[-1] == '\r')
		eol--;
	if (mlen == 0 || mlen > 16 || line[mlen] != ' ' || target[0] != '/')
		return -1;
	if (!(sp = memchr(target, ' ', (size_t)(eol - target))))
		return -1;
	v = sp + 1;
	if (eol - v != 8 || (memcmp(v, "HTTP/1.0", 8) && memcmp(v, "HTTP/1.1", 8)))
		return -1;
	for (const char *p = target; p < sp; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return -1;
	memcpy(method, line, mlen);
	method[mlen] = '\0';
	size_t plen = strcspn(target, "? ");
	memcpy(path, target, plen);
	path[plen] = '\0';
	return 0;
}

/* The blank line that ends the headers in what came so far, or NULL
 * (what came is bytes: a NUL among them does not end the search). */
static const char *headers_end(const conn *c)
{
	const char *crlf = memmem(c->req, c->len, "\r\n\r\n", 4);
	const char *lf = memmem(c->req, c->len, "\n\n", 2);

	return !crlf ? lf : !lf ? crlf : crlf < lf ? crlf : lf;
}

/* 1 when what came so far cannot start an HTTP request: a control byte
 * before the end of the first line, or a NUL byte in the headers. */
static int garbage(const conn *c, const char *end)
{
	const char *eol = memchr(c->req, '\n', c->len);
	size_t n = eol ? (size_t)(eol - c->req) : c->len;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)c->req[i];
		if ((ch < 0x20 && ch != '\r' && ch != '\t') || ch == 0x7f)
			return 1;
	}
	return memchr(c->req, '\0', end ? (size_t)(end - c->req) : c->len) != NULL;
}

/* Judge what came so far: answer it when the request is whole (or
 * cannot be one); else wait for more. */
static void conn_judge(rq_http *h, conn *c, long long now)
{
	char method[17], path[RQ_HTTP_MAX_REQUEST];
	const char *eol, *end = headers_end(c);

	c->req[c->len] = '\0';
	if (garbage(c, end)) {
		conn_answer_text(c, 400, "bad request\n", now);
		return;
	}
	if ((eol = memchr(c->req, '\n', c->len)) &&
	    parse_request_line(c->req, eol, method, path) < 0) {
		conn_answer_text(c, 400, "bad request\n", now);
		return;
	}
	if (!eol || !end) {
		if (c->len == RQ_HTTP_MAX_REQUEST)
			conn_answer_text(c, 431, "request too large\n", now);
		return;
	}
	rq_http_response res = {.status = 404, .content_type = "text/plain; charset=utf-8"};
	h->handler(h->arg, method, path, &res);
	conn_answer(c, &res, now);
}

/* Read what has come; judge it. */
static void conn_read(rq_http *h, conn *c, long long now)
{
	ssize_t k = recv(c->fd, c->req + c->len, RQ_HTTP_MAX_REQUEST - c->len, 0);

	if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (k <= 0) { /* gone, or an error */
		conn_close(c);
		return;
	}
	c->len += (size_t)k;
	conn_judge(h, c, now);
}

/* After the answer: drop what the client still sends, until it closes. */
static void conn_linger(conn *c)
{
	char sink[4096];
	ssize_t k = recv(c->fd, sink, sizeof(sink), 0);

	if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	c->len += k > 0 ? (size_t)k : 0;
	if (k <= 0 || c->len > LINGER_BYTES)
		conn_close(c);
}

/* ===================== the loop's two calls ===================== */

int rq_http_pollfds(const rq_http *h, struct pollfd *pfd, int max, int *timeout_ms)
{
	long long now = rq_clock_mono_ms();
	int n = 0;

	if (!h || max < 1)
		return 0;
	if (now >= h->accept_rest_until)
		pfd[n++] = (struct pollfd){.fd = h->fd, .events = POLLIN};
	else if (*timeout_ms < 0 || h->accept_rest_until - now < *timeout_ms)
		*timeout_ms = (int)(h->accept_rest_until - now);
	for (int i = 0; i < RQ_HTTP_MAX_CONNS && n < max; i++) {
		const conn *c = &h->conns[i];
		long long left;
		if (c->state == CONN_FREE)
			continue;
		pfd[n++] = (struct pollfd){.fd = c->fd,
					   .events = c->state == CONN_WRITING ? POLLOUT : POLLIN};
		left = c->deadline > now ? c->deadline - now : 0;
		if (*timeout_ms < 0 || left < *timeout_ms)
			*timeout_ms = (int)left;
	}
	return n;
}

static conn *conn_of(rq_http *h, int fd)
{
	for (int i = 0; i < RQ_HTTP_MAX_CONNS; i++)
		if (h->conns[i].state != CONN_FREE && h->conns[i].fd == fd)
			return &h->conns[i];
	return NULL;
}

void rq_http_process(rq_http *h, const struct pollfd *pfd, int n)
{
	long long now = rq_clock_mono_ms();
	int listener_ready = 0;

	if (!h)
		return;
	for (int i = 0; i < n; i++) {
		conn *c = pfd[i].revents ? conn_of(h, pfd[i].fd) : NULL;
		if (pfd[i].fd == h->fd)
			listener_ready = pfd[i].revents != 0;
		else if (c && c->state == CONN_READING)
			conn_read(h, c, now);
		else if (c && c->state == CONN_WRITING)
			conn_write(c, now);
		else if (c && c->state == CONN_LINGER)
			conn_linger(c);
	}
	for (int i = 0; i < RQ_HTTP_MAX_CONNS; i++)
		if (h->conns[i].state != CONN_FREE && now >= h->conns[i].deadline)
			conn_close(&h->conns[i]);
	if (listener_ready)
		accept_some(h, now);
}
