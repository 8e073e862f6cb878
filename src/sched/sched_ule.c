/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_ule.c. */
/*
 * sched_ule: a port of FreeBSD's ULE scheduler (ULE-C, FreeBSD 14) to
 * user-level threads.  This file holds the per-CPU queues and the event
 * entry points (add, remove, switch, clock, wakeup, sleep).  Elsewhere:
 * priority changes, binding, fork and exit in sched_ule_thread.c; priority
 * arithmetic in sched_ule_prio.c; placement, stealing and balancing in
 * sched_ule_smp.c, over the topology searches of sched_ule_search.c; the
 * idle loop in sched_ule_idle.c; the tunables in sched_ule_tun.c; the
 * invariants checker and statistics in sched_ule_check.c.
 *
 * The policy is pure: time comes from mach_ticks(), the calling CPU from
 * mach_curcpu(), and anything that would be an IPI or an AST goes through
 * machine.h.  The runtime and the simulator both run this same code.
 *
 * One deliberate difference from the kernel: the clock for a CPU is
 * delivered by a separate thread rather than by an interrupt on that CPU,
 * so sched_clock takes the run-queue lock itself and runs the balancer
 * after dropping it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"
#include "sched_lend.h"
#include "sched_ule.h"

struct tdq *ule_tdq_cpu;
int ule_ncpu;
int ule_nactive;
const struct cpu_group *ule_cpu_top;
cpuset_t ule_all_cpus;

/* The balancer runs from CPU 0's clock, under CPU 0's queue lock. */
static int balance_ticks;

/*
 * Per-CPU linear congruential generators, seeded like FreeBSD's
 * (cpu * 69069 + 5).  Slot ule_ncpu serves callers that are not CPUs.
 */
static atomic_uint *sched_randomval;

unsigned
ule_random(void)
{
	int self = mach_curcpu();
	atomic_uint *rnd = &sched_randomval[self >= 0 ? self : ule_ncpu];
	unsigned v = ULT_LD(rnd) * 69069 + 5;

	ULT_ST(rnd, v);
	return (v >> 16);
}

/* td may be another CPU's current thread, its priority lent meanwhile
 * under other locks: load it atomically. */
static inline int
is_batch(struct thread *td)
{
	int pri = ULT_PLD(&td->td_priority);

	return (pri >= PRI_MIN_BATCH && pri <= PRI_MAX_BATCH);
}

/*
 * Run queue placement.  Interrupt, realtime and interactive priorities
 * go to tdq_realtime in strict priority order; batch priorities go to the
 * timeshare calendar, placed ahead of the insert index by how bad their
 * priority is, so that every batch thread is reached eventually; idle
 * class goes to tdq_idle.
 */
void
tdq_runq_add(struct tdq *tdq, struct thread *td, int flags)
{
	struct td_sched *ts = td_get_sched(td);
	int pri = td->td_priority;

	TDQ_LOCK_ASSERT(tdq);
	MPASS(ts->ts_cpu == TDQ_ID(tdq));
	MPASS(!TD_ON_RUNQ(td));
	TD_SET_RUNQ(td);
	if (THREAD_CAN_MIGRATE(td)) {
		ULT_ST(&tdq->tdq_transferable, TDQ_TRANSFERABLE(tdq) + 1);
		ts->ts_flags |= TSF_XFERABLE;
	}
	if (pri < PRI_MIN_BATCH) {
		ts->ts_runq = &tdq->tdq_realtime;
	} else if (pri <= PRI_MAX_BATCH) {
		/* An empty batch queue that fills starts waiting now
		 * (batch_guard); not a batch thread put back as it leaves
		 * the CPU, whose wait began before it ran. */
		if (ULT_UNLIKELY(TUN(ule_tun.batch_guard)) &&
		    runq_empty(&tdq->tdq_timeshare) &&
		    !is_batch(ULT_LD(&tdq->tdq_curthread)))
			tdq->tdq_batch_tick = mach_ticks();
		ts->ts_runq = &tdq->tdq_timeshare;
		if ((flags & (SRQ_BORROWING | SRQ_PREEMPTED)) == 0) {
			pri = RQ_NQS * (pri - PRI_MIN_BATCH) / PRI_BATCH_RANGE;
			pri = (pri + tdq->tdq_idx) % RQ_NQS;
			/*
			 * Keep one slot between the insert and removal
			 * indexes while a bucket drains, so a new thread
			 * cannot land in the bucket being drained.
			 */
			if (tdq->tdq_ridx != tdq->tdq_idx &&
			    pri == tdq->tdq_ridx)
				pri = (pri + RQ_NQS - 1) % RQ_NQS;
		} else
			pri = tdq->tdq_ridx;
		runq_add_pri(ts->ts_runq, td, pri, flags);
		return;
	} else
		ts->ts_runq = &tdq->tdq_idle;
	runq_add(ts->ts_runq, td, flags);
}

