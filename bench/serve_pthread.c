/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * serve_pthread: examples/httpd.c's server with a kernel thread per
 * connection instead of a uthread, the 1:1 baseline of bench/serve.sh.
 * The protocol code is the same file (examples/http.c); only the thread
 * and I/O calls differ: pthread_create, read and send.
 *
 *	serve_pthread [--port P]
 *
 * Listens on 127.0.0.1:P (0, the default: a free port) and prints
 * "listening on 127.0.0.1:<port>" on stdout when it accepts connections.
 * It runs until it is killed.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"

/* A uthread's default stack: the threads are as large as ult's. */
#define STACK_SIZE (256 * 1024)

static void *
connection(void *arg)
{
	int fd = (int)(intptr_t)arg, one = 1;
	struct http_conn conn, *c = &conn; /* on the stack, as in httpd */
	enum http_next next;
	ssize_t n, k;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	http_init(c);
	for (;;) {
		n = read(fd, c->in + c->inlen, sizeof(c->in) - c->inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		c->inlen += (size_t)n;
		do {
			next = http_serve(c);
			/* send() may stop short on a signal; ult_send
			 * finishes the job itself. */
			for (size_t off = 0; off < c->outlen;
			     off += (size_t)k) {
				k = send(fd, c->out + off, c->outlen - off,
				    MSG_NOSIGNAL);
				if (k < 0 && errno == EINTR)
					k = 0;
				else if (k <= 0)
					goto out;
			}
			c->outlen = 0;
		} while (next == HTTP_WRITE);
		if (next == HTTP_CLOSE)
			break;
	}
out:
	close(fd);
	return (NULL);
}

int
main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;
	int port = 0, lfd, fd, bound, err;

	if (argc == 3 && strcmp(argv[1], "--port") == 0)
		port = atoi(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: serve_pthread [--port P]\n");
		return (2);
	}
	lfd = http_listen(port, &bound);
	if (lfd < 0) {
		perror("serve_pthread: listen");
		return (1);
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	printf("listening on 127.0.0.1:%d\n", bound);
	fflush(stdout);
	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (http_accept_retry(errno))
				continue;
			perror("serve_pthread: accept");
			return (1);
		}
		err =
		    pthread_create(&t, &attr, connection, (void *)(intptr_t)fd);
		if (err != 0) {
			fprintf(stderr, "serve_pthread: pthread_create: %s\n",
			    strerror(err));
			close(fd);
		}
	}
}
