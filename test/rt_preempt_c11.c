/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * C11 mtx_* hold off preemption like pthread mutexes.  A file of its own:
 * it cannot include the runtime's headers (their spin lock has the same
 * names), so the count comes through lock_count().
 */
#include <threads.h>
#include <time.h>

#include "rt_preempt_locks.h"
#include "test.h"

static mtx_t cm, rec;

void
c11_lock_init(void)
{
	CHECK_EQ(mtx_init(&cm, mtx_timed), thrd_success);
	CHECK_EQ(mtx_init(&rec, mtx_recursive), thrd_success);
}

void
c11_lock_hold(int on)
{
	if (on)
		CHECK_EQ(mtx_lock(&cm), thrd_success);
	else
		CHECK_EQ(mtx_unlock(&cm), thrd_success);
}

/* cm is held by another thread. */
void
c11_failed_attempts(void)
{
	struct timespec ts;

	CHECK_EQ(timespec_get(&ts, TIME_UTC), TIME_UTC);
	ts.tv_sec -= 1;
	CHECK_EQ(mtx_trylock(&cm), thrd_busy);
	CHECK_EQ(mtx_timedlock(&cm, &ts), thrd_timedout);
	CHECK_EQ(lock_count(), 0);
}

void
c11_lock_checks(void)
{
	struct timespec ts;

	CHECK_EQ(timespec_get(&ts, TIME_UTC), TIME_UTC);
	ts.tv_sec -= 1;
	CHECK_EQ(mtx_lock(&cm), thrd_success);
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(mtx_unlock(&cm), thrd_success);
	CHECK_EQ(mtx_trylock(&cm), thrd_success);
	CHECK_EQ(mtx_unlock(&cm), thrd_success);
	CHECK_EQ(mtx_timedlock(&cm, &ts), thrd_success); /* free: taken */
	CHECK_EQ(lock_count(), 1);
	CHECK_EQ(mtx_unlock(&cm), thrd_success);
	CHECK_EQ(mtx_lock(&rec), thrd_success);
	CHECK_EQ(mtx_trylock(&rec), thrd_success);
	CHECK_EQ(lock_count(), 2);
	CHECK_EQ(mtx_unlock(&rec), thrd_success);
	CHECK_EQ(mtx_unlock(&rec), thrd_success);
	CHECK_EQ(mtx_unlock(&rec), thrd_error); /* not held */
	CHECK_EQ(lock_count(), 0);
}

void
c11_hold(void (*fn)(void))
{
	CHECK_EQ(mtx_lock(&cm), thrd_success);
	fn();
	CHECK_EQ(mtx_unlock(&cm), thrd_success);
}

void
test_preempt_hold_mtx(void)
{
	hold_under_preemption(HOLD_C11);
}
