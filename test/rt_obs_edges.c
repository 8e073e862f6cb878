/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Edges that review found between the runtime and the rest of the
 * process: what a helper thread inherits from a pinned worker, what the
 * runtime's own preemption signal does to a uthread's poll, and a
 * statistics segment somebody else made first.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_test.h"
#include "test.h"

/* ---- ult_blocking helpers run on the process's CPUs ---- */

static cpu_set_t helper_set;

static void *
affinity_probe(void *arg)
{
	CHECK_EQ(sched_getaffinity(0, sizeof(helper_set), &helper_set), 0);
	return (arg);
}

static void *
affinity_caller(void *arg)
{
	CHECK_EQ(ult_blocking(affinity_probe, NULL, NULL), 0);
	return (arg);
}

void
test_blocking_helper_affinity(void)
{
	cpu_set_t proc;
	ult_thread_t *t;

	CHECK_EQ(sched_getaffinity(0, sizeof(proc), &proc), 0);
	if (CPU_COUNT(&proc) < 2) {
		printf(
		    "one CPU: workers are not pinned apart, nothing to see\n");
		return;
	}
	/* Two workers on a process of at least two CPUs: pinned, each to
	 * one CPU; the helper starts from worker 0's kernel thread. */
	rt_init(2, 0);
	rt_sysctl_set("ult.blocking_idle_ms", 10000);
	rt_spawn_on(&t, 0, affinity_caller, NULL);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK(CPU_EQUAL(&helper_set, &proc));
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- ult_poll and the preemption signal ---- */

static atomic_int hog_stop;
static atomic_long poll_calls, hog_turns;
static int idle_pipe[2];

/* On one worker with the poller: each time it sees that the poller made
 * progress since its last look, the runtime took the CPU from the one
 * and gave it to the other; neither gives it up. */
static void *
hog(void *arg)
{
	long seen = 0;

	while (!atomic_load(&hog_stop)) {
		long c = atomic_load(&poll_calls);

		if (c != seen) {
			seen = c;
			atomic_fetch_add(&hog_turns, 1);
		}
	}
	return (arg);
}

static void *
poller(void *arg)
{
	/* Until the runtime's signal has switched the two threads many
	 * times; it lands anywhere in this loop, in poll(2) too. */
	while (atomic_load(&hog_turns) < 20) {
		struct pollfd f = {idle_pipe[0], POLLIN, 0};

		CHECK(atomic_fetch_add(&poll_calls, 1) < 1000000000);
		/* The program sends no signal: no EINTR. */
		errno = 0;
		CHECK_EQ(ult_poll(&f, 1, 0), 0);
		CHECK_EQ(errno, 0);
	}
	/* A wait with a timeout starts with the same probe, and ends in a
	 * timeout. */
	for (int i = 0; i < 20; i++) {
		struct pollfd f = {idle_pipe[0], POLLIN, 0};

		CHECK_EQ(ult_poll(&f, 1, 1), 0);
		CHECK_EQ(errno, 0);
	}
	atomic_store(&hog_stop, 1);
	return (arg);
}

void
test_poll_preempt_no_eintr(void)
{
	ult_thread_t *h, *p;

	if (!rt_preempt_available()) {
		printf("no asynchronous preemption in this build\n");
		return;
	}
	CHECK_EQ(pipe(idle_pipe), 0);
	atomic_store(&hog_stop, 0);
	atomic_store(&poll_calls, 0);
	atomic_store(&hog_turns, 0);
	rt_init(1, 1);
	if (rt_sysctl_get("ult.preempt") == 0) {
		printf("preemption is off (ULT_PREEMPT=0)\n");
		CHECK_EQ(ult_shutdown(), 0);
		return;
	}
	CHECK_EQ(ult_spawn(&h, NULL, hog, NULL), 0);
	CHECK_EQ(ult_spawn(&p, NULL, poller, NULL), 0);
	CHECK_EQ(ult_join(p, NULL), 0);
	CHECK_EQ(ult_join(h, NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
	close(idle_pipe[0]);
	close(idle_pipe[1]);
}
