/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Many uthreads on one descriptor, as many threads may block in read(2),
 * write(2) or accept(2) on one file: readers, writers and acceptors that
 * share an fd each get their own data, none is lost or delivered twice,
 * waiters that time out leave the others waiting, and ult_close wakes them
 * all.  Every byte is accounted for; the interleavings are the
 * scheduler's, stirred by random yields.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt_test.h"

static uint32_t
rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (*s);
}

static void
stir(uint32_t *s)
{
	if (rnd(s) % 4 == 0)
		ult_yield();
}

/* ---- readers: records from several writers, each read by one ---- */

#define SR_READERS 8
#define SR_WRITERS 2
#define SR_RECS 2000

struct rec {
	uint32_t writer, seq, check, pad;
};

static int sr_fd[2];
static atomic_int sr_seen[SR_WRITERS][SR_RECS];
static atomic_int sr_total;

static void *
sr_writer(void *arg)
{
	uint32_t w = (uint32_t)(intptr_t)arg, s = w + 1;

	for (uint32_t i = 0; i < SR_RECS; i++) {
		struct rec r = {w, i, w * 7919u + i, 0};

		CHECK_EQ(ult_write(sr_fd[1], &r, sizeof(r)),
		    (ssize_t)sizeof(r));
		stir(&s);
	}
	return (NULL);
}

static void *
sr_reader(void *arg)
{
	uint32_t s = (uint32_t)(intptr_t)arg + 100;
	struct rec r;
	ssize_t n;
	int got = 0;

	/* Every write is one record and every read asks for one, so a
	 * read returns one whole record (a pipe's writes of up to PIPE_BUF
	 * are atomic; a seqpacket socket keeps them apart). */
	while ((n = ult_read(sr_fd[0], &r, sizeof(r))) > 0) {
		CHECK_EQ(n, (ssize_t)sizeof(r));
		CHECK(r.writer < SR_WRITERS && r.seq < SR_RECS);
		CHECK_EQ(r.check, r.writer * 7919u + r.seq);
		atomic_fetch_add(&sr_seen[r.writer][r.seq], 1);
		got++;
		stir(&s);
	}
	CHECK_EQ(n, 0);
	atomic_fetch_add(&sr_total, got);
	return (NULL);
}

static void
shared_readers(int pipe_not_socket)
{
	ult_thread_t *rd[SR_READERS], *wr[SR_WRITERS];

	if (pipe_not_socket)
		CHECK_EQ(pipe(sr_fd), 0);
	else
		CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sr_fd), 0);
	memset(sr_seen, 0, sizeof(sr_seen));
	atomic_store(&sr_total, 0);
	for (int i = 0; i < SR_READERS; i++)
		CHECK_EQ(
		    ult_spawn(&rd[i], NULL, sr_reader, (void *)(intptr_t)i), 0);
	for (int i = 0; i < SR_WRITERS; i++)
		CHECK_EQ(
		    ult_spawn(&wr[i], NULL, sr_writer, (void *)(intptr_t)i), 0);
	for (int i = 0; i < SR_WRITERS; i++)
		CHECK_EQ(ult_join(wr[i], NULL), 0);
	/* The end of file wakes every reader. */
	CHECK_EQ(ult_close(sr_fd[1]), 0);
	for (int i = 0; i < SR_READERS; i++)
		CHECK_EQ(ult_join(rd[i], NULL), 0);
	CHECK_EQ(atomic_load(&sr_total), SR_WRITERS * SR_RECS);
	for (int w = 0; w < SR_WRITERS; w++)
		for (int i = 0; i < SR_RECS; i++)
			CHECK_EQ(atomic_load(&sr_seen[w][i]), 1);
	CHECK_EQ(ult_close(sr_fd[0]), 0);
}