void
tdq_runq_rem(struct tdq *tdq, struct thread *td)
{
	struct td_sched *ts = td_get_sched(td);

	TDQ_LOCK_ASSERT(tdq);
	MPASS(TD_ON_RUNQ(td));
	MPASS(ts->ts_cpu == TDQ_ID(tdq));
	if (ts->ts_flags & TSF_XFERABLE) {
		ULT_ST(&tdq->tdq_transferable, TDQ_TRANSFERABLE(tdq) - 1);
		ts->ts_flags &= ~TSF_XFERABLE;
	}
	if (ts->ts_runq == &tdq->tdq_timeshare) {
		if (tdq->tdq_idx != tdq->tdq_ridx)
			runq_remove_idx(ts->ts_runq, td, &tdq->tdq_ridx);
		else
			runq_remove_idx(ts->ts_runq, td, NULL);
	} else
		runq_remove(ts->ts_runq, td);
}

static void
tdq_load_add(struct tdq *tdq)
{
	ULT_ST(&tdq->tdq_load, TDQ_LOAD(tdq) + 1);
}

static void
tdq_load_rem(struct tdq *tdq)
{
	MPASS(TDQ_LOAD(tdq) > 0);
	ULT_ST(&tdq->tdq_load, TDQ_LOAD(tdq) - 1);
	/* Whatever was queued behind the running thread has run, or runs
	 * now (ule_tdq_take_stale). */
	if (TDQ_LOAD(tdq) <= 1)
		ULT_ST(&tdq->tdq_nlow, ULT_LD(&tdq->tdq_nlow) + 1);
}

/*
 * tdq_lowpri never claims worse than the truth: it is at most the current
 * thread's priority and at most (to run-queue granularity) the best queued
 * realtime or interactive thread's.  Checked where it changes.
 */
void
tdq_assert_lowpri(struct tdq *tdq)
{
#ifdef ULT_INVARIANTS
	struct thread *cur = ULT_LD(&tdq->tdq_curthread);
	struct thread *rt = runq_choose(&tdq->tdq_realtime);
	int lowpri = TDQ_LOWPRI(tdq);

	TDQ_LOCK_ASSERT(tdq);
	ULT_KASSERT(lowpri <= cur->td_priority, "tdq_lowpri above curthread");
	ULT_KASSERT(rt == NULL || lowpri / RQ_PPQ <= rt->td_priority / RQ_PPQ,
	    "tdq_lowpri above the best queued thread");
#else
	(void)tdq;
#endif
}

/* Add to the queue and load; returns the old lowpri for ule_tdq_notify(). */
int
ule_tdq_add(struct tdq *tdq, struct thread *td, int flags)
{
	int lowpri = TDQ_LOWPRI(tdq);

	THREAD_LOCK_ASSERT(td);
	MPASS(ULT_LD(&td->td_lock) == TDQ_LOCKPTR(tdq) ||
	    ULT_LD(&td->td_lock) == &blocked_lock);
	if (td->td_priority < lowpri)
		ULT_ST(&tdq->tdq_lowpri, td->td_priority);
	tdq_runq_add(tdq, td, flags);
	tdq_load_add(tdq);
	tdq_assert_lowpri(tdq);
	return (lowpri);
}

static struct thread *
tdq_choose(struct tdq *tdq)
{
	struct thread *td;

	if ((td = runq_choose(&tdq->tdq_realtime)) != NULL)
		return (td);
	if ((td = runq_choose_from(&tdq->tdq_timeshare, tdq->tdq_ridx)) != NULL)
		return (td);
	return (runq_choose(&tdq->tdq_idle));
}

