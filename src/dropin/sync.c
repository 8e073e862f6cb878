/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pthread mutexes, condition variables, spinlocks and once on ult's sync
 * objects, in glibc's own object sizes (DESIGN.md section 14).  A
 * pthread_mutex_t holds an ult_mutex_t in its first 16 bytes, and keeps
 * glibc's __kind word where glibc's static initializers put the type
 * (PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP and the others), so that all
 * of them, and zeroed memory, are valid mutexes without an init call.
 * Priority propagation is always on (ult's mutexes lend priority), which
 * is what PTHREAD_PRIO_INHERIT asks for.  Robust and priority-ceiling
 * mutexes are the drop-in's too (robust.c); process-shared mutexes and
 * condition variables are glibc's (pshared.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "arch/cpu.h"
#include "dropin.h"
#include "runtime.h"

_Static_assert(sizeof(struct dp_mutex) == sizeof(pthread_mutex_t),
    "pthread_mutex_t size");
_Static_assert(offsetof(struct dp_mutex, kind) ==
	offsetof(pthread_mutex_t, __data.__kind),
    "pthread_mutex_t kind");

struct dp_cond {
	ult_cond_t c;
	int clock; /* CLOCK_REALTIME (0, the zeroed default) or MONOTONIC */
	int spare[7];
};
_Static_assert(sizeof(struct dp_cond) == sizeof(pthread_cond_t),
    "pthread_cond_t size");
/* glibc's __wrefs, whose bit 0 marks its process-shared ones, is spare
 * in the drop-in's own (pshared.c). */
_Static_assert(offsetof(pthread_cond_t, __data.__wrefs) >=
	offsetof(struct dp_cond, spare),
    "pthread_cond_t __wrefs");

#define DM(m) ((struct dp_mutex *)(void *)(m))
#define DC(c) ((struct dp_cond *)(void *)(c))

static int
type(const struct dp_mutex *m)
{
	return (m->kind & 3);
}

static int
owned(struct dp_mutex *m)
{
	uintptr_t fid = ult__dropin_fork_id();

	return (ult__mutex_owned(&m->m, ult__sync_self_id()) ||
	    (fid != 0 && ult__mutex_owned(&m->m, fid)));
}

/* m has just been taken: a robust one may say more. */
static int
taken(struct dp_mutex *m)
{
	if (__builtin_expect(m->kind & DP_GL_ROBUST, 0))
		return (ult__dropin_robust_taken(m));
	return (0);
}

#define PSHARED(m) __builtin_expect(((m)->kind & DP_GL_PSHARED) != 0, 0)

int
pthread_mutex_init(pthread_mutex_t *pm, const pthread_mutexattr_t *a)
{
	struct dp_mutex *m = DM(pm);
	int t, v, err;

	ult__dropin_up();
	if (a != NULL && pthread_mutexattr_getpshared(a, &v) == 0 &&
	    v != PTHREAD_PROCESS_PRIVATE)
		return (ult__dropin_ps_mutex_init(pm, a));
	if ((err = ult__dropin_mutex_attrs(a, &t)) != 0)
		return (err);
	memset(m, 0, sizeof(*m));
	ult_mutex_init(&m->m);
	m->kind = t;
	return (0);
}

int
pthread_mutex_destroy(pthread_mutex_t *pm)
{
	if (PSHARED(DM(pm)))
		return (ult__dropin_ps_mutex_destroy(pm));
	return (ult_mutex_destroy(&DM(pm)->m));
}

/*
 * A default (normal) mutex relocked by its owner deadlocks, as POSIX
 * says; ult's mutexes would say EDEADLK, which a program that does not
 * expect an error would take for success.  It is said once on stderr,
 * since nothing else will show why the thread hangs.
 */
static int
self_deadlock(struct dp_mutex *m)
{
	static int said;

	if (type(m) == PTHREAD_MUTEX_ERRORCHECK)
		return (EDEADLK);
	if (!ULT_PXCHG(&said, 1))
		fprintf(stderr,
		    "ult-run: a thread locked a default mutex it "
		    "holds: it waits forever, as POSIX says\n");
	/* As in glibc's futex wait: handlers run meanwhile, and an
	 * asynchronous cancel ends it (not a deferred one: no
	 * cancellation point). */
	for (;;) {
		ult__dropin_intr_begin();
		(void)ult_sleep_until(UINT64_MAX);
		ult__dropin_intr_end();
		if (ult__dropin_self() != NULL)
			ult__dropin_signals(ult__dropin_self());
		ult__dropin_async_now();
	}
}

static int
relock(struct dp_mutex *m, int err)
{
	if (err != EDEADLK)
		return (err);
	if (type(m) == PTHREAD_MUTEX_RECURSIVE) {
		if (m->depth == UINT32_MAX)
			return (EAGAIN);
		m->depth++;
		return (0);
	}
	return (self_deadlock(m));
}

/* A lock wait where handlers run, and then the wait goes on (POSIX). */
static int
lock_fn(void *m, uint64_t deadline)
{
	return (deadline == UINT64_MAX ? ult_mutex_lock(m)
				       : ult_mutex_timedlock(m, deadline));
}

int
pthread_mutex_lock(pthread_mutex_t *pm)
{
	struct dp_mutex *m = DM(pm);
	int err;

	ult__dropin_up();
	if (PSHARED(m))
		return (ult__dropin_ps_mutex_lock(pm, 0, CLOCK_REALTIME, NULL));
	/* The lock checker sees the blocking call, for its order. */
	if (__builtin_expect(!ult__witness_on, 1) &&
	    __builtin_expect(ult_mutex_trylock(&m->m) == 0, 1))
		return (taken(m));
	if ((err = ult__dropin_lock_wait(lock_fn, &m->m, UINT64_MAX)) == 0) {
		err = taken(m);
		ult__dropin_after_call(); /* it may have slept */
		return (err);
	}
	return (relock(m, err));
}

int
pthread_mutex_trylock(pthread_mutex_t *pm)
{
	struct dp_mutex *m = DM(pm);
	int err;

	ult__dropin_up();
	if (PSHARED(m))
		return (ult__dropin_ps_mutex_lock(pm, 1, CLOCK_REALTIME, NULL));
	if ((err = ult_mutex_trylock(&m->m)) == 0)
		return (taken(m));
	if (err == EBUSY && type(m) == PTHREAD_MUTEX_RECURSIVE && owned(m))
		return (relock(m, EDEADLK));
	return (err);
}

int
pthread_mutex_clocklock(pthread_mutex_t *pm, clockid_t clock,
    const struct timespec *abs)
{
	struct dp_mutex *m = DM(pm);
	uint64_t deadline;
	int err;

	ult__dropin_up();
	if (PSHARED(m))
		return (ult__dropin_ps_mutex_lock(pm, 0, clock, abs));
	/* POSIX: no check of the time when the mutex is free. */
	if ((err = ult_mutex_trylock(&m->m)) == 0)
		return (taken(m));
	if (owned(m) && type(m) != PTHREAD_MUTEX_NORMAL &&
	    type(m) != PTHREAD_MUTEX_ADAPTIVE_NP)
		return (relock(m, EDEADLK));
	if ((err = ult__dropin_deadline(clock, abs, &deadline)) != 0)
		return (err);
	/* The owner of a default mutex waits for its deadline, as glibc's
	 * does, since nobody else will unlock it. */
	if (owned(m)) {
		while (ult_sleep_until(deadline) == EINTR)
			;
		return (ETIMEDOUT);
	}
	if ((err = ult__dropin_lock_wait(lock_fn, &m->m, deadline)) == 0)
		return (taken(m));
	return (relock(m, err));
}

int
pthread_mutex_timedlock(pthread_mutex_t *pm, const struct timespec *abs)
{
	return (pthread_mutex_clocklock(pm, CLOCK_REALTIME, abs));
}

/* glibc's normal (default) and adaptive mutexes check no owner at
 * unlock: another thread's unlock releases one, and programs (and
 * conformance suites) count on it.  Error-checking, recursive, robust
 * and ceiling ones say EPERM, as glibc's do. */
static int
unchecked(const struct dp_mutex *m)
{
	return ((type(m) == PTHREAD_MUTEX_NORMAL ||
		    type(m) == PTHREAD_MUTEX_ADAPTIVE_NP) &&
	    !(m->kind & (DP_GL_ROBUST | DP_GL_PP)));
}

/* Released for its owner, whose lent priority goes back; unlocked, it
 * stays so (glibc's answer is 0 either way). */
static int
unlock_for_owner(struct dp_mutex *m)
{
	uintptr_t owner;

	for (;;) {
		if ((owner = ult__mutex_owner(&m->m)) == 0)
			return (0);
		ult__mutex_flush_deferred(&m->m, owner);
		if (ult__mutex_unlock_locked(&m->m, owner) == 0)
			return (0);
	}
}

int
pthread_mutex_unlock(pthread_mutex_t *pm)
{
	struct dp_mutex *m = DM(pm);
	uintptr_t fid;
	int err;

	if (PSHARED(m))
		return (ult__dropin_ps_mutex_unlock(pm));
	if (m->depth != 0 && type(m) == PTHREAD_MUTEX_RECURSIVE && owned(m)) {
		m->depth--;
		return (0);
	}
	if (__builtin_expect(m->kind & DP_GL_ROBUST, 0) && owned(m))
		ult__dropin_robust_release(m);
	/* In a fork child, the forking thread still owns what it held. */
	if ((err = ult_mutex_unlock(&m->m)) == EPERM &&
	    (fid = ult__dropin_fork_id()) != 0 && ult__mutex_owned(&m->m, fid))
		err = ult__mutex_unlock_locked(&m->m, fid);
	if (err == EPERM && unchecked(m))
		err = unlock_for_owner(m);
	/* Signals queued on a thread that waits nowhere: a call that
	 * returns from the runtime is a safe point to run their handlers. */
	ult__dropin_after_call();
	return (err);
}

int
pthread_mutex_consistent(pthread_mutex_t *pm)
{
	if (PSHARED(DM(pm)))
		return (ult__dropin_ps_mutex_consistent(pm));
	return (ult__dropin_robust_consistent(DM(pm)));
}

/* Condition variables. */

int
pthread_cond_init(pthread_cond_t *pc, const pthread_condattr_t *a)
{
	struct dp_cond *c = DC(pc);
	clockid_t clock = CLOCK_REALTIME;
	int v;

	ult__dropin_up();
	if (a != NULL) {
		if (pthread_condattr_getclock(a, &clock) != 0)
			return (EINVAL);
		if (pthread_condattr_getpshared(a, &v) == 0 &&
		    v != PTHREAD_PROCESS_PRIVATE)
			return (ult__dropin_ps_cond_init(pc, a));
	}
	memset(c, 0, sizeof(*c));
	ult_cond_init(&c->c);
	c->clock = clock;
	return (0);
}

int
pthread_cond_destroy(pthread_cond_t *pc)
{
	if (ult__dropin_ps_is_cond(pc))
		return (ult__dropin_ps_cond_destroy(pc));
	/* As glibc's: no EBUSY, it waits for the waiters to be woken (the
	 * woken no longer touch it: their waker counted them out).  POSIX
	 * allows either; the program's tests may tell them apart. */
	for (int i = 0; ult_cond_destroy(&DC(pc)->c) == EBUSY; i++) {
		if (i < 16)
			ult_yield();
		else
			(void)ult_sleep_until(ult__now() + 1000000);
		ult__dropin_after_call(); /* a waiter takes its signals */
	}
	return (0);
}

/* A recursive mutex is released fully for the wait and taken back to
 * the same depth. */
static int
wait(struct dp_cond *c, struct dp_mutex *m, uint64_t deadline)
{
	unsigned depth = m->depth;
	int err;

	ult__dropin_point();
	if (depth != 0 && !owned(m))
		return (EPERM);
	m->depth = 0;
	ult__dropin_intr_begin();
	err = deadline == UINT64_MAX
	    ? ult_cond_wait(&c->c, &m->m)
	    : ult_cond_timedwait(&c->c, &m->m, deadline);
	ult__dropin_intr_end();
	m->depth = depth;
	/* Interrupted: the mutex is held again, as a cancelled waiter's
	 * cleanup handlers expect; otherwise a spurious wakeup.  A waiter
	 * that was signalled returns, and takes a cancel at its next point:
	 * the wakeup it consumed is not lost. */
	if (err == 0) {
		ult__dropin_after_wait();
		return (0);
	}
	if (err == EINTR)
		err = 0;
	ult__dropin_point();
	return (err);
}

int
pthread_cond_wait(pthread_cond_t *pc, pthread_mutex_t *pm)
{
	ult__dropin_up();
	if (ult__dropin_ps_is_cond(pc) || PSHARED(DM(pm)))
		return (ult__dropin_ps_is_cond(pc)
			? ult__dropin_ps_cond_wait(pc, pm, 0, NULL)
			: EINVAL);
	return (wait(DC(pc), DM(pm), UINT64_MAX));
}

int
pthread_cond_clockwait(pthread_cond_t *pc, pthread_mutex_t *pm, clockid_t clock,
    const struct timespec *abs)
{
	uint64_t deadline;
	int err;

	ult__dropin_up();
	if (ult__dropin_ps_is_cond(pc) || PSHARED(DM(pm)))
		return (ult__dropin_ps_is_cond(pc)
			? ult__dropin_ps_cond_wait(pc, pm, clock, abs)
			: EINVAL);
	if ((err = ult__dropin_deadline(clock, abs, &deadline)) != 0)
		return (err);
	if (deadline == UINT64_MAX)
		deadline--;
	return (wait(DC(pc), DM(pm), deadline));
}

int
pthread_cond_timedwait(pthread_cond_t *pc, pthread_mutex_t *pm,
    const struct timespec *abs)
{
	if (ult__dropin_ps_is_cond(pc))
		return (ult__dropin_ps_cond_timedwait(pc, pm, abs));
	return (pthread_cond_clockwait(pc, pm, DC(pc)->clock, abs));
}

int
pthread_cond_signal(pthread_cond_t *pc)
{
	int err;

	ult__dropin_up();
	if (ult__dropin_ps_is_cond(pc))
		return (ult__dropin_ps_cond_wake(pc, 0));
	err = ult_cond_signal(&DC(pc)->c);
	ult__dropin_after_call();
	return (err);
}

int
pthread_cond_broadcast(pthread_cond_t *pc)
{
	int err;

	ult__dropin_up();
	if (ult__dropin_ps_is_cond(pc))
		return (ult__dropin_ps_cond_wake(pc, 1));
	err = ult_cond_broadcast(&DC(pc)->c);
	ult__dropin_after_call();
	return (err);
}

/* Spinlocks: a holder may be switched out, so a waiter spins a little,
 * then yields its worker to whatever else can run (the holder, maybe). */

int
pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
	(void)pshared;
	*s = 0;
	return (0);
}

