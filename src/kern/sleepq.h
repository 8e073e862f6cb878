/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/subr_sleepqueue.c. */
/*
 * Sleep queues (FreeBSD's subr_sleepqueue.c, reduced): threads wait on an
 * address, the wait channel, and are woken by signal (one) or broadcast
 * (all).  Channels hash to chains; a chain's lock protects its waiters,
 * and while a uthread sleeps it is also the uthread's thread lock.
 *
 * A waiter is a uthread (it sleeps through the scheduler and earns ULE
 * sleep credit) or a foreign pthread (it blocks on a futex in the waiter).
 * Lock order: chain lock, then a run-queue lock.
 */
#ifndef ULT_SYNC_SLEEPQ_H
#define ULT_SYNC_SLEEPQ_H

#include <stdint.h>

#include "../util/list.h"
#include "../util/lock.h"
#include "timer.h"
#include "waiter.h"

/* Lock the chain of wchan. */
void ult__sleepq_lock(const void *wchan);
/* A fork child: its one thread sleeps nowhere, and the chains' locks and
 * waiters may be the parent's other threads'. */
void ult__sleepq_fork_child(void);
void ult__sleepq_release(const void *wchan);
/* Chain locked: queue w (filled by ult__waiter_self) on wchan.  wmesg:
 * what it waits for, a static string ("sem", "join": reports, trace). */
void ult__sleepq_add(const void *wchan, struct ult__waiter *w,
    const char *wmesg);
/*
 * Chain locked, after ult__sleepq_add: sleep until woken or until the
 * absolute deadline (0: none).  Returns with the chain unlocked; 0 when
 * woken, ETIMEDOUT when the deadline passed first.
 */
int ult__sleepq_wait(const void *wchan, struct ult__waiter *w,
    uint64_t deadline_ns);
/* The same, with the sleep priority given to the policy's sleep (PWAIT
 * above; PSOCK for I/O, with PRI_SLEEP_BOOST or not). */
int ult__sleepq_wait_pri(const void *wchan, struct ult__waiter *w,
    uint64_t deadline_ns, int pri);
/* Is m one of the chain locks (the thread lock of a sleeping uthread)? */
int ult__sleepq_is_chain_lock(const struct mtx *m);
/*
 * End ut's current or next sleep with EINTR if it sleeps with ut->intr
 * set (a uthread of the pthread drop-in at a cancellation point); any
 * other sleep is left alone.  Nothing locked.  The sleeper publishes its
 * channel and then reads intr_pending; this sets intr_pending and then
 * reads the channel: one of them sees the other.
 */
void ult__sleepq_interrupt(struct ult_thread *ut);
#define ULT__INTR_SLEEP 1
#define ULT__INTR_LOCK 2
/* Chain locked: wake the first waiter / every waiter; returns how many. */
int ult__sleepq_signal(const void *wchan);
int ult__sleepq_broadcast(const void *wchan);
/* Chain locked: take up to max waiters of wchan off the queue without
 * waking them, linked through w->next in queue order; returns the first.
 * Each must then be woken, now (ult__sleepq_resume, chain locked) or
 * later (ult__sleepq_resume_later, no lock held). */
struct ult__waiter *ult__sleepq_take(const void *wchan, int max);
void ult__sleepq_resume(const void *wchan, struct ult__waiter *w);
void ult__sleepq_resume_later(struct ult__waiter *w);

/* A uthread's sleep state (struct ult_thread's part; locking key there). */
struct ult__sleep_part {
	struct ult__timer slp_timer; /* (s) armed and cancelled by the
					thread, expired by the clock thread
					(the heap's lock); also the sleep
					wchan */
	struct ult__waiter *_Atomic slp_waiter; /* (s, a) published before
						   the timer is armed, read
						   by its expiry */
	const void *_Atomic wchan; /* (s, a) sleep channel, for reports and
				      ult__sleepq_interrupt */
	const char *_Atomic wmesg; /* (s, a) what it sleeps on ("sem",
				      "mutex", ...): a static string */
	/* Interruptible waits (the pthread drop-in's cancellation points):
	 * intr is set by the thread around such a wait (s, a); intr_pending
	 * by ult__sleepq_interrupt (a), consumed by the wait it ends.  Any
	 * nonzero intr makes sleeps interruptible; lock waits (turnstiles)
	 * only with ULT__INTR_LOCK, since a condition wait's relock must
	 * not fail. */
	atomic_int intr, intr_pending;
};

#endif