/* lowpri = best of the current thread and the first queued one. */
void
tdq_setlowpri(struct tdq *tdq, struct thread *ctd)
{
	struct thread *td;

	TDQ_LOCK_ASSERT(tdq);
	if (ctd == NULL)
		ctd = ULT_LD(&tdq->tdq_curthread);
	td = tdq_choose(tdq);
	if (td == NULL || td->td_priority > ctd->td_priority)
		ULT_ST(&tdq->tdq_lowpri, ctd->td_priority);
	else
		ULT_ST(&tdq->tdq_lowpri, td->td_priority);
	if (ctd == ULT_LD(&tdq->tdq_curthread))
		tdq_assert_lowpri(tdq);
}

/*
 * ult (kern.sched.batch_guard, in ms; 0, the default, is FreeBSD's rule):
 * when batch threads have been queued here for batch_guard ms without
 * one running a stat tick, the next switch runs one ahead of interactive
 * timeshare threads (never ahead of the realtime class).  FreeBSD always
 * runs the interactive queue first, so interactive threads that want
 * more CPU than there is starve every batch thread indefinitely
 * (sim/scenarios/starvation.scn).  A preemption before the batch thread
 * has run its stat tick picks it again; at that tick the stamp moves and
 * the batch thread's turn ends (batch_tick), and the interactive threads
 * have the CPU for another batch_guard ms.  Batch
 * gets about one stat tick (1/stathz) per period; an interactive thread
 * waits that much longer at most.
 */
static struct thread *
batch_due(struct tdq *tdq, struct thread *td)
{
	if (td == NULL || td->td_priority < PRI_MIN_INTERACT ||
	    td->td_priority >= PRI_MIN_BATCH ||
	    runq_empty(&tdq->tdq_timeshare) ||
	    mach_ticks() - tdq->tdq_batch_tick < TUN(ule_tun.batch_guard))
		return (td);
	return (runq_choose_from(&tdq->tdq_timeshare, tdq->tdq_ridx));
}

static struct thread *
choosethread(struct tdq *tdq)
{
	struct thread *best = tdq_choose(tdq), *td = best;

	TDQ_LOCK_ASSERT(tdq);
	if (ULT_UNLIKELY(TUN(ule_tun.batch_guard)))
		td = batch_due(tdq, best);
	/* lowpri is the best queued thread's even when the batch guard runs
	 * another: only what beats it preempts the batch thread. */
	if (td != NULL) {
		tdq_runq_rem(tdq, td);
		ULT_ST(&tdq->tdq_lowpri, best->td_priority);
	} else {
		ULT_ST(&tdq->tdq_lowpri, PRI_MAX_IDLE);
		td = tdq->tdq_idlethread;
	}
	if (ULT_UNLIKELY(TUN(ule_tun.balance_fair)))
		ULT_ST(&tdq->tdq_curpct,
		    TD_IS_IDLETHREAD(td)
			? 0
			: (int)SCHED_TICK_HZ(td_get_sched(td)));
	ULT_ST(&tdq->tdq_curthread, td);
	TD_SET_RUNNING(td);
	td->td_oncpu = tdq->tdq_id;
	return (td);
}

/*
 * Should a thread of priority pri preempt one at cpri?  Only when it is
 * better and either the CPU runs an idle-class thread, or pri is at or
 * above preempt_thresh, or (on a remote CPU) an interactive thread would
 * displace a batch one.  Other wakeups wait for the next AST.
 */
int
ule_shouldpreempt(int pri, int cpri, int remote)
{
	if (pri >= cpri)
		return (0);
	if (cpri >= PRI_MIN_IDLE)
		return (1);
	if (TUN(ule_tun.preempt_thresh) == 0)
		return (0);
	if (pri <= TUN(ule_tun.preempt_thresh))
		return (1);
	if (remote && pri <= PRI_MAX_INTERACT && cpri > PRI_MAX_INTERACT)
		return (1);
	return (0);
}

/*
 * A thread of priority pri was added to the calling CPU's queue.  When
 * the clock thread acts for this CPU, the current thread may be in the
 * middle of switching away (its lock is then not this queue's): it will
 * choose among the queue anyway, so there is nothing to request.
 */
