/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pthread rwlocks and barriers, and POSIX unnamed semaphores, on ult's
 * sync objects, in glibc's object sizes (DESIGN.md section 14).  The
 * process-shared ones are glibc's (pshared.c).
 */
#include <errno.h>
#include <limits.h>
#include <semaphore.h>
#include <stddef.h>
#include <string.h>

#include "dropin.h"
#include "runtime.h"

/*
 * Rwlocks: ult's, with glibc's kind in glibc's __flags (where its static
 * initializers put it).  Its default kinds prefer readers: a read lock
 * is granted while others read, writers waiting or not (so a thread may
 * take a read lock it holds again); PREFER_WRITER_NONRECURSIVE is ult's
 * own, where new readers wait behind a waiting writer.  A signal handler
 * runs during a wait, which then goes on.
 */
_Static_assert(sizeof(ult_rwlock_t) <=
	offsetof(pthread_rwlock_t, __data.__flags),
    "rwlock");
#define RW(r) ((ult_rwlock_t *)(void *)(r))
#define RW_READER_PREF(r) \
	((r)->__data.__flags != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)

int
pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *a)
{
	int v, kind = PTHREAD_RWLOCK_DEFAULT_NP;

	ult__dropin_up();
	if (a != NULL && pthread_rwlockattr_getpshared(a, &v) == 0 &&
	    v != PTHREAD_PROCESS_PRIVATE)
		return (ult__dropin_ps_rwlock_init(rw, a));
	if (a != NULL)
		(void)pthread_rwlockattr_getkind_np(a, &kind);
	memset(rw, 0, sizeof(*rw));
	rw->__data.__flags = (unsigned)kind;
	return (ult_rwlock_init(RW(rw)));
}

int
pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
	if (ult__dropin_ps_is_rwlock(rw))
		return (ult__dropin_ps_rwlock_destroy(rw));
	/* glibc's checks nothing: one destroyed while held (undefined)
	 * gives 0, as natively. */
	(void)ult_rwlock_destroy(RW(rw));
	return (0);
}

static int
rd_try(pthread_rwlock_t *rw)
{
	int err = ult_rwlock_tryrdlock(RW(rw));

	if (err == EBUSY && RW_READER_PREF(rw))
		err = ult__rwlock_tryrdlock_shared(RW(rw));
	return (err);
}

static int
wr_try(pthread_rwlock_t *rw)
{
	return (ult_rwlock_trywrlock(RW(rw)));
}

static int
rd_fn(void *rw, uint64_t deadline)
{
	(void)deadline;
	return (ult_rwlock_rdlock(rw));
}

static int
wr_fn(void *rw, uint64_t deadline)
{
	(void)deadline;
	return (ult_rwlock_wrlock(rw));
}

int
pthread_rwlock_rdlock(pthread_rwlock_t *rw)
{
	int err;

	ult__dropin_up();
	if (ult__dropin_ps_is_rwlock(rw))
		return (
		    ult__dropin_ps_rwlock_lock(rw, 0, 0, CLOCK_REALTIME, NULL));
	if ((err = rd_try(rw)) != EBUSY)
		return (err);
	/* Blocked behind a writer (that holds it, or that it prefers). */
	err = ult__dropin_lock_wait(rd_fn, RW(rw), UINT64_MAX);
	ult__dropin_after_call();
	return (err);
}

int
pthread_rwlock_wrlock(pthread_rwlock_t *rw)
{
	int err;

	ult__dropin_up();
	if (ult__dropin_ps_is_rwlock(rw))
		return (
		    ult__dropin_ps_rwlock_lock(rw, 1, 0, CLOCK_REALTIME, NULL));
	if ((err = wr_try(rw)) != EBUSY)
		return (err);
	err = ult__dropin_lock_wait(wr_fn, RW(rw), UINT64_MAX);
	ult__dropin_after_call();
	return (err);
}

int
pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	ult__dropin_up();
	if (ult__dropin_ps_is_rwlock(rw))
		return (
		    ult__dropin_ps_rwlock_lock(rw, 0, 1, CLOCK_REALTIME, NULL));
	return (rd_try(rw));
}

