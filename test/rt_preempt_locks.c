/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Locks held through libc's API defer preemption (src/kern/preempt_shim.c):
 * the count each wrapper keeps, and uthreads that hold each kind of lock
 * under constant preemption.  C11 mtx_* are in rt_preempt_c11.c (the
 * runtime's own spin lock has their names).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kern/runtime.h"
#include "kern/worker.h"
#include "kern/uthread.h"
#include "rt_preempt_locks.h"
#include "test.h"
#include "ult.h"

int
lock_count(void)
{
	struct ult_thread *ut = ult__self_ut();

	CHECK(ut != NULL);
	return (ULT_LD(&ut->nopreempt));
}

/* A deadline that has passed. */
static struct timespec
past(clockid_t c)
{
	struct timespec ts;

	CHECK_EQ(clock_gettime(c, &ts), 0);
	ts.tv_sec -= 1;
	return (ts);
}

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mx2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t sp, sp2;
static FILE *file;

/* Held by a foreign thread meanwhile: every try and timed attempt fails. */
static void
failed_attempts(void)
{
	struct timespec rt = past(CLOCK_REALTIME), mono = past(CLOCK_MONOTONIC);

	CHECK_EQ(pthread_mutex_trylock(&mx), EBUSY);
	CHECK_EQ(pthread_mutex_timedlock(&mx, &rt), ETIMEDOUT);
	CHECK_EQ(pthread_mutex_clocklock(&mx, CLOCK_MONOTONIC, &mono),
	    ETIMEDOUT);
	CHECK_EQ(pthread_mutex_clocklock(&mx, 12345, &mono), EINVAL);
	CHECK_EQ(pthread_rwlock_tryrdlock(&rw), EBUSY);
	CHECK_EQ(pthread_rwlock_trywrlock(&rw), EBUSY);
	CHECK_EQ(pthread_rwlock_timedrdlock(&rw, &rt), ETIMEDOUT);
	CHECK_EQ(pthread_rwlock_timedwrlock(&rw, &rt), ETIMEDOUT);
	CHECK_EQ(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &mono),
	    ETIMEDOUT);
	CHECK_EQ(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &mono),
	    ETIMEDOUT);
	CHECK_EQ(pthread_spin_trylock(&sp), EBUSY);
	CHECK(ftrylockfile(file) != 0);
	c11_failed_attempts();
	CHECK_EQ(lock_count(), 0);
}

