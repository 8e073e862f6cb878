/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lock checker (ULT_WITNESS) and what the reports build on: a wait
 * with a libc lock held and a lock order reversal are each reported once;
 * ult_thread_info names the object a sleeper waits on and its lock's
 * owner, and a cycle of owners is found as a deadlock.  Also issue 31's
 * API edges: the deadline constants and makers, ult_main, and
 * ult_setclass's check of prio for the timeshare class.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "kern/witness.h"
#include "obs/deadlock.h"
#include "ult.h"

static void
witness_init(void)
{
	CHECK_EQ(setenv("ULT_WITNESS", "1", 1), 0);
	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(ult__witness_on, 1);
	{
		long v = 0, one = 1;

		CHECK_EQ(ult_sysctl("ult.witness", &v, NULL), 0);
		CHECK_EQ(v, 1);
		CHECK_EQ(ult_sysctl("ult.witness", NULL, &one), EPERM);
	}
}

static void
witness_fini(void)
{
	CHECK_EQ(ult_shutdown(), 0);
	/* A bad value is refused; 0 turns it off, in any build. */
	CHECK_EQ(setenv("ULT_WITNESS", "2", 1), 0);
	CHECK_EQ(ult_init(NULL), EINVAL);
	CHECK_EQ(setenv("ULT_WITNESS", "0", 1), 0);
	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(ult__witness_on, 0);
	CHECK_EQ(ult_shutdown(), 0);
	CHECK_EQ(unsetenv("ULT_WITNESS"), 0);
}

static void *
run_in(void *(*fn)(void *), void *arg)
{
	ult_thread_t *t;
	void *ret;

	CHECK_EQ(ult_spawn(&t, NULL, fn, arg), 0);
	CHECK_EQ(ult_join(t, &ret), 0);
	return (ret);
}

/* ---- a wait with a libc lock held ----------------------------------- */

static pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t plain2 = PTHREAD_MUTEX_INITIALIZER;

static ult_sem_t go;

/* Yields, then waits on go (which the test posts once it sleeps there),
 * holding m. */
static void *
yield_holding(void *arg)
{
	pthread_mutex_t *m = arg;

	CHECK_EQ(pthread_mutex_lock(m), 0);
	ult_yield();
	CHECK_EQ(ult_sem_wait(&go), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	ult_yield(); /* nothing held: no report */
	return (NULL);
}

static void
run_holding(pthread_mutex_t *m)
{
	struct ult_thread_info in;
	ult_thread_t *t;

	CHECK_EQ(ult_spawn(&t, NULL, yield_holding, m), 0);
	for (;;) {
		CHECK_EQ(ult_thread_info(t, &in), 0);
		if (in.state == ULT_STATE_SLEEPING && in.wait_obj == &go)
			break;
		ult_sleep_ns(1000000);
	}
	CHECK_EQ(ult_sem_post(&go), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
}

void
test_witness_libc_wait(void)
{
	uint64_t n0;

	witness_init();
	CHECK_EQ(ult_sem_init(&go, 0), 0);
	n0 = ult__witness_nreports();
	run_holding(&plain);
	/* Once for the yield, once for the semaphore. */
	CHECK_EQ(ult__witness_nreports() - n0, 2);
	run_holding(&plain); /* the same again: said already */
	CHECK_EQ(ult__witness_nreports() - n0, 2);
	run_holding(&plain2); /* another lock */
	CHECK_EQ(ult__witness_nreports() - n0, 4);
	CHECK_EQ(ult_sem_destroy(&go), 0);
	witness_fini();
}

/* ---- lock order ----------------------------------------------------- */

static ult_mutex_t ma = ULT_MUTEX_INITIALIZER, mb = ULT_MUTEX_INITIALIZER;
static ult_rwlock_t rwc = ULT_RWLOCK_INITIALIZER;

static void *
take_ab(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_mutex_lock(&ma), 0);
	CHECK_EQ(ult_mutex_lock(&mb), 0);
	CHECK_EQ(ult_mutex_unlock(&mb), 0);
	CHECK_EQ(ult_mutex_unlock(&ma), 0);
	return (NULL);
}

static void *
take_ba(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_mutex_lock(&mb), 0);
	CHECK_EQ(ult_mutex_lock(&ma), 0);
	CHECK_EQ(ult_mutex_unlock(&ma), 0);
	CHECK_EQ(ult_mutex_unlock(&mb), 0);
	return (NULL);
}

/* b, then the rwlock, then a: with a before b, a reversal through c. */
static void *
take_bca(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_mutex_lock(&mb), 0);
	CHECK_EQ(ult_rwlock_rdlock(&rwc), 0);
	CHECK_EQ(ult_rwlock_unlock(&rwc), 0);
	CHECK_EQ(ult_rwlock_wrlock(&rwc), 0);
	CHECK_EQ(ult_mutex_lock(&ma), 0);
	CHECK_EQ(ult_mutex_unlock(&ma), 0);
	CHECK_EQ(ult_rwlock_unlock(&rwc), 0);
	CHECK_EQ(ult_mutex_unlock(&mb), 0);
	return (NULL);
}

