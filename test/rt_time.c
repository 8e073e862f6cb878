/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Timers and deadlines: the timer heaps checked against a plain array,
 * and the edges of the public timed calls (a deadline that has passed,
 * 0 among them, and UINT64_MAX, which must mean "never").
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "test.h"
#include "kern/timer.h"
#include "ult.h"

/* ---- the heaps themselves, without the runtime ---------------------- */

enum {
	NHEAPS = 3,
	NTIMERS = 512
};

struct ref_timer {
	struct ult__timer t;
	int queued, heap; /* what the reference believes */
	uint64_t deadline;
};

static struct ref_timer rt[NTIMERS];
static int fired_log[NTIMERS], nfired;

static void
ref_fire(void *arg)
{
	struct ref_timer *r = arg;

	CHECK(nfired < NTIMERS);
	fired_log[nfired++] = (int)(r - rt);
}

static uint64_t
ref_min(void)
{
	uint64_t m = UINT64_MAX;

	for (int i = 0; i < NTIMERS; i++)
		if (rt[i].queued && rt[i].deadline < m)
			m = rt[i].deadline;
	return (m);
}

/* Heap index as ult__timer_add maps it: out of range is the shared one. */
static int
heap_of(int cpu)
{
	return (cpu < 0 || cpu >= NHEAPS ? NHEAPS - 1 : cpu);
}

static void
expire(uint64_t now)
{
	uint64_t last[NHEAPS], next;
	int due = 0;

	for (int i = 0; i < NTIMERS; i++)
		if (rt[i].queued && rt[i].deadline <= now)
			due++;
	nfired = 0;
	next = ult__timers_run(now);
	CHECK_EQ(nfired, due);
	for (int h = 0; h < NHEAPS; h++)
		last[h] = 0;
	for (int k = 0; k < nfired; k++) {
		struct ref_timer *r = &rt[fired_log[k]];

		CHECK(r->queued);
		CHECK(r->deadline <= now);
		/* Each heap expires its timers in deadline order. */
		CHECK(r->deadline >= last[r->heap]);
		last[r->heap] = r->deadline;
		r->queued = 0;
	}
	CHECK(next == ref_min());
}

void
test_timer_heap(void)
{
	unsigned seed = 12345;
	uint64_t now = 1000;
	long ops = 400000 / TEST_SCALE;

	CHECK_EQ(ult__timers_init(NHEAPS), 0);
	for (int i = 0; i < NTIMERS; i++)
		ult__timer_init(&rt[i].t);
	CHECK(ult__timers_next() == UINT64_MAX);
	CHECK_EQ(ult__timer_cancel(&rt[0].t), 0); /* never added */
	for (long op = 0; op < ops; op++) {
		unsigned x = test_rand(&seed);
		struct ref_timer *r = &rt[x % NTIMERS];
		unsigned what = (x >> 9) % 16;

		if (what < 8 && !r->queued) {
			int cpu = (int)((x >> 13) % (NHEAPS + 2)) - 1;
			uint64_t d;

			/* Mostly near, often equal (ties), sometimes due
			 * already, rarely never. */
			switch ((x >> 17) % 16) {
			case 0:
				d = UINT64_MAX;
				break;
			case 1:
				d = now - (x >> 21) % 100;
				break;
			case 2:
			case 3:
				d = now + 50;
				break;
			default:
				d = now + 1 + (x >> 21) % 400;
			}
			ult__timer_add(&r->t, cpu, d, ref_fire, r);
			r->queued = 1;
			r->heap = heap_of(cpu);
			r->deadline = d;
		} else if (what < 13) {
			CHECK_EQ(ult__timer_cancel(&r->t), r->queued);
			r->queued = 0;
		} else {
			now += (x >> 13) % 64;
			expire(now);
		}
		CHECK(ult__timers_next() == ref_min());
	}
	expire(UINT64_MAX - 1);
	for (int i = 0; i < NTIMERS; i++) {
		CHECK_EQ(ult__timer_cancel(&rt[i].t), rt[i].queued);
		rt[i].queued = 0;
	}
	CHECK(ult__timers_next() == UINT64_MAX);
	ult__timers_fini();
}

/* A cancel that loses the race to the expiry returns only once the
 * timer's function has returned. */