/* Each acquisition counts once, each release once; nothing is left. */
static void
successful_pairs(void)
{
	struct timespec rt = past(CLOCK_REALTIME), mono = past(CLOCK_MONOTONIC);
	pthread_mutexattr_t ma;
	pthread_mutex_t rec;

	/* A lock that is free is taken even past the deadline. */
	CHECK_EQ(pthread_mutex_lock(&mx), 0);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(pthread_mutex_unlock(&mx), 0);
	CHECK_EQ(pthread_mutex_trylock(&mx), 0);
	CHECK_EQ(pthread_mutex_unlock(&mx), 0);
	CHECK_EQ(pthread_mutex_timedlock(&mx, &rt), 0);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(pthread_mutex_unlock(&mx), 0);
	CHECK_EQ(pthread_mutex_clocklock(&mx, CLOCK_MONOTONIC, &mono), 0);
	CHECK_EQ(pthread_mutex_unlock(&mx), 0);
	CHECK_EQ(lock_count(), 0);

	CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_tryrdlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_timedrdlock(&rw, &rt), 0);
	CHECK_EQ(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &mono), 0);
	CHECK_EQ(lock_count(), 4);
	CHECK_EQ(pthread_rwlock_trywrlock(&rw), EBUSY); /* read-held */
	CHECK_EQ(lock_count(), 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
	CHECK_EQ(lock_count(), 0);
	CHECK_EQ(pthread_rwlock_wrlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_wrlock(&rw), EDEADLK);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_trywrlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_timedwrlock(&rw, &rt), 0);
	CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
	CHECK_EQ(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &mono), 0);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
	CHECK_EQ(lock_count(), 0);

	CHECK_EQ(pthread_spin_lock(&sp), 0);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(pthread_spin_trylock(&sp), EBUSY);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(pthread_spin_unlock(&sp), 0);
	CHECK_EQ(pthread_spin_trylock(&sp), 0);
	CHECK_EQ(pthread_spin_unlock(&sp), 0);
	CHECK_EQ(lock_count(), 0);

	/* Recursive locks count every level. */
	flockfile(file);
	CHECK_EQ(ftrylockfile(file), 0);
	CHECK_EQ(lock_count(), 2);
	funlockfile(file);
	funlockfile(file);
	CHECK_EQ(lock_count(), 0);
	CHECK_EQ(pthread_mutexattr_init(&ma), 0);
	CHECK_EQ(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE), 0);
	CHECK_EQ(pthread_mutex_init(&rec, &ma), 0);
	CHECK_EQ(pthread_mutex_lock(&rec), 0);
	CHECK_EQ(pthread_mutex_trylock(&rec), 0);
	CHECK_EQ(lock_count(), 2);
	CHECK_EQ(pthread_mutex_unlock(&rec), 0);
	CHECK_EQ(pthread_mutex_unlock(&rec), 0);
	CHECK_EQ(pthread_mutex_unlock(&rec), EPERM);
	CHECK_EQ(lock_count(), 0);
	CHECK_EQ(pthread_mutex_destroy(&rec), 0);
	/* An error-checking mutex refuses the owner: not acquired. */
	CHECK_EQ(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK), 0);
	CHECK_EQ(pthread_mutex_init(&rec, &ma), 0);
	CHECK_EQ(pthread_mutex_lock(&rec), 0);
	CHECK_EQ(pthread_mutex_lock(&rec), EDEADLK);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(pthread_mutex_unlock(&rec), 0);
	CHECK_EQ(lock_count(), 0);
	CHECK_EQ(pthread_mutex_destroy(&rec), 0);
	CHECK_EQ(pthread_mutexattr_destroy(&ma), 0);
}

/* A robust mutex whose owner died is acquired (EOWNERDEAD): it counts. */
static pthread_mutex_t robust;

static void *
die_holding(void *arg)
{
	(void)arg;
	CHECK_EQ(pthread_mutex_lock(&robust), 0);
	return (NULL);
}

static void
owner_dead(void)
{
	CHECK_EQ(pthread_mutex_lock(&robust), EOWNERDEAD);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(pthread_mutex_consistent(&robust), 0);
	CHECK_EQ(pthread_mutex_unlock(&robust), 0);
	CHECK_EQ(lock_count(), 0);
}

static atomic_int phase;

static void *
counting(void *arg)
{
	(void)arg;
	CHECK_EQ(lock_count(), 0);
	failed_attempts();
	atomic_store(&phase, 1); /* the foreign thread lets go */
	while (atomic_load(&phase) != 2)
		ult_yield();
	successful_pairs();
	owner_dead();
	c11_lock_checks();
	/* Released here, taken by the foreign thread: never below zero. */
	CHECK_EQ(pthread_spin_unlock(&sp2), 0);
	CHECK_EQ(pthread_mutex_unlock(&mx2), 0);
	CHECK_EQ(lock_count(), 0);
	CHECK_EQ(pthread_spin_lock(&sp), 0);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(pthread_spin_unlock(&sp), 0);
	CHECK_EQ(lock_count(), 0);
	return (NULL);
}

/* TSan reports the deliberate unlocks by another thread or of a free
 * lock, and does not intercept every clock variant. */
static void
skip_under_tsan(void)
{
#if defined(__SANITIZE_THREAD__)
	SKIP("unlocks TSan calls wrong on purpose");
#endif
}

