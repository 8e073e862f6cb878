/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * struct mtx: the spin lock behind every run queue (tdq), sleep-queue
 * chain and timer heap.  Test-and-test-and-set with an acquire exchange
 * and a release store, so an uncontended lock/unlock pair costs one atomic
 * read-modify-write.  The slow path belongs to the host (machine.h): the
 * runtime spins a few microseconds, then sleeps on a futex on the lock
 * word, because with more workers than CPUs a lock holder may be
 * descheduled by the kernel and only a sleep gives it the CPU back; the
 * simulator never contends.  A sleeper counts itself in mtx_waiters and
 * the release wakes one sleeper when that count is not zero.  The
 * release stays a plain store followed by a plain load of the count: the
 * store-load order that would otherwise need a fence on every release is
 * forced by the sleeper instead, with a process-wide barrier
 * (membarrier) before it sleeps (the host's comment says more).
 * Acquisitions that had to wait are counted: that count is the
 * scheduler-lock contention the FreeBSD developers measured.
 */
#ifndef ULT_UTIL_LOCK_H
#define ULT_UTIL_LOCK_H

#include <stdint.h>

#include "atomic.h"
#include "kassert.h"

/*
 * With ULT_INVARIANTS a lock records the kernel thread that holds it
 * (ult__mtx_self(), provided by the host), so that assertions can ask
 * "do I hold it?" (mtx_owned) and a recursive acquisition or a release
 * by a non-owner stops with a message instead of hanging or corrupting.
 */
struct mtx {
	atomic_int mtx_locked;
	atomic_uint mtx_waiters; /* asleep in the slow path (fills a hole) */
	atomic_uint_fast64_t mtx_contended; /* acquisitions that waited */
	const char *mtx_name;
#ifdef ULT_INVARIANTS
	const void *_Atomic mtx_owner;
#endif
};

#ifdef ULT_INVARIANTS
#define MTX_INITIALIZER(name)       \
	{                           \
		0, 0, 0, name, NULL \
	}
#else
#define MTX_INITIALIZER(name) \
	{                     \
		0, 0, 0, name \
	}
#endif

/* Provided by the host: wait for m to be released, then take it; wake a
 * sleeper in that wait after a release. */
void ult__mtx_lock_slow(struct mtx *m);
void ult__mtx_wake(struct mtx *m);

/* The simulator's copy of the policy tells its host of every acquisition,
 * so that a lock can cost virtual time and serialise its holders; the
 * runtime's copy is built without it. */
#ifdef ULT_SIM_LOCKS
void ult__sim_lock_note(struct mtx *m);
#define MTX_NOTE(m) ult__sim_lock_note(m)
#else
#define MTX_NOTE(m) ((void)0)
#endif
/* Provided by the host: one step of a wait for another kernel thread to
 * change a word nobody wakes the waiter for (the thread lock's
 * blocked_lock, a timer's firing mark): spins for a few microseconds,
 * then sleeps for growing moments of at most a millisecond. */
void ult__spin_backoff(unsigned *iter);
/* Provided by the host: sleep ns nanoseconds, woken by nobody. */
void ult__nap_ns(uint64_t ns);

/* Provided by the host: a token unique to the calling kernel thread. */
const void *ult__mtx_self(void);

#ifdef ULT_INVARIANTS
static inline void
mtx_set_owner(struct mtx *m)
{
	ULT_ST(&m->mtx_owner, ult__mtx_self());
}

/* The caller holds m. */
static inline int
mtx_owned(struct mtx *m)
{
	return (ULT_LD(&m->mtx_locked) != 0 &&
	    ULT_LD(&m->mtx_owner) == ult__mtx_self());
}
#else
static inline void
mtx_set_owner(struct mtx *m)
{
	(void)m;
}

/* Without invariants nobody records owners; assertions do not run. */
static inline int
mtx_owned(struct mtx *m)
{
	return (ULT_LD(&m->mtx_locked) != 0);
}
#endif

static inline void
mtx_init(struct mtx *m, const char *name)
{
	atomic_init(&m->mtx_locked, 0);
	atomic_init(&m->mtx_waiters, 0);
	atomic_init(&m->mtx_contended, 0);
	m->mtx_name = name;
#ifdef ULT_INVARIANTS
	atomic_init(&m->mtx_owner, NULL);
#endif
}

static inline int
mtx_trylock_spin(struct mtx *m)
{
	if (ULT_LD(&m->mtx_locked) != 0 ||
	    atomic_exchange_explicit(&m->mtx_locked, 1, memory_order_acquire) !=
		0)
		return (0);
	mtx_set_owner(m);
	MTX_NOTE(m);
	return (1);
}

static inline void
mtx_lock_spin(struct mtx *m)
{
	ULT_KASSERT(!mtx_owned(m), m->mtx_name);
	if (ULT_UNLIKELY(atomic_exchange_explicit(&m->mtx_locked, 1,
			     memory_order_acquire) != 0))
		ult__mtx_lock_slow(m);
	mtx_set_owner(m);
	MTX_NOTE(m);
}

static inline void
mtx_unlock_spin(struct mtx *m)
{
	ULT_KASSERT(mtx_owned(m), m->mtx_name);
#ifdef ULT_INVARIANTS
	ULT_ST(&m->mtx_owner, NULL);
#endif
	atomic_store_explicit(&m->mtx_locked, 0, memory_order_release);
	/* The sleeper's membarrier orders this load after the store (no
	 * fence here); only the compiler must keep them in order. */
	atomic_signal_fence(memory_order_seq_cst);
	if (ULT_UNLIKELY(ULT_LD(&m->mtx_waiters) != 0))
		ult__mtx_wake(m);
}

#define MTX_ASSERT_OWNED(m) ULT_KASSERT(mtx_owned(m), (m)->mtx_name)
#define MTX_ASSERT_NOTOWNED(m) ULT_KASSERT(!mtx_owned(m), (m)->mtx_name)

#endif
