/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The waits of docs/DESIGN.md's spin rules under random interleavings:
 * the runtime's spin locks when their waiters go to sleep on the lock
 * word (a holder that sleeps itself makes every waiter outlast its
 * spin), and user mutexes and condition variables on more workers than
 * CPUs, where the host deschedules lock owners and the spinners must
 * sleep.  A lost wakeup hangs the test (its timeout fails it); a lock
 * that admits two holders loses increments of the unlocked counter.
 *
 * ULT_STRESS_MS sets the length of each run (default 1500).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kern/runtime.h"
#include "util/lock.h"
#include "test.h"
#include "ult.h"

static uint64_t
run_ms(void)
{
	const char *ms = getenv("ULT_STRESS_MS");

	return ((uint64_t)(ms != NULL ? atoi(ms) : 1500) / TEST_SCALE + 1);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* ---- struct mtx, from kernel threads ---- */

#define SL_THREADS 6

static struct mtx sl_lock = MTX_INITIALIZER("rt_spin test");
static long sl_count; /* plain: the lock is all that guards it */
static uint64_t sl_end;

static void *
sl_body(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 7;
	long mine = 0;

	do {
		unsigned r = test_rand(&seed);

		mtx_lock_spin(&sl_lock);
		sl_count++;
		/* Now and then a holder that sleeps: its waiters spin out
		 * and sleep on the word; else a hold of a few loads. */
		if (r % 16 == 0)
			usleep(r % 200);
		else
			for (volatile unsigned i = r % 64; i > 0; i--)
				;
		mtx_unlock_spin(&sl_lock);
		mine++;
		if (r % 7 == 0)
			sched_yield();
	} while (mono_ns() < sl_end);
	return ((void *)mine);
}

void
test_spin_lock_sleepers(void)
{
	pthread_t t[SL_THREADS];
	long total = 0;

	sl_count = 0;
	sl_end = mono_ns() + run_ms() * 1000000;
	for (int i = 0; i < SL_THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, sl_body,
			     (void *)(uintptr_t)(i + 1)),
		    0);
	for (int i = 0; i < SL_THREADS; i++) {
		void *r;

		CHECK_EQ(pthread_join(t[i], &r), 0);
		total += (long)(uintptr_t)r;
	}
	CHECK_EQ(sl_count, total);
	CHECK_EQ(ULT_LD(&sl_lock.mtx_locked), 0);
	CHECK_EQ(ULT_LD(&sl_lock.mtx_waiters), 0u);
	/* Six threads on fewer CPUs, holders that sleep: waits happened. */
	CHECK(ULT_LD(&sl_lock.mtx_contended) > 0);
	printf("%ld acquisitions, %lu contended\n", total,
	    (unsigned long)ULT_LD(&sl_lock.mtx_contended));
}

/* ---- user mutexes and condition variables, workers > CPUs ---- */

#define MQ_PAIRS 8
#define MQ_CAP 4

static struct {
	ult_mutex_t m;
	ult_cond_t notempty, notfull;
	int n; /* queued items */
	long put, got;
	int done;
} q[MQ_PAIRS];
static ult_mutex_t hot;
static long hot_count, hot_ops;
static uint64_t mq_end;

static void *
producer(void *arg)
{
	int k = (int)(uintptr_t)arg;
	unsigned seed = (unsigned)k * 40503u + 11;

	do {
		unsigned r = test_rand(&seed);

		CHECK_EQ(ult_mutex_lock(&q[k].m), 0);
		while (q[k].n == MQ_CAP)
			CHECK_EQ(ult_cond_wait(&q[k].notfull, &q[k].m), 0);
		q[k].n++;
		q[k].put++;
		CHECK_EQ(ult_cond_signal(&q[k].notempty), 0);
		CHECK_EQ(ult_mutex_unlock(&q[k].m), 0);
		/* The shared hot lock, held for a random moment. */
		CHECK_EQ(ult_mutex_lock(&hot), 0);
		hot_count++;
		for (volatile unsigned i = r % 256; i > 0; i--)
			;
		CHECK_EQ(ult_mutex_unlock(&hot), 0);
		if (r % 11 == 0)
			ult_yield();
	} while (ult_now() < mq_end);
	CHECK_EQ(ult_mutex_lock(&q[k].m), 0);
	q[k].done = 1;
	CHECK_EQ(ult_cond_broadcast(&q[k].notempty), 0);
	CHECK_EQ(ult_mutex_unlock(&q[k].m), 0);
	return (NULL);
}

static void *
consumer(void *arg)
{
	int k = (int)(uintptr_t)arg;
	long mine = 0;

	for (;;) {
		CHECK_EQ(ult_mutex_lock(&q[k].m), 0);
		while (q[k].n == 0 && !q[k].done)
			CHECK_EQ(ult_cond_wait(&q[k].notempty, &q[k].m), 0);
		if (q[k].n == 0) {
			CHECK_EQ(ult_mutex_unlock(&q[k].m), 0);
			break;
		}
		q[k].n--;
		q[k].got++;
		CHECK_EQ(ult_cond_signal(&q[k].notfull), 0);
		CHECK_EQ(ult_mutex_unlock(&q[k].m), 0);
		CHECK_EQ(ult_mutex_lock(&hot), 0);
		hot_count++;
		CHECK_EQ(ult_mutex_unlock(&hot), 0);
		mine++;
	}
	return ((void *)mine);
}

void
test_spin_mutex_oversubscribed(void)
{
	struct ult_config cfg = {0};
	ult_thread_t *p[MQ_PAIRS], *c[MQ_PAIRS];
	long got = 0, put = 0;

	cfg.ncpu = 8; /* more workers than this host has CPUs, mostly */
	CHECK_EQ(ult_init(&cfg), 0);
	CHECK_EQ(ult_mutex_init(&hot), 0);
	hot_count = hot_ops = 0;
	for (int k = 0; k < MQ_PAIRS; k++) {
		CHECK_EQ(ult_mutex_init(&q[k].m), 0);
		CHECK_EQ(ult_cond_init(&q[k].notempty), 0);
		CHECK_EQ(ult_cond_init(&q[k].notfull), 0);
		q[k].n = q[k].done = 0;
		q[k].put = q[k].got = 0;
	}
	mq_end = ult_now() + run_ms() * 1000000;
	for (int k = 0; k < MQ_PAIRS; k++) {
		CHECK_EQ(ult_spawn(&c[k], NULL, consumer, (void *)(uintptr_t)k),
		    0);
		CHECK_EQ(ult_spawn(&p[k], NULL, producer, (void *)(uintptr_t)k),
		    0);
	}
	for (int k = 0; k < MQ_PAIRS; k++) {
		void *r;

		CHECK_EQ(ult_join(p[k], NULL), 0);
		CHECK_EQ(ult_join(c[k], &r), 0);
		CHECK_EQ((long)(uintptr_t)r, q[k].got);
		CHECK_EQ(q[k].put, q[k].got);
		CHECK_EQ(q[k].n, 0);
		put += q[k].put;
		got += q[k].got;
	}
	CHECK_EQ(hot_count, put + got);
	CHECK(put >= MQ_PAIRS);
	CHECK_EQ(ult_shutdown(), 0);
	printf("%ld items through %d queues on 8 workers\n", got, MQ_PAIRS);
}
