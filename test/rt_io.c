/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The I/O layer: waiting on descriptors, the POSIX stand-ins over real
 * loopback sockets, close while waiting, the helper pool, and what review
 * found.  Where I/O meets the scheduler (a worker blocked in a raw read(),
 * the spare, interactivity) is in rt_io_sched.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_test.h"
#include "api/blocking.h"

/* ---- ult_wait_fd ---- */

static int wf_pipe[2];

static void *
wf_waiter(void *arg)
{
	int rev = 0, err;

	(void)arg;
	err = ult_wait_fd(wf_pipe[0], ULT_IN, 0, &rev);
	CHECK_EQ(err, 0);
	CHECK(rev & ULT_IN);
	return ((void *)(intptr_t)rev);
}

void
test_io_wait_fd(void)
{
	ult_thread_t *t;
	int rev = 0;
	char c = 'x';

	rt_init(2, 0);
	CHECK_EQ(pipe(wf_pipe), 0);
	/* Argument checks, and a deadline that passes. */
	CHECK_EQ(ult_wait_fd(wf_pipe[0], 0, 0, NULL), EINVAL);
	CHECK_EQ(ult_wait_fd(-1, ULT_IN, 0, NULL), EBADF);
	CHECK_EQ(ult_wait_fd(wf_pipe[0], ULT_IN, ult_now() + 1000000, &rev),
	    ETIMEDOUT);
	/* A waiter sleeps, as a thread of the runtime, until data comes. */
	CHECK_EQ(ult_spawn(&t, NULL, wf_waiter, NULL), 0);
	rt_wait_state(t, ULT_STATE_SLEEPING);
	CHECK_EQ(write(wf_pipe[1], &c, 1), 1);
	CHECK_EQ(ult_join(t, NULL), 0);
	/* Ready already: no wait, from a foreign thread too. */
	CHECK_EQ(ult_wait_fd(wf_pipe[0], ULT_IN, 0, &rev), 0);
	CHECK(rev & ULT_IN);
	CHECK_EQ(ult_wait_fd(wf_pipe[1], ULT_OUT, 0, &rev), 0);
	CHECK(rev & ULT_OUT);
	close(wf_pipe[0]);
	close(wf_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* A second reader waits beside the first, and one byte wakes both; a
 * waiter that times out leaves the others waiting. */
static atomic_int wb_result;

static void *
wb_second(void *arg)
{
	int rev = 0;

	(void)arg;
	atomic_store(&wb_result,
	    ult_wait_fd(wf_pipe[0], ULT_IN, ult_now() + 60000000000ull, &rev));
	CHECK(rev & ULT_IN);
	return (NULL);
}

static void *
wb_timed(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_wait_fd(wf_pipe[0], ULT_IN, ult_now() + 20000000, NULL),
	    ETIMEDOUT);
	return (NULL);
}

void
test_io_wait_beside(void)
{
	ult_thread_t *a, *b, *t;
	char c = 'x';

	rt_init(2, 0);
	CHECK_EQ(pipe(wf_pipe), 0);
	CHECK_EQ(ult_spawn(&a, NULL, wf_waiter, NULL), 0);
	rt_wait_state(a, ULT_STATE_SLEEPING);
	atomic_store(&wb_result, -1);
	CHECK_EQ(ult_spawn(&b, NULL, wb_second, NULL), 0);
	rt_wait_state(b, ULT_STATE_SLEEPING);
	/* One that times out between them leaves both queued. */
	CHECK_EQ(ult_spawn(&t, NULL, wb_timed, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(rt_info(a).state, ULT_STATE_SLEEPING);
	CHECK_EQ(rt_info(b).state, ULT_STATE_SLEEPING);
	CHECK_EQ(write(wf_pipe[1], &c, 1), 1);
	CHECK_EQ(ult_join(a, NULL), 0);
	CHECK_EQ(ult_join(b, NULL), 0);
	CHECK_EQ(atomic_load(&wb_result), 0);
	CHECK_EQ(read(wf_pipe[0], &c, 1), 1);
	close(wf_pipe[0]);
	close(wf_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- ult_close wakes the waiters ---- */

static void *
cw_reader(void *arg)
{
	char buf[8];
	ssize_t r;

	(void)arg;
	r = ult_read(wf_pipe[0], buf, sizeof(buf));
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, EBADF);
	CHECK_EQ(ult_wait_fd(wf_pipe[0], ULT_IN, 0, NULL), EBADF);
	return (NULL);
}

void
test_io_close_wakes(void)
{
	ult_thread_t *t;

	rt_init(2, 0);
	CHECK_EQ(pipe(wf_pipe), 0);
	rt_spawn_on(&t, 0, cw_reader, NULL);
	rt_wait_state(t, ULT_STATE_SLEEPING);
	CHECK_EQ(ult_close(wf_pipe[0]), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	close(wf_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * A plain close() (here dup2 over the number) of an fd a uthread sleeps
 * on: the sleeper never reads the file that gets the number next.  It
 * wakes with EBADF when a uthread waits on the new file; an edge of the
 * old file, which a dup keeps open and registered, only makes the new
 * file's reader look again.
 */
static int cr_old[2], cr_new[2];

static void *
cr_old_reader(void *arg)
{
	char buf[8];
	ssize_t r;

	errno = 0;
	if (arg != NULL) {
		CHECK_EQ(ult_wait_fd(cr_old[0], ULT_IN, 0, NULL), EBADF);
		return (NULL);
	}
	r = ult_read(cr_old[0], buf, sizeof(buf));
	CHECK_EQ(r, -1);
	CHECK_EQ(errno, EBADF);
	return (NULL);
}

static void *
cr_new_reader(void *arg)
{
	char buf[8];

	(void)arg;
	CHECK_EQ(ult_read(cr_old[0], buf, sizeof(buf)), 1);
	CHECK_EQ(buf[0], 'n');
	return (NULL);
}

void
test_io_close_reused(void)
{
	ult_thread_t *a, *b, *c;
	int keep;

	rt_init(2, 0);
	for (int round = 0; round < 2; round++) {
		CHECK_EQ(pipe(cr_old), 0);
		CHECK_EQ(pipe(cr_new), 0);
		/* Round 1: the old file stays open under another number. */
		keep = round == 1 ? dup(cr_old[0]) : -1;
		rt_spawn_on(&a, 0, cr_old_reader, NULL);
		rt_spawn_on(&b, 1, cr_old_reader, (void *)1);
		rt_wait_state(a, ULT_STATE_SLEEPING);
		rt_wait_state(b, ULT_STATE_SLEEPING);
		CHECK_EQ(dup2(cr_new[0], cr_old[0]), cr_old[0]);
		CHECK_EQ(rt_info(a).state, ULT_STATE_SLEEPING);
		rt_spawn_on(&c, round, cr_new_reader, NULL);
		/* c registered the new file before it slept, and that woke
		 * the old file's sleepers. */
		rt_wait_state(c, ULT_STATE_SLEEPING);
		CHECK(rt_info(a).state != ULT_STATE_SLEEPING);
		CHECK(rt_info(b).state != ULT_STATE_SLEEPING);
		CHECK_EQ(ult_join(a, NULL), 0);
		CHECK_EQ(ult_join(b, NULL), 0);
		if (keep >= 0) {
			CHECK_EQ(write(cr_old[1], "o", 1), 1);
			usleep(20000);
		}
		CHECK_EQ(write(cr_new[1], "n", 1), 1);
		CHECK_EQ(ult_join(c, NULL), 0);
		if (keep >= 0)
			close(keep);
		close(cr_old[0]);
		close(cr_old[1]);
		close(cr_new[0]);
		close(cr_new[1]);
	}
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- a non-blocking descriptor keeps its meaning ---- */

static void *
nb_body(void *arg)
{
	char c;

	(void)arg;
	errno = 0;
	CHECK_EQ(ult_read(wf_pipe[0], &c, 1), -1);
	CHECK_EQ(errno, EAGAIN);
	return (NULL);
}

void
test_io_nonblocking(void)
{
	ult_thread_t *t;
	int sv[2];
	char c;

	rt_init(2, 0);
	CHECK_EQ(pipe2(wf_pipe, O_NONBLOCK), 0);
	CHECK_EQ(ult_spawn(&t, NULL, nb_body, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	/* A blocking socket stays blocking after the stand-ins used it. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(fcntl(sv[0], F_GETFL) & O_NONBLOCK, 0);
	CHECK_EQ(ult_write(sv[1], "a", 1), 1);
	CHECK_EQ(ult_read(sv[0], &c, 1), 1);
	CHECK_EQ(fcntl(sv[0], F_GETFL) & O_NONBLOCK, 0);
	close(sv[0]);
	close(sv[1]);
	close(wf_pipe[0]);
	close(wf_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- EOF and ECONNRESET ---- */

static int lo_listener(int *port);
static int lo_connect(int port);

static void *
eof_reader(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[16];

	CHECK_EQ(ult_read(fd, buf, sizeof(buf)), 0);
	return (NULL);
}

static void *
reset_reader(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[16];

	errno = 0;
	CHECK_EQ(ult_recv(fd, buf, sizeof(buf), 0), -1);
	CHECK_EQ(errno, ECONNRESET);
	return (NULL);
}

void
test_io_eof_reset(void)
{
	struct linger lg = {1, 0};
	ult_thread_t *t;
	int port, l, a, b;

	rt_init(2, 0);
	/* EOF: the peer shuts its side while a uthread waits. */
	l = lo_listener(&port);
	b = lo_connect(port);
	CHECK((a = accept(l, NULL, NULL)) >= 0);
	CHECK_EQ(ult_spawn(&t, NULL, eof_reader, (void *)(intptr_t)a), 0);
	rt_wait_state(t, ULT_STATE_SLEEPING);
	CHECK_EQ(shutdown(b, SHUT_WR), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	close(a);
	close(b);
	/* Reset: the peer closes with a zero linger. */
	b = lo_connect(port);
	CHECK((a = accept(l, NULL, NULL)) >= 0);
	rt_spawn_on(&t, 0, reset_reader, (void *)(intptr_t)a);
	rt_wait_state(t, ULT_STATE_SLEEPING);
	CHECK_EQ(setsockopt(b, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(b);
	CHECK_EQ(ult_join(t, NULL), 0);
	close(a);
	close(l);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- 1,000 connections over loopback, every byte checked ---- */

#define LB_CONNS 1000
#define LB_BATCH 100
#define LB_MAX (48 * 1024)

static int
lo_listener(int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	CHECK(l >= 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ(listen(l, 1024), 0);
	CHECK_EQ(getsockname(l, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return (l);
}

static int
lo_connect(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	CHECK(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	CHECK_EQ(ult_connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return (fd);
}

static int lb_port, lb_listen;
static atomic_long lb_bytes, lb_bad;

static uint8_t
lb_byte(unsigned conn, size_t i)
{
	return ((uint8_t)(conn * 131u + i * 7u + (i >> 8)));
}

/* The server side of one connection: a length, then echo that many
 * bytes back in pieces of random size, by read/write or readv/writev. */
static void *
lb_server(void *arg)
{
	int fd = (int)(intptr_t)arg;
	unsigned seed = (unsigned)fd * 2654435761u;
	uint32_t len;
	char buf[8192];
	size_t left;

	CHECK_EQ(ult_recv(fd, &len, sizeof(len), MSG_WAITALL),
	    (ssize_t)sizeof(len));
	for (left = len; left > 0;) {
		size_t want = 1 + test_rand(&seed) % sizeof(buf);
		ssize_t r;

		if (want > left)
			want = left;
		if (test_rand(&seed) & 1) {
			r = ult_read(fd, buf, want);
		} else {
			struct iovec v[2] = {{buf, want / 2},
			    {buf + want / 2, want - want / 2}};

			r = ult_readv(fd, v, 2);
		}
		CHECK(r > 0);
		if (test_rand(&seed) & 1) {
			CHECK_EQ(ult_write(fd, buf, (size_t)r), r);
		} else {
			struct iovec v[3] = {{buf, (size_t)r / 3},
			    {buf + r / 3, 0},
			    {buf + r / 3, (size_t)r - (size_t)r / 3}};

			CHECK_EQ(ult_writev(fd, v, 3), r);
		}
		left -= (size_t)r;
	}
	CHECK_EQ(ult_close(fd), 0);
	return (NULL);
}

static void *
lb_acceptor(void *arg)
{
	struct ult_attr a;

	(void)arg;
	ult_attr_init(&a);
	a.detached = 1;
	a.stack_size = 64 * 1024;
	for (int i = 0; i < LB_CONNS; i++) {
		int fd = ult_accept4(lb_listen, NULL, NULL, SOCK_CLOEXEC);
		ult_thread_t *t;

		CHECK(fd >= 0);
		CHECK_EQ(ult_spawn(&t, &a, lb_server, (void *)(intptr_t)fd), 0);
	}
	return (NULL);
}

static void *
lb_sender(void *arg)
{
	int fd = (int)(intptr_t)arg;
	unsigned conn = (unsigned)fd, seed = conn * 40503u;
	uint32_t len = 1 + test_rand(&seed) % LB_MAX;
	uint8_t *out = malloc(len);

	CHECK(out != NULL);
	for (size_t i = 0; i < len; i++)
		out[i] = lb_byte(conn, i);
	CHECK_EQ(ult_send(fd, &len, sizeof(len), 0), (ssize_t)sizeof(len));
	for (size_t off = 0; off < len;) {
		size_t n = 1 + test_rand(&seed) % 20000;

		if (n > len - off)
			n = len - off;
		CHECK_EQ(ult_send(fd, out + off, n, MSG_NOSIGNAL), (ssize_t)n);
		off += n;
	}
	CHECK_EQ(shutdown(fd, SHUT_WR), 0);
	free(out);
	return (NULL);
}

/* One client connection: a sender uthread streams the data while this
 * one reads the echo and checks it, then sees EOF. */
static void *
lb_client(void *arg)
{
	int fd = lo_connect(lb_port);
	unsigned conn = (unsigned)fd, seed = conn * 40503u;
	uint32_t len = 1 + test_rand(&seed) % LB_MAX;
	ult_thread_t *s;
	uint8_t buf[4096];
	size_t got = 0;
	ssize_t r;

	(void)arg;
	CHECK_EQ(ult_spawn(&s, NULL, lb_sender, (void *)(intptr_t)fd), 0);
	while ((r = ult_recv(fd, buf, sizeof(buf), 0)) > 0) {
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != lb_byte(conn, got + (size_t)i))
				atomic_fetch_add(&lb_bad, 1);
		got += (size_t)r;
	}
	CHECK_EQ(r, 0);
	CHECK_EQ(got, len);
	atomic_fetch_add(&lb_bytes, (long)got);
	CHECK_EQ(ult_join(s, NULL), 0);
	CHECK_EQ(ult_close(fd), 0);
	return (NULL);
}

void
test_io_loopback(void)
{
	ult_thread_t *acc, *c[LB_BATCH];

	rt_init(4, 0);
	atomic_store(&lb_bytes, 0);
	atomic_store(&lb_bad, 0);
	lb_listen = lo_listener(&lb_port);
	CHECK_EQ(ult_spawn(&acc, NULL, lb_acceptor, NULL), 0);
	for (int done = 0; done < LB_CONNS; done += LB_BATCH) {
		for (int i = 0; i < LB_BATCH; i++)
			CHECK_EQ(ult_spawn(&c[i], NULL, lb_client, NULL), 0);
		for (int i = 0; i < LB_BATCH; i++)
			CHECK_EQ(ult_join(c[i], NULL), 0);
	}
	CHECK_EQ(ult_join(acc, NULL), 0);
	CHECK_EQ(atomic_load(&lb_bad), 0);
	CHECK(atomic_load(&lb_bytes) > LB_CONNS);
	close(lb_listen);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- ult_poll ---- */

/* Main writes only once the first poll has timed out: on a loaded host
 * the uthread may start later than any sleep of main's. */
static atomic_int poll_timed_out;

static void *
poll_body(void *arg)
{
	struct pollfd p[2] = {{wf_pipe[0], POLLIN, 0}, {-1, POLLIN, 0}};

	(void)arg;
	CHECK_EQ(ult_poll(p, 1, 10), 0); /* times out */
	atomic_store(&poll_timed_out, 1);
	CHECK_EQ(ult_poll(p, 1, -1), 1); /* main writes */
	CHECK(p[0].revents & POLLIN);
	CHECK_EQ(ult_poll(p, 2, -1), 1); /* through a helper */
	CHECK(p[0].revents & POLLIN);
	CHECK_EQ(p[1].revents, 0);
	return (NULL);
}

void
test_io_poll(void)
{
	ult_thread_t *t;

	rt_init(2, 0);
	CHECK_EQ(pipe(wf_pipe), 0);
	atomic_store(&poll_timed_out, 0);
	CHECK_EQ(ult_spawn(&t, NULL, poll_body, NULL), 0);
	while (!atomic_load(&poll_timed_out))
		usleep(1000);
	usleep(5000); /* most likely asleep in the second poll by now */
	CHECK_EQ(write(wf_pipe[1], "x", 1), 1);
	CHECK_EQ(ult_join(t, NULL), 0);
	close(wf_pipe[0]);
	close(wf_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- ult_blocking ---- */

static atomic_int bl_running, bl_peak;

static void *
bl_fn(void *arg)
{
	int n = atomic_fetch_add(&bl_running, 1) + 1, p;

	while ((p = atomic_load(&bl_peak)) < n &&
	    !atomic_compare_exchange_weak(&bl_peak, &p, n))
		;
	usleep(2000);
	atomic_fetch_sub(&bl_running, 1);
	errno = EILSEQ;
	return ((void *)(intptr_t)(syscall(SYS_gettid) + (intptr_t)arg));
}

static void *
bl_plain(void *arg)
{
	return (arg);
}

static void *
bl_caller(void *arg)
{
	void *ret = NULL;
	long me = syscall(SYS_gettid);

	for (int i = 0; i < 5; i++) {
		errno = 0;
		CHECK_EQ(ult_blocking(bl_fn, arg, &ret), 0);
		CHECK_EQ(errno, EILSEQ);
		/* It ran on another kernel thread than this worker. */
		CHECK((intptr_t)ret - (intptr_t)arg != me);
	}
	/* A fn that leaves errno alone leaves the caller's. */
	errno = ENOTTY;
	CHECK_EQ(ult_blocking(bl_plain, NULL, NULL), 0);
	CHECK_EQ(errno, ENOTTY);
	return (NULL);
}

void
test_io_blocking(void)
{
	ult_thread_t *t[16];

	rt_init(2, 0);
	CHECK_EQ(ult_blocking(NULL, NULL, NULL), EINVAL);
	rt_sysctl_set("ult.blocking_max", 3);
	rt_sysctl_set("ult.blocking_idle_ms", 20);
	atomic_store(&bl_peak, 0);
	for (intptr_t i = 0; i < 16; i++)
		rt_spawn_on(&t[i], (int)(i % 2), bl_caller, (void *)i);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	/* Bounded, and used: 16 callers shared the three helpers. */
	CHECK(atomic_load(&bl_peak) >= 1 && atomic_load(&bl_peak) <= 3);
	CHECK(rt_sysctl_get("ult.blocking_threads") <= 3);
	/* Idle helpers go away. */
	for (int i = 0; rt_sysctl_get("ult.blocking_threads") > 0; i++) {
		CHECK(i < 10000);
		usleep(1000);
	}
	rt_sysctl_set("ult.blocking_max", 64);
	rt_sysctl_set("ult.blocking_idle_ms", 10000);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- what review found: each of these hung or returned wrong data ---- */

/* Two blocking calls, one waiting on what the other does: the second
 * must not queue behind the first on a helper that never returns. */
static void *
bc_read(void *arg)
{
	char c;

	(void)arg;
	return ((void *)(intptr_t)read(wf_pipe[0], &c, 1));
}

static void *
bc_write(void *arg)
{
	(void)arg;
	return ((void *)(intptr_t)write(wf_pipe[1], "x", 1));
}

static void *
bc_caller(void *arg)
{
	void *ret = NULL;

	CHECK_EQ(ult_blocking(arg, NULL, &ret), 0);
	CHECK_EQ((intptr_t)ret, 1);
	return (NULL);
}

static void *
bc_noop(void *arg)
{
	return (arg);
}

static void *
bc_warm(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_blocking(bc_noop, NULL, NULL), 0);
	return (NULL);
}

/* Each round starts with exactly one idle helper: the reader's job takes
 * it, and the writer's, submitted before that helper has woken, must get
 * a helper of its own. */
void
test_io_blocking_chain(void)
{
	rt_init(1, 0);
	rt_sysctl_set("ult.blocking_idle_ms", 20);
	CHECK_EQ(pipe(wf_pipe), 0);
	for (int i = 0; i < 20; i++) {
		ult_thread_t *r, *w;

		for (int k = 0; rt_sysctl_get("ult.blocking_threads") > 1;
		     k++) {
			CHECK(k < 10000);
			usleep(1000);
		}
		CHECK_EQ(ult_spawn(&w, NULL, bc_warm, NULL), 0);
		CHECK_EQ(ult_join(w, NULL), 0);

		CHECK_EQ(ult_spawn(&r, NULL, bc_caller, (void *)bc_read), 0);
		CHECK_EQ(ult_spawn(&w, NULL, bc_caller, (void *)bc_write), 0);
		CHECK_EQ(ult_join(r, NULL), 0);
		CHECK_EQ(ult_join(w, NULL), 0);
	}
	rt_sysctl_set("ult.blocking_idle_ms", 10000);
	close(wf_pipe[0]);
	close(wf_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* Waits that need each other (as the drop-in's process-shared condition
 * waits do) get a helper each beyond ult.blocking_max; once they are
 * over, the helpers started beyond the bound go at once, not after
 * ult.blocking_idle_ms, since each keeps a stack that every fork copies. */
#define BU_N 8
static pthread_barrier_t bu_barrier;

static void *
bu_wait(void *arg)
{
	pthread_barrier_wait(&bu_barrier);
	return (arg);
}

static void *
bu_caller(void *arg)
{
	void *ret = NULL;

	CHECK_EQ(ult__blocking_unbounded(bu_wait, arg, &ret), 0);
	CHECK(ret == arg);
	return (NULL);
}

void
test_io_blocking_beyond(void)
{
	ult_thread_t *t[BU_N];

	rt_init(2, 0);
	rt_sysctl_set("ult.blocking_max", 2);
	rt_sysctl_set("ult.blocking_idle_ms", 3600000);
	CHECK_EQ(pthread_barrier_init(&bu_barrier, NULL, BU_N), 0);
	for (intptr_t i = 0; i < BU_N; i++)
		rt_spawn_on(&t[i], (int)(i % 2), bu_caller, (void *)i);
	for (int i = 0; i < BU_N; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	/* The bound's two stay for the idle time; the rest are going. */
	for (int i = 0; rt_sysctl_get("ult.blocking_threads") > 2; i++) {
		CHECK(i < 20000);
		usleep(1000);
	}
	CHECK_EQ(rt_sysctl_get("ult.blocking_threads"), 2);
	CHECK_EQ(pthread_barrier_destroy(&bu_barrier), 0);
	rt_sysctl_set("ult.blocking_max", 64);
	rt_sysctl_set("ult.blocking_idle_ms", 10000);
	CHECK_EQ(ult_shutdown(), 0);
}

/* A write far larger than a pipe holds, read by a uthread on the same
 * (only) worker. */
#define BW_LEN (1u << 20)

static void *
bw_writer(void *arg)
{
	unsigned char *buf = malloc(BW_LEN);

	(void)arg;
	CHECK(buf != NULL);
	for (unsigned i = 0; i < BW_LEN; i++)
		buf[i] = (unsigned char)(i * 7 + (i >> 12));
	CHECK_EQ(ult_write(wf_pipe[1], buf, BW_LEN), (ssize_t)BW_LEN);
	free(buf);
	return (NULL);
}

static void *
lb_reader_pipe(void *arg)
{
	unsigned char *buf = arg;
	unsigned got = 0;
	ssize_t r;

	while (got < BW_LEN && (r = ult_read(wf_pipe[0], buf, 8192)) > 0) {
		for (ssize_t i = 0; i < r; i++) {
			unsigned k = got + (unsigned)i;

			if (buf[i] != (unsigned char)(k * 7 + (k >> 12)))
				return (NULL);
		}
		got += (unsigned)r;
	}
	return ((void *)(uintptr_t)got);
}

void
test_io_pipe_big_write(void)
{
	ult_thread_t *w;
	static unsigned char buf[8192];
	unsigned got = 0;

	rt_init(1, 0);
	CHECK_EQ(pipe(wf_pipe), 0);
	CHECK_EQ(ult_spawn(&w, NULL, bw_writer, NULL), 0);
	/* The reader is a uthread too: spawned after, on the one worker. */
	{
		ult_thread_t *r;
		void *ret;

		CHECK_EQ(ult_spawn(&r, NULL, lb_reader_pipe, buf), 0);
		CHECK_EQ(ult_join(r, &ret), 0);
		got = (unsigned)(uintptr_t)ret;
	}
	CHECK_EQ(ult_join(w, NULL), 0);
	CHECK_EQ(got, BW_LEN); /* every byte right, or 0 */
	close(wf_pipe[0]);
	close(wf_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* MSG_PEEK|MSG_WAITALL peeks once; MSG_WAITALL on datagrams and
 * sequenced packets returns one message, as the kernel does. */
static void *
mf_body(void *arg)
{
	int sv[2];
	char buf[16];

	(void)arg;
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(ult_send(sv[1], "abcd", 4, 0), 4);
	CHECK_EQ(ult_recv(sv[0], buf, 6, MSG_PEEK | MSG_WAITALL), 4);
	CHECK_EQ(memcmp(buf, "abcd", 4), 0);
	close(sv[0]);
	close(sv[1]);
	for (int type = SOCK_DGRAM; type <= SOCK_SEQPACKET;
	     type = type == SOCK_DGRAM ? SOCK_SEQPACKET : SOCK_SEQPACKET + 1) {
		CHECK_EQ(socketpair(AF_UNIX, type, 0, sv), 0);
		CHECK_EQ(ult_send(sv[1], "one", 3, 0), 3);
		CHECK_EQ(ult_send(sv[1], "two", 3, 0), 3);
		CHECK_EQ(ult_recv(sv[0], buf, 6, MSG_WAITALL), 3);
		CHECK_EQ(memcmp(buf, "one", 3), 0);
		close(sv[0]);
		close(sv[1]);
	}
	return (NULL);
}

void
test_io_msg_flags(void)
{
	ult_thread_t *t;

	rt_init(2, 0);
	CHECK_EQ(ult_spawn(&t, NULL, mf_body, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* A blocking connect to a Unix listener whose backlog is full waits (a
 * non-blocking one says EAGAIN); and ult_close in a fork child leaves the
 * parent's poller alone. */
static struct sockaddr_un ux_addr;

static void *
ux_connect(void *arg)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	(void)arg;
	CHECK(fd >= 0);
	CHECK_EQ(ult_connect(fd, (struct sockaddr *)&ux_addr, sizeof(ux_addr)),
	    0);
	return ((void *)(intptr_t)fd);
}

void
test_io_unix_backlog(void)
{
	ult_thread_t *t[3];
	int l;

	rt_init(2, 0);
	memset(&ux_addr, 0, sizeof(ux_addr));
	ux_addr.sun_family = AF_UNIX;
	snprintf(ux_addr.sun_path, sizeof(ux_addr.sun_path),
	    "/tmp/ult-test-%d.sock", (int)getpid());
	unlink(ux_addr.sun_path);
	CHECK((l = socket(AF_UNIX, SOCK_STREAM, 0)) >= 0);
	CHECK_EQ(bind(l, (struct sockaddr *)&ux_addr, sizeof(ux_addr)), 0);
	CHECK_EQ(listen(l, 0), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, ux_connect, NULL), 0);
	usleep(20000); /* let them find the backlog full */
	for (int i = 0; i < 3; i++) {
		int a = accept(l, NULL, NULL);

		CHECK(a >= 0);
		close(a);
	}
	for (int i = 0; i < 3; i++) {
		void *fd;

		CHECK_EQ(ult_join(t[i], &fd), 0);
		close((int)(intptr_t)fd);
	}
	close(l);
	unlink(ux_addr.sun_path);
	CHECK_EQ(ult_shutdown(), 0);
}

void
test_io_fork_close(void)
{
	ult_thread_t *t;
	pid_t pid;
	int st;

	rt_init(2, 0);
	CHECK_EQ(pipe(wf_pipe), 0);
	CHECK_EQ(ult_spawn(&t, NULL, wf_waiter, NULL), 0);
	rt_wait_state(t, ULT_STATE_SLEEPING);
	if ((pid = fork()) == 0) {
		/* The child's runtime is gone: a plain close. */
		_exit(ult_close(wf_pipe[0]) == 0 ? 0 : 1);
	}
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(write(wf_pipe[1], "x", 1), 1);
	CHECK_EQ(ult_join(t, NULL), 0);
	close(wf_pipe[0]);
	close(wf_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}
