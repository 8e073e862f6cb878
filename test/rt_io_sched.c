/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where the I/O layer meets the scheduler: a worker blocked in a raw
 * read() whose queue the others take over, every worker blocked at once
 * (the spare takes the queue), and the priority an fd wait earns (ULE's
 * interactivity, ult.io_boost).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt_test.h"

/* ---- a raw blocking read() hands the worker's queue over ---- */

#define HO_KIDS 4

static atomic_int ho_stop, ho_done, ho_released, ho_early;
static int ho_pipe[2];

static void *
ho_hog(void *arg)
{
	(void)arg;
	while (!atomic_load(&ho_stop))
		ult_yield(); /* sanitizer builds do not preempt */
	return (NULL);
}

static void *
ho_kid(void *arg)
{
	(void)arg;
	if (!atomic_load(&ho_released))
		atomic_fetch_add(&ho_early, 1);
	atomic_fetch_add(&ho_done, 1);
	return (NULL);
}

/* Bound to CPU 0: queue children there, then block its worker in the
 * kernel with a read the poller knows nothing about. */
static void *
ho_blocker(void *arg)
{
	ult_thread_t *k[HO_KIDS];
	char c;

	(void)arg;
	for (int i = 0; i < HO_KIDS; i++)
		CHECK_EQ(ult_spawn(&k[i], NULL, ho_kid, NULL), 0);
	CHECK_EQ(read(ho_pipe[0], &c, 1), 1);
	for (int i = 0; i < HO_KIDS; i++)
		CHECK_EQ(ult_join(k[i], NULL), 0);
	return (NULL);
}

