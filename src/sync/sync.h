/*
 * What the sync objects share.  Their public structs hold plain integers
 * (the header stays free of <stdatomic.h>); every access goes through the
 * __atomic builtins below, which the compilers and sanitizers treat as
 * atomics.
 */
#ifndef ULT_SYNC_SYNC_H
#define ULT_SYNC_SYNC_H

#include <stdint.h>

#include "../core/runtime.h"
#include "sleepq.h"
#include "turnstile.h"
#include "waiter.h"

#define SY_LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define SY_LD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define SY_ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define SY_ST_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* Compare-and-swap that acquires on success; *expp gets the value seen. */
#define SY_CAS_ACQ(p, expp, v)                                             \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_ACQUIRE, \
	    __ATOMIC_RELAXED)
/*
 * The same, releasing too: for a mutex owner installing its identity,
 * because a waiter that reads it then touches the owner's thread (its
 * contested list, its priority), which must be seen as initialised.  On
 * x86 it is the same instruction.
 */
#define SY_CAS_ACQREL(p, expp, v)                                          \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_ACQ_REL, \
	    __ATOMIC_RELAXED)
#define SY_CAS_REL(p, expp, v)                                             \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_RELEASE, \
	    __ATOMIC_RELAXED)
#define SY_CAS(p, expp, v)                                                 \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_SEQ_CST, \
	    __ATOMIC_SEQ_CST)

/*
 * Adaptive spinning: wait a little for a lock whose owner is running on
 * another worker (or is a foreign thread, presumably running), since it
 * will likely release the lock sooner than a sleep and wakeup would take.
 * Returns 1 if *word changed from `seen', 0 when it is better to block.
 */
int ult__sync_spin(const uintptr_t *word, uintptr_t seen, uintptr_t owner);

/* After a slow path: honour what the runtime owes a uthread caller (an
 * owed preemption after a wakeup of a better thread, an AST). */
static inline void
ult__sync_done(void)
{
	ult__userret();
}

/* Mutex release without the runtime-exit check, for cond waits, which
 * release the mutex while holding a sleep-queue chain lock. */
int ult__mutex_unlock_locked(ult_mutex_t *m, uintptr_t self);
/* Acquire for a cond waiter that was woken. */
int ult__mutex_relock(ult_mutex_t *m);

#endif