int
pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	ult__dropin_up();
	if (ult__dropin_ps_is_rwlock(rw))
		return (
		    ult__dropin_ps_rwlock_lock(rw, 1, 1, CLOCK_REALTIME, NULL));
	return (wr_try(rw));
}

int
pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	if (ult__dropin_ps_is_rwlock(rw))
		return (ult__dropin_ps_rwlock_unlock(rw));
	return (ult_rwlock_unlock(RW(rw)));
}

/* ult's rwlocks have no timed wait: a timed one tries again every
 * millisecond until its deadline, and runs the handlers of signals that
 * come meanwhile. */
static int
rw_timed(pthread_rwlock_t *rw, int (*try)(pthread_rwlock_t *), clockid_t clock,
    const struct timespec *abs)
{
	uint64_t deadline, now;
	int err;

	ult__dropin_up();
	if (ult__dropin_ps_is_rwlock(rw))
		return (ult__dropin_ps_rwlock_lock(rw, try == wr_try, 0, clock,
		    abs));
	if ((err = try(rw)) != EBUSY)
		return (err);
	if ((err = ult__dropin_deadline(clock, abs, &deadline)) != 0)
		return (err);
	for (;;) {
		if ((err = try(rw)) != EBUSY)
			return (err);
		if ((now = ult__now()) >= deadline)
			return (ETIMEDOUT);
		ult_sleep_until(
		    deadline - now > 1000000 ? now + 1000000 : deadline);
		ult__dropin_after_call();
	}
}

int
pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clock,
    const struct timespec *abs)
{
	return (rw_timed(rw, rd_try, clock, abs));
}

int
pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clock,
    const struct timespec *abs)
{
	return (rw_timed(rw, wr_try, clock, abs));
}

int
pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abs)
{
	return (rw_timed(rw, rd_try, CLOCK_REALTIME, abs));
}

int
pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abs)
{
	return (rw_timed(rw, wr_try, CLOCK_REALTIME, abs));
}

/* Barriers. */
_Static_assert(sizeof(ult_barrier_t) <= sizeof(pthread_barrier_t), "barrier");
_Static_assert(PTHREAD_BARRIER_SERIAL_THREAD == ULT_BARRIER_SERIAL_THREAD,
    "barrier serial");
#define BAR(b) ((ult_barrier_t *)(void *)(b))

int
pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
    unsigned count)
{
	int v;

	ult__dropin_up();
	if (a != NULL && pthread_barrierattr_getpshared(a, &v) == 0 &&
	    v != PTHREAD_PROCESS_PRIVATE)
		return (ult__dropin_ps_barrier_init(b, a, count));
	if (count > INT_MAX)
		return (EINVAL);
	/* No mark of pshared.c's left from an earlier life. */
	memset(b, 0, sizeof(*b));
	return (ult_barrier_init(BAR(b), count));
}

int
pthread_barrier_destroy(pthread_barrier_t *b)
{
	int err;

	if (ult__dropin_ps_is_barrier(b))
		return (ult__dropin_ps_barrier_destroy(b));
	/* As glibc's: no EBUSY, it waits until the round in progress has
	 * ended and its arrivals have left (some may be in a signal
	 * handler).  POSIX allows either; the program's tests may tell
	 * them apart. */
	for (int i = 0; (err = ult_barrier_destroy(BAR(b))) == EBUSY; i++) {
		if (i < 16)
			ult_yield();
		else
			(void)ult_sleep_until(ult__now() + 1000000);
		ult__dropin_after_call();
	}
	return (err);
}

int
pthread_barrier_wait(pthread_barrier_t *b)
{
	unsigned round = 0;
	int err, again = 0;

	ult__dropin_up();
	if (ult__dropin_ps_is_barrier(b))
		return (ult__dropin_ps_barrier_wait(b));
	/* Not a cancellation point, nor ended by a signal: a handler runs
	 * with the thread still arrived, and its wait then goes on, unless
	 * the barrier filled meanwhile (POSIX). */
	ult__dropin_intr_begin();
	while ((err = ult__barrier_wait_intr(BAR(b), &round, again)) == EINTR) {
		ult__dropin_intr_end();
		ult__dropin_after_wait();
		ult__dropin_async_now();
		ult__dropin_intr_begin();
		again = 1;
	}
	ult__dropin_intr_end();
	return (err);
}