int
pthread_spin_destroy(pthread_spinlock_t *s)
{
	(void)s;
	return (0);
}

int
pthread_spin_trylock(pthread_spinlock_t *s)
{
	int z = 0;

	return (ULT_PCAS_ACQ(s, &z, 1) ? 0 : EBUSY);
}

int
pthread_spin_lock(pthread_spinlock_t *s)
{
	ult__dropin_up();
	for (;;) {
		for (int i = 0; i < 64; i++) {
			if (ULT_PLD(s) == 0 && pthread_spin_trylock(s) == 0)
				return (0);
			ult__cpu_relax();
		}
		ult_yield();
		ult__dropin_after_call(); /* a spinner takes its signals */
	}
}

int
pthread_spin_unlock(pthread_spinlock_t *s)
{
	ULT_PST_REL(s, 0);
	return (0);
}

/*
 * pthread_once: an int, PTHREAD_ONCE_INIT 0, then RUNNING, then DONE.  A
 * routine that is cancelled leaves it at 0, as if never called (POSIX),
 * so the next caller runs its routine; callers that find it RUNNING wait
 * on one condition variable for all controls (a once is contended only at
 * a program's start).
 */
enum {
	ONCE_RUNNING = 1,
	ONCE_DONE = 2
};
static ult_mutex_t once_mx = ULT_MUTEX_INITIALIZER;
static ult_cond_t once_cv = ULT_COND_INITIALIZER;

