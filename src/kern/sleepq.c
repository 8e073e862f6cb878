/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/subr_sleepqueue.c. */
/*
 * Sleep queues.  A uthread going to sleep moves its thread lock from its
 * run queue to the chain lock (thread_lock_set), so a waker holding the
 * chain lock owns the sleeper; the sleeper's switch then blocks its lock
 * pointer until its registers are saved, and a waker that gets there first
 * waits for that (thread_lock_block_wait) before making it runnable.
 */
#include <errno.h>

#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "switch.h"
#include "sleepq.h"
#include "turnstile.h"

#define SC_TABLESIZE 256

struct sleepq_chain {
	struct mtx lock;
	struct ult__list waiters;
} ULT_ALIGNED_CL;

static struct sleepq_chain chains[SC_TABLESIZE];
static pthread_once_t chains_once = PTHREAD_ONCE_INIT;
static atomic_int chains_ready; /* after chains_once: skips its call */

static void
chains_init(void)
{
	for (int i = 0; i < SC_TABLESIZE; i++) {
		mtx_init(&chains[i].lock, "sleepq chain");
		ult__list_init(&chains[i].waiters);
	}
	ULT_ST_REL(&chains_ready, 1);
}

void
ult__sleepq_fork_child(void)
{
	if (ULT_LD_ACQ(&chains_ready))
		chains_init();
}

static struct sleepq_chain *
chain_of(const void *wchan)
{
	uintptr_t a = (uintptr_t)wchan;

	return (&chains[((a >> 6) ^ (a >> 14)) % SC_TABLESIZE]);
}

void
ult__sleepq_lock(const void *wchan)
{
	if (ULT_UNLIKELY(!ULT_LD_ACQ(&chains_ready)))
		pthread_once(&chains_once, chains_init);
	mtx_lock_spin(&chain_of(wchan)->lock);
}

void
ult__sleepq_release(const void *wchan)
{
	mtx_unlock_spin(&chain_of(wchan)->lock);
}

void
ult__sleepq_add(const void *wchan, struct ult__waiter *w, const char *wmesg)
{
	MTX_ASSERT_OWNED(&chain_of(wchan)->lock);
	MPASS(!ult__list_linked(&w->link));
	w->wchan = wchan;
	w->result = 0;
	ULT_ST(&w->futex, 0);
	if (w->ut != NULL)
		ULT_ST(&w->ut->wmesg, wmesg);
	ult__list_insert_tail(&chain_of(wchan)->waiters, &w->link);
}

/* Chain locked, w already unlinked: make its owner run again. */
static void
resume(struct sleepq_chain *sc, struct ult__waiter *w)
{
	struct thread *td;

	MTX_ASSERT_OWNED(&sc->lock);
	MPASS(!ult__list_linked(&w->link));
	if (w->ut == NULL) {
		ult__waiter_wake_foreign(w);
		return;
	}
	td = &w->ut->td;
	thread_lock_block_wait(td);
	MPASS(ULT_LD(&td->td_lock) == &sc->lock && TD_IS_SLEEPING(td));
	ult__ts_wake_lend(w->ut);
	TD_CLR_SLEEPING(td);
	if (TD_CAN_RUN(td)) {
		int held = ult__clock_hold(ult__tls_worker);

		ult__became_runnable(w->ut);
		ult__rt.sched->wakeup(td, SRQ_HOLD | ult__wake_flags());
		ult__clock_drop(held);
	}
}

int
ult__sleepq_is_chain_lock(const struct mtx *m)
{
	const char *p = (const char *)m;

	return (p >= (const char *)&chains[0] &&
	    p < (const char *)&chains[SC_TABLESIZE]);
}

int
ult__sleepq_signal(const void *wchan)
{
	struct sleepq_chain *sc = chain_of(wchan);
	struct ult__list *n;

	MTX_ASSERT_OWNED(&sc->lock);
	ULT_LIST_FOREACH (n, &sc->waiters) {
		struct ult__waiter *w =
		    ULT_CONTAINER_OF(n, struct ult__waiter, link);

		if (w->wchan == wchan) {
			ult__list_remove(&w->link);
			resume(sc, w);
			return (1);
		}
	}
	return (0);
}

int
ult__sleepq_broadcast(const void *wchan)
{
	struct sleepq_chain *sc = chain_of(wchan);
	struct ult__list *n, *t;
	int woken = 0;

	MTX_ASSERT_OWNED(&sc->lock);
	ULT_LIST_FOREACH_SAFE (n, t, &sc->waiters) {
		struct ult__waiter *w =
		    ULT_CONTAINER_OF(n, struct ult__waiter, link);

		if (w->wchan == wchan) {
			ult__list_remove(&w->link);
			resume(sc, w);
			woken++;
		}
	}
	return (woken);
}

struct ult__waiter *
ult__sleepq_take(const void *wchan, int max)
{
	struct sleepq_chain *sc = chain_of(wchan);
	struct ult__waiter *first = NULL, **tail = &first;
	struct ult__list *n, *t;

	MTX_ASSERT_OWNED(&sc->lock);
	ULT_LIST_FOREACH_SAFE (n, t, &sc->waiters) {
		struct ult__waiter *w =
		    ULT_CONTAINER_OF(n, struct ult__waiter, link);

		if (max == 0)
			break;
		if (w->wchan != wchan)
			continue;
		ult__list_remove(&w->link);
		w->next = NULL;
		*tail = w;
		tail = &w->next;
		max--;
	}
	return (first);
}

void
ult__sleepq_resume(const void *wchan, struct ult__waiter *w)
{
	resume(chain_of(wchan), w);
}

/* A waiter taken off its queue and kept asleep (its thread lock is still
 * the chain's): wake it now, with nothing else locked. */