void
ule_setpreempt(struct tdq *tdq, int pri)
{
	struct thread *ctd = ULT_LD(&tdq->tdq_curthread);
	int cpri;

	TDQ_LOCK_ASSERT(tdq);
	/* Work for an idle CPU: its worker must look at its queue, whatever
	 * the priority (an idle-class thread at rtprio 31 ties with the idle
	 * thread, and no priority test would wake the worker for it). */
	if (ctd == tdq->tdq_idlethread) {
		mach_ast(ctd, TDQ_ID(tdq));
		return;
	}
	if (ULT_LD(&ctd->td_lock) != TDQ_LOCKPTR(tdq))
		return;
	cpri = ctd->td_priority;

	if (pri < cpri)
		mach_ast(ctd, tdq->tdq_id);
	if (pri >= cpri || TD_IS_INHIBITED(ctd))
		return;
	if (!ule_shouldpreempt(pri, cpri, 0))
		return;
	ULT_ST(&ctd->td_owepreempt, 1);
}

/*
 * ult (kern.sched.wake_local): td was woken by self's running thread,
 * which hands work over and is likely to block soon (SRQ_SYNC).  It runs
 * next on self, like Go's runnext, instead of costing a wakeup of another
 * CPU now and a cache transfer, unless priorities say otherwise: self
 * already has work queued, or td would preempt its waker.  Queued there it
 * asks for no AST: it runs when the waker blocks, at the waker's next stat
 * tick (ule_clock), or on an idle CPU that takes it once it has waited a
 * poll interval (ule_tdq_take_stale).  Returns self, or -1 for FreeBSD's
 * placement.
 */
static int
pick_sync(struct thread *td, int flags, int self)
{
	struct tdq *me = TDQ_CPU(self);
	struct thread *ctd = ULT_LD(&me->tdq_curthread);

	/* A child that runs first (SRQ_FORKING) is switched to at once
	 * whatever waits here; an idle CPU then takes its creator. */
	if (!THREAD_CAN_MIGRATE(td) || ctd == me->tdq_idlethread ||
	    (TDQ_LOAD(me) != 1 && !(flags & SRQ_FORKING)))
		return (-1);
	/* With nothing queued, lowpri is the waker's priority; the waker's
	 * own field is under a lock we do not hold. */
	if (ule_shouldpreempt(td->td_priority, TDQ_LOWPRI(me), 0))
		return (-1);
	return (self);
}

/*
 * ult (kern.sched.wake_local): FreeBSD's placement put td, woken by self's
 * running thread (SRQ_SYNC), on self's own queue.  FreeBSD asks the waker
 * for an AST whenever td's priority is better, so that a waker that runs
 * on switches at its return to user mode.  A uthread returns to its own
 * code at every ult call, and a producer feeding interactive consumers
 * then switched once per item: each consumer ran for one item and slept
 * again.  As for pick_sync's thread, the AST is deferred unless td
 * preempts outright (ule_shouldpreempt: a realtime or kernel priority, or
 * an idle-class waker): the waker usually blocks soon, or an idle CPU
 * takes td.  A waker that has not switched for a tick since the first
 * such deferral gets FreeBSD's AST at its next wakeup, and one that wakes
 * nobody more at its next stat tick (ule_clock): a batch thread that
 * keeps waking interactive ones without blocking makes them wait about a
 * tick at most, not a slice.  Returns 1 when the AST is so deferred.
 */
static int
sync_defer(struct tdq *tdq, struct thread *td, int flags)
{
	struct thread *ctd = ULT_LD(&tdq->tdq_curthread);

	TDQ_LOCK_ASSERT(tdq);
	if (!(flags & SRQ_SYNC) || !TUN(ule_tun.wake_local) ||
	    ule_cpu_reserved(TDQ_ID(tdq)) || ctd == tdq->tdq_idlethread ||
	    ULT_LD(&ctd->td_lock) != TDQ_LOCKPTR(tdq))
		return (0);
	if (ule_shouldpreempt(td->td_priority, ctd->td_priority, 0))
		return (0);
	return (!tdq->tdq_syncwait || tdq->tdq_syncwait_tick == mach_ticks());
}

