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

struct mtx {
	atomic_int mtx_locked;
	atomic_uint_fast64_t mtx_contended; /* acquisitions that waited */
	const char *mtx_name;
};

#define MTX_INITIALIZER(name) \
	{                     \
		0, 0, name    \
	}

/* Provided by the host: wait for m to be released, then take it. */
void ult__mtx_lock_slow(struct mtx *m);
/* Provided by the host: one step of a bounded-then-yielding spin. */
void ult__spin_backoff(unsigned *iter);

static inline void
mtx_init(struct mtx *m, const char *name)
{
	atomic_init(&m->mtx_locked, 0);
	atomic_init(&m->mtx_contended, 0);
	m->mtx_name = name;
}

static inline int
mtx_trylock(struct mtx *m)
{
	return (ULT_LD(&m->mtx_locked) == 0 &&
	    atomic_exchange_explicit(&m->mtx_locked, 1, memory_order_acquire) ==
		0);
}

static inline void
mtx_lock(struct mtx *m)
{
	if (ULT_UNLIKELY(atomic_exchange_explicit(&m->mtx_locked, 1,
			     memory_order_acquire) != 0))
		ult__mtx_lock_slow(m);
}

static inline void
mtx_unlock(struct mtx *m)
{
	atomic_store_explicit(&m->mtx_locked, 0, memory_order_release);
}

/* For assertions only: the lock is held by somebody. */
static inline int
mtx_owned(struct mtx *m)
{
	return (ULT_LD(&m->mtx_locked) != 0);
}

#endif
