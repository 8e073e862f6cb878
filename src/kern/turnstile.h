/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/subr_turnstile.c. */
/*
 * Turnstiles (FreeBSD's subr_turnstile.c): where threads block on a lock
 * that is held, lending their priority to its owner.
 *
 * A contested lock has one turnstile, found by hashing the lock's address
 * into a chain.  Every thread owns a spare turnstile: the first waiter on a
 * lock gives its spare to be the lock's turnstile, later waiters put theirs
 * on its free list, and each waiter leaving takes one back, so blocking
 * never allocates.  A turnstile holds its blocked waiters in two queues
 * (exclusive and shared), best priority first and FIFO among equals.
 *
 * Priority propagation: a uthread that blocks lends its priority to the
 * lock's owner, and on along the chain while the owner is itself blocked
 * on a turnstile.  An owner releasing a lock gets back the best priority
 * still needed by the waiters of the other locks it holds (its contested
 * list).  Waiters earn no sleep credit: blocking on a lock is not
 * sleeping, as in FreeBSD.
 *
 * Lock order: chain lock, then ts_lock, then further ts_locks down an
 * owner chain (never up), then a run-queue lock; a thread's contested_lock
 * is a leaf.  While a uthread is blocked its thread lock is the ts_lock of
 * its turnstile.
 */
#ifndef ULT_SYNC_TURNSTILE_H
#define ULT_SYNC_TURNSTILE_H

#include <stdint.h>

#include "waiter.h"
#include "../util/lock.h"

#define TS_EXCLUSIVE_QUEUE 0
#define TS_SHARED_QUEUE 1

struct ult_thread;
struct ult__turnstile;

/* Allocate a spare turnstile (for a new uthread) / free one. */
struct ult__turnstile *ult__ts_alloc(void);
void ult__ts_free(struct ult__turnstile *ts);

/* At shutdown, once no uthread is left: unmap the memory of turnstiles
 * that are free (foreign threads keep theirs). */
void ult__ts_reclaim(void);
/* A fork child: empty chains and pool; the parent's turnstiles are
 * leaked (a lock's or a thread's spare may still name one). */
void ult__ts_fork_child(void);

/* Make sure the calling thread has a spare (a foreign thread gets one on
 * first use); 0 or ENOMEM.  Call before ult__ts_lookup: it may allocate. */
int ult__ts_prepare(void);

/* Lock obj's chain and return its turnstile with ts_lock held, or NULL
 * (chain still locked). */
struct ult__turnstile *ult__ts_lookup(const void *obj);
/* Undo ult__ts_lookup. */
void ult__ts_release(const void *obj, struct ult__turnstile *ts);

/*
 * Block the caller (w from ult__waiter_self) on obj, whose chain is locked
 * by ult__ts_lookup, which returned ts.  owner: the lock owner's id, 0 if
 * none or shared.  deadline: absolute ns, 0 for none.  wmesg: a static
 * string naming the kind of lock ("mutex"), for reports and the trace.  Returns
 * with nothing locked: SYNC_GRANTED (the waker made the caller the owner), 0
 * (woken: retry), ETIMEDOUT, or EINTR when the uthread waits with
 * ULT__INTR_LOCK in its intr and ult__ts_interrupt ends the wait.
 */
int ult__ts_wait(const void *obj, struct ult__turnstile *ts, uintptr_t owner,
    int queue, struct ult__waiter *w, uint64_t deadline, const char *wmesg);

/* Chain and ts locked: the head waiter of a queue (NULL if empty) and the
 * number of waiters in a queue. */
struct ult__waiter *ult__ts_head(struct ult__turnstile *ts, int queue);
int ult__ts_count(struct ult__turnstile *ts, int queue);

/* Chain and ts locked: wake the head of a queue / all of it with result
 * (0 or SYNC_GRANTED), once ult__ts_unpend runs. */
void ult__ts_signal(struct ult__turnstile *ts, int queue, int result);
void ult__ts_broadcast(struct ult__turnstile *ts, int queue, int result);

/*
 * Finish a release: newowner (a lock-owner id, 0 for none or shared) now
 * owns the lock; the previous owner gets back its lent priority; woken
 * waiters are made runnable.  Unlocks ts and the chain.
 */
void ult__ts_unpend(const void *obj, struct ult__turnstile *ts,
    uintptr_t newowner);

/* A uthread that sleeps while owning contested locks is not lent to
 * while asleep; its waker calls this (thread locked) before making it
 * runnable, so it runs with the lend. */
void ult__ts_wake_lend(struct ult_thread *ut);

/* The caller took obj while it had waiters, without a grant: it becomes
 * the owner the waiters lend to. */
void ult__ts_claim(const void *obj, uintptr_t self);

/* ut's thread lock held (or, for a hang report, nothing): the lock ut
 * is blocked on, or NULL, and its owner's uthread id in *owner_id (0:
 * none, foreign or shared). */
const void *ult__ts_blocked_on(struct ult_thread *ut, uint64_t *owner_id);

/*
 * End ut's current or next lock wait with EINTR if it waits with
 * ULT__INTR_LOCK in ut->intr (the pthread drop-in, so that a signal
 * handler runs during a mutex or rwlock wait).  Called by
 * ult__sleepq_interrupt after it set intr_pending; nothing locked.
 */
void ult__ts_interrupt(struct ult_thread *ut);

/* A uthread's lock state (struct ult_thread's part; locking key there). */
struct ult__lock_part {
	struct ult__turnstile *ts_spare;   /* (s) NULL while lent to a lock;
					      handed back under q */
	struct ult__turnstile *ts_blocked; /* (q) blocked on */
	struct ult__waiter *ts_waiter;	   /* (q) its waiter there */
	const void *_Atomic ts_intr_obj;   /* (s, a) the lock it waits on
					      interruptibly, for
					      ult__ts_interrupt */
	struct mtx contested_lock;	   /* the lock x, a leaf */
	struct ult__list contested;	   /* (x) turnstiles of locks it owns */
	atomic_int ncontested; /* (x) their number; read without x too */
	atomic_int oncpu;      /* (s, a) running now: its worker's id + 1, or
				  0; lock waiters spin while it runs */
};

#endif
