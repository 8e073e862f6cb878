/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the sync objects share.  Their public structs hold plain integers
 * (the header stays free of <stdatomic.h>); every access goes through
 * util/atomic.h's ULT_P* builtins.
 */
#ifndef ULT_SYNC_SYNC_H
#define ULT_SYNC_SYNC_H

#include <stdint.h>

#include "ult.h"

#include "../kern/runtime.h"
#include "../kern/uthread.h"
#include "../kern/worker.h"
#include "../kern/switch.h"
#include "../kern/sleepq.h"
#include "../kern/turnstile.h"
#include "../kern/waiter.h"

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

/* A public timed wait's deadline as the sleep queues take it, where 0 is
 * "none": ULT_DEADLINE_NONE is none, and the public 0 has passed. */
static inline uint64_t
ult__sync_deadline(uint64_t deadline)
{
	return (deadline == ULT_DEADLINE_NONE ? 0 : deadline ? deadline : 1);
}

/* Mutex release without the runtime-exit check, for cond waits, which
 * release the mutex while holding a sleep-queue chain lock. */
int ult__mutex_unlock_locked(ult_mutex_t *m, uintptr_t self);
/* Acquire for a cond waiter that was woken. */
int ult__mutex_relock(ult_mutex_t *m);
/* Wait morphing (mutex.c): does self own m; park waiter w (taken off a
 * cond's sleep queue) to be woken at m's unlock; wake the parked ones
 * now (by the owner, with nothing locked). */
int ult__mutex_owned(const ult_mutex_t *m, uintptr_t self);
/* m's owner's id, 0 when free (the drop-in's unlock of a glibc-style
 * normal mutex by another thread releases it for its owner). */
uintptr_t ult__mutex_owner(const ult_mutex_t *m);
void ult__mutex_defer(ult_mutex_t *m, struct ult__waiter *w);
void ult__mutex_flush_deferred(ult_mutex_t *m, uintptr_t self);
/* The pthread drop-in's reader preference and resumable barrier wait
 * (rwlock.c, barrier.c). */
int ult__rwlock_tryrdlock_shared(ult_rwlock_t *rw);
int ult__barrier_wait_intr(ult_barrier_t *b, unsigned *round, int again);

#endif
