/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * struct mtx: the spin lock behind every run queue (tdq), sleep-queue
 * chain and timer heap.  Test-and-test-and-set with an acquire exchange
 * and a release store, so an uncontended lock/unlock pair costs one atomic
 * read-modify-write.  The slow path belongs to the host (machine.h): the
 * runtime spins and then yields the kernel CPU, because with more workers
 * than CPUs a lock holder may be descheduled by the kernel; the simulator
 * never contends.  Acquisitions that had to wait are counted: that count
 * is the scheduler-lock contention the FreeBSD developers measured.
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
	atomic_uint_fast64_t mtx_contended; /* acquisitions that waited */
	const char *mtx_name;
#ifdef ULT_INVARIANTS
	const void *_Atomic mtx_owner;
#endif
};

#ifdef ULT_INVARIANTS
#define MTX_INITIALIZER(name)    \
	{                        \
		0, 0, name, NULL \
	}
#else
#define MTX_INITIALIZER(name) \
	{                     \
		0, 0, name    \
	}
#endif

/* Provided by the host: wait for m to be released, then take it. */
void ult__mtx_lock_slow(struct mtx *m);

/* The simulator's copy of the policy tells its host of every acquisition,
 * so that a lock can cost virtual time and serialise its holders; the
 * runtime's copy is built without it. */
#ifdef ULT_SIM_LOCKS
void ult__sim_lock_note(struct mtx *m);
#define MTX_NOTE(m) ult__sim_lock_note(m)
#else
#define MTX_NOTE(m) ((void)0)
#endif
/* Provided by the host: one step of a bounded-then-yielding spin. */
void ult__spin_backoff(unsigned *iter);

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
}

#define MTX_ASSERT_OWNED(m) ULT_KASSERT(mtx_owned(m), (m)->mtx_name)
#define MTX_ASSERT_NOTOWNED(m) ULT_KASSERT(!mtx_owned(m), (m)->mtx_name)

#endif