void
test_io_raw_read_handoff(void)
{
	struct ult_cpu_info ci;
	struct ult_attr a;
	ult_thread_t *hog, *b;
	int saw_blocked = 0;
	long off = 0;

	rt_init(2, 0);
	/* Under ULE only the handoff may move the children: no balancer,
	 * and the other CPU never idles (its hog is bound there). */
	if (ult_sysctl("kern.sched.balance", NULL, &off) != 0)
		(void)0; /* 4BSD: the global queue is any CPU's anyway */
	rt_sysctl_set("ult.child_runs_first", 0);
	CHECK_EQ(pipe(ho_pipe), 0);
	atomic_store(&ho_stop, 0);
	atomic_store(&ho_done, 0);
	atomic_store(&ho_released, 0);
	atomic_store(&ho_early, 0);
	ult_attr_init(&a);
	a.cpu = 1;
	CHECK_EQ(ult_spawn(&hog, &a, ho_hog, NULL), 0);
	a.cpu = 0;
	CHECK_EQ(ult_spawn(&b, &a, ho_blocker, NULL), 0);
	/* The children run while the blocker's worker sleeps in read(),
	 * which the clock thread notices. */
	for (int i = 0;; i++) {
		CHECK(i < 60000);
		CHECK_EQ(ult_cpu_info(0, &ci), 0);
		if (rt_info(b).state == ULT_STATE_BLOCKED)
			saw_blocked = 1;
		if (ci.blocked)
			saw_blocked = 1;
		/* The mark may come and go (a signal runs on the blocked
		 * thread, a loaded host): seeing it once is enough. */
		if (atomic_load(&ho_done) == HO_KIDS && ci.handoffs >= 1 &&
		    saw_blocked)
			break;
		usleep(500);
	}
	atomic_store(&ho_released, 1);
	CHECK_EQ(write(ho_pipe[1], "x", 1), 1);
	CHECK_EQ(ult_join(b, NULL), 0);
	CHECK_EQ(atomic_load(&ho_early), HO_KIDS);
	atomic_store(&ho_stop, 1);
	CHECK_EQ(ult_join(hog, NULL), 0);
	/* It rejoined: a worker that switches is not blocked. */
	for (int i = 0; ult_cpu_info(0, &ci) == 0 && ci.blocked; i++) {
		CHECK(i < 20000);
		usleep(500);
	}
	close(ho_pipe[0]);
	close(ho_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- every worker blocked at once: the spare takes the queue ---- */

#define AB_MAXW 4

static int ab_pipe[AB_MAXW][2];
static atomic_int ab_blocked, ab_writer_cpu;

/* Bound to its worker: blocks it in the kernel until the writer runs. */
static void *
ab_reader(void *arg)
{
	int i = (int)(intptr_t)arg;
	char c;

	atomic_fetch_add(&ab_blocked, 1);
	CHECK_EQ(read(ab_pipe[i][0], &c, 1), 1);
	return (NULL);
}

/* Spawned with every worker in read(): only the spare can run it. */
static void *
ab_writer(void *arg)
{
	int n = (int)(intptr_t)arg;

	atomic_store(&ab_writer_cpu, ult_cpu());
	for (int i = 0; i < n; i++)
		CHECK_EQ(write(ab_pipe[i][1], "x", 1), 1);
	return (NULL);
}

static void
all_blocked_on(int nw)
{
	ult_thread_t *r[AB_MAXW], *w;
	struct ult_attr a;
	long runs0;

	rt_init(nw, 0);
	CHECK_EQ(rt_sysctl_get("ult.spare"), 1);
	runs0 = rt_sysctl_get("ult.spare_runs");
	atomic_store(&ab_blocked, 0);
	atomic_store(&ab_writer_cpu, -1);
	ult_attr_init(&a);
	for (int i = 0; i < nw; i++) {
		CHECK_EQ(pipe(ab_pipe[i]), 0);
		a.cpu = i;
		CHECK_EQ(ult_spawn(&r[i], &a, ab_reader, (void *)(intptr_t)i),
		    0);
	}
	while (atomic_load(&ab_blocked) < nw)
		usleep(200);
	/* The readers are in read() or about to be; the writer cannot run
	 * on any worker until it returns, and it returns only when the
	 * writer has run. */
	CHECK_EQ(ult_spawn(&w, NULL, ab_writer, (void *)(intptr_t)nw), 0);
	CHECK_EQ(ult_join(w, NULL), 0);
	CHECK_EQ(atomic_load(&ab_writer_cpu), nw);
	for (int i = 0; i < nw; i++)
		CHECK_EQ(ult_join(r[i], NULL), 0);
	CHECK(rt_sysctl_get("ult.spare_runs") > runs0);
	for (int i = 0; i < nw; i++) {
		close(ab_pipe[i][0]);
		close(ab_pipe[i][1]);
	}
	CHECK_EQ(ult_shutdown(), 0);
}

void
test_io_all_blocked(void)
{
	all_blocked_on(1);
	all_blocked_on(2);
	all_blocked_on(4);
}

/* With ULT_SPARE=0 there is no spare, and ult_init says so. */
void
test_io_no_spare(void)
{
	setenv("ULT_SPARE", "0", 1);
	rt_init(2, 0);
	CHECK_EQ(rt_sysctl_get("ult.spare"), 0);
	CHECK_EQ(ult_shutdown(), 0);
	setenv("ULT_SPARE", "2", 1);
	CHECK_EQ(ult_init(NULL), EINVAL);
	unsetenv("ULT_SPARE");
}

/* ---- a reader woken by I/O earns ULE's interactive status ---- */

static int ia_pipe[2];

static void *
ia_reader(void *arg)
{
	char c;

	(void)arg;
	for (int i = 0; i < 200; i++)
		CHECK_EQ(ult_read(ia_pipe[0], &c, 1), 1);
	return ((void *)(intptr_t)rt_info(NULL).interact_score);
}

void
test_io_interactive(void)
{
	ult_thread_t *t;
	void *score;

	rt_init(2, 0);
	CHECK_EQ(pipe(ia_pipe), 0);
	CHECK_EQ(ult_spawn(&t, NULL, ia_reader, NULL), 0);
	for (int i = 0; i < 200; i++) {
		usleep(1000);
		CHECK_EQ(write(ia_pipe[1], "x", 1), 1);
	}
	CHECK_EQ(ult_join(t, &score), 0);
	CHECK((intptr_t)score < 30);
	close(ia_pipe[0]);
	close(ia_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- an fd wait sleeps at the socket priority (ult.io_boost) ---- */

static void *
boost_reader(void *arg)
{
	char c;

	(void)arg;
	CHECK_EQ(ult_read(ia_pipe[0], &c, 1), 1);
	/* Back from the call: the boost is gone. */
	return ((void *)(intptr_t)rt_info(NULL).priority);
}

void
test_io_boost(void)
{
	int ule;

	rt_init(2, 0);
	ule = strcmp(ult_sched_name(), "ULE") == 0;
	CHECK_EQ(pipe(ia_pipe), 0);
	for (long on = 1; on >= 0; on--) {
		ult_thread_t *t;
		void *after;
		int asleep;

		rt_sysctl_set("ult.io_boost", on);
		CHECK_EQ(ult_spawn(&t, NULL, boost_reader, NULL), 0);
		rt_wait_state(t, ULT_STATE_SLEEPING);
		asleep = rt_info(t).priority;
		CHECK_EQ(write(ia_pipe[1], "x", 1), 1);
		CHECK_EQ(ult_join(t, &after), 0);
		/* PSOCK (72) while asleep: with the tunable under ULE, always
		 * under 4BSD; else ULE's static boost, a user priority. */
		if (on || !ule)
			CHECK_EQ(asleep, 72);
		else
			CHECK(asleep >= 88);
		CHECK((intptr_t)after >= 88);
	}
	close(ia_pipe[0]);
	close(ia_pipe[1]);
	CHECK_EQ(ult_shutdown(), 0);
}