void
test_witness_order(void)
{
	uint64_t n0;

	witness_init();
	n0 = ult__witness_nreports();
	run_in(take_ab, NULL);
	run_in(take_ab, NULL);
	CHECK_EQ(ult__witness_nreports() - n0, 0);
	run_in(take_ba, NULL);
	CHECK_EQ(ult__witness_nreports() - n0, 1);
	run_in(take_ba, NULL); /* once per pair */
	CHECK_EQ(ult__witness_nreports() - n0, 1);
	/* Destroyed locks leave the graph: the same addresses, new locks,
	 * any order first. */
	CHECK_EQ(ult_mutex_destroy(&ma), 0);
	CHECK_EQ(ult_mutex_destroy(&mb), 0);
	CHECK_EQ(ult_mutex_init(&ma), 0);
	CHECK_EQ(ult_mutex_init(&mb), 0);
	run_in(take_ba, NULL);
	CHECK_EQ(ult__witness_nreports() - n0, 1);
	/* Now b before a; a before b through the rwlock: b, c, a is fine,
	 * and then a, b reverses b ... a. */
	run_in(take_bca, NULL);
	CHECK_EQ(ult__witness_nreports() - n0, 1);
	run_in(take_ab, NULL);
	CHECK_EQ(ult__witness_nreports() - n0, 2);
	CHECK_EQ(ult_mutex_destroy(&ma), 0);
	CHECK_EQ(ult_mutex_destroy(&mb), 0);
	CHECK_EQ(ult_rwlock_destroy(&rwc), 0);
	CHECK_EQ(ult_mutex_init(&ma), 0);
	CHECK_EQ(ult_mutex_init(&mb), 0);
	CHECK_EQ(ult_rwlock_init(&rwc), 0);
	witness_fini();
}

/* ---- owners, and a deadlock ----------------------------------------- */

static ult_sem_t hold_sem;
static atomic_int holding;

static void *
own_and_sleep(void *arg)
{
	CHECK_EQ(ult_mutex_lock(arg), 0);
	atomic_store(&holding, 1);
	CHECK_EQ(ult_sem_wait(&hold_sem), 0);
	CHECK_EQ(ult_mutex_unlock(arg), 0);
	return (NULL);
}

static void *
lock_once(void *arg)
{
	CHECK_EQ(ult_mutex_lock(arg), 0);
	CHECK_EQ(ult_mutex_unlock(arg), 0);
	return (NULL);
}

static void *
wrlock_and_sleep(void *arg)
{
	CHECK_EQ(ult_rwlock_wrlock(arg), 0);
	atomic_store(&holding, 1);
	CHECK_EQ(ult_sem_wait(&hold_sem), 0);
	CHECK_EQ(ult_rwlock_unlock(arg), 0);
	return (NULL);
}

static void *
rdlock_once(void *arg)
{
	CHECK_EQ(ult_rwlock_rdlock(arg), 0);
	CHECK_EQ(ult_rwlock_unlock(arg), 0);
	return (NULL);
}

static void
info_of(ult_thread_t *t, struct ult_thread_info *in)
{
	CHECK_EQ(ult_thread_info(t, in), 0);
}

/* An owner that sleeps on hold_sem holding obj, and a waiter for obj:
 * the waiter names obj and its owner; the owner its semaphore. */
static void
owner_case(void *(*own)(void *), void *(*wait)(void *), void *obj)
{
	struct ult_thread_info io, iw;
	ult_thread_t *owner, *waiter;

	atomic_store(&holding, 0);
	CHECK_EQ(ult_spawn(&owner, NULL, own, obj), 0);
	while (!atomic_load(&holding))
		ult_sleep_ns(1000000);
	CHECK_EQ(ult_spawn(&waiter, NULL, wait, obj), 0);
	for (;;) {
		info_of(owner, &io);
		info_of(waiter, &iw);
		if (io.state == ULT_STATE_SLEEPING &&
		    iw.state == ULT_STATE_SLEEPING)
			break;
		ult_sleep_ns(1000000);
	}
	CHECK(iw.wait_obj == obj);
	CHECK_EQ(iw.wait_owner_id, io.id);
	CHECK(io.wait_obj == (const void *)&hold_sem);
	CHECK_EQ(io.wait_owner_id, 0);
	CHECK_EQ(ult_sem_post(&hold_sem), 0);
	CHECK_EQ(ult_join(owner, NULL), 0);
	CHECK_EQ(ult_join(waiter, NULL), 0);
}