void
lock_count_checks(void)
{
	pthread_mutexattr_t ma;
	pthread_t p;
	ult_thread_t *t;

	skip_under_tsan();
	/* die_holding: glibc's robust mutex of a dead thread. */
	SKIP_EMULATED("no robust futex lists (set_robust_list is ENOSYS)");

	CHECK_EQ(pthread_spin_init(&sp, PTHREAD_PROCESS_PRIVATE), 0);
	CHECK_EQ(pthread_spin_init(&sp2, PTHREAD_PROCESS_PRIVATE), 0);
	CHECK_EQ(pthread_mutexattr_init(&ma), 0);
	CHECK_EQ(pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST), 0);
	CHECK_EQ(pthread_mutex_init(&robust, &ma), 0);
	CHECK_EQ(pthread_mutexattr_destroy(&ma), 0);
	CHECK_EQ(pthread_create(&p, NULL, die_holding, NULL), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	file = fopen("/dev/null", "w");
	CHECK(file != NULL);
	c11_lock_init();
	atomic_store(&phase, 0);
	/* This (foreign) thread holds every lock while the uthread fails. */
	CHECK_EQ(pthread_mutex_lock(&mx), 0);
	CHECK_EQ(pthread_rwlock_wrlock(&rw), 0);
	CHECK_EQ(pthread_spin_lock(&sp), 0);
	flockfile(file);
	c11_lock_hold(1);
	CHECK_EQ(ult_spawn(&t, NULL, counting, NULL), 0);
	while (atomic_load(&phase) != 1)
		usleep(1000);
	c11_lock_hold(0);
	funlockfile(file);
	CHECK_EQ(pthread_spin_unlock(&sp), 0);
	CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
	CHECK_EQ(pthread_mutex_unlock(&mx), 0);
	/* Taken here, released by the uthread (allowed for these kinds). */
	CHECK_EQ(pthread_spin_lock(&sp2), 0);
	CHECK_EQ(pthread_mutex_lock(&mx2), 0);
	atomic_store(&phase, 2);
	CHECK_EQ(ult_join(t, NULL), 0);
	fclose(file);
	CHECK_EQ(pthread_mutex_destroy(&robust), 0);
	CHECK_EQ(pthread_spin_destroy(&sp), 0);
	CHECK_EQ(pthread_spin_destroy(&sp2), 0);
}

