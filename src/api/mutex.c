/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Mutexes.  The word holds the owner's id (waiter.h) and MTX_CONTESTED,
 * set while the mutex's turnstile has waiters, so that unlock takes the
 * slow path exactly when somebody must be woken.  Lock and unlock are one
 * compare-and-swap each when there is no contention.
 *
 * Release policy.  Unlock wakes the best waiter.  By default it does not
 * hand the mutex over: the word is released, and a running thread may take
 * it before the woken one runs (barging).  That keeps a mutex that is
 * released and re-taken in a loop from costing a context switch per
 * acquisition (a lock convoy).  Two cases hand over directly instead
 * (the woken thread returns as the owner): a waiter with a better
 * priority than the releaser's own, so a priority inversion ends at the
 * unlock; and a waiter that was woken once already and lost the race, so
 * no waiter is overtaken more than once.
 *
 * Deferred wakeups (wait morphing).  A condition variable signalled by
 * the owner of the mutex its waiter will take again does not wake the
 * waiter at once: woken, it would run into the mutex its waker still
 * holds and block again (on one worker it even preempted the waker to do
 * so).  The waiter is parked on the mutex instead, in _spare, a list only
 * the owner touches, and MTX_DEFERRED makes the owner's unlock take the
 * slow path, which wakes the list once the mutex is free (FreeBSD's
 * libthr does the same with PMUTEX_FLAG_DEFERRED).
 */
#include <errno.h>

#include "../arch/cpu.h"
#include "sync.h"

#define MTX_CONTESTED ((uintptr_t)1)
/* Bit 1 belongs to the owner id (SYNC_ID_FOREIGN). */
#define MTX_DEFERRED ((uintptr_t)4)
#define MTX_OWNER(v) ((v) & ~(MTX_CONTESTED | MTX_DEFERRED))

/*
 * Adaptive spinning, as FreeBSD's adaptive mutexes and Solaris's: a
 * waiter spins only while the owner runs, which here means the owner is
 * the current uthread of a worker (oncpu names it) whose kernel thread
 * is on a CPU.  The kernel does not say that cheaply; what the runtime
 * knows is whether the worker is blocked in the kernel (handoff.c) and
 * whether the host has lately kept it waiting for a CPU (steal.c): either
 * one, or the same about the spinner's own worker, and the waiter sleeps
 * at once.  A spin is bounded besides: SYNC_SPINS pauses (10-50 us), and
 * it stops when the spinner finds its own clock jumped by SYNC_GAP_NS,
 * i.e. it was descheduled itself.
 */
#define SYNC_SPINS 256
#define SYNC_GAP_NS 20000u

static int
worker_runs(int cpu)
{
	const struct ult__worker *w = &ult__rt.workers[cpu];

	return (!ULT_LD(&w->stolen) && !ULT_LD(&w->blocked));
}

/* o NULL (a foreign owner): nothing is known, and the bound decides. */
static int
owner_runs(struct ult_thread *o)
{
	int on;

	if (o == NULL)
		return (1);
	on = ULT_LD(&o->oncpu);
	return (on != 0 && worker_runs(on - 1));
}

int
ult__sync_spin(const uintptr_t *word, uintptr_t seen, uintptr_t owner)
{
	struct ult_thread *o = ult__sync_id_thread(owner);
	struct ult__worker *self = ult__worker_self();
	uint64_t last;

	if (!owner_runs(o) || (self != NULL && !worker_runs(self->id)))
		return (0);
	last = ult__now();
	for (int i = 1; i <= SYNC_SPINS; i++) {
		ult__cpu_relax();
		if (ULT_PLD(word) != seen)
			return (1);
		if (!owner_runs(o))
			return (0);
		if (i % 16 == 0) {
			uint64_t now = ult__now();

			if (now - last > SYNC_GAP_NS)
				return (0);
			last = now;
		}
	}
	return (0);
}

int
ult_mutex_init(ult_mutex_t *m)
{
	if (m == NULL)
		return (EINVAL);
	ULT_PST(&m->_word, 0);
	m->_spare = 0;
	return (0);
}

static int
mtx_destroy_(ult_mutex_t *m)
{
	if (m == NULL)
		return (EINVAL);
	return (ULT_PLD_ACQ(&m->_word) != 0 ? EBUSY : 0);
}

static int
own_pri(uintptr_t self)
{
	struct ult_thread *ut = ult__sync_id_thread(self);

	return (ut != NULL ? ULT_PLD(&ut->td.td_user_pri) : SYNC_PRI_FOREIGN);
}