/*
 * Semaphores.  sem_init marks its sem_t; one without the mark is glibc's
 * (process-shared, or from sem_open, which zeroes that part): a uthread
 * waits on it as pshared.c says.
 */
struct dp_sem {
	ult_sem_t s;
	uint64_t spare;
	uint64_t mark;
};
_Static_assert(sizeof(struct dp_sem) == sizeof(sem_t), "sem_t");
#define SEM_MARK 0x6d65732d746c75ull /* "ult-sem" */
#define DS(s) ((struct dp_sem *)(void *)(s))

static int
posix(int err)
{
	if (err == 0)
		return (0);
	errno = err;
	return (-1);
}

static int
ours(sem_t *s)
{
	return (s != NULL && DS(s)->mark == SEM_MARK);
}

#define GLIBC_SEM(name, ...)                                                 \
	do {                                                                 \
		static void *_Atomic slot;                                   \
		return (((__typeof__(&name))ult__dropin_next(#name, &slot))( \
		    __VA_ARGS__));                                           \
	} while (0)

int
sem_init(sem_t *s, int pshared, unsigned value)
{
	ult__dropin_up();
	if (value > SEM_VALUE_MAX)
		return (posix(EINVAL));
	if (pshared)
		return (ult__dropin_ps_sem_init(s, value));
	memset(s, 0, sizeof(*s));
	DS(s)->mark = SEM_MARK;
	return (posix(ult_sem_init(&DS(s)->s, value)));
}

int
sem_destroy(sem_t *s)
{
	if (!ours(s))
		GLIBC_SEM(sem_destroy, s);
	return (posix(ult_sem_destroy(&DS(s)->s)));
}

static int
sem_fn(void *s, uint64_t deadline)
{
	return (deadline == UINT64_MAX ? ult_sem_wait(s)
				       : ult_sem_timedwait(s, deadline));
}

/* A wait that took its token acts on no cancel (the token would be
 * lost): the next cancellation point does. */
static int
sem_wait_until(sem_t *s, uint64_t deadline)
{
	/* A handler ends the wait with EINTR; sem_wait alone is restarted
	 * after one with SA_RESTART, as the kernel restarts an untimed
	 * futex wait. */
	int err = ult__dropin_wait_intr(sem_fn, &DS(s)->s, deadline,
	    deadline == UINT64_MAX);

	if (err == 0)
		ult__dropin_after_wait();
	else
		ult__dropin_point();
	return (posix(err));
}

int
sem_wait(sem_t *s)
{
	ult__dropin_up();
	if (!ours(s))
		return (ult__dropin_ps_sem_wait(s, 0, CLOCK_REALTIME, NULL));
	ult__dropin_point();
	return (sem_wait_until(s, UINT64_MAX));
}

int
sem_trywait(sem_t *s)
{
	if (!ours(s))
		return (ult__dropin_ps_sem_wait(s, 1, CLOCK_REALTIME, NULL));
	return (posix(ult_sem_trywait(&DS(s)->s)));
}

int
sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abs)
{
	uint64_t deadline;
	int err;

	ult__dropin_up();
	if (!ours(s))
		return (ult__dropin_ps_sem_wait(s, 0, clock, abs));
	ult__dropin_point();
	if ((err = ult_sem_trywait(&DS(s)->s)) != EAGAIN)
		return (posix(err));
	if ((err = ult__dropin_deadline(clock, abs, &deadline)) != 0)
		return (posix(err));
	/* A deadline that far is still a deadline, not none. */
	return (sem_wait_until(s,
	    deadline == UINT64_MAX ? deadline - 1 : deadline));
}

int
sem_timedwait(sem_t *s, const struct timespec *abs)
{
	return (sem_clockwait(s, CLOCK_REALTIME, abs));
}

int
sem_post(sem_t *s)
{
	int err;

	if (!ours(s))
		return (ult__dropin_ps_sem_post(s));
	err = ult_sem_post(&DS(s)->s);
	ult__dropin_after_call();
	return (posix(err));
}

int
sem_getvalue(sem_t *s, int *v)
{
	if (!ours(s))
		GLIBC_SEM(sem_getvalue, s, v);
	return (posix(ult_sem_getvalue(&DS(s)->s, v)));
}
