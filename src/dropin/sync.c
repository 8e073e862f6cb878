/*
 * pthread mutexes, condition variables, spinlocks and once on ult's sync
 * objects, in glibc's own object sizes (DESIGN.md section 14).  A
 * pthread_mutex_t holds an ult_mutex_t in its first 16 bytes, and keeps
 * glibc's __kind word where glibc's static initializers put the type
 * (PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP and the others), so that all
 * of them, and zeroed memory, are valid mutexes without an init call.
 * Priority propagation is always on (ult's mutexes lend priority), which
 * is what PTHREAD_PRIO_INHERIT asks for; robust, priority-ceiling and
 * process-shared mutexes are refused with ENOTSUP.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dropin.h"
#include "sync/sync.h"

struct dp_mutex {
	ult_mutex_t m;
	int kind; /* glibc's __kind: PTHREAD_MUTEX_* */
	int spare;
	unsigned depth; /* recursive: locks beyond the first */
	unsigned spare2;
	uint64_t spare3;
};
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

int
pthread_mutex_init(pthread_mutex_t *pm, const pthread_mutexattr_t *a)
{
	struct dp_mutex *m = DM(pm);
	int t = PTHREAD_MUTEX_DEFAULT, v;

	ult__dropin_up();
	if (a != NULL) {
		if (pthread_mutexattr_gettype(a, &t) != 0)
			return (EINVAL);
		if ((pthread_mutexattr_getrobust(a, &v) == 0 &&
			v != PTHREAD_MUTEX_STALLED) ||
		    (pthread_mutexattr_getprotocol(a, &v) == 0 &&
			v == PTHREAD_PRIO_PROTECT) ||
		    (pthread_mutexattr_getpshared(a, &v) == 0 &&
			v != PTHREAD_PROCESS_PRIVATE))
			return (ENOTSUP);
	}
	memset(m, 0, sizeof(*m));
	ult_mutex_init(&m->m);
	m->kind = t;
	return (0);
}

int
pthread_mutex_destroy(pthread_mutex_t *pm)
{
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
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		fprintf(stderr,
		    "ult-run: a thread locked a default mutex it "
		    "holds: it waits forever, as POSIX says\n");
	for (;;)
		ult_sleep_until(UINT64_MAX);
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

int
pthread_mutex_lock(pthread_mutex_t *pm)
{
	struct dp_mutex *m = DM(pm);
	int err;

	ult__dropin_up();
	if (__builtin_expect((err = ult_mutex_lock(&m->m)) == 0, 1))
		return (0);
	return (relock(m, err));
}

int
pthread_mutex_trylock(pthread_mutex_t *pm)
{
	struct dp_mutex *m = DM(pm);
	int err;

	ult__dropin_up();
	if ((err = ult_mutex_trylock(&m->m)) == 0)
		return (0);
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
	/* POSIX: no check of the time when the mutex is free. */
	if ((err = ult_mutex_trylock(&m->m)) == 0)
		return (0);
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
	return (relock(m, ult_mutex_timedlock(&m->m, deadline)));
}

int
pthread_mutex_timedlock(pthread_mutex_t *pm, const struct timespec *abs)
{
	return (pthread_mutex_clocklock(pm, CLOCK_REALTIME, abs));
}

int
pthread_mutex_unlock(pthread_mutex_t *pm)
{
	struct dp_mutex *m = DM(pm);
	uintptr_t fid;
	int err;

	if (m->depth != 0 && type(m) == PTHREAD_MUTEX_RECURSIVE && owned(m)) {
		m->depth--;
		return (0);
	}
	if ((err = ult_mutex_unlock(&m->m)) == EPERM &&
	    (fid = ult__dropin_fork_id()) != 0 && ult__mutex_owned(&m->m, fid))
		err = ult__mutex_unlock_locked(&m->m, fid);
	return (err);
}

int
pthread_mutex_consistent(pthread_mutex_t *pm)
{
	(void)pm;
	return (EINVAL); /* no robust mutexes */
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
			return (ENOTSUP);
	}
	memset(c, 0, sizeof(*c));
	ult_cond_init(&c->c);
	c->clock = clock;
	return (0);
}

int
pthread_cond_destroy(pthread_cond_t *pc)
{
	return (ult_cond_destroy(&DC(pc)->c));
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
	return (wait(DC(pc), DM(pm), UINT64_MAX));
}

int
pthread_cond_clockwait(pthread_cond_t *pc, pthread_mutex_t *pm, clockid_t clock,
    const struct timespec *abs)
{
	uint64_t deadline;
	int err;

	ult__dropin_up();
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
	return (pthread_cond_clockwait(pc, pm, DC(pc)->clock, abs));
}

int
pthread_cond_signal(pthread_cond_t *pc)
{
	ult__dropin_up();
	return (ult_cond_signal(&DC(pc)->c));
}

int
pthread_cond_broadcast(pthread_cond_t *pc)
{
	ult__dropin_up();
	return (ult_cond_broadcast(&DC(pc)->c));
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

	return (__atomic_compare_exchange_n(s, &z, 1, 0, __ATOMIC_ACQUIRE,
		    __ATOMIC_RELAXED)
		? 0
		: EBUSY);
}

int
pthread_spin_lock(pthread_spinlock_t *s)
{
	ult__dropin_up();
	for (;;) {
		for (int i = 0; i < 64; i++) {
			if (__atomic_load_n(s, __ATOMIC_RELAXED) == 0 &&
			    pthread_spin_trylock(s) == 0)
				return (0);
			__builtin_ia32_pause();
		}
		ult_yield();
	}
}

int
pthread_spin_unlock(pthread_spinlock_t *s)
{
	__atomic_store_n(s, 0, __ATOMIC_RELEASE);
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

static void
once_settle(pthread_once_t *o, int v)
{
	ult_mutex_lock(&once_mx);
	__atomic_store_n(o, v, __ATOMIC_RELEASE);
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
		if ((v = __atomic_load_n(o, __ATOMIC_ACQUIRE)) == ONCE_DONE)
			return (0);
		if (v == 0 &&
		    __atomic_compare_exchange_n(o, &v, ONCE_RUNNING, 0,
			__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
		ult_mutex_lock(&once_mx);
		while (__atomic_load_n(o, __ATOMIC_ACQUIRE) == ONCE_RUNNING)
			ult_cond_wait(&once_cv, &once_mx);
		ult_mutex_unlock(&once_mx);
	}
	pthread_cleanup_push(once_cancelled, o);
	fn();
	pthread_cleanup_pop(0);
	once_settle(o, ONCE_DONE);
	return (0);
}