void
test_io_shared_readers(void)
{
	rt_init(2, 0);
	shared_readers(0);
	shared_readers(1);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- writers: one reader checks every byte of several writers ---- */

#define SW_WRITERS 4
#define SW_CHUNKS 2000

static int sw_fd[2];
static size_t sw_size;

static void
sw_fill(unsigned char *b, size_t n, uint32_t w, uint32_t i)
{
	memcpy(b, &w, 4);
	memcpy(b + 4, &i, 4);
	for (size_t k = 8; k < n; k++)
		b[k] = (unsigned char)(w * 31u + i + k);
}

static void *
sw_writer(void *arg)
{
	uint32_t w = (uint32_t)(intptr_t)arg, s = w + 7;
	unsigned char b[1024];

	for (uint32_t i = 0; i < SW_CHUNKS; i++) {
		sw_fill(b, sw_size, w, i);
		CHECK_EQ(ult_write(sw_fd[1], b, sw_size), (ssize_t)sw_size);
		stir(&s);
	}
	return (NULL);
}

static void
shared_writers(int pipe_not_socket, size_t size)
{
	ult_thread_t *wr[SW_WRITERS];
	uint32_t next[SW_WRITERS] = {0}, s = 3;
	unsigned char b[1024], want[1024];
	size_t total = 0;
	ssize_t n;

	sw_size = size;
	if (pipe_not_socket) {
		CHECK_EQ(pipe(sw_fd), 0);
	} else {
		int small = 4096;

		CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sw_fd), 0);
		CHECK_EQ(setsockopt(sw_fd[1], SOL_SOCKET, SO_SNDBUF, &small,
			     sizeof(small)),
		    0);
	}
	for (int i = 0; i < SW_WRITERS; i++)
		CHECK_EQ(
		    ult_spawn(&wr[i], NULL, sw_writer, (void *)(intptr_t)i), 0);
	/* The reader is this uthread, slower than the writers, so that they
	 * find the fd full and queue. */
	for (;;) {
		size_t have = 0;
		uint32_t w, i;

		while (have < size &&
		    (n = ult_read(sw_fd[0], b + have, size - have)) > 0)
			have += (size_t)n;
		if (have == 0)
			break;
		CHECK_EQ(have, size);
		memcpy(&w, b, 4);
		memcpy(&i, b + 4, 4);
		CHECK(w < SW_WRITERS);
		/* One writer's chunks come in its order. */
		CHECK_EQ(i, next[w]);
		next[w]++;
		sw_fill(want, size, w, i);
		CHECK(memcmp(b, want, size) == 0);
		total += size;
		if (total == (size_t)SW_WRITERS * SW_CHUNKS * size) {
			for (int k = 0; k < SW_WRITERS; k++)
				CHECK_EQ(ult_join(wr[k], NULL), 0);
			CHECK_EQ(ult_close(sw_fd[1]), 0);
		}
		stir(&s);
	}
	CHECK_EQ(total, (size_t)SW_WRITERS * SW_CHUNKS * size);
	CHECK_EQ(ult_close(sw_fd[0]), 0);
}

static void *
sw_main(void *arg)
{
	(void)arg;
	shared_writers(1, 1024);
	shared_writers(0, 256);
	return (NULL);
}