void
ule_add(struct thread *td, int flags)
{
	int self = mach_curcpu();
	struct tdq *tdq;
	int cpu = -1, lowpri, sync;

	THREAD_LOCK_ASSERT(td);
	MPASS(!TD_ON_RUNQ(td) && !TD_IS_RUNNING(td));
	/* Recompute the user priority before choosing a CPU and queue. */
	if (PRI_BASE(td->td_pri_class) == PRI_TIMESHARE)
		ule_priority(td);
	if ((flags & SRQ_SYNC) && self >= 0 && TUN(ule_tun.wake_local) &&
	    !ule_cpu_reserved(self))
		cpu = pick_sync(td, flags, self);
	sync = cpu >= 0;
	if (!sync)
		cpu = ule_pickcpu(td, flags, self, mach_ticks());
	tdq = ule_setcpu(td, cpu, flags);
	lowpri = ule_tdq_add(tdq, td, flags);
	if (!sync && cpu == self && !(flags & SRQ_YIELDING))
		sync = sync_defer(tdq, td, flags);
	if (sync) {
		if (!tdq->tdq_syncwait)
			tdq->tdq_syncwait_tick = mach_ticks();
		tdq->tdq_syncwait = 1;
		ule_wakep(self);
	} else if (cpu != self)
		ule_tdq_notify(tdq, lowpri);
	else if (!(flags & SRQ_YIELDING))
		ule_setpreempt(tdq, td->td_priority);
	if (!(flags & SRQ_HOLDTD))
		thread_unlock(td);
}

void
ule_rem(struct thread *td)
{
	struct tdq *tdq = TDQ_CPU(td_get_sched(td)->ts_cpu);

	THREAD_LOCK_ASSERT(td);
	tdq_runq_rem(tdq, td);
	tdq_load_rem(tdq);
	TD_SET_CAN_RUN(td);
	if (td->td_priority == TDQ_LOWPRI(tdq))
		tdq_setlowpri(tdq, NULL);
	tdq_assert_lowpri(tdq);
}

/*
 * The outgoing thread td leaves the CPU.  The thread lock is blocked
 * first so the run-queue lock can be dropped before the context switch;
 * nobody can touch td until the switch code stores *mtxp into td_lock.
 */
static struct thread *
ule_switch(struct thread *td, struct thread *newtd, int flags,
    struct mtx **mtxp)
{
	int cpuid = mach_curcpu(), now = mach_ticks();
	struct tdq *tdq = TDQ_CPU(cpuid);
	struct td_sched *ts = td_get_sched(td);
	struct mtx *mtx;
	int srqflag, preempted, pickcpu;

	THREAD_LOCK_ASSERT(td);
	MPASS(cpuid >= 0 && td == ULT_LD(&tdq->tdq_curthread));
	MPASS(td->td_oncpu == cpuid);
	MPASS(!TD_IS_RUNNING(td) || ULT_LD(&td->td_lock) == TDQ_LOCKPTR(tdq));
	MPASS(newtd == NULL ||
	    (TD_CAN_RUN(newtd) && ULT_LD(&newtd->td_lock) == TDQ_LOCKPTR(tdq)));
	ule_pctcpu_update(ts, 1, now);
	pickcpu = (td->td_flags & TDF_PICKCPU) != 0;
	if (pickcpu)
		ts->ts_rltick = now - TUN(ule_tun.affinity) * MAX_CACHE_LEVELS;
	else
		ts->ts_rltick = now;
	td->td_lastcpu = td->td_oncpu;
	td->td_oncpu = NOCPU; /* before another CPU can pick td up */
	preempted =
	    (td->td_flags & TDF_SLICEEND) == 0 && (flags & SW_PREEMPT) != 0;
	if (td->td_flags & (TDF_PICKCPU | TDF_SLICEEND))
		td->td_flags &= ~(TDF_PICKCPU | TDF_SLICEEND);
	if (ULT_LD(&td->td_ast) & TDA_SCHED)
		atomic_fetch_and_explicit(&td->td_ast, ~TDA_SCHED,
		    memory_order_relaxed);
	ULT_ST(&td->td_owepreempt, 0);
	ULT_ST(&tdq->tdq_owepreempt, 0);