void
test_preempt_lock_count(void)
{
	struct ult_config cfg = {0};

	skip_under_tsan();
	cfg.ncpu = 1;
	CHECK_EQ(ult_init(&cfg), 0);
	lock_count_checks();
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * A count taken on one worker is given back on another: the count belongs
 * to the uthread, which moved (a voluntary switch) while holding the lock.
 */
static void *
migrating(void *arg)
{
	int from = ult_cpu(), to = !from;

	(void)arg;
	CHECK_EQ(pthread_spin_lock(&sp), 0);
	CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
	CHECK_EQ(lock_count(), 2);
	CHECK_EQ(ult_bind(NULL, to), 0);
	CHECK_EQ(ult_cpu(), to);
	CHECK_EQ(lock_count(), 2);
	CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
	CHECK_EQ(pthread_spin_unlock(&sp), 0);
	CHECK_EQ(lock_count(), 0);
	CHECK_EQ(pthread_spin_unlock(&sp), 0); /* once more: stays at zero */
	CHECK_EQ(lock_count(), 0);
	return (NULL);
}

void
test_preempt_lock_migrate(void)
{
	struct ult_config cfg = {0};
	ult_thread_t *t;

	skip_under_tsan();
	cfg.ncpu = 2;
	CHECK_EQ(ult_init(&cfg), 0);
	CHECK_EQ(pthread_spin_init(&sp, PTHREAD_PROCESS_PRIVATE), 0);
	CHECK_EQ(ult_spawn(&t, NULL, migrating, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(pthread_spin_destroy(&sp), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * Uthreads on one worker, then on two, each holding a lock of one kind
 * for a millisecond at a time under constant preemption (slice of one
 * tick).  A holder preempted inside would leave the next thread on its
 * worker to block the worker (or spin on it) for good: a hang.  The
 * counter checks mutual exclusion; the owed count shows that preemptions
 * did land inside and were deferred.
 */
enum {
	HOLDERS = 4,
	ROUNDS = 60
};
static long held_counter;
static atomic_int inside;
static atomic_long overlaps;

static void
hold_ms(void)
{
	uint64_t end = ult_now() + 1000000;

	if (atomic_fetch_add(&inside, 1) != 0)
		atomic_fetch_add(&overlaps, 1);
	while (ult_now() < end)
		;
	held_counter++;
	atomic_fetch_sub(&inside, 1);
}

static void *
holder(void *arg)
{
	int kind = (int)(intptr_t)arg;

	for (int i = 0; i < ROUNDS; i++) {
		switch (kind) {
		case HOLD_RWLOCK:
			CHECK_EQ(pthread_rwlock_wrlock(&rw), 0);
			hold_ms();
			CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
			break;
		case HOLD_SPIN:
			CHECK_EQ(pthread_spin_lock(&sp), 0);
			hold_ms();
			CHECK_EQ(pthread_spin_unlock(&sp), 0);
			break;
		case HOLD_STDIO:
			flockfile(file);
			hold_ms();
			funlockfile(file);
			break;
		default:
			c11_hold(hold_ms);
			break;
		}
	}
	CHECK_EQ(lock_count(), 0);
	return (NULL);
}

void
hold_under_preemption(int kind)
{
	ult_thread_t *t[HOLDERS];
	struct ult_cpu_info ci;
	uint64_t owed;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	SKIP("no asynchronous preemption in this build");
#endif
	CHECK_EQ(pthread_spin_init(&sp, PTHREAD_PROCESS_PRIVATE), 0);
	file = fopen("/dev/null", "w");
	CHECK(file != NULL);
	c11_lock_init();
	for (int ncpu = 1; ncpu <= 2; ncpu++) {
		struct ult_config cfg = {0};
		long slice = 1;

		cfg.ncpu = ncpu;
		cfg.preempt = 1;
		CHECK_EQ(ult_init(&cfg), 0);
		CHECK_EQ(ult_sysctl("kern.sched.slice", NULL, &slice), 0);
		held_counter = 0;
		atomic_store(&overlaps, 0);
		for (int i = 0; i < HOLDERS; i++)
			CHECK_EQ(ult_spawn(&t[i], NULL, holder,
				     (void *)(intptr_t)kind),
			    0);
		for (int i = 0; i < HOLDERS; i++)
			CHECK_EQ(ult_join(t[i], NULL), 0);
		owed = 0;
		for (int c = 0; c < ncpu; c++) {
			CHECK_EQ(ult_cpu_info(c, &ci), 0);
			owed += ci.owed;
		}
		fprintf(stderr,
		    "%d worker(s): %ld sections, %ld overlaps, "
		    "%lu preemptions owed\n",
		    ncpu, held_counter, atomic_load(&overlaps),
		    (unsigned long)owed);
		CHECK_EQ(held_counter, HOLDERS * ROUNDS);
		CHECK_EQ(atomic_load(&overlaps), 0);
		CHECK(owed > 0);
		CHECK_EQ(ult_shutdown(), 0);
	}
	fclose(file);
	CHECK_EQ(pthread_spin_destroy(&sp), 0);
}

void
test_preempt_hold_rwlock(void)
{
	hold_under_preemption(HOLD_RWLOCK);
}

void
test_preempt_hold_spin(void)
{
	hold_under_preemption(HOLD_SPIN);
}

void
test_preempt_hold_stdio(void)
{
	hold_under_preemption(HOLD_STDIO);
}
