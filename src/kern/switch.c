/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The switch path (FreeBSD's mi_switch + cpu_switch) and the return-to-
 * user checks (ast, userret).
 *
 * mi_switch is entered with the outgoing thread's thread lock held.  The
 * policy requeues or parks it, picks the next thread and drops every lock,
 * leaving the outgoing thread "blocked" (td_lock == &blocked_lock).  Once
 * its registers are saved the real lock is stored back (switch_mid); only
 * then may another worker run or move it.  Before loading a thread we
 * wait until whoever switched it out has done the same.
 *
 * Anything after ult__ctx_switch() may run on another kernel thread:
 * per-worker state is re-read through ult__worker_self().  errno lives in
 * the uthread's own thread block (tls.h), or, with per-worker TLS, is
 * saved and restored per uthread.
 */
#include <errno.h>
#include <stdlib.h>

#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "switch.h"
#include "handoff.h"
#include "host_nice.h"
#include "preempt.h"
#include "sigmask.h"
#include "tls_switch.h"
#include "../api/sched_calls.h"
#include "../obs/stats.h"
#include "tls.h"
#include "../obs/trace.h"
#include "io.h"

/* ut is switched in at now: charge the time it waited runnable. */
static inline void
stats_rq_delay(struct ult_thread *ut, uint64_t now)
{
	uint64_t d = now > ut->rq_ns ? now - ut->rq_ns : 0;

	ULT_ST(&ut->rqd_sum, ULT_LD(&ut->rqd_sum) + d);
	ULT_ST(&ut->rqd_n, ULT_LD(&ut->rqd_n) + 1);
	if (d > ULT_LD(&ut->rqd_max))
		ULT_ST(&ut->rqd_max, d);
	if (ULT_UNLIKELY(ut->rqd_hist != NULL))
		ult__stats_hist_add(ut->rqd_hist, d);
}

#undef ult__tls_worker /* worker.h: the definition, not a fresh read */
__thread struct ult__worker *ult__tls_worker
    __attribute__((tls_model("initial-exec")));

ULT_NOIPA struct ult__worker *
ult__worker_self(void)
{
	return (ult__tls_worker);
}

/* Out of line so that no caller keeps &errno (a TLS address) across a
 * switch: the compiler treats __errno_location() as constant, and with
 * per-worker TLS the address changes when the caller migrates. */
ULT_NOIPA int
ult__errno(void)
{
	return (errno);
}

ULT_NOIPA void
ult__set_errno(int e)
{
	errno = e;
}

/* Charge the time since the last switch on this worker. */
static void
account(struct ult__worker *w, struct ult_thread *from, uint64_t now, int flags)
{
	/* The fast clock may step back a little when it is re-anchored. */
	uint64_t last = ULT_LD(&w->last_switch_ns);
	uint64_t d = now > last ? now - last : 0;

	ULT_ST(&w->last_switch_ns, now);
	if (from == &w->idle) {
		ULT_ST(&w->idle_ns, ULT_LD(&w->idle_ns) + d);
		return;
	}
	ULT_ST(&w->busy_ns, ULT_LD(&w->busy_ns) + d);
	ULT_ST(&from->runtime_ns, ULT_LD(&from->runtime_ns) + d);
	if (flags & SW_VOL)
		ULT_ST(&from->nvcsw, ULT_LD(&from->nvcsw) + 1);
	else if (flags & SW_INVOL)
		ULT_ST(&from->nivcsw, ULT_LD(&from->nivcsw) + 1);
}

/*
 * Runs between saving the outgoing context and loading the incoming one,
 * on the worker's scratch stack: no uthread stack is in use, so the
 * outgoing thread can be handed to its lock (after which another worker
 * may resume it at once) before we wait for the incoming thread to be
 * released by the worker that last ran it.  Releasing first is what keeps
 * two workers that swap threads from waiting on each other.  With
 * per-uthread TLS the thread pointer leaves the outgoing block before the
 * release, too (tls.h: ult__tls_mid_early).
 */
static void
switch_mid(void *arg)
{
	struct ult__worker *w = arg;
	struct thread *to = &w->curthread->td;
	unsigned spins = 0;
	int loaded = 0;

	ult__san_mid_enter(&w->scratch_san);
	MPASS(ULT_LD(&w->sw_prev->td.td_lock) == &blocked_lock);
	ult__sigmask_pre(w, w->curthread);
	if (ult__rt.tls)
		loaded = ult__tls_mid_early(w);
	if (!w->sw_dying)
		thread_lock_unblock(&w->sw_prev->td, w->sw_mtx);
	while (ULT_LD_ACQ(&to->td_lock) == &blocked_lock)
		ult__spin_backoff(&spins);
	if (ult__rt.tls && !loaded)
		ult__tls_load(w, w->curthread);
	ult__sigmask_load(w, w->curthread);
	ult__san_mid_leave(&w->curthread->san);
}

/* Save `from', resume `to'.  Returns in `from' when it next runs.  now:
 * the clock read at the start of the switch. */
static void
switch_to(struct ult__worker *w, struct ult_thread *from, struct ult_thread *to,
    struct mtx *mtx, int dying, uint64_t now)
{
	ULT_USDT(switch, from->id, to->id, from->last_swt);
	if (ULT_UNLIKELY(ULT_PLD(&ult__trace_on)))
		ult__trace_switch(w, from, to, now);
	if (to != &w->idle)
		stats_rq_delay(to, now);
	w->sw_prev = from;
	w->sw_mtx = mtx;
	w->sw_dying = dying;
	w->curthread = to;
	ULT_ST(&from->oncpu, 0);
	ULT_ST(&to->oncpu, w->id + 1); /* which worker: lock waiters ask */
	ULT_ST(&w->nswitch, ULT_LD(&w->nswitch) + 1);
	if (ULT_UNLIKELY(ULT_LD(&w->blocked)))
		ult__handoff_set(w, 0); /* back from the kernel */
	if (from == &w->idle)
		ult__worker_became_busy(w);
	else if (to == &w->idle)
		ULT_ST(&w->busy, 0);
	if (!ult__rt.tls)
		from->saved_errno = ult__errno();
	ult__san_switch(&from->san, &to->san, dying);
	ult__ctx_switch_via(&from->ctx, &to->ctx, w->scratch_top, switch_mid,
	    w);
	ult__switch_finish();
}

/*
 * First thing on the destination of a switch (and of a new thread): bury
 * the outgoing thread if it exited, count migrations, restore errno
 * (per-worker TLS).
 */
ULT_NOIPA void
ult__switch_finish(void)
{
	struct ult__worker *w = ult__worker_self();
	struct ult_thread *cur = w->curthread;

	ult__san_switched(&cur->san);
	if (w->sw_dying)
		ult__thread_dead(w, w->sw_prev);
	if (ULT_UNLIKELY(ULT_LD(&ult__host_nice)))
		ult__host_nice_apply(w);
	if (cur->last_cpu != w->id) {
		/* The migration rule (preempt.c): never moved while pinned. */
		ULT_KASSERT(!cur->preempt_pinned,
		    "a preempted uthread migrated");
		if (cur->last_cpu >= 0) {
			ULT_ST(&cur->nmigrations,
			    ULT_LD(&cur->nmigrations) + 1);
			ULT_TRACE(TEV_MIGRATE, migrate, 0, cur->id,
			    cur->last_cpu, w->id, 0);
		}
		cur->last_cpu = w->id;
	}
	if (!ult__rt.tls)
		ult__set_errno(cur->saved_errno);
}

/* What the policy chose decides, before it runs, the worker's host nice
 * (host_nice.c) and whether it polls for I/O first (ult__userret): a
 * CPU-bound thread does, and any thread once ULT_IO_POLL_GAP_NS have passed
 * since anyone looked while uthreads wait on descriptors. */
static inline void
chosen(struct ult__worker *w, struct thread *ntd, uint64_t now)
{
	int uthread = ntd != &w->idle.td;
	int bg = uthread && ULT_PLD(&ntd->td_priority) >= PRI_BACKGROUND;

	if (ULT_UNLIKELY(ULT_LD(&ult__host_nice)))
		w->hn_want = ult__host_nice_of(ntd);
	if (bg != ULT_LD(&w->run_bg))
		ULT_ST(&w->run_bg, bg);
	w->sw_poll = bg ||
	    (uthread && ULT_LD(&ult__io_nwaiting) > 0 &&
		now - ULT_LD(&ult__io_polled_ns) >= ULT_IO_POLL_GAP_NS);
}

void
ult__mi_switch(struct ult_thread *ut, int flags, struct ult_thread *hint)
{
	struct ult__worker *w = ult__worker_self();
	/* A runtime call that read the clock already lends it (spawn). */
	uint64_t now = w->clk_valid ? w->clk_ns : ult__fastclock_now();
	struct thread *ntd;
	struct mtx *mtx;

	THREAD_LOCK_ASSERT(&ut->td);
	MPASS(ut == w->curthread);
	MPASS(hint == NULL ||
	    ULT_LD(&hint->td.td_lock) == ULT_LD(&ut->td.td_lock));
	account(w, ut, now, flags);
	ut->last_swt = flags & SW_TYPE_MASK;
	ut->rq_ns = now; /* for its run-queue delay if it stays runnable */
	if (ULT_UNLIKELY(ut->preempt_pinned | ut->bind_pending))
		ult__preempt_switching(ut, flags);
	if (ULT_UNLIKELY(ut->chaos_bound | ULT_LD(&ult__chaos_migrate)))
		ult__chaos_switching(ut, flags);
	if (ULT_UNLIKELY(ult__witness_on) && (flags & SW_VOL))
		ult__witness_switch(ut, flags);
	w->clk_ns = now;
	w->clk_valid = 1;
	ntd = ult__rt.sched->switch_(&ut->td, hint ? &hint->td : NULL, flags,
	    &mtx);
	w->clk_valid = 0;
	MPASS(ULT_LD(&ut->td.td_lock) == &blocked_lock && mtx != NULL);
	chosen(w, ntd, now);
	if (ntd == &ut->td) {
		thread_lock_unblock(&ut->td, mtx);
		if (ULT_UNLIKELY(ULT_LD(&ult__host_nice)))
			ult__host_nice_apply(w);
		return;
	}
	switch_to(w, ut, ult__td2ut(ntd), mtx, 0, now);
}

/* The calling uthread exits: switch away for good.  Its stack is released
 * by whoever runs next, once nothing runs on it. */
void
ult__exit_switch(struct ult_thread *ut)
{
	struct ult__worker *w = ult__worker_self();
	uint64_t now = ult__fastclock_now();
	struct thread *ntd;

	thread_lock(&ut->td);
	MPASS(ut == w->curthread && ut != &w->idle);
	account(w, ut, now, 0);
	ULT_TRACE(TEV_EXIT, exit, now, ut->id, 0, 0, 0);
	w->clk_ns = now;
	w->clk_valid = 1;
	ntd = ult__rt.sched->throw_(&ut->td);
	w->clk_valid = 0;
	chosen(w, ntd, now);
	switch_to(w, ut, ult__td2ut(ntd), NULL, 1, now);
	abort(); /* a dead thread is never resumed */
}

/*
 * Runtime exit: the equivalent of FreeBSD's return to user mode.  Honour,
 * in order, a remote preemption request (IPI_PREEMPT), an owed preemption
 * and an AST (slice end, a better thread queued locally), then poll for
 * I/O if chosen() said so, then drop any priority boost the thread got
 * for sleeping.
 *
 * The poll: a CPU-bound thread (PRI_BACKGROUND) that was just switched to
 * polls first, and so does any thread switched to when nobody has looked
 * for ULT_IO_POLL_GAP_NS.  While the workers switch that often the clock
 * thread leaves the poller to them (clock.c), and a poll here, one system
 * call, takes what came in meanwhile onto this worker's queue.  It comes
 * after the choice, so it is made to act as if it had come before: a
 * thread it queued that is better than the chosen one preempts it.  That
 * is why it comes before the boost is dropped: an I/O wakee chosen at its
 * sleep priority is not better than the next I/O wakee, and keeps its turn
 * (dropped first, every poll that woke one would send it to the back).
 */
void
ult__userret(void)
{
	for (;;) {
		struct ult__worker *w = ult__worker_self();
		struct ult_thread *ut;
		struct thread *td;
		int woken;

		if (w == NULL || (ut = w->curthread) == &w->idle)
			return;
		td = &ut->td;
		if (ULT_LD(&w->ipi)) {
			ULT_ST(&w->ipi, 0);
			thread_lock(td);
			ult__rt.sched->preempt(td);
			thread_unlock(td);
		}
		if (ULT_LD(&td->td_owepreempt)) {
			thread_lock(td);
			ult__mi_switch(ut,
			    SW_INVOL | SW_PREEMPT | SWT_OWEPREEMPT, NULL);
			continue;
		}
		if (ULT_LD(&td->td_ast) & TDA_SCHED) {
			thread_lock(td);
			ult__rt.sched->prio(td, td->td_user_pri);
			ult__mi_switch(ut, SW_INVOL | SWT_NEEDRESCHED, NULL);
			continue;
		}
		if (ULT_UNLIKELY(w->sw_poll)) {
			w->sw_poll = 0;
			/* Then look again: a better thread it queued, or a
			 * preemption signal it made this worker owe, wants a
			 * switch. */
			if (ULT_LD(&ult__io_nwaiting) > 0) {
				w->wake_bg = 1;
				woken = ult__io_poll_now();
				w->wake_bg = 0;
				if (woken > 0) {
					thread_lock(td);
					ult__rt.sched->preempt(td);
					thread_unlock(td);
				}
				continue;
			}
		}
		if (td_userret_pending(td)) {
			thread_lock(td);
			ult__rt.sched->userret(td);
			thread_unlock(td);
		}
		return;
	}
}

/* A new uthread starts here, on its own stack. */
void
ult__thread_entry(void *arg)
{
	struct ult_thread *ut = arg;

	ult__switch_finish();
	ult__tls_enter(ut);
	ult__userret();
	ult_exit(ut->fn(ut->arg));
}
