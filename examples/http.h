/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * http: the protocol half of examples/httpd.c, kept apart from the I/O so
 * that the very same parser answers in ult's httpd and in the kernel-thread
 * and epoll servers the benchmark holds it against (bench/serve_*.c).
 *
 * A connection's state is two buffers: the bytes read and not yet parsed
 * (in) and the responses not yet written (out).  A server reads into in,
 * calls http_serve(), writes out all of out, and goes by what http_serve()
 * returned.  http_serve() never touches a descriptor, so a request may
 * arrive in any number of pieces, and several may arrive in one read
 * (pipelining): their responses then leave in one write.
 *
 * What it serves: GET or HEAD of / (a fixed page of HTTP_ROOT_LEN bytes),
 * 404 for any other path, 405 for any other method, and 400 (then close)
 * for anything it cannot parse.  HTTP/1.1 connections stay open unless the
 * client says "Connection: close"; HTTP/1.0 ones close unless it says
 * "Connection: keep-alive".  A request body (Content-Length) is read and
 * dropped; a chunked one cannot be framed here and gets 400.
 */
#ifndef EXAMPLES_HTTP_H
#define EXAMPLES_HTTP_H

#include <stddef.h>

#define HTTP_IN_MAX 8192   /* a request's line and headers must fit */
#define HTTP_OUT_MAX 16384 /* room for the responses to one read */

struct http_conn {
	size_t inlen;  /* bytes in in[], not yet parsed */
	size_t outlen; /* bytes in out[]: the server writes them, sets 0 */
	size_t skip;   /* body bytes of the last request still to drop */
	int closing;   /* the last response said Connection: close */
	char in[HTTP_IN_MAX];
	char out[HTTP_OUT_MAX];
};

enum http_next {
	HTTP_READ,  /* write out[], then read more into in[] (it has room) */
	HTTP_WRITE, /* write out[], then call http_serve() again: out[]
		       filled up before every request in in[] was answered */
	HTTP_CLOSE  /* write out[], then close the connection */
};

/* The length of the page GET / returns (its Content-Length). */
extern const size_t HTTP_ROOT_LEN;

void http_init(struct http_conn *c);

/*
 * Answer the complete requests in c->in, appending their responses to
 * c->out, and keep what is left of an incomplete one at the start of
 * c->in.  Call it after every read, and again while it says HTTP_WRITE.
 */
enum http_next http_serve(struct http_conn *c);

/*
 * A TCP socket listening on 127.0.0.1:port (0: any free port), its port
 * in *bound; -1 with errno on failure.  For the servers built on this
 * file, which all listen the same way.
 */
int http_listen(int port, int *bound);

/*
 * accept(2) failed with err: 1 if that costs one client, not the server
 * (a connection reset before it was accepted, out of descriptors or
 * memory), so the caller should accept again.
 */
int http_accept_retry(int err);

#endif /* !EXAMPLES_HTTP_H */
