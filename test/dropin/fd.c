/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Many threads on one descriptor: writers sharing a pipe with one reader
 * that checks every byte, threads blocked in accept() on one listening
 * socket, senders and receivers on both ends of one socketpair, and
 * threads in poll() on one pipe.  The kernel lets any number of threads
 * block on one file, and none of these calls may fail (EBUSY least of
 * all) or lose data.
 */
#include "conf.h"

#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

static atomic_int errors, ebusy;

static void
count_error(void)
{
	atomic_fetch_add(&errors, 1);
	if (errno == EBUSY)
		atomic_fetch_add(&ebusy, 1);
}

/* ---- 4 writers x 2000 writes to one pipe, one reader ---- */

#define PW_WRITERS 4
#define PW_WRITES 2000
#define PW_SIZE 1024

static int pw[2];

static void
pw_fill(unsigned char *b, uint32_t w, uint32_t i)
{
	memcpy(b, &w, 4);
	memcpy(b + 4, &i, 4);
	for (size_t k = 8; k < PW_SIZE; k++)
		b[k] = (unsigned char)(w * 31u + i + k);
}

static void *
pw_writer(void *arg)
{
	uint32_t w = (uint32_t)(intptr_t)arg;
	unsigned char b[PW_SIZE];

	for (uint32_t i = 0; i < PW_WRITES; i++) {
		pw_fill(b, w, i);
		/* Up to PIPE_BUF bytes: one write, never split. */
		if (write(pw[1], b, PW_SIZE) != PW_SIZE)
			count_error();
	}
	return (NULL);
}

static void
pipe_writers(void)
{
	pthread_t t[PW_WRITERS];
	unsigned char b[PW_SIZE], want[PW_SIZE];
	uint32_t next[PW_WRITERS] = {0};
	long bytes = 0, bad = 0, chunks = 0;
	ssize_t n;

	conf_must("pipe", pipe(pw) == 0 ? 0 : errno);
	for (int i = 0; i < PW_WRITERS; i++)
		conf_create(&t[i], NULL, pw_writer, (void *)(intptr_t)i);
	/* This reader yields between chunks, so the pipe fills and the
	 * writers wait for room together. */
	for (;;) {
		size_t have = 0;
		uint32_t w, i;

		while (have < PW_SIZE &&
		    (n = read(pw[0], b + have, PW_SIZE - have)) > 0)
			have += (size_t)n;
		if (have < PW_SIZE) {
			if (have != 0)
				bad++;
			break;
		}
		bytes += PW_SIZE;
		memcpy(&w, b, 4);
		memcpy(&i, b + 4, 4);
		if (w >= PW_WRITERS || i != next[w]) {
			bad++;
		} else {
			next[w]++;
			pw_fill(want, w, i);
			if (memcmp(b, want, PW_SIZE) != 0)
				bad++;
		}
		if (++chunks == PW_WRITERS * PW_WRITES) {
			for (int k = 0; k < PW_WRITERS; k++)
				conf_join(t[k]);
			close(pw[1]);
		}
		if (chunks % 4 == 0)
			sched_yield();
	}
	close(pw[0]);
	conf_long("4 writers x 2000 x 1024 bytes to one pipe: write errors",
	    atomic_load(&errors), 0);
	conf_long("bytes read", bytes, (long)PW_WRITERS * PW_WRITES * PW_SIZE);
	conf_long("chunks corrupt or out of a writer's order", bad, 0);
}

/* ---- 16 threads in accept() on one socket ---- */

#define AC_N 16

static int ac_listen;
static atomic_int ac_seen[AC_N];

static void *
acceptor(void *arg)
{
	unsigned char c;
	int fd;

	(void)arg;
	if ((fd = accept(ac_listen, NULL, NULL)) < 0) {
		count_error();
		return (NULL);
	}
	if (read(fd, &c, 1) != 1 || c >= AC_N)
		count_error();
	else
		atomic_fetch_add(&ac_seen[c], 1);
	close(fd);
	return (NULL);
}

static struct sockaddr_in ac_addr;
static int ac_conn[AC_N];