static struct ult__timer slow_timer;
static atomic_int slow_state, cancel_done;

static void
slow_fire(void *arg)
{
	(void)arg;
	atomic_store(&slow_state, 1);
	while (atomic_load(&slow_state) != 2)
		sched_yield();
	atomic_store(&slow_state, 3);
}

static void *
run_timers(void *arg)
{
	(void)arg;
	ult__timers_run(100);
	return (NULL);
}

static void *
cancel_slow(void *arg)
{
	(void)arg;
	CHECK_EQ(ult__timer_cancel(&slow_timer), 0);
	CHECK_EQ(atomic_load(&slow_state), 3);
	atomic_store(&cancel_done, 1);
	return (NULL);
}

void
test_timer_cancel_waits(void)
{
	pthread_t runner, canceller;

	CHECK_EQ(ult__timers_init(1), 0);
	ult__timer_init(&slow_timer);
	ult__timer_add(&slow_timer, 0, 50, slow_fire, NULL);
	CHECK_EQ(pthread_create(&runner, NULL, run_timers, NULL), 0);
	while (atomic_load(&slow_state) != 1)
		sched_yield();
	CHECK_EQ(pthread_create(&canceller, NULL, cancel_slow, NULL), 0);
	for (int i = 0; i < 1000; i++)
		sched_yield();
	CHECK_EQ(atomic_load(&cancel_done), 0);
	atomic_store(&slow_state, 2);
	CHECK_EQ(pthread_join(canceller, NULL), 0);
	CHECK_EQ(pthread_join(runner, NULL), 0);
	CHECK_EQ(atomic_load(&cancel_done), 1);
	ult__timers_fini();
}

/* ---- deadlines at the public calls ---------------------------------- */

static ult_mutex_t dm = ULT_MUTEX_INITIALIZER, cm = ULT_MUTEX_INITIALIZER;
static ult_cond_t dc = ULT_COND_INITIALIZER;
static ult_sem_t ds, release;
static atomic_int holding, woke;

/* Every timed call with a deadline that has passed returns at once:
 * ETIMEDOUT where it would have to wait (dm is held, ds is zero). */
static void *
past_blocked(void *arg)
{
	const uint64_t past[] = {0, 1, ult_now() - 1, ult_now()};

	(void)arg;
	for (unsigned i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		CHECK_EQ(ult_sleep_until(past[i]), 0);
		CHECK_EQ(ult_mutex_timedlock(&dm, past[i]), ETIMEDOUT);
		CHECK_EQ(ult_sem_timedwait(&ds, past[i]), ETIMEDOUT);
	}
	return (NULL);
}

/* The same on objects free to take: no wait, so no timeout. */
static void *
past_free(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_mutex_timedlock(&dm, 0), 0);
	CHECK_EQ(ult_cond_timedwait(&dc, &dm, 0), ETIMEDOUT);
	CHECK_EQ(ult_mutex_unlock(&dm), 0); /* reacquired after it */
	CHECK_EQ(ult_sem_post(&ds), 0);
	CHECK_EQ(ult_sem_timedwait(&ds, 0), 0);
	return (NULL);
}

static void *
hold_dm(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_mutex_lock(&dm), 0);
	atomic_store(&holding, 1);
	CHECK_EQ(ult_sem_wait(&release), 0);
	CHECK_EQ(ult_mutex_unlock(&dm), 0);
	return (NULL);
}