	mtx = thread_lock_block(td);
	if (TD_IS_IDLETHREAD(td)) {
		TD_SET_CAN_RUN(td);
	} else if (TD_IS_RUNNING(td)) {
		srqflag = SRQ_OURSELF | SRQ_YIELDING |
		    (preempted ? SRQ_PREEMPTED : 0);
		if (THREAD_CAN_MIGRATE(td) && pickcpu)
			ts->ts_cpu = ule_pickcpu(td, 0, cpuid, now);
		if (ts->ts_cpu == cpuid)
			tdq_runq_add(tdq, td, srqflag);
		else
			mtx = ule_switch_migrate(tdq, td, srqflag);
	} else {
		/* Going to sleep: mtx is the sleep queue's lock. */
		if (mtx != TDQ_LOCKPTR(tdq)) {
			mtx_unlock_spin(mtx);
			TDQ_LOCK(tdq);
		}
		tdq_load_rem(tdq);
		if (TDQ_LOAD(tdq) == 0)
			ule_tdq_trysteal(tdq);
	}
	TDQ_LOCK_ASSERT(tdq);
	/* Counted under the queue lock: the clock resets it there. */
	tdq->tdq_syncwait = 0;
	if (!TD_IS_IDLETHREAD(td))
		ULT_ST(&tdq->tdq_switchcnt, ULT_LD(&tdq->tdq_switchcnt) + 1);

	if (newtd != NULL) {
		/* Handed over by the caller, which took it off our queue. */
		td_get_sched(newtd)->ts_cpu = cpuid;
		tdq_load_add(tdq);
		ULT_ST(&tdq->tdq_curthread, newtd);
		TD_SET_RUNNING(newtd);
		newtd->td_oncpu = cpuid;
		tdq_setlowpri(tdq, newtd);
	} else
		newtd = choosethread(tdq);
	ule_pctcpu_update(td_get_sched(newtd), 0, now);
	tdq_assert_lowpri(tdq);
	TDQ_UNLOCK(tdq);
	*mtxp = mtx;
	return (newtd);
}

static struct thread *
ule_throw(struct thread *td)
{
	int cpuid = mach_curcpu(), now = mach_ticks();
	struct tdq *tdq = TDQ_CPU(cpuid);
	struct thread *newtd;

	TDQ_LOCK_ASSERT(tdq);
	MPASS(td == ULT_LD(&tdq->tdq_curthread) && TD_IS_RUNNING(td));
	tdq_load_rem(tdq);
	td->td_lastcpu = td->td_oncpu;
	td->td_oncpu = NOCPU;
	ULT_ST(&tdq->tdq_owepreempt, 0); /* as ule_switch: this is a switch */
	TD_SET_CAN_RUN(td);
	thread_lock_block(td);
	newtd = choosethread(tdq);
	ule_pctcpu_update(td_get_sched(newtd), 0, now);
	TDQ_UNLOCK(tdq);
	return (newtd);
}

/* Back to user mode (sched_lend.h); ULE also refreshes tdq_lowpri. */
static void
ule_userret(struct thread *td)
{
	THREAD_LOCK_ASSERT(td);
	MPASS(TD_IS_RUNNING(td) && td_get_sched(td)->ts_cpu == td->td_oncpu);
	if (sched_common_userret(td))
		tdq_setlowpri(TDQ_CPU(td->td_oncpu), td);
}

/*
 * Going to sleep.  By default (static_boost = PRI_MIN_BATCH) a sleeping
 * batch thread is raised to the best batch priority, so that when it wakes
 * it is queued at the calendar's insert index, ahead of other batch work;
 * the boost lasts until it returns to user mode.
 */
static void
ule_sleep(struct thread *td, int prio)
{
	int boost = TUN(ule_tun.static_boost), force = prio & PRI_SLEEP_BOOST;

	THREAD_LOCK_ASSERT(td);
	td->td_slptick = mach_ticks();
	if (PRI_BASE(td->td_pri_class) != PRI_TIMESHARE)
		return;
	prio &= PRI_SLEEP_MASK;
	if ((boost == 1 || force) && prio)
		ule_prio(td, prio);
	else if (boost && td->td_priority > boost)
		ule_prio(td, boost);
}

