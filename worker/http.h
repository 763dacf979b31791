/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * http: a tiny HTTP/1.x responder that lives inside an event loop (the
 * worker's /metrics): non-blocking sockets, no threads, one request per
 * connection (every answer says "Connection: close").
 *
 * The owner's loop asks for the descriptors to poll and a timeout
 * (rq_http_pollfds), polls them with its own, and hands the slice back
 * (rq_http_process), which accepts, reads, answers and closes without
 * ever blocking. A request is its request line and headers, at most
 * RQ_HTTP_MAX_REQUEST bytes; a body is never read. The handler is called
 * with the method and the path (the target without its query) of a
 * request that parsed, and fills the answer; a request line that is not
 * HTTP gets 400 at once, a request too big 431.
 *
 * Hostile clients: at most RQ_HTTP_MAX_CONNS connections are open; a new
 * one past that closes the oldest (an idle or slow client loses its slot,
 * never a new one); each connection is closed RQ_HTTP_TIMEOUT_MS after it
 * was accepted, whatever it sent or did not read; after an answer the
 * rest of what the client sends is read and dropped for at most a second
 * (so that the answer is not lost to a reset), then the connection is
 * closed. Writes never raise SIGPIPE.
 */
#ifndef RQ_HTTP_H
#define RQ_HTTP_H

#include <poll.h>

#include "rq_buf.h"
#include "rq_error.h"

#define RQ_HTTP_MAX_CONNS   16
#define RQ_HTTP_MAX_REQUEST 8192
#define RQ_HTTP_TIMEOUT_MS  5000
/* descriptors rq_http_pollfds may fill: the listener and every connection */
#define RQ_HTTP_POLLFDS (1 + RQ_HTTP_MAX_CONNS)

typedef struct rq_http rq_http;

/* What the handler answers: a status (200, 404, ...), the content type
 * (a static string) and the body, which rq_http frees. */
typedef struct rq_http_response {
	int status;
	const char *content_type;
	rq_buf body;
} rq_http_response;

typedef void (*rq_http_handler)(void *arg, const char *method, const char *path,
				rq_http_response *res);

/*
 * Listen on addr: "host:port", "[v6 address]:port" or ":port" (every
 * address); port 0 takes a free one (rq_http_address tells which). 0, or
 * -1 with err set (RQ_E_USAGE for an address that does not parse,
 * RQ_E_IO when it cannot be bound).
 */
int rq_http_listen(rq_http **out, const char *addr, rq_http_handler handler, void *arg,
		   rq_error *err);
void rq_http_free(rq_http *h);

/* The address it listens on, numeric: "127.0.0.1:9187", "[::1]:9187". */
const char *rq_http_address(const rq_http *h);

/*
 * The descriptors to poll (at most max, RQ_HTTP_POLLFDS is always enough)
 * and *timeout_ms (-1: none) lowered to the next connection deadline.
 * Returns how many were filled.
 */
int rq_http_pollfds(const rq_http *h, struct pollfd *pfd, int max, int *timeout_ms);

/* After the poll: serve what is ready in pfd[0..n) (the slice
 * rq_http_pollfds filled) and close the connections past their time. */
void rq_http_process(rq_http *h, const struct pollfd *pfd, int n);

#endif