void
test_deadline_past(void)
{
	ult_thread_t *t;

	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(ult_sem_init(&ds, 0), 0);
	CHECK_EQ(ult_sem_init(&release, 0), 0);
	CHECK_EQ(ult_sleep_until(0), 0); /* a foreign thread */
	CHECK_EQ(ult_spawn(&t, NULL, past_free, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	past_free(NULL);
	/* A uthread, then a foreign thread, while a uthread holds dm. */
	atomic_store(&holding, 0);
	CHECK_EQ(ult_spawn(&t, NULL, hold_dm, NULL), 0);
	while (atomic_load(&holding) == 0)
		ult_sleep_ns(1000000);
	{
		ult_thread_t *p;

		CHECK_EQ(ult_spawn(&p, NULL, past_blocked, NULL), 0);
		CHECK_EQ(ult_join(p, NULL), 0);
	}
	past_blocked(NULL);
	CHECK_EQ(ult_sem_post(&release), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_sem_destroy(&ds), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * UINT64_MAX as a deadline or a duration means never.  A uthread's wait
 * is checked by its state, a foreign thread's by a flag, a while after it
 * began: a wrapped deadline would have ended it in microseconds.
 */
enum {
	W_SLEEP,
	W_SLEEP_UNTIL,
	W_MUTEX,
	W_COND,
	W_SEM,
	W_KINDS
};

static void *
wait_forever(void *arg)
{
	int kind = (int)(intptr_t)arg;

	switch (kind) {
	case W_SLEEP:
		CHECK_EQ(ult_sleep_ns(UINT64_MAX), 0);
		break;
	case W_SLEEP_UNTIL:
		CHECK_EQ(ult_sleep_until(UINT64_MAX), 0);
		break;
	case W_MUTEX:
		CHECK_EQ(ult_mutex_timedlock(&dm, UINT64_MAX), 0);
		CHECK_EQ(ult_mutex_unlock(&dm), 0);
		break;
	case W_COND:
		CHECK_EQ(ult_mutex_lock(&cm), 0);
		atomic_fetch_add(&holding, 1);
		CHECK_EQ(ult_cond_timedwait(&dc, &cm, UINT64_MAX), 0);
		CHECK_EQ(ult_mutex_unlock(&cm), 0);
		break;
	default:
		CHECK_EQ(ult_sem_timedwait(&ds, UINT64_MAX), 0);
	}
	atomic_fetch_add(&woke, 1);
	return (NULL);
}

static int
state_of(ult_thread_t *t)
{
	struct ult_thread_info info;

	CHECK_EQ(ult_thread_info(t, &info), 0);
	return (info.state);
}

void
test_deadline_never(void)
{
	ult_thread_t *t[W_KINDS];
	pthread_t p[W_KINDS];

	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(ult_sem_init(&ds, 0), 0);
	atomic_store(&woke, 0);
	atomic_store(&holding, 0);
	CHECK_EQ(ult_mutex_lock(&dm), 0);
	for (int k = 0; k < W_KINDS; k++) {
		CHECK_EQ(
		    ult_spawn(&t[k], NULL, wait_forever, (void *)(intptr_t)k),
		    0);
		CHECK_EQ(pthread_create(&p[k], NULL, wait_forever,
			     (void *)(intptr_t)k),
		    0);
	}
	/* Every uthread asleep and both cond waiters waiting; then a while
	 * later, still so. */
	for (int k = 0; k < W_KINDS; k++)
		while (state_of(t[k]) != ULT_STATE_SLEEPING &&
		    atomic_load(&woke) == 0)
			ult_sleep_ns(1000000);
	while (atomic_load(&holding) < 2 && atomic_load(&woke) == 0)
		ult_sleep_ns(1000000);
	CHECK_EQ(atomic_load(&woke), 0);
	ult_sleep_ns(100000000);
	for (int k = 0; k < W_KINDS; k++)
		CHECK_EQ(state_of(t[k]), ULT_STATE_SLEEPING);
	CHECK_EQ(atomic_load(&woke), 0);
	/* The lock and object waits still end when they are woken. */
	CHECK_EQ(ult_mutex_unlock(&dm), 0);
	CHECK_EQ(ult_mutex_lock(&cm), 0);
	CHECK_EQ(ult_cond_broadcast(&dc), 0);
	CHECK_EQ(ult_mutex_unlock(&cm), 0);
	CHECK_EQ(ult_sem_post(&ds), 0);
	CHECK_EQ(ult_sem_post(&ds), 0);
	for (int k = W_MUTEX; k < W_KINDS; k++) {
		CHECK_EQ(ult_join(t[k], NULL), 0);
		CHECK_EQ(pthread_join(p[k], NULL), 0);
	}
	CHECK_EQ(atomic_load(&woke), 2 * (W_KINDS - W_MUTEX));
	/* The sleepers never return: the process ends with them asleep. */
	for (int k = W_SLEEP; k < W_MUTEX; k++) {
		CHECK_EQ(state_of(t[k]), ULT_STATE_SLEEPING);
		CHECK_EQ(pthread_detach(p[k]), 0);
	}
}
