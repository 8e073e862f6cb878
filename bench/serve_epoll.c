/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * serve_epoll: examples/httpd.c's server as one thread running an epoll
 * loop over non-blocking sockets, the event-driven baseline of
 * bench/serve.sh.  The protocol code is the same file (examples/http.c);
 * what a uthread keeps on its stack (where it is in the exchange) is
 * spelt out here in struct conn.
 *
 *	serve_epoll [--port P]
 *
 * Listens on 127.0.0.1:P (0, the default: a free port) and prints
 * "listening on 127.0.0.1:<port>" on stdout when it accepts connections.
 * It runs until it is killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"

#define MAXEVENTS 64

struct conn {
	int fd;
	int writing;	     /* out[] is stuck: waiting for EPOLLOUT */
	size_t sent;	     /* bytes of out[] already sent */
	enum http_next next; /* what to do once out[] is sent */
	struct http_conn h;
};

static int epfd;

static void
drop(struct conn *c)
{
	/* The last descriptor of the socket: closing it also takes it out
	 * of the epoll set. */
	close(c->fd);
	free(c);
}

/* Send what is left of out[]: 0 all sent, 1 the socket is full, -1 the
 * connection is broken. */
static int
flush(struct conn *c)
{
	ssize_t k;

	while (c->sent < c->h.outlen) {
		k = send(c->fd, c->h.out + c->sent, c->h.outlen - c->sent,
		    MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return (1);
		if (k <= 0)
			return (-1);
		c->sent += (size_t)k;
	}
	c->h.outlen = 0;
	c->sent = 0;
	return (0);
}

/* Wait for the socket to take more (writing) or to bring more; -1: c
 * had to be dropped. */
static int
watch(struct conn *c, int writing)
{
	struct epoll_event ev = {.events = writing ? EPOLLOUT : EPOLLIN,
	    .data.ptr = c};

	c->writing = writing;
	if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) {
		drop(c);
		return (-1);
	}
	return (0);
}

/* Answer what has been read, and send it; stops at a full socket, which
 * EPOLLOUT then resumes. */
static void
serve(struct conn *c)
{
	int r;

	for (;;) {
		c->next = http_serve(&c->h);
		r = flush(c);
		if (r < 0) {
			drop(c);
			return;
		}
		if (r > 0) {
			(void)watch(c, 1);
			return;
		}
		if (c->next == HTTP_CLOSE) {
			drop(c);
			return;
		}
		if (c->next == HTTP_READ)
			return;
	}
}

static void
readable(struct conn *c)
{
	ssize_t n;

	n = read(c->fd, c->h.in + c->h.inlen, sizeof(c->h.in) - c->h.inlen);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return; /* level-triggered: it is reported again */
	if (n <= 0) {
		drop(c);
		return;
	}
	c->h.inlen += (size_t)n;
	serve(c);
}

static void
writable(struct conn *c)
{
	int r = flush(c);

	if (r > 0)
		return;
	if (r < 0 || c->next == HTTP_CLOSE) {
		drop(c);
		return;
	}
	/* Requests that did not fit into out[] are still in in[]. */
	if (watch(c, 0) == 0 && c->next == HTTP_WRITE)
		serve(c);
}

static void
accept_all(int lfd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct conn *c;
	int fd, one = 1;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				perror("serve_epoll: accept");
			return;
		}
		c = malloc(sizeof(*c));
		if (c == NULL) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
		c->writing = 0;
		c->sent = 0;
		c->next = HTTP_READ;
		http_init(&c->h);
		ev.data.ptr = c;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			drop(c);
	}
}

int
main(int argc, char **argv)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	struct epoll_event evs[MAXEVENTS];
	int port = 0, lfd, bound, n;

	if (argc == 3 && strcmp(argv[1], "--port") == 0)
		port = atoi(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: serve_epoll [--port P]\n");
		return (2);
	}
	lfd = http_listen(port, &bound);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (lfd < 0 || epfd < 0 ||
	    fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK) < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev) < 0) {
		perror("serve_epoll: listen");
		return (1);
	}
	printf("listening on 127.0.0.1:%d\n", bound);
	fflush(stdout);
	for (;;) {
		n = epoll_wait(epfd, evs, MAXEVENTS, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("serve_epoll: epoll_wait");
			return (1);
		}
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;

			if (c == NULL)
				accept_all(lfd);
			else if (c->writing)
				writable(c);
			else
				readable(c);
		}
	}
}
