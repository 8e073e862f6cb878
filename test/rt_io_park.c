/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A worker parked in the poller (io.h): while a uthread waits on a
 * descriptor, one idle worker sleeps in epoll instead of on its futex.
 * It must still be woken for work of its own (a thread bound to it,
 * spawned from a foreign thread), and an event must still reach a waiter
 * when every worker is idle.  A lost unpark hangs the join of a bound
 * thread: no other worker may run it.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "kern/io.h"
#include "rt_test.h"
#include "test.h"

static int park_pipe[2], other_pipe[2];

static void *
pipe_reader(void *arg)
{
	int *p = arg;
	char c;

	CHECK_EQ(ult_read(p[0], &c, 1), 1);
	return ((void *)(intptr_t)c);
}

static void
sleeping(ult_thread_t *t)
{
	for (int i = 0; rt_info(t).state != ULT_STATE_SLEEPING; i++) {
		CHECK(i < 20000);
		usleep(500);
	}
}

static void *
nothing(void *arg)
{
	return (arg);
}

void
test_io_park_poller(void)
{
	unsigned long before;
	ult_thread_t *r, *r2, *t;
	void *ret;

	rt_init(2, 0);
	CHECK_EQ(pipe(park_pipe), 0);
	CHECK_EQ(pipe(other_pipe), 0);
	before = atomic_load(&ult__io_nparks_io);
	/* Keeps a uthread waiting on a descriptor the whole time. */
	CHECK_EQ(ult_spawn(&r, NULL, pipe_reader, park_pipe), 0);
	sleeping(r);
	for (int i = 0; i < 200; i++) {
		struct ult_attr a;

		ult_attr_init(&a);
		a.cpu = i % 2;
		/* Both workers idle by now; one of them in the poller. */
		usleep(500);
		CHECK_EQ(ult_spawn(&t, &a, nothing, (void *)(intptr_t)i), 0);
		CHECK_EQ(ult_join(t, &ret), 0);
		CHECK_EQ((intptr_t)ret, i);
		/* An event with every worker idle: a second reader, woken. */
		if (i % 20 == 0) {
			CHECK_EQ(ult_spawn(&r2, NULL, pipe_reader, other_pipe),
			    0);
			sleeping(r2);
			usleep(500);
			CHECK_EQ(write(other_pipe[1], "y", 1), 1);
			CHECK_EQ(ult_join(r2, &ret), 0);
			CHECK_EQ((intptr_t)ret, 'y');
		}
	}
	/* The path under test was taken. */
	CHECK(atomic_load(&ult__io_nparks_io) > before);
	CHECK_EQ(write(park_pipe[1], "x", 1), 1);
	CHECK_EQ(ult_join(r, &ret), 0);
	CHECK_EQ((intptr_t)ret, 'x');
	for (int i = 0; i < 2; i++) {
		close(park_pipe[i]);
		close(other_pipe[i]);
	}
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * An fd is armed only while a uthread waits on it: data that arrives for a
 * uthread that is running (and will read it itself) wakes no poller.  With
 * fds armed for good, each of these writes was an edge the clock thread
 * woke for.
 */
static int run_pipe[2];
static atomic_int run_got_first, run_stop;

static void *
running_reader(void *arg)
{
	char buf[256];
	long n = 0;
	ssize_t r;

	(void)arg;
	CHECK_EQ(ult_read(run_pipe[0], buf, 1), 1);
	atomic_store(&run_got_first, 1);
	while (!atomic_load(&run_stop))
		; /* runs, never waits on the pipe */
	CHECK_EQ(fcntl(run_pipe[0], F_SETFL, O_NONBLOCK), 0);
	while ((r = read(run_pipe[0], buf, sizeof(buf))) > 0)
		n += r;
	return ((void *)(intptr_t)n);
}

void
test_io_running_reader_unarmed(void)
{
	unsigned long before, reports;
	ult_thread_t *r, *t;
	void *ret;

	rt_init(2, 0);
	CHECK_EQ(pipe(park_pipe), 0);
	CHECK_EQ(pipe(run_pipe), 0);
	atomic_store(&run_got_first, 0);
	atomic_store(&run_stop, 0);
	/* Another uthread waits on a descriptor all along: the poller is
	 * in use. */
	CHECK_EQ(ult_spawn(&r, NULL, pipe_reader, park_pipe), 0);
	sleeping(r);
	CHECK_EQ(ult_spawn(&t, NULL, running_reader, NULL), 0);
	sleeping(t);
	CHECK_EQ(write(run_pipe[1], "a", 1), 1);
	while (!atomic_load(&run_got_first))
		usleep(100);
	before = atomic_load(&ult__io_nreports);
	for (int i = 0; i < 200; i++) {
		CHECK_EQ(write(run_pipe[1], "b", 1), 1);
		usleep(100);
	}
	reports = atomic_load(&ult__io_nreports) - before;
	atomic_store(&run_stop, 1);
	CHECK_EQ(ult_join(t, &ret), 0);
	CHECK_EQ((intptr_t)ret, 200);
	printf("reports for 200 writes to a running reader's pipe: %lu\n",
	    reports);
	CHECK(reports < 20);
	CHECK_EQ(write(park_pipe[1], "x", 1), 1);
	CHECK_EQ(ult_join(r, &ret), 0);
	CHECK_EQ((intptr_t)ret, 'x');
	for (int i = 0; i < 2; i++) {
		close(park_pipe[i]);
		close(run_pipe[i]);
	}
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * With I/O armed and every worker busy the clock thread sleeps in its own
 * epoll set, its next deadline in a timerfd set only when the deadline
 * changes.  Every sleep ends at or after its deadline, never before, and
 * one started during a longer one ends first.  (How soon after the
 * deadline is bench/wakeup's measure, --armed 1.)
 */
static atomic_int dl_stop;

/* Keeps its worker busy; yields, so that the sleepers run in builds
 * without asynchronous preemption (the sanitizers') too. */
static void *
dl_hog(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&dl_stop, memory_order_relaxed))
		ult_yield();
	return (NULL);
}

static void *
dl_sleeper(void *arg)
{
	uint64_t ns = (uint64_t)(uintptr_t)arg;

	for (int i = 0; i < (ns < 10000000 ? 50 : 1); i++) {
		uint64_t t0 = ult_now();

		CHECK_EQ(ult_sleep_ns(ns), 0);
		CHECK(ult_now() - t0 >= ns);
	}
	return (NULL);
}

void
test_io_clock_deadlines(void)
{
	unsigned long before;
	ult_thread_t *r, *hogs[2], *l, *s;
	void *ret;

	rt_init(2, 1);
	CHECK_EQ(pipe(park_pipe), 0);
	atomic_store(&dl_stop, 0);
	CHECK_EQ(ult_spawn(&r, NULL, pipe_reader, park_pipe), 0);
	sleeping(r);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_spawn(&hogs[i], NULL, dl_hog, NULL), 0);
	before = atomic_load(&ult__io_nclock_timer);
	CHECK_EQ(
	    ult_spawn(&l, NULL, dl_sleeper, (void *)(uintptr_t)3000000000u), 0);
	sleeping(l);
	CHECK_EQ(ult_spawn(&s, NULL, dl_sleeper, (void *)(uintptr_t)1000000u),
	    0);
	CHECK_EQ(ult_join(s, NULL), 0);
	/* 50 sleeps of 1 ms ended while the 3 s one still runs. */
	CHECK_EQ(rt_info(l).state, ULT_STATE_SLEEPING);
	CHECK_EQ(ult_join(l, NULL), 0);
	/* The path under test was taken. */
	CHECK(atomic_load(&ult__io_nclock_timer) > before);
	atomic_store(&dl_stop, 1);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_join(hogs[i], NULL), 0);
	CHECK_EQ(write(park_pipe[1], "x", 1), 1);
	CHECK_EQ(ult_join(r, &ret), 0);
	CHECK_EQ((intptr_t)ret, 'x');
	for (int i = 0; i < 2; i++)
		close(park_pipe[i]);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * While the workers switch often, they look at the poller themselves and
 * the clock thread stays out of it: a reader's 200 wakeups, with the one
 * worker kept busy by a ring of interactive uthreads passing a token, all
 * arrive, and the clock thread waits in the poller for fewer than half of
 * them (it used to for each; under qemu-user beside two spinners it did
 * for at most 23 in 40 runs).  Interactive: a CPU-bound thread would have
 * the clock thread watch, since an I/O wakee must preempt it at once; and
 * steal marking off, since so would a worker the host keeps waiting.
 */