/* Sleeps of a tick or more earn sleep credit; the slice starts over. */
static void
ule_wakeup(struct thread *td, int srqflags)
{
	struct td_sched *ts = td_get_sched(td);
	int now = mach_ticks(), slptick = td->td_slptick;

	THREAD_LOCK_ASSERT(td);
	MPASS(TD_CAN_RUN(td));
	td->td_slptick = 0;
	if (slptick && slptick != now) {
		/* Past twice the history limit the clamp in
		 * ule_interact_update() decides anyway; capping here
		 * keeps the unsigned sum from wrapping. */
		unsigned d = (unsigned)(now - slptick);

		if (d > 2 * (SCHED_SLP_RUN_MAX >> SCHED_TICK_SHIFT) + 1)
			d = 2 * (SCHED_SLP_RUN_MAX >> SCHED_TICK_SHIFT) + 1;
		ts->ts_slptime += d << SCHED_TICK_SHIFT;
		ule_interact_update(td);
		ule_pctcpu_update(ts, 0, now);
	}
	ts->ts_slice = 0;
	ule_add(td, SRQ_BORING | srqflags);
}

/*
 * batch_guard at a stat tick: a batch thread has now run one, so batch's
 * wait starts again; and if better threads are queued it ends its turn
 * here (the guard let it ahead of them; its slice would be longer).
 */
static void
batch_tick(struct tdq *tdq, struct thread *td, int now, int cpu)
{
	int batch = is_batch(td);

	if (batch || runq_empty(&tdq->tdq_timeshare))
		tdq->tdq_batch_tick = now;
	if (batch && TDQ_LOWPRI(tdq) < td->td_priority) {
		td->td_flags |= TDF_SLICEEND;
		mach_ast(td, cpu);
	}
}

/*
 * Once per stat tick for the thread running on cpu: charge it, rotate the
 * calendar, and end its slice when used up.  The slice end is an AST, not
 * a preemption: the thread goes to the tail of its queue with a freshly
 * computed priority.
 */
static void
ule_clock(int cpu, int cnt)
{
	struct tdq *tdq = TDQ_CPU(cpu);
	struct thread *td;
	struct td_sched *ts;
	int now = mach_ticks(), do_balance = 0;

	TDQ_LOCK(tdq);
	if (cpu == 0 && TUN(ule_tun.rebalance) && balance_ticks != 0 &&
	    ule_nactive > 1) {
		balance_ticks -= cnt;
		if (balance_ticks <= 0) {
			int bi = TUN(ule_tun.balance_interval);

			balance_ticks = (bi / 2 > 1 ? bi / 2 : 1) +
			    (int)(ule_random() % (unsigned)bi);
			do_balance = 1;
		}
	}
	ULT_ST(&tdq->tdq_oldswitchcnt, ULT_LD(&tdq->tdq_switchcnt));
	ULT_ST(&tdq->tdq_switchcnt, TDQ_LOAD(tdq));
	/* Advance the insert index once per tick so every bucket is
	 * reached; it waits while the bucket being drained is not empty. */
	if (tdq->tdq_idx == tdq->tdq_ridx) {
		tdq->tdq_idx = (uint8_t)((tdq->tdq_idx + 1) % RQ_NQS);
		if (ult__list_empty(
			&tdq->tdq_timeshare.rq_queues[tdq->tdq_ridx]))
			tdq->tdq_ridx = tdq->tdq_idx;
	}
	td = ULT_LD(&tdq->tdq_curthread);
	/*
	 * The kernel's statclock interrupts its own CPU and so never meets a
	 * thread halfway through sched_switch.  Ours runs beside the CPU: a
	 * current thread whose lock is not this queue's is going to sleep or
	 * being switched out right now, and its state is not ours to touch;
	 * that tick is not charged.
	 */
	if (ULT_LD(&td->td_lock) != TDQ_LOCKPTR(tdq))
		goto out;
	if (ULT_UNLIKELY(TUN(ule_tun.batch_guard)))
		batch_tick(tdq, td, now, cpu);
	ts = td_get_sched(td);
	ule_pctcpu_update(ts, 1, now);
	if (ULT_UNLIKELY(TUN(ule_tun.balance_fair)))
		ULT_ST(&tdq->tdq_curpct, (int)SCHED_TICK_HZ(ts));
	if ((td->td_pri_class & PRI_FIFO_BIT) || TD_IS_IDLETHREAD(td))
		goto out;
	if (PRI_BASE(td->td_pri_class) == PRI_TIMESHARE) {
		ts->ts_runtime += (unsigned)(TUN(ule_tun.tickincr) * cnt);
		ule_interact_update(td);
		ule_priority(td);
	}
	ts->ts_slice += cnt;
	if (ts->ts_slice >= ule_td_slice(td, tdq)) {
		ts->ts_slice = 0;
		td->td_flags |= TDF_SLICEEND;
		mach_ast(td, cpu);
	} else if (tdq->tdq_syncwait && TDQ_LOWPRI(tdq) < td->td_priority)
		/* ult: a better thread queued here without an AST, to run
		 * after its waker (pick_sync), waits at most this tick. */
		mach_ast(td, cpu);
out:
	TDQ_UNLOCK(tdq);
	if (do_balance)
		ule_balance();
}

