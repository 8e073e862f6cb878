/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * echo: a TCP echo server on ult, one uthread per connection.
 *
 *	echo [PORT [WORKERS]]
 *
 * It listens on 127.0.0.1:PORT (default 7007; 0 picks a free port, which
 * the "listening" line names) and sends every byte it
 * receives back on the same connection.  WORKERS is the number of kernel
 * threads that run the uthreads; 0 or absent leaves it to ult_init: the
 * environment variable ULT_NCPU, else one per CPU.  Try it with
 * "nc 127.0.0.1 7007".
 *
 * The point is the shape of the code: each connection is a plain loop of
 * blocking reads and writes in its own uthread, with no callbacks and no
 * event loop.  ult_read and ult_send put only the calling uthread to
 * sleep until its socket is ready; the worker runs the other connections
 * meanwhile.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ult.h>

/* One connection: echo until the client closes it. */
static void *
echo_connection(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[4096];
	ssize_t n;

	for (;;) {
		/* Sleeps until the client sends something. */
		n = ult_read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* 0: the client closed; <0: a broken one */
		/* On a blocking socket this returns once all n bytes are
		 * sent, sleeping while the client is slow to read them.
		 * MSG_NOSIGNAL: a client that went away is an error here,
		 * not a SIGPIPE that ends the server. */
		if (ult_send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n)
			break;
	}
	/* ult_close rather than close: it also drops the descriptor from
	 * the runtime's poller, before the number can be reused. */
	ult_close(fd);
	return (NULL);
}

/* Accepts connections and gives each its own uthread. */
static void *
acceptor(void *arg)
{
	int lfd = (int)(intptr_t)arg, fd, err;
	struct ult_attr a;

	ult_attr_init(&a);
	a.detached = 1; /* nobody joins a connection; it frees itself */
	a.name = "echo";
	for (;;) {
		fd = ult_accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			/* A client that reset before it was accepted, or a
			 * lack of descriptors, costs one client, not the
			 * server. */
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM ||
			    errno == EPROTO || errno == EPERM)
				continue;
			perror("echo: accept");
			return (NULL);
		}
		err =
		    ult_spawn(NULL, &a, echo_connection, (void *)(intptr_t)fd);
		if (err != 0) {
			fprintf(stderr, "echo: spawn: %s\n", strerror(err));
			ult_close(fd);
		}
	}
}

static int
listen_on(int port)
{
	struct sockaddr_in sin = {
	    .sin_family = AF_INET,
	    .sin_port = htons((unsigned short)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return (-1);
	/* Restarting the server must not wait for old connections in
	 * TIME_WAIT. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		close(fd);
		return (-1);
	}
	return (fd);
}

int
main(int argc, char **argv)
{
	struct ult_config cfg = {0};
	struct ult_attr a;
	ult_thread_t *acc;
	int port = 7007, lfd, err;

	if (argc > 1)
		port = atoi(argv[1]);
	if (argc > 2)
		cfg.ncpu = atoi(argv[2]);
	if (argc > 3 || port < 0 || port > 65535 || cfg.ncpu < 0 ||
	    cfg.ncpu > ULT_MAXCPU) {
		fprintf(stderr, "usage: echo [PORT [WORKERS]]\n");
		return (2);
	}
	lfd = listen_on(port);
	if (lfd < 0) {
		perror("echo: listen");
		return (1);
	}
	if (port == 0) {
		struct sockaddr_in sin;
		socklen_t len = sizeof(sin);

		if (getsockname(lfd, (struct sockaddr *)&sin, &len) == 0)
			port = ntohs(sin.sin_port);
	}
	err = ult_init(&cfg);
	if (err != 0) {
		fprintf(stderr, "echo: ult_init: %s\n", strerror(err));
		return (1);
	}
	/* The acceptor is a uthread too: in the main thread, which is not
	 * one, ult_accept4 would be a plain blocking accept(). */
	ult_attr_init(&a);
	a.name = "acceptor";
	err = ult_spawn(&acc, &a, acceptor, (void *)(intptr_t)lfd);
	if (err != 0) {
		fprintf(stderr, "echo: spawn: %s\n", strerror(err));
		return (1);
	}
	fprintf(stderr, "echo: listening on 127.0.0.1:%d\n", port);
	/* Returns only if accepting failed for good. */
	ult_join(acc, NULL);
	return (1);
}
