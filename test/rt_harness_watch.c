/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stress harness's watchers: a pthread that checks the policy's queue
 * invariants every millisecond while the actors run, and a watchdog that
 * writes the runtime's hang report and aborts when an actor or the main
 * thread stops making progress, or a worker sleeps in the kernel with
 * work queued (a lost wakeup).
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "kern/runtime.h"
#include "kern/worker.h"
#include "obs/debug.h"
#include "rt_harness.h"
#include "test.h"

static atomic_int watch_stop, check_stop, checks;
static pthread_t checker_thread, watchdog_thread;
/* Held by the watchdog while it reads the runtime's workers, and by the
 * main thread to stop that before ult_shutdown frees them. */
static pthread_mutex_t sample_lock = PTHREAD_MUTEX_INITIALIZER;
static int sample_stop; /* under sample_lock */
static uint64_t hang_ns;

static void *
checker(void *arg)
{
	(void)arg;
	while (!atomic_load(&check_stop)) {
		const char *err = ult__rt.sched->check();

		if (err != NULL)
			FAIL("policy invariant: %s", err);
		atomic_fetch_add(&checks, 1);
		usleep(1000);
	}
	return (NULL);
}

static void
hang(const char *who, int idx, const char *doing, uint64_t silent)
{
	fprintf(stderr,
	    "harness: HANG: %s %d made no progress for %llu ms (in %s)\n", who,
	    idx, (unsigned long long)(silent / 1000000), doing);
	ult__debug_dump(STDERR_FILENO);
	abort();
}

/* Samples (10 ms apart) for which a worker may sleep with work queued. */
#define STRANDED_SAMPLES 20

static void
stranded(int cpu)
{
	fprintf(stderr,
	    "harness: LOST WAKEUP: worker %d has slept with work queued "
	    "for %d ms\n",
	    cpu, STRANDED_SAMPLES * 10);
	ult__debug_dump(STDERR_FILENO);
	abort();
}

static void *
watchdog(void *arg)
{
	int strand[ULT_MAXCPU] = {0};

	(void)arg;
	for (unsigned tick = 0; !atomic_load(&watch_stop); tick++) {
		uint64_t now = ult_now();

		pthread_mutex_lock(&sample_lock);
		for (int c = 0; !sample_stop && c < ult_ncpu(); c++) {
			strand[c] = ult__worker_stranded(c) ? strand[c] + 1 : 0;
			if (strand[c] >= STRANDED_SAMPLES)
				stranded(c);
		}
		pthread_mutex_unlock(&sample_lock);
		usleep(10000);
		if (tick % 10 != 0)
			continue;

		for (int i = 0; i < NACTORS; i++) {
			struct actor *a = &harness_actors[i];
			uint64_t last = atomic_load(&a->last);

			if (atomic_load(&harness_stop) ||
			    atomic_load(&a->exempt))
				continue;
			if (now > last && now - last > hang_ns)
				hang("actor", i, a->doing, now - last);
		}
		if (now > harness_run_until &&
		    now - harness_run_until > hang_ns)
			hang("the main thread", 0,
			    atomic_load(&harness_main_doing),
			    now - harness_run_until);
	}
	return (NULL);
}

uint64_t
harness_env_ms(const char *var, uint64_t dflt)
{
	const char *s = getenv(var);

	return (
	    (s != NULL && *s != '\0' ? (uint64_t)atoll(s) : dflt) * 1000000ull);
}

void
harness_watch_start(uint64_t hang)
{
	hang_ns = hang;
	atomic_store(&watch_stop, 0);
	atomic_store(&check_stop, 0);
	atomic_store(&checks, 0);
	sample_stop = 0;
	CHECK_EQ(pthread_create(&checker_thread, NULL, checker, NULL), 0);
	CHECK_EQ(pthread_create(&watchdog_thread, NULL, watchdog, NULL), 0);
}

long
harness_checker_stop(void)
{
	atomic_store(&check_stop, 1);
	pthread_join(checker_thread, NULL);
	return (atomic_load(&checks));
}

void
harness_sample_stop(void)
{
	pthread_mutex_lock(&sample_lock);
	sample_stop = 1;
	pthread_mutex_unlock(&sample_lock);
}

void
harness_watch_stop(void)
{
	atomic_store(&watch_stop, 1);
	pthread_join(watchdog_thread, NULL);
}