void
test_info_wait_owner(void)
{
	static ult_mutex_t m = ULT_MUTEX_INITIALIZER;
	static ult_rwlock_t rw = ULT_RWLOCK_INITIALIZER;

	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(ult_sem_init(&hold_sem, 0), 0);
	owner_case(own_and_sleep, lock_once, &m);
	owner_case(wrlock_and_sleep, rdlock_once, &rw);
	CHECK_EQ(ult_sem_destroy(&hold_sem), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static ult_mutex_t da = ULT_MUTEX_INITIALIZER, db = ULT_MUTEX_INITIALIZER;
static ult_barrier_t both;

struct dl_arg {
	ult_mutex_t *first, *second;
	int timedout;
};

/* Timed, so that the test can end: a deadlock until the deadline. */
static void *
dl_side(void *arg)
{
	struct dl_arg *a = arg;
	int r;

	CHECK_EQ(ult_mutex_lock(a->first), 0);
	ult_barrier_wait(&both);
	r = ult_mutex_timedlock(a->second, ult_after(300000000));
	if (r == 0)
		CHECK_EQ(ult_mutex_unlock(a->second), 0);
	else
		CHECK_EQ(r, ETIMEDOUT);
	CHECK_EQ(ult_mutex_unlock(a->first), 0);
	return (NULL);
}

void
test_deadlock_found(void)
{
	int found = 0;

	CHECK_EQ(ult_init(NULL), 0);
	/* The deadline may pass before the snapshot on a loaded host: try
	 * again then. */
	for (int attempt = 0; attempt < 20 && !found; attempt++) {
		struct dl_arg l = {&da, &db, 0}, r = {&db, &da, 0};
		ult_thread_t *tl, *tr;

		CHECK_EQ(ult_barrier_init(&both, 2), 0);
		CHECK_EQ(ult_spawn(&tl, NULL, dl_side, &l), 0);
		CHECK_EQ(ult_spawn(&tr, NULL, dl_side, &r), 0);
		for (int i = 0; i < 250 && !found; i++) {
			struct ult_thread_info il, ir;
			FILE *f;

			info_of(tl, &il);
			info_of(tr, &ir);
			if (il.wait_owner_id != ir.id ||
			    ir.wait_owner_id != il.id) {
				ult_sleep_ns(1000000);
				continue;
			}
			CHECK(il.wait_obj == (const void *)&db);
			CHECK(ir.wait_obj == (const void *)&da);
			f = tmpfile();
			CHECK(f != NULL);
			/* Still stuck while it looks (or the deadline
			 * passed: then no cycle, and another try). */
			found = ult__deadlock_report(f, "t: ") == 1;
			fclose(f);
		}
		CHECK_EQ(ult_join(tl, NULL), 0);
		CHECK_EQ(ult_join(tr, NULL), 0);
		CHECK_EQ(ult_barrier_destroy(&both), 0);
	}
	CHECK(found);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- API edges ------------------------------------------------------ */

static void *
deadline_consts(void *arg)
{
	static ult_mutex_t m = ULT_MUTEX_INITIALIZER;
	ult_sem_t s;
	int fds[2], rev = 0;

	(void)arg;
	CHECK_EQ(ult_sem_init(&s, 0), 0);
	CHECK_EQ(ult_sem_timedwait(&s, ULT_DEADLINE_NOW), ETIMEDOUT);
	CHECK_EQ(ult_sem_timedwait(&s, 0), ETIMEDOUT);
	CHECK_EQ(ult_sem_post(&s), 0);
	CHECK_EQ(ult_sem_timedwait(&s, ULT_DEADLINE_NONE), 0);
	CHECK_EQ(ult_mutex_timedlock(&m, ULT_DEADLINE_NOW), 0);
	CHECK_EQ(ult_mutex_unlock(&m), 0);
	CHECK_EQ(ult_mutex_timedlock(&m, ULT_DEADLINE_NONE), 0);
	CHECK_EQ(ult_mutex_unlock(&m), 0);
	CHECK_EQ(ult_sleep_until(ULT_DEADLINE_NOW), 0);
	CHECK_EQ(pipe(fds), 0);
	/* ult_wait_fd: NOW looks once; NONE and the old 0 wait. */
	CHECK_EQ(ult_wait_fd(fds[0], ULT_IN, ULT_DEADLINE_NOW, &rev),
	    ETIMEDOUT);
	CHECK_EQ(write(fds[1], "x", 1), 1);
	CHECK_EQ(ult_wait_fd(fds[0], ULT_IN, ULT_DEADLINE_NOW, &rev), 0);
	CHECK(rev & ULT_IN);
	CHECK_EQ(ult_wait_fd(fds[0], ULT_IN, ULT_DEADLINE_NONE, &rev), 0);
	CHECK_EQ(ult_wait_fd(fds[0], ULT_IN, 0, &rev), 0);
	CHECK_EQ(ult_close(fds[0]), 0);
	CHECK_EQ(ult_close(fds[1]), 0);
	CHECK_EQ(ult_sem_destroy(&s), 0);
	return (NULL);
}

void
test_deadline_consts(void)
{
	struct timespec ts;
	uint64_t before, after, d;

	CHECK_EQ(ULT_DEADLINE_NONE, UINT64_MAX);
	CHECK(ULT_DEADLINE_NOW != 0 && ULT_DEADLINE_NOW < ult_now());
	CHECK_EQ(ult_init(NULL), 0);
	run_in(deadline_consts, NULL);
	deadline_consts(NULL); /* a foreign thread */
	CHECK_EQ(ult_shutdown(), 0);

	before = ult_now();
	d = ult_after(1000);
	CHECK(d >= before + 1000 && d <= ult_now() + 1000);
	CHECK_EQ(ult_after(UINT64_MAX), ULT_DEADLINE_NONE);
	CHECK_EQ(ult_after(UINT64_MAX - 5), ULT_DEADLINE_NONE);

	CHECK_EQ(ult_deadline_ts(CLOCK_MONOTONIC, NULL), ULT_DEADLINE_NONE);
	ts.tv_sec = 1;
	ts.tv_nsec = 5;
	CHECK_EQ(ult_deadline_ts(CLOCK_MONOTONIC, &ts), ULT_DEADLINE_NOW);
	CHECK_EQ(ult_deadline_ts(CLOCK_REALTIME, &ts), ULT_DEADLINE_NOW);
	ts.tv_nsec = 1000000000;
	CHECK_EQ(ult_deadline_ts(CLOCK_MONOTONIC, &ts), 0);
	ts.tv_nsec = 0;
	CHECK_EQ(ult_deadline_ts(CLOCK_PROCESS_CPUTIME_ID, &ts), 0);
	/* Monotonic: the same time in ns. */
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	ts.tv_sec += 100;
	CHECK_EQ(ult_deadline_ts(CLOCK_MONOTONIC, &ts),
	    (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	/* Realtime: 100 s from the wall clock's now is 100 s from ult_now,
	 * give or take the time these calls took (between the two clocks'
	 * reads, inside and out). */
	before = ult_now();
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &ts), 0);
	ts.tv_sec += 100;
	d = ult_deadline_ts(CLOCK_REALTIME, &ts);
	after = ult_now();
	CHECK(d + (after - before) >= before + 100000000000ull &&
	    d <= after + 100000000000ull);
	ts.tv_sec = (time_t)(UINT64_MAX / 1000000000u);
	CHECK_EQ(ult_deadline_ts(CLOCK_MONOTONIC, &ts), ULT_DEADLINE_NONE);
}

static void *
main_body(void *arg)
{
	struct ult_thread_info in;

	CHECK(ult_self() != NULL);
	CHECK_EQ(ult_thread_info(NULL, &in), 0);
	CHECK_EQ(strcmp(in.name, "main"), 0);
	CHECK_EQ(ult_main(main_body, NULL, NULL), EDEADLK);
	return ((char *)arg + 1);
}

void
test_ult_main(void)
{
	char buf[2];
	void *ret = NULL;

	CHECK_EQ(ult_main(NULL, NULL, NULL), EINVAL);
	/* Not running: started, and stopped again. */
	CHECK_EQ(ult_main(main_body, buf, &ret), 0);
	CHECK(ret == buf + 1);
	CHECK_EQ(ult_ncpu(), 0);
	/* Running: left running. */
	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(ult_main(main_body, buf, NULL), 0);
	CHECK(ult_ncpu() > 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static void *
setclass_self(void *arg)
{
	int cls = -1, prio = -1;

	(void)arg;
	/* prio is checked for every class (rtprio(2)); timeshare ignores
	 * a valid one. */
	CHECK_EQ(ult_setclass(NULL, ULT_CLASS_TIMESHARE, 99), EINVAL);
	CHECK_EQ(ult_setclass(NULL, ULT_CLASS_TIMESHARE, -1), EINVAL);
	CHECK_EQ(ult_setclass(NULL, ULT_CLASS_REALTIME, 32), EINVAL);
	CHECK_EQ(ult_setclass(NULL, ULT_CLASS_IDLE, 5), 0);
	CHECK_EQ(ult_setclass(NULL, ULT_CLASS_TIMESHARE, 7), 0);
	CHECK_EQ(ult_getclass(NULL, &cls, &prio), 0);
	CHECK_EQ(cls, ULT_CLASS_TIMESHARE);
	CHECK_EQ(prio, 0);
	return (NULL);
}

void
test_setclass_timeshare_prio(void)
{
	CHECK_EQ(ult_init(NULL), 0);
	run_in(setclass_self, NULL);
	CHECK_EQ(ult_shutdown(), 0);
}