static int
lock_slow(ult_mutex_t *m, uintptr_t self, uint64_t deadline)
{
	struct ult__waiter w;
	struct ult__turnstile *ts;
	int requeued = 0, r;
	unsigned backoff = 0;

	for (;;) {
		uintptr_t v = ULT_PLD(&m->_word);

		if (MTX_OWNER(v) == 0) {
			if (ULT_PCAS_ACQREL(&m->_word, &v, v | self)) {
				if (v & MTX_CONTESTED)
					ult__ts_claim(m, self);
				return (0);
			}
			continue;
		}
		if (MTX_OWNER(v) == self)
			return (EDEADLK);
		if (ult__sync_spin(&m->_word, v, MTX_OWNER(v)))
			continue;
		if (deadline != 0 && ult__now() >= deadline)
			return (ETIMEDOUT);
		if (ult__ts_prepare() != 0) {
			/* No memory for a turnstile: poll instead. */
			ult__spin_backoff(&backoff);
			continue;
		}
		ult__waiter_self(&w);
		if (requeued)
			w.flags |= WF_REQUEUED;
		ts = ult__ts_lookup(m);
		v = ULT_PLD_ACQ(&m->_word); /* the owner's thread, below */
		if (MTX_OWNER(v) == 0 ||
		    (!(v & MTX_CONTESTED) &&
			!ULT_PCAS(&m->_word, &v, v | MTX_CONTESTED))) {
			ult__ts_release(m, ts);
			continue;
		}
		r = ult__ts_wait(m, ts, MTX_OWNER(v), TS_EXCLUSIVE_QUEUE, &w,
		    deadline, "mutex");
		if (r == SYNC_GRANTED)
			return (
			    0); /* the wakeup ordered us after the releaser */
		if (r != 0)
			return (r);
		requeued = 1;
	}
}

static int
mutex_lock(ult_mutex_t *m, uint64_t deadline)
{
	uintptr_t self, v = 0;
	int r;

	if (m == NULL)
		return (EINVAL);
	self = ult__sync_self_id();
	if (ULT_LIKELY(ULT_PCAS_ACQREL(&m->_word, &v, self)))
		return (0);
	r = lock_slow(m, self, deadline);
	ult__sync_done();
	return (r);
}

/* Inlined into the public call: its fast path is the whole cost of an
 * uncontended lock, and the lock checker's test must not add a call. */
static inline __attribute__((always_inline)) int
mtx_lock_(ult_mutex_t *m)
{
	return (mutex_lock(m, 0));
}

static int
mtx_timedlock_(ult_mutex_t *m, uint64_t deadline)
{
	return (mutex_lock(m, ult__sync_deadline(deadline)));
}

/* The caller owns m: wake waiter w at m's unlock (see the top). */
void
ult__mutex_defer(ult_mutex_t *m, struct ult__waiter *w)
{
	w->next = (struct ult__waiter *)m->_spare;
	m->_spare = (uintptr_t)w;
	ULT_PFETCH_OR(&m->_word, MTX_DEFERRED);
}

int
ult__mutex_owned(const ult_mutex_t *m, uintptr_t self)
{
	return (MTX_OWNER(ULT_PLD(&m->_word)) == self);
}

uintptr_t
ult__mutex_owner(const ult_mutex_t *m)
{
	return (MTX_OWNER(ULT_PLD(&m->_word)));
}

/* The owner takes the deferred wakeups off m before releasing it. */
static struct ult__waiter *
take_deferred(ult_mutex_t *m)
{
	struct ult__waiter *w = (struct ult__waiter *)m->_spare;

	m->_spare = 0;
	return (w);
}

/* After the release, with nothing locked: the waiters, oldest first. */
static void
wake_deferred(struct ult__waiter *w)
{
	struct ult__waiter *rev = NULL;

	while (w != NULL) {
		struct ult__waiter *next = w->next;

		w->next = rev;
		rev = w;
		w = next;
	}
	while (rev != NULL) {
		struct ult__waiter *next = rev->next;

		ult__sleepq_resume_later(rev);
		rev = next;
	}
}

void
ult__mutex_flush_deferred(ult_mutex_t *m, uintptr_t self)
{
	if (MTX_OWNER(ULT_PLD(&m->_word)) != self || m->_spare == 0)
		return;
	ULT_PFETCH_AND(&m->_word, ~MTX_DEFERRED);
	wake_deferred(take_deferred(m));
}

int
ult__mutex_relock(ult_mutex_t *m)
{
	return (mutex_lock(m, 0));
}

static int
mtx_trylock_(ult_mutex_t *m)
{
	uintptr_t self, v = 0;

	if (m == NULL)
		return (EINVAL);
	self = ult__sync_self_id();
	if (ULT_PCAS_ACQREL(&m->_word, &v, self))
		return (0);
	/* Free but contested: take it, and the waiters' lend. */
	if (MTX_OWNER(v) == 0 && ULT_PCAS_ACQREL(&m->_word, &v, v | self)) {
		ult__ts_claim(m, self);
		return (0);
	}
	return (EBUSY);
}