/* A fork child: a thread of the parent may have held the lock. */
void
ult__dropin_once_fork_child(void)
{
	ult_mutex_init(&once_mx);
	ult_cond_init(&once_cv);
}

static void
once_settle(pthread_once_t *o, int v)
{
	ult_mutex_lock(&once_mx);
	ULT_PST_REL(o, v);
	ult_cond_broadcast(&once_cv);
	ult_mutex_unlock(&once_mx);
}

static void
once_cancelled(void *o)
{
	once_settle(o, 0);
}

int
pthread_once(pthread_once_t *o, void (*fn)(void))
{
	int v;

	ult__dropin_up();
	for (;;) {
		if ((v = ULT_PLD_ACQ(o)) == ONCE_DONE)
			return (0);
		if (v == 0 && ULT_PCAS_ACQREL_ACQ(o, &v, ONCE_RUNNING))
			break;
		ult_mutex_lock(&once_mx);
		while (ULT_PLD_ACQ(o) == ONCE_RUNNING)
			ult_cond_wait(&once_cv, &once_mx);
		ult_mutex_unlock(&once_mx);
	}
	pthread_cleanup_push(once_cancelled, o);
	fn();
	pthread_cleanup_pop(0);
	once_settle(o, ONCE_DONE);
	return (0);
}