void
ult__sleepq_resume_later(struct ult__waiter *w)
{
	struct sleepq_chain *sc = chain_of(w->wchan);

	mtx_lock_spin(&sc->lock);
	resume(sc, w);
	mtx_unlock_spin(&sc->lock);
}

/* Timer expiry for a sleeping uthread: wake it with ETIMEDOUT unless
 * somebody woke it already. */
static void
sleepq_timeout(void *arg)
{
	struct ult_thread *ut = arg;
	struct ult__waiter *w = ULT_LD_ACQ(&ut->slp_waiter);
	struct sleepq_chain *sc = chain_of(w->wchan);

	mtx_lock_spin(&sc->lock);
	if (ult__list_linked(&w->link)) {
		ult__list_remove(&w->link);
		w->result = ETIMEDOUT;
		resume(sc, w);
	}
	mtx_unlock_spin(&sc->lock);
}

static int
wait_foreign(struct sleepq_chain *sc, struct ult__waiter *w, uint64_t deadline)
{
	int r, intr;

	mtx_unlock_spin(&sc->lock);
	if ((r = ult__waiter_park_foreign(w, deadline)) != 0) {
		/* ETIMEDOUT, or EINTR (a handler ran). */
		mtx_lock_spin(&sc->lock);
		if (ult__list_linked(&w->link)) {
			ult__list_remove(&w->link);
			mtx_unlock_spin(&sc->lock);
			return (r);
		}
		mtx_unlock_spin(&sc->lock);
		/* Being woken right now: that wake is ours, whatever comes. */
		intr = ult__foreign_intr;
		ult__foreign_intr = 0;
		ult__waiter_park_foreign(w, 0);
		ult__foreign_intr = intr;
	}
	return (w->result);
}

int
ult__sleepq_wait(const void *wchan, struct ult__waiter *w, uint64_t deadline)
{
	/* A wait, as the kernel's nanosleep and condvar waits are: 4BSD
	 * boosts to it until the thread returns to user mode; ULE does only
	 * with kern.sched.static_boost=1. */
	return (ult__sleepq_wait_pri(wchan, w, deadline, PWAIT));
}

int
ult__sleepq_wait_pri(const void *wchan, struct ult__waiter *w,
    uint64_t deadline, int pri)
{
	struct sleepq_chain *sc = chain_of(wchan);
	struct ult_thread *ut = w->ut;
	struct thread *td;
	int held;

	MTX_ASSERT_OWNED(&sc->lock);
	MPASS(w->wchan == wchan && ult__list_linked(&w->link));
	if (deadline != 0 && deadline <= ult__now()) {
		ult__list_remove(&w->link);
		mtx_unlock_spin(&sc->lock);
		return (ETIMEDOUT);
	}
	if (ut == NULL)
		return (wait_foreign(sc, w, deadline));
	if (ULT_LD(&ut->intr)) {
		/* seq_cst, the Dekker pair with ult__sleepq_interrupt: this
		 * publishes wchan, then takes intr_pending; the interrupter
		 * sets intr_pending, then reads wchan.  Either it finds the
		 * sleeper on its chain or the sleeper finds the mark. */
		ULT_ST_SC(&ut->wchan, wchan);
		if (ULT_XCHG_SC(&ut->intr_pending, 0)) {
			ult__list_remove(&w->link);
			ULT_ST(&ut->wchan, NULL);
			mtx_unlock_spin(&sc->lock);
			return (EINTR);
		}
	}
	td = &ut->td;
	if (deadline != 0) {
		ULT_ST_REL(&ut->slp_waiter, w);
		ult__timer_add(&ut->slp_timer, td->td_oncpu, deadline,
		    sleepq_timeout, ut);
	}
	thread_lock(td);
	/* The sleep and the switch share one clock read. */
	held = ult__clock_hold(ult__tls_worker);
	ult__rt.sched->sleep(td, pri);
	thread_lock_set(td, &sc->lock);
	TD_SET_SLEEPING(td);
	ULT_ST(&ut->wchan, wchan);
	ULT_TRACE(TEV_SLEEP, sleep, ult__tls_worker->clk_ns, ut->id, wchan,
	    ULT_LD(&ut->wmesg), 0);
	ult__mi_switch(ut, SW_VOL | SWT_SLEEPQ, NULL);
	ult__clock_drop(held);
	ULT_ST(&ut->wchan, NULL);
	if (deadline != 0)
		ult__timer_cancel(&ut->slp_timer);
	/* seq_cst: the caller reads what the interrupter published before
	 * its intr_pending after this clear, not before it. */
	if (w->result == EINTR)
		(void)ULT_XCHG_SC(&ut->intr_pending, 0);
	return (w->result);
}

void
ult__sleepq_interrupt(struct ult_thread *ut)
{
	struct sleepq_chain *sc;
	const void *wchan;
	struct ult__list *n;

	/* seq_cst: pairs with ult__sleepq_wait's store of wchan and
	 * exchange of intr_pending. */
	ULT_ST_SC(&ut->intr_pending, 1);
	ult__ts_interrupt(ut);
	if ((wchan = ULT_LD_SC(&ut->wchan)) == NULL)
		return;
	sc = chain_of(wchan);
	mtx_lock_spin(&sc->lock);
	ULT_LIST_FOREACH (n, &sc->waiters) {
		struct ult__waiter *w =
		    ULT_CONTAINER_OF(n, struct ult__waiter, link);

		if (w->ut == ut && w->wchan == wchan) {
			if (ULT_LD(&ut->intr)) {
				ult__list_remove(&w->link);
				w->result = EINTR;
				resume(sc, w);
			}
			break;
		}
	}
	mtx_unlock_spin(&sc->lock);
}