/* Contested release: wake the best waiter, maybe hand over (see top). */
static int
unlock_slow(ult_mutex_t *m, uintptr_t self)
{
	struct ult__turnstile *ts;
	struct ult__waiter *w, *deferred;
	uintptr_t v = ULT_PLD(&m->_word), more;

	if (MTX_OWNER(v) != self)
		return (EPERM);
	deferred = take_deferred(m);
	/* Only deferred wakeups: no turnstile to look at, unless a locker
	 * marks the word contested meanwhile (under its chain lock). */
	if (!(v & MTX_CONTESTED) && ULT_PCAS_REL(&m->_word, &v, 0)) {
		wake_deferred(deferred);
		return (0);
	}
	ts = ult__ts_lookup(m);
	if (ts == NULL || (w = ult__ts_head(ts, TS_EXCLUSIVE_QUEUE)) == NULL) {
		/* The waiters timed out. */
		ULT_PST_REL(&m->_word, 0);
		ult__ts_release(m, ts);
		wake_deferred(deferred);
		return (0);
	}
	more = ult__ts_count(ts, TS_EXCLUSIVE_QUEUE) > 1 ? MTX_CONTESTED : 0;
	if ((w->flags & WF_REQUEUED) || w->pri < own_pri(self)) {
		uintptr_t id = w->id;

		ult__ts_signal(ts, TS_EXCLUSIVE_QUEUE, SYNC_GRANTED);
		ULT_PST_REL(&m->_word, id | more);
		ult__ts_unpend(m, ts, id);
	} else {
		ult__ts_signal(ts, TS_EXCLUSIVE_QUEUE, 0);
		ULT_PST_REL(&m->_word, more);
		ult__ts_unpend(m, ts, 0);
	}
	wake_deferred(deferred);
	return (0);
}

int
ult__mutex_unlock_locked(ult_mutex_t *m, uintptr_t self)
{
	uintptr_t v = self;

	/* The cond wait flushed them: waking them here would take another
	 * sleep-queue chain while the caller holds its own. */
	MPASS(m->_spare == 0);
	if (ULT_LIKELY(ULT_PCAS_REL(&m->_word, &v, 0)))
		return (0);
	return (unlock_slow(m, self));
}

static inline __attribute__((always_inline)) int
mtx_unlock_(ult_mutex_t *m)
{
	uintptr_t self, v;
	int r;

	if (m == NULL)
		return (EINVAL);
	self = ult__sync_self_id();
	v = self;
	if (ULT_LIKELY(ULT_PCAS_REL(&m->_word, &v, 0)))
		return (0);
	r = unlock_slow(m, self);
	ult__sync_done();
	return (r);
}

/* The public calls: with the lock checker on, its hooks around them. */
static int __attribute__((noinline))
witness_lock(ult_mutex_t *m, int timed, uint64_t deadline, const void *site)
{
	int r;

	if (timed < 2)
		ult__witness_order(WIT_ULT_MUTEX, m, site);
	r = timed == 0	 ? mtx_lock_(m)
	    : timed == 1 ? mtx_timedlock_(m, deadline)
			 : mtx_trylock_(m);
	if (r == 0)
		ult__witness_acquired(WIT_ULT_MUTEX, m, site);
	return (r);
}

int
ult_mutex_lock(ult_mutex_t *m)
{
	if (ULT_UNLIKELY(ult__witness_on))
		return (witness_lock(m, 0, 0, __builtin_return_address(0)));
	return (mtx_lock_(m));
}

int
ult_mutex_timedlock(ult_mutex_t *m, uint64_t deadline)
{
	if (ULT_UNLIKELY(ult__witness_on))
		return (
		    witness_lock(m, 1, deadline, __builtin_return_address(0)));
	return (mtx_timedlock_(m, deadline));
}

int
ult_mutex_trylock(ult_mutex_t *m)
{
	if (ULT_UNLIKELY(ult__witness_on))
		return (witness_lock(m, 2, 0, __builtin_return_address(0)));
	return (mtx_trylock_(m));
}

int
ult_mutex_unlock(ult_mutex_t *m)
{
	int r = mtx_unlock_(m);

	if (ULT_UNLIKELY(ult__witness_on) && r == 0)
		ult__witness_released(m);
	return (r);
}

int
ult_mutex_destroy(ult_mutex_t *m)
{
	int r = mtx_destroy_(m);

	if (ULT_UNLIKELY(ult__witness_on) && r == 0)
		ult__witness_destroyed(m);
	return (r);
}
