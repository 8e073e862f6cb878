/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A worker parked in the poller (io.h): while a uthread waits on a
 * descriptor, one idle worker sleeps in epoll instead of on its futex.
 * It must still be woken for work of its own (a thread bound to it,
 * spawned from a foreign thread), and an event must still reach a waiter
 * when every worker is idle.  A lost unpark hangs the join of a bound
 * thread: no other worker may run it.
 */
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