/* IPI_PREEMPT arrived: switch if something better is queued here. */
static void
ule_preempt(struct thread *td)
{
	struct tdq *tdq = TDQ_CPU(td_get_sched(td)->ts_cpu);

	THREAD_LOCK_ASSERT(td);
	MPASS(TD_IS_RUNNING(td) && td_get_sched(td)->ts_cpu == td->td_oncpu);
	if (td->td_priority > TDQ_LOWPRI(tdq))
		ULT_ST(&td->td_owepreempt, 1);
	else
		ULT_ST(&tdq->tdq_owepreempt, 0);
}

static int
ule_init(void)
{
	int n = mach_ncpu();

	ule_tdq_cpu = ult__zalloc_cl((size_t)n, sizeof(struct tdq));
	sched_randomval = ult__calloc((size_t)n + 1, sizeof(*sched_randomval));
	if (ule_tdq_cpu == NULL || sched_randomval == NULL) {
		free(ule_tdq_cpu);
		free(sched_randomval);
		ule_tdq_cpu = NULL;
		sched_randomval = NULL;
		return (ENOMEM);
	}
	ule_ncpu = n;
	ule_nactive = mach_ncpu_active();
	ule_cpu_top = mach_cpu_top();
	CS_FILL_N(&ule_all_cpus, ule_nactive);
	for (int c = 0; c < n; c++) {
		struct tdq *tdq = TDQ_CPU(c);

		memset(tdq, 0, sizeof(*tdq));
		mtx_init(&tdq->tdq_lock, "tdq");
		tdq->tdq_id = c;
		tdq->tdq_cg = ult__topo_find(ule_cpu_top, c);
		ULT_ST(&tdq->tdq_lowpri, PRI_MAX_IDLE);
		runq_init(&tdq->tdq_realtime);
		runq_init(&tdq->tdq_timeshare);
		runq_init(&tdq->tdq_idle);
		ULT_ST(&sched_randomval[c], (unsigned)c * 69069 + 5);
	}
	ULT_ST(&sched_randomval[n], (unsigned)n * 69069 + 5);
	balance_ticks = TUN(ule_tun.balance_interval);
	ULT_ST(&ule_wakep_tick, mach_ticks() - 1);
	return (0);
}

static void
ule_fini(void)
{
	free(ule_tdq_cpu);
	free(sched_randomval);
	ule_tdq_cpu = NULL;
	sched_randomval = NULL;
	ule_ncpu = 0;
	ule_nactive = 0;
}

const struct sched_ops ult__sched_ule = {
    .name = "ULE",
    .init = ule_init,
    .fini = ule_fini,
    .thread_init = ule_thread_init,
    .idle_init = ule_idle_init,
    .fork = ule_fork,
    .exit = ule_exit,
    .add = ule_add,
    .rem = ule_rem,
    .switch_ = ule_switch,
    .throw_ = ule_throw,
    .sleep = ule_sleep,
    .wakeup = ule_wakeup,
    .clock = ule_clock,
    .preempt = ule_preempt,
    .userret = ule_userret,
    .nice = ule_nice,
    .prio = ule_prio,
    .lend_prio = ule_lend_prio,
    .unlend_prio = ule_unlend_prio,
    .set_class = ule_set_class,
    .bind = ule_bind,
    .unbind = ule_unbind,
    .is_bound = ule_is_bound,
    .evacuate = ule_evacuate,
    .idle_poll = ule_idle_poll,
    .idle_enter = ule_idle_enter,
    .idle_exit = ule_idle_exit,
    .load = ule_load,
    .thread_stats = ule_thread_stats,
    .cpu_stats = ule_cpu_stats,
    .tunables = ule_tunables,
    .slice_min_us = ule_slice_min_us,
    .check = ule_check,
    .dump = ule_dump,
};