void
test_io_shared_writers(void)
{
	ult_thread_t *t;

	rt_init(2, 0);
	CHECK_EQ(ult_spawn(&t, NULL, sw_main, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- acceptors: each of many gets one connection ---- */

#define SA_N 16

static int sa_listen;
static atomic_int sa_seen[SA_N];

static void *
sa_acceptor(void *arg)
{
	unsigned char c;
	int fd;

	(void)arg;
	CHECK((fd = ult_accept4(sa_listen, NULL, NULL, SOCK_CLOEXEC)) >= 0);
	CHECK_EQ(ult_read(fd, &c, 1), 1);
	CHECK(c < SA_N);
	atomic_fetch_add(&sa_seen[c], 1);
	CHECK_EQ(ult_close(fd), 0);
	return (NULL);
}

void
test_io_shared_accept(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	ult_thread_t *t[SA_N];
	int conn[SA_N], one = 1;

	rt_init(2, 0);
	CHECK((sa_listen = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	setsockopt(sa_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ(bind(sa_listen, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ(listen(sa_listen, 64), 0);
	CHECK_EQ(getsockname(sa_listen, (struct sockaddr *)&sa, &len), 0);
	for (int i = 0; i < SA_N; i++) {
		atomic_store(&sa_seen[i], 0);
		CHECK_EQ(ult_spawn(&t[i], NULL, sa_acceptor, NULL), 0);
	}
	/* All of them asleep in accept on the one socket, then the
	 * connections, from this foreign thread. */
	for (int i = 0; i < SA_N; i++)
		rt_wait_state(t[i], ULT_STATE_SLEEPING);
	for (int i = 0; i < SA_N; i++) {
		unsigned char c = (unsigned char)i;

		CHECK((conn[i] = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
		CHECK_EQ(connect(conn[i], (struct sockaddr *)&sa, sizeof(sa)),
		    0);
		CHECK_EQ(write(conn[i], &c, 1), 1);
	}
	for (int i = 0; i < SA_N; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	for (int i = 0; i < SA_N; i++) {
		CHECK_EQ(atomic_load(&sa_seen[i]), 1);
		close(conn[i]);
	}
	CHECK_EQ(ult_close(sa_listen), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- waiters with deadlines beside waiters without ---- */

#define ST_PATIENT 6
#define ST_TIMED 6
#define ST_BYTES 3000

static int st_fd[2];
static atomic_int st_got, st_stop, st_timeouts;

static void *
st_patient(void *arg)
{
	uint32_t s = (uint32_t)(intptr_t)arg + 1;
	char c;
	ssize_t n;

	while ((n = ult_recv(st_fd[0], &c, 1, 0)) == 1) {
		CHECK_EQ(c, 'q');
		atomic_fetch_add(&st_got, 1);
		stir(&s);
	}
	CHECK_EQ(n, 0);
	return (NULL);
}

static void *
st_timed(void *arg)
{
	uint32_t s = (uint32_t)(intptr_t)arg + 50;

	while (!atomic_load(&st_stop)) {
		uint64_t deadline = ult_now() + 1000 + rnd(&s) % 2000000;
		int rev = 0, err;

		err = ult_wait_fd(st_fd[0],
		    rnd(&s) % 3 == 0 ? ULT_IN | ULT_OUT : ULT_IN, deadline,
		    &rev);
		if (err == ETIMEDOUT) {
			/* Never early. */
			CHECK(ult_now() >= deadline);
			atomic_fetch_add(&st_timeouts, 1);
		} else {
			CHECK_EQ(err, 0);
			CHECK(rev != 0);
			/* Somebody else reads it: do not spin on it. */
			ult_sleep_ns(rnd(&s) % 200000);
		}
	}
	return (NULL);
}

void
test_io_shared_timeouts(void)
{
	ult_thread_t *p[ST_PATIENT], *t[ST_TIMED];
	uint32_t s = 99;

	rt_init(2, 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, st_fd), 0);
	atomic_store(&st_got, 0);
	atomic_store(&st_stop, 0);
	atomic_store(&st_timeouts, 0);
	for (int i = 0; i < ST_TIMED; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, st_timed, (void *)(intptr_t)i),
		    0);
	for (int i = 0; i < ST_PATIENT; i++)
		CHECK_EQ(
		    ult_spawn(&p[i], NULL, st_patient, (void *)(intptr_t)i), 0);
	/* From this foreign thread, one byte at a time with pauses, so the
	 * timed waiters come and go between the patient ones. */
	for (int i = 0; i < ST_BYTES; i++) {
		CHECK_EQ(write(st_fd[1], "q", 1), 1);
		if (rnd(&s) % 8 == 0)
			usleep(rnd(&s) % 500);
	}
	/* Every byte is read, by a patient reader, without another edge. */
	for (int i = 0; atomic_load(&st_got) < ST_BYTES; i++) {
		CHECK(i < 60000);
		usleep(1000);
	}
	CHECK_EQ(shutdown(st_fd[1], SHUT_WR), 0);
	for (int i = 0; i < ST_PATIENT; i++)
		CHECK_EQ(ult_join(p[i], NULL), 0);
	atomic_store(&st_stop, 1);
	for (int i = 0; i < ST_TIMED; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(atomic_load(&st_got), ST_BYTES);
	close(st_fd[0]);
	close(st_fd[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- both directions of both ends at once ---- */

#define SB_THREADS 3
#define SB_MSGS 1500

static int sb_fd[2];
static atomic_int sb_recv[2], sb_stop;

struct sb_arg {
	int end, id;
};

static void *
sb_sender(void *arg)
{
	struct sb_arg *a = arg;
	uint32_t s = (uint32_t)(a->end * 10 + a->id + 1);
	char m[200];

	memset(m, 'a' + a->end, sizeof(m));
	for (int i = 0; i < SB_MSGS; i++) {
		size_t len = 1 + rnd(&s) % sizeof(m);

		CHECK_EQ(ult_send(sb_fd[a->end], m, len, 0), (ssize_t)len);
		stir(&s);
	}
	return (NULL);
}

static void *
sb_receiver(void *arg)
{
	struct sb_arg *a = arg;
	uint32_t s = (uint32_t)(a->end * 10 + a->id + 1000);
	char m[200];
	ssize_t n;

	/* Messages from the other end; end of file when it shuts down. */
	while ((n = ult_recv(sb_fd[a->end], m, sizeof(m), 0)) > 0) {
		CHECK(m[0] == 'a' + !a->end && m[n - 1] == m[0]);
		atomic_fetch_add(&sb_recv[a->end], 1);
		stir(&s);
	}
	CHECK_EQ(n, 0);
	return (NULL);
}

static void *
sb_watcher(void *arg)
{
	struct sb_arg *a = arg;
	uint32_t s = (uint32_t)(a->end * 10 + a->id + 2000);

	while (!atomic_load(&sb_stop)) {
		int rev = 0,
		    err = ult_wait_fd(sb_fd[a->end], ULT_IN | ULT_OUT,
			ult_now() + 100000 + rnd(&s) % 1000000, &rev);

		CHECK(err == 0 || err == ETIMEDOUT);
		ult_sleep_ns(rnd(&s) % 300000);
	}
	return (NULL);
}

void
test_io_shared_both(void)
{
	ult_thread_t *t[2][3 * SB_THREADS];
	struct sb_arg args[2][SB_THREADS];
	int small = 2048;

	rt_init(2, 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sb_fd), 0);
	for (int e = 0; e < 2; e++)
		CHECK_EQ(setsockopt(sb_fd[e], SOL_SOCKET, SO_SNDBUF, &small,
			     sizeof(small)),
		    0);
	atomic_store(&sb_stop, 0);
	for (int e = 0; e < 2; e++) {
		atomic_store(&sb_recv[e], 0);
		for (int i = 0; i < SB_THREADS; i++) {
			args[e][i] = (struct sb_arg){e, i};
			CHECK_EQ(
			    ult_spawn(&t[e][i], NULL, sb_sender, &args[e][i]),
			    0);
			CHECK_EQ(ult_spawn(&t[e][SB_THREADS + i], NULL,
				     sb_receiver, &args[e][i]),
			    0);
			CHECK_EQ(ult_spawn(&t[e][2 * SB_THREADS + i], NULL,
				     sb_watcher, &args[e][i]),
			    0);
		}
	}
	for (int e = 0; e < 2; e++)
		for (int i = 0; i < SB_THREADS; i++)
			CHECK_EQ(ult_join(t[e][i], NULL), 0);
	for (int e = 0; e < 2; e++)
		CHECK_EQ(shutdown(sb_fd[e], SHUT_WR), 0);
	for (int e = 0; e < 2; e++)
		for (int i = SB_THREADS; i < 2 * SB_THREADS; i++)
			CHECK_EQ(ult_join(t[e][i], NULL), 0);
	atomic_store(&sb_stop, 1);
	for (int e = 0; e < 2; e++)
		for (int i = 2 * SB_THREADS; i < 3 * SB_THREADS; i++)
			CHECK_EQ(ult_join(t[e][i], NULL), 0);
	for (int e = 0; e < 2; e++)
		CHECK_EQ(atomic_load(&sb_recv[e]), SB_THREADS * SB_MSGS);
	close(sb_fd[0]);
	close(sb_fd[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- ult_close wakes every waiter ---- */

#define SC_N 8

static int sc_fd[2];

static void *
sc_reader(void *arg)
{
	char c;

	(void)arg;
	CHECK_EQ(ult_read(sc_fd[0], &c, 1), -1);
	CHECK_EQ(errno, EBADF);
	return (NULL);
}

static void *
sc_waiter(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_wait_fd(sc_fd[0], ULT_IN, 0, NULL), EBADF);
	return (NULL);
}

void
test_io_shared_close(void)
{
	ult_thread_t *t[SC_N];

	rt_init(2, 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sc_fd), 0);
	/* Bound: they look at errno after the sleep. */
	for (int i = 0; i < SC_N; i++)
		rt_spawn_on(&t[i], i % 2, i % 2 ? sc_reader : sc_waiter, NULL);
	for (int i = 0; i < SC_N; i++)
		rt_wait_state(t[i], ULT_STATE_SLEEPING);
	CHECK_EQ(ult_close(sc_fd[0]), 0);
	for (int i = 0; i < SC_N; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	close(sc_fd[1]);
	CHECK_EQ(ult_shutdown(), 0);
}