static void *
connector(void *arg)
{
	int *fd = ac_conn;

	(void)arg;
	for (int i = 0; i < AC_N; i++) {
		unsigned char c = (unsigned char)i;

		if ((fd[i] = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		    connect(fd[i], (struct sockaddr *)&ac_addr,
			sizeof(ac_addr)) != 0 ||
		    write(fd[i], &c, 1) != 1)
			count_error();
	}
	return (NULL);
}

static void
accept_many(void)
{
	pthread_t t[AC_N], c;
	socklen_t len = sizeof(ac_addr);
	int once = 1, one = 1;

	atomic_store(&errors, 0);
	ac_addr.sin_family = AF_INET;
	ac_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	conf_must("socket",
	    (ac_listen = socket(AF_INET, SOCK_STREAM, 0)) >= 0 ? 0 : errno);
	setsockopt(ac_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	conf_must("bind",
	    bind(ac_listen, (struct sockaddr *)&ac_addr, sizeof(ac_addr)) == 0
		? 0
		: errno);
	conf_must("listen", listen(ac_listen, 64) == 0 ? 0 : errno);
	conf_must("getsockname",
	    getsockname(ac_listen, (struct sockaddr *)&ac_addr, &len) == 0
		? 0
		: errno);
	for (int i = 0; i < AC_N; i++)
		conf_create(&t[i], NULL, acceptor, NULL);
	conf_create(&c, NULL, connector, NULL);
	for (int i = 0; i < AC_N; i++)
		conf_join(t[i]);
	conf_join(c);
	for (int i = 0; i < AC_N; i++) {
		if (atomic_load(&ac_seen[i]) != 1)
			once = 0;
		close(ac_conn[i]);
	}
	close(ac_listen);
	conf_long("16 threads in accept() on one socket: errors",
	    atomic_load(&errors), 0);
	conf_ok("each connection accepted once", once);
}

/* ---- senders and receivers on both ends of one socketpair ---- */

#define SP_THREADS 3
#define SP_MSGS 1000

static int sp[2];
static atomic_int sp_recv[2];

struct sp_arg {
	int end;
};

static void *
sp_sender(void *arg)
{
	int end = ((struct sp_arg *)arg)->end;
	char m[300];

	memset(m, 'a' + end, sizeof(m));
	for (int i = 0; i < SP_MSGS; i++) {
		size_t len = 1 + (size_t)(i * 37 % (int)sizeof(m));

		if (send(sp[end], m, len, 0) != (ssize_t)len)
			count_error();
	}
	return (NULL);
}

static void *
sp_receiver(void *arg)
{
	int end = ((struct sp_arg *)arg)->end;
	char m[300];
	ssize_t n;

	while ((n = recv(sp[end], m, sizeof(m), 0)) > 0) {
		if (m[0] != 'a' + !end || m[n - 1] != m[0])
			count_error();
		atomic_fetch_add(&sp_recv[end], 1);
	}
	if (n < 0)
		count_error();
	return (NULL);
}

static void
socketpair_both(void)
{
	pthread_t s[2][SP_THREADS], r[2][SP_THREADS];
	struct sp_arg args[2] = {{0}, {1}};
	int small = 4096;

	atomic_store(&errors, 0);
	conf_must("socketpair",
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) == 0 ? 0 : errno);
	for (int e = 0; e < 2; e++) {
		setsockopt(sp[e], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
		for (int i = 0; i < SP_THREADS; i++) {
			conf_create(&r[e][i], NULL, sp_receiver, &args[e]);
			conf_create(&s[e][i], NULL, sp_sender, &args[e]);
		}
	}
	for (int e = 0; e < 2; e++)
		for (int i = 0; i < SP_THREADS; i++)
			conf_join(s[e][i]);
	/* The receivers at the other end see the end of file. */
	for (int e = 0; e < 2; e++)
		shutdown(sp[e], SHUT_WR);
	for (int e = 0; e < 2; e++)
		for (int i = 0; i < SP_THREADS; i++)
			conf_join(r[e][i]);
	close(sp[0]);
	close(sp[1]);
	conf_long("3 senders and 3 receivers at each end of a socketpair: "
		  "errors",
	    atomic_load(&errors), 0);
	conf_long("messages received at end 0", atomic_load(&sp_recv[0]),
	    SP_THREADS * SP_MSGS);
	conf_long("messages received at end 1", atomic_load(&sp_recv[1]),
	    SP_THREADS * SP_MSGS);
}

/* ---- threads in poll() on one pipe ---- */

#define PL_N 8

static int pl[2];
static atomic_int pl_ready;

static void *
poller(void *arg)
{
	struct pollfd p = {.fd = pl[0], .events = POLLIN};

	(void)arg;
	if (poll(&p, 1, 60000) == 1 && (p.revents & POLLIN))
		atomic_fetch_add(&pl_ready, 1);
	else
		count_error();
	return (NULL);
}

static void
poll_many(void)
{
	pthread_t t[PL_N];

	atomic_store(&errors, 0);
	conf_must("pipe", pipe(pl) == 0 ? 0 : errno);
	for (int i = 0; i < PL_N; i++)
		conf_create(&t[i], NULL, poller, NULL);
	/* Nobody reads it: one byte makes it readable for all. */
	if (write(pl[1], "x", 1) != 1)
		count_error();
	for (int i = 0; i < PL_N; i++)
		conf_join(t[i]);
	close(pl[0]);
	close(pl[1]);
	conf_long("8 threads in poll() on one pipe, one byte: readable for",
	    atomic_load(&pl_ready), PL_N);
	conf_long("poll errors", atomic_load(&errors), 0);
}

int
main(void)
{
	conf_begin("fd");
	pipe_writers();
	accept_many();
	socketpair_both();
	poll_many();
	conf_long("EBUSY anywhere", atomic_load(&ebusy), 0);
	return (conf_end());
}