#define RING 8
static int sw_pipe[2];
static atomic_int sw_stop;
static ult_sem_t ring_sem[RING];

static void *
ring_member(void *arg)
{
	int i = (int)(intptr_t)arg;

	/* Stop is looked at by the token's holder only, before it passes
	 * the token on: after the post the next member may run first, and
	 * the token come back to a member about to leave. */
	for (;;) {
		int stop;

		CHECK_EQ(ult_sem_wait(&ring_sem[i]), 0);
		stop = atomic_load(&sw_stop);
		CHECK_EQ(ult_sem_post(&ring_sem[(i + 1) % RING]), 0);
		if (stop)
			return (NULL);
	}
}

static void *
counting_reader(void *arg)
{
	long n = 0;
	char c;

	(void)arg;
	while (ult_read(sw_pipe[0], &c, 1) == 1 && c == 'b')
		n++;
	return ((void *)(intptr_t)n);
}

void
test_io_switching_workers_poll(void)
{
	unsigned long before, waits;
	ult_thread_t *ring[RING], *r;
	void *ret;

	long off = 0, was;

	rt_init(1, 0);
	/* On a busy host the worker would be marked stolen, and the clock
	 * thread then watches for it by design. */
	CHECK_EQ(ult_sysctl("ult.steal", &was, &off), 0);
	CHECK_EQ(was, 1);
	CHECK_EQ(pipe(sw_pipe), 0);
	atomic_store(&sw_stop, 0);
	CHECK_EQ(ult_spawn(&r, NULL, counting_reader, NULL), 0);
	sleeping(r);
	for (int i = 0; i < RING; i++)
		CHECK_EQ(ult_sem_init(&ring_sem[i], 0), 0);
	for (int i = 0; i < RING; i++)
		CHECK_EQ(
		    ult_spawn(&ring[i], NULL, ring_member, (void *)(intptr_t)i),
		    0);
	CHECK_EQ(ult_sem_post(&ring_sem[0]), 0);
	usleep(20000);
	before = atomic_load(&ult__io_nclock_waits);
	for (int i = 0; i < 200; i++) {
		CHECK_EQ(write(sw_pipe[1], "b", 1), 1);
		usleep(200);
	}
	waits = atomic_load(&ult__io_nclock_waits) - before;
	CHECK_EQ(write(sw_pipe[1], "e", 1), 1);
	CHECK_EQ(ult_join(r, &ret), 0);
	CHECK_EQ((intptr_t)ret, 200);
	/* Each member passes the token on as it leaves: all see stop. */
	atomic_store(&sw_stop, 1);
	for (int i = 0; i < RING; i++)
		CHECK_EQ(ult_join(ring[i], NULL), 0);
	for (int i = 0; i < RING; i++)
		CHECK_EQ(ult_sem_destroy(&ring_sem[i]), 0);
	printf("clock-thread waits in the poller for 200 wakeups: %lu\n",
	    waits);
	CHECK(waits < 100);
	CHECK_EQ(ult_sysctl("ult.steal", NULL, &was), 0);
	for (int i = 0; i < 2; i++)
		close(sw_pipe[i]);
	CHECK_EQ(ult_shutdown(), 0);
}
