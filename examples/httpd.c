/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * httpd: a small HTTP/1.1 server on ult, one uthread per connection.
 *
 *	httpd [--port P] [--workers N] [--hogs N]
 *
 * It listens on 127.0.0.1:P (default 8080; 0 picks a free port) and
 * prints "listening on 127.0.0.1:<port>" once it accepts connections.
 * GET / answers a fixed page; keep-alive and pipelined requests are
 * served in order on their connection (the protocol is in http.c).
 *
 * Each connection's uthread is written as blocking code: read, parse,
 * write, read again.  ult_read and ult_send put the uthread to sleep
 * while its socket is not ready, and the worker runs other uthreads
 * meanwhile, so a few kernel threads (--workers, default one per CPU)
 * serve any number of connections.  Because a connection's uthread
 * mostly sleeps, ULE rates it interactive and runs it ahead of CPU-bound
 * uthreads when its socket wakes it: --hogs N starts N uthreads at nice
 * +10 that only spin, to watch that (bench/serve.sh measures it).
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <ult.h>

#include "http.h"

static atomic_ulong hog_spins; /* keeps the hogs' loops from being elided */

/* One connection, from accept to close, in its own uthread. */
static void *
connection(void *arg)
{
	int fd = (int)(intptr_t)arg, one = 1;
	/* The connection's whole state lives on its uthread's stack
	 * (24 KiB of the default 256 KiB). */
	struct http_conn c;
	enum http_next next;
	ssize_t n;

	/* Responses leave in one send per batch; without this, Nagle's
	 * algorithm would hold a response back waiting for an ACK. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	http_init(&c);
	for (;;) {
		n = ult_read(fd, c.in + c.inlen, sizeof(c.in) - c.inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the client closed, or the connection broke */
		c.inlen += (size_t)n;
		do {
			next = http_serve(&c);
			/* A blocking send returns when all of it is written.
			 * MSG_NOSIGNAL: a client that went away is an error
			 * here, not a SIGPIPE that ends the server. */
			if (c.outlen > 0 &&
			    ult_send(fd, c.out, c.outlen, MSG_NOSIGNAL) !=
				(ssize_t)c.outlen)
				goto out;
			c.outlen = 0;
		} while (next == HTTP_WRITE);
		if (next == HTTP_CLOSE)
			break;
	}
out:
	/* ult_close rather than close: it also drops the descriptor from
	 * the runtime's poller, before the number can be reused. */
	ult_close(fd);
	return (NULL);
}

/* Accepts connections for as long as the server runs. */
static void *
acceptor(void *arg)
{
	int lfd = (int)(intptr_t)arg, fd, err;
	struct ult_attr a;

	ult_attr_init(&a);
	/* Nobody joins a connection: it frees itself when it ends. */
	a.detached = 1;
	a.name = "connection";
	for (;;) {
		/* Sleeps in the poller until a client connects. */
		fd = ult_accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (http_accept_retry(errno))
				continue;
			perror("httpd: accept");
			return (NULL);
		}
		err = ult_spawn(NULL, &a, connection, (void *)(intptr_t)fd);
		if (err != 0) {
			fprintf(stderr, "httpd: spawn: %s\n", strerror(err));
			ult_close(fd);
		}
	}
}

/* A CPU-bound uthread: never sleeps, so only preemption takes its worker
 * away. */
static void *
hog(void *arg)
{
	(void)arg;
	for (;;)
		atomic_fetch_add_explicit(&hog_spins, 1, memory_order_relaxed);
	return (NULL);
}

static int
number(const char *s, int min, int max, int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || x < min || x > max)
		return (0);
	*v = (int)x;
	return (1);
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: httpd [--port P] [--workers N] [--hogs N]\n"
	    "  --port P     listen on 127.0.0.1:P (8080; 0: a free port)\n"
	    "  --workers N  kernel threads running the uthreads (0, the "
	    "default:\n"
	    "               ULT_NCPU or one per CPU)\n"
	    "  --hogs N     also run N uthreads at nice +10 that only spin\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct ult_config cfg = {0};
	struct ult_attr a;
	ult_thread_t *acc;
	int port = 8080, hogs = 0, lfd, bound, err;

	for (int i = 1; i < argc; i++) {
		int *v = NULL, max = INT_MAX;

		if (strcmp(argv[i], "--port") == 0) {
			v = &port;
			max = 65535;
		} else if (strcmp(argv[i], "--workers") == 0) {
			v = &cfg.ncpu;
			max = ULT_MAXCPU;
		} else if (strcmp(argv[i], "--hogs") == 0) {
			v = &hogs;
			max = 1024;
		}
		if (v == NULL || i + 1 == argc || !number(argv[++i], 0, max, v))
			usage();
	}

	lfd = http_listen(port, &bound);
	if (lfd < 0) {
		perror("httpd: listen");
		return (1);
	}
	err = ult_init(&cfg);
	if (err != 0) {
		fprintf(stderr, "httpd: ult_init: %s\n", strerror(err));
		return (1);
	}

	ult_attr_init(&a);
	a.detached = 1;
	a.nice = 10;
	a.name = "hog";
	for (int i = 0; i < hogs; i++) {
		err = ult_spawn(NULL, &a, hog, NULL);
		if (err != 0) {
			fprintf(stderr, "httpd: spawn: %s\n", strerror(err));
			return (1);
		}
	}

	/* The main thread is not a uthread: there ult_accept4 would be a
	 * plain blocking accept.  The acceptor runs as a uthread so that
	 * it waits in the poller like the connections. */
	ult_attr_init(&a);
	a.name = "acceptor";
	err = ult_spawn(&acc, &a, acceptor, (void *)(intptr_t)lfd);
	if (err != 0) {
		fprintf(stderr, "httpd: spawn: %s\n", strerror(err));
		return (1);
	}
	printf("listening on 127.0.0.1:%d\n", bound);
	fflush(stdout);
	/* The acceptor returns only on an error that accepting again would
	 * not cure; the connections and hogs die with the process. */
	ult_join(acc, NULL);
	return (1);
}
