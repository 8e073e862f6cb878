/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_4bsd.c. */
/*
 * sched_4bsd: the scheduler ULE replaced (FreeBSD's kern/sched_4bsd.c),
 * behind the same ops table, so that the two can be compared on the same
 * runtime (docs/ULE.md section 9).
 *
 * One global run queue under one global lock, FreeBSD's old sched_lock
 * (bsd_sched_lock here): every runnable or running thread's td_lock is
 * &bsd_sched_lock, and every CPU takes it to choose, add, switch and
 * tick.  Per-CPU queues exist only for
 * threads that must run on one CPU (bound, or pinned).  Priority is
 * recomputed from a decayed CPU-usage estimate, td_estcpu, charged per
 * stat tick and decayed once a second by a filter of the load average;
 * sleepers catch up on that decay when they wake.  A round-robin slice of
 * kern.sched.slice stat ticks (bsd_tun.slice, 100 ms) ends in an AST.
 *
 * Pure like sched_ule: time and CPU come through machine.h.
 *
 * This file holds the queues and the event entry points; thread init,
 * fork and exit are in sched_4bsd_thread.c, the CPU-usage arithmetic
 * (estcpu, pctcpu, the load average) in sched_4bsd_cpu.c, and the
 * invariants checker, statistics and tunables in sched_4bsd_check.c.
 *
 * Deviations, all for user space: schedcpu() visits only threads that are
 * queued or running (it runs from CPU 0's clock under bsd_sched_lock, which
 * cannot also take the sleep queues' locks); a sleeper's pctcpu and estcpu
 * decay for the seconds it slept is applied when it wakes, which
 * updatepri() does for estcpu in FreeBSD anyway.  A wakeup from a thread
 * that is not a CPU (the clock, a foreign pthread) is treated like a
 * remote add: an idle CPU is woken, else the CPU running the worst thread
 * is asked to reschedule.  FIFO realtime threads get no slice end.
 */
#include <errno.h>
#include <stdlib.h>

#include "../util/mem.h"
#include "sched_4bsd.h"
#include "sched_lend.h"

#define LOADAV_TICKS (5 * ULT_HZ)

/* The shared state; the locking key is in sched_4bsd.h. */
struct mtx bsd_sched_lock = MTX_INITIALIZER("sched_lock");
static struct runq runq;	    /* (s) the global queue */
static struct runq *runq_pcpu;	    /* (c) bound and pinned threads, (s) */
atomic_int *bsd_runq_length;	    /* (c) per-CPU queue lengths, (ss) */
atomic_int bsd_runq_global_len;	    /* (ss) global queue length */
atomic_int bsd_sched_tdcnt;	    /* (s) running + queued, not idle */
struct thread *_Atomic *bsd_curthr; /* (c) per CPU, (ss) */
struct thread **bsd_idlethr;	    /* (c) per CPU */
static atomic_int *cpu_idle;	    /* (c) idle thread about to sleep, (ls) */
int bsd_ncpu;			    /* (c) */
int bsd_nactive;		    /* (c) */
static int next_loadav, next_schedcpu; /* (s) CPU 0's clock */

/* Tunables (kern.sched.*). */
struct bsd_tun bsd_tun = {
    .slice = ULT_STATHZ / 10,
    .wake_local = 1,
};

/* ---- queues ------------------------------------------------------ */

struct runq *
bsd_rq_of(int idx)
{
	return (idx < 0 ? &runq : &runq_pcpu[idx]);
}

static void
runq_put(struct thread *td, int flags)
{
	struct td_sched *ts = ts_of(td);
	int q = -1;

	MTX_ASSERT_OWNED(&bsd_sched_lock);
	MPASS(!TD_ON_RUNQ(td));
	if (ts->ts_flags & TSF_BOUND)
		q = ts->ts_cpu;
	else if (td->td_pinned && td->td_lastcpu != NOCPU)
		q = td->td_lastcpu;
	ts->ts_runq = q;
	runq_add(bsd_rq_of(q), td, flags);
	if (q < 0)
		ULT_ST(&bsd_runq_global_len, ULT_LD(&bsd_runq_global_len) + 1);
	else
		ULT_ST(&bsd_runq_length[q], ULT_LD(&bsd_runq_length[q]) + 1);
	TD_SET_RUNQ(td);
}

static void
runq_take(struct thread *td)
{
	int q = ts_of(td)->ts_runq;

	MTX_ASSERT_OWNED(&bsd_sched_lock);
	MPASS(TD_ON_RUNQ(td));
	runq_remove(bsd_rq_of(q), td);
	if (q < 0)
		ULT_ST(&bsd_runq_global_len, ULT_LD(&bsd_runq_global_len) - 1);
	else
		ULT_ST(&bsd_runq_length[q], ULT_LD(&bsd_runq_length[q]) - 1);
}

/* Best queued thread for cpu: global, unless its own queue beats it. */
static struct thread *
runq_best(int cpu)
{
	struct thread *td = bsd_reserved(cpu) ? NULL : runq_choose(&runq);
	struct thread *tdc = runq_choose(&runq_pcpu[cpu]);

	if (tdc != NULL && (td == NULL || tdc->td_priority < td->td_priority))
		td = tdc;
	return (td);
}

/*
 * Move a queued thread to the tail of the queue its priority now selects,
 * on the same run queue.  The queue lengths do not change: an idle CPU
 * reads them without bsd_sched_lock to decide whether to sleep, and a length
 * that drops to zero for an instant can send it to sleep with work queued
 * and nobody left to wake it.
 */
static void
runq_relink(struct thread *td, int prio)
{
	struct runq *rq = bsd_rq_of(ts_of(td)->ts_runq);

	MTX_ASSERT_OWNED(&bsd_sched_lock);
	MPASS(TD_ON_RUNQ(td));
	runq_remove(rq, td);
	td_set_pri(td, prio);
	runq_add(rq, td, 0);
}

/* ---- priorities --------------------------------------------------- */

/* 4BSD requeues a queued thread only when its queue index changes. */
static void
set_priority(struct thread *td, int prio)
{
	THREAD_LOCK_ASSERT(td);
	if (td->td_priority == prio)
		return;
	if (TD_ON_RUNQ(td) && td->td_rqindex != prio / RQ_PPQ) {
		runq_relink(td, prio);
		return;
	}
	td_set_pri(td, prio);
}

static void
bsd_prio(struct thread *td, int prio)
{
	sched_common_prio(td, prio, set_priority);
}

/* The CPU cpu should reschedule if td now beats what it runs. */
static void
maybe_resched(struct thread *td, int cpu)
{
	struct thread *cur;

	if (cpu < 0)
		return;
	cur = ULT_LD(&bsd_curthr[cpu]);
	if (pri_of(td) < pri_of(cur))
		mach_ast(cur, cpu);
}

static void
resetpriority_thread(struct thread *td)
{
	if (td->td_priority < PRI_MIN_TIMESHARE ||
	    td->td_priority > PRI_MAX_TIMESHARE)
		return;
	maybe_resched(td, mach_curcpu());
	bsd_prio(td, td->td_user_pri);
}

static void
bsd_lend_prio(struct thread *td, int prio)
{
	sched_common_lend(td, prio, set_priority);
}

static void
bsd_unlend_prio(struct thread *td, int prio)
{
	sched_common_unlend(td, prio, set_priority);
}

static void
bsd_nice(struct thread *td, int nice)
{
	THREAD_LOCK_ASSERT(td);
	ULT_PST(&td->td_nice, (int8_t)nice); /* read unlocked: host_nice.c */
	bsd_resetpriority(td);
	resetpriority_thread(td);
}

static void
bsd_set_class(struct thread *td, int cls)
{
	THREAD_LOCK_ASSERT(td);
	ULT_PST(&td->td_pri_class, (uint8_t)cls);
}

static void
bsd_userret(struct thread *td)
{
	THREAD_LOCK_ASSERT(td);
	(void)sched_common_userret(td);
}

/* ---- the once-a-second pass over the queues ---------------------- */

/*
 * Decay one queue: take every thread out in order, update, put back.  The
 * threads never leave the run queue as far as its lengths tell (see
 * runq_relink): only their links move.
 */
static void
schedcpu_queue(struct runq *rq, int loadfac, int now)
{
	struct ult__list tmp, *n;
	struct thread *td;

	MTX_ASSERT_OWNED(&bsd_sched_lock);
	ult__list_init(&tmp);
	while ((td = runq_choose(rq)) != NULL) {
		runq_remove(rq, td);
		ult__list_insert_tail(&tmp, &td->td_runq);
	}
	while ((n = ult__list_first(&tmp)) != NULL) {
		td = runq_thread(n);
		ult__list_remove(n);
		bsd_schedcpu_thread(td, loadfac, now);
		runq_add(rq, td, 0);
	}
}

static void
schedcpu(int now)
{
	int loadfac = 2 * ULT_LD(&bsd_ldavg);

	schedcpu_queue(&runq, loadfac, now);
	for (int c = 0; c < bsd_ncpu; c++) {
		struct thread *td = ULT_LD(&bsd_curthr[c]);

		schedcpu_queue(&runq_pcpu[c], loadfac, now);
		if (td != bsd_idlethr[c] &&
		    ULT_LD(&td->td_lock) == &bsd_sched_lock)
			bsd_schedcpu_thread(td, loadfac, now);
	}
}

/* ---- the event entry points ---------------------------------------- */

/*
 * An idle CPU other than self to run a thread just queued, woken; -1 if
 * none is idle.  ult: one that spins polls the queue and needs no wakeup,
 * and waking a parked one instead would cost a system call, so a spinner
 * goes first, self included (the clock acting for it).  (A spinner that
 * stops counting checks the queue after its own fence, as bsd_idle_enter
 * does.)
 */
static int
forward_wakeup(int self)
{
	ULT_FENCE(); /* pairs with bsd_idle_enter */
	/* A spinner takes one thread; more queued than spinners wake a
	 * parked CPU too, or a burst would wait behind the one spinner. */
	if (TUN(bsd_tun.wake_local) &&
	    ULT_LD(&bsd_runq_global_len) <= mach_idle_spinning()) {
		for (int c = 0; c < bsd_ncpu; c++) {
			if (mach_cpu_state(c) == MACH_CPU_SPINNING)
				return (c);
		}
	}
	/* ult: the waker claims the CPU it wakes (clears its flag), so that
	 * the next thread queued before that CPU has left its idle loop wakes
	 * another one.  Waking the first flagged CPU every time left all but
	 * one parked beside a full queue after a burst of spawns (found by
	 * ultsim at 32 CPUs and more: sim/scenarios/spawn_burst.scn).
	 * FreeBSD wakes every idle CPU instead, which costs a futex wake per
	 * parked worker here.  A claimed CPU that finds nothing sets its flag
	 * again in bsd_idle_enter. */
	for (int c = 0; c < bsd_ncpu; c++) {
		if (c != self && ULT_LD(&cpu_idle[c]) && !bsd_reserved(c) &&
		    /* seq_cst: after the caller's enqueue; pairs with
		     * bsd_idle_enter's store of the flag and its fence. */
		    ULT_XCHG_SC(&cpu_idle[c], 0) != 0) {
			mach_cpu_idle_wakeup(c);
			return (c);
		}
	}
	return (-1);
}

/* Ask the CPU running the worst thread worse than pri to reschedule. */
static void
resched_worst(int pri)
{
	int worst = -1, wp = pri, blocked = mach_cpus_blocked() > 0;

	for (int c = 0; c < bsd_ncpu; c++) {
		struct thread *cur = ULT_LD(&bsd_curthr[c]);

		/* ult: a CPU blocked in the host kernel cannot reschedule, and
		 * a reserve CPU out of service takes nothing. */
		if (bsd_reserved(c) ||
		    (blocked && mach_cpu_state(c) == MACH_CPU_BLOCKED))
			continue;
		if (pri_of(cur) > wp) {
			wp = pri_of(cur);
			worst = c;
		}
	}
	if (worst >= 0)
		mach_ast(ULT_LD(&bsd_curthr[worst]), worst);
}

static void
kick_other_cpu(int pri, int cpu)
{
	struct thread *cur = ULT_LD(&bsd_curthr[cpu]);

	ULT_FENCE();
	if (cur == bsd_idlethr[cpu]) {
		mach_cpu_idle_wakeup(cpu);
		return;
	}
	if (pri < pri_of(cur))
		mach_ast(cur, cpu);
}

/* bsd_sched_lock held; td's lock becomes bsd_sched_lock. */
static void
add_locked(struct thread *td, int flags)
{
	int self = mach_curcpu(), q;
	struct thread *cur;

	MTX_ASSERT_OWNED(&bsd_sched_lock);
	runq_put(td, flags);
	ULT_ST(&bsd_sched_tdcnt, ULT_LD(&bsd_sched_tdcnt) + 1);
	q = ts_of(td)->ts_runq;
	if (q >= 0 && q != self) {
		kick_other_cpu(td->td_priority, q);
		return;
	}
	if (q < 0 && forward_wakeup(self) >= 0)
		return;
	if (q < 0 && self >= 0 && bsd_reserved(self))
		self = -1; /* it would not take the thread */
	if (self < 0) {
		resched_worst(td->td_priority);
		return;
	}
	cur = ULT_LD(&bsd_curthr[self]);
	/* The clock acting for an idle CPU: its worker must look at its
	 * queue whatever the priority (an idle-class thread at rtprio 31
	 * ties with the idle thread). */
	if (cur == bsd_idlethr[self]) {
		mach_ast(cur, self);
		return;
	}
	if (flags & SRQ_YIELDING)
		return;
	/* maybe_preempt: only onto an idle-class thread (no interrupt
	 * priorities here); otherwise maybe_resched. */
	if (td->td_priority < pri_of(cur)) {
		mach_ast(cur, self);
		/* Its state is ours to read only while its lock is the one
		 * we hold: a thread going to sleep changes it under the
		 * sleep queue's lock. */
		if (pri_of(cur) >= PRI_MIN_IDLE &&
		    ULT_LD(&cur->td_lock) == &bsd_sched_lock &&
		    !TD_IS_INHIBITED(cur))
			ULT_ST(&cur->td_owepreempt, 1);
	}
}

static void
bsd_add(struct thread *td, int flags)
{
	THREAD_LOCK_ASSERT(td);
	MPASS(!TD_ON_RUNQ(td) && !TD_IS_RUNNING(td));
	if (ULT_LD(&td->td_lock) != &bsd_sched_lock) {
		struct mtx *m = thread_lock_block(td);

		if (!(flags & SRQ_HOLD))
			mtx_unlock_spin(m);
		mtx_lock_spin(&bsd_sched_lock);
		thread_lock_unblock(td, &bsd_sched_lock);
	}
	add_locked(td, flags);
	if (!(flags & SRQ_HOLDTD))
		mtx_unlock_spin(&bsd_sched_lock);
}

static void
bsd_rem(struct thread *td)
{
	THREAD_LOCK_ASSERT(td);
	runq_take(td);
	ULT_ST(&bsd_sched_tdcnt, ULT_LD(&bsd_sched_tdcnt) - 1);
	TD_SET_CAN_RUN(td);
}

static struct thread *
choosethread(int cpu)
{
	struct thread *td = runq_best(cpu);

	MTX_ASSERT_OWNED(&bsd_sched_lock);
	if (td != NULL) {
		runq_take(td);
		ts_of(td)->ts_didrun = 1;
	} else
		td = bsd_idlethr[cpu];
	TD_SET_RUNNING(td);
	td->td_oncpu = cpu;
	ULT_ST(&bsd_curthr[cpu], td);
	return (td);
}

static struct thread *
bsd_switch(struct thread *td, struct thread *newtd, int flags,
    struct mtx **mtxp)
{
	int cpu = mach_curcpu();
	struct mtx *mtx;

	THREAD_LOCK_ASSERT(td);
	MPASS(
	    cpu >= 0 && td == ULT_LD(&bsd_curthr[cpu]) && td->td_oncpu == cpu);
	MPASS(!TD_IS_RUNNING(td) || ULT_LD(&td->td_lock) == &bsd_sched_lock);
	MPASS(newtd == NULL ||
	    (TD_CAN_RUN(newtd) && ULT_LD(&newtd->td_lock) == &bsd_sched_lock));
	mtx = thread_lock_block(td);
	if (mtx != &bsd_sched_lock) {
		/* Going to sleep or to a turnstile: mtx is that lock.  The
		 * clock writes td's flags under bsd_sched_lock: take that. */
		mtx_unlock_spin(mtx);
		mtx_lock_spin(&bsd_sched_lock);
	}
	td->td_lastcpu = td->td_oncpu;
	td->td_oncpu = NOCPU;
	td->td_flags &= ~TDF_SLICEEND;
	if (ULT_LD(&td->td_ast) & TDA_SCHED)
		atomic_fetch_and_explicit(&td->td_ast, ~TDA_SCHED,
		    memory_order_relaxed);
	ULT_ST(&td->td_owepreempt, 0);
	if (TD_IS_IDLETHREAD(td)) {
		TD_SET_CAN_RUN(td);
	} else if (TD_IS_RUNNING(td)) {
		/* Still runnable: back on a queue, counted already; if it is
		 * bound elsewhere now, that CPU must hear of it. */
		runq_put(td,
		    SRQ_OURSELF | SRQ_YIELDING |
			((flags & SW_PREEMPT) ? SRQ_PREEMPTED : 0));
		if (ts_of(td)->ts_runq >= 0 && ts_of(td)->ts_runq != cpu)
			kick_other_cpu(td->td_priority, ts_of(td)->ts_runq);
	} else {
		ULT_ST(&bsd_sched_tdcnt, ULT_LD(&bsd_sched_tdcnt) - 1);
	}
	/* Decided before bsd_sched_lock is dropped: another CPU may take td
	 * from the global queue at once. */
	*mtxp = TD_IS_IDLETHREAD(td) || TD_ON_RUNQ(td) ? &bsd_sched_lock : mtx;
	if (newtd != NULL) {
		/* Taken off a queue by the caller (bsd_rem uncounted it). */
		ULT_ST(&bsd_sched_tdcnt, ULT_LD(&bsd_sched_tdcnt) + 1);
		TD_SET_RUNNING(newtd);
		newtd->td_oncpu = cpu;
		ULT_ST(&bsd_curthr[cpu], newtd);
	} else
		newtd = choosethread(cpu);
	/* sched_add's forward_wakeup for the requeued thread: if it is still
	 * on the global queue, an idle CPU may run it now. */
	if (TD_ON_RUNQ(td) && ts_of(td)->ts_runq < 0)
		forward_wakeup(cpu);
	mtx_unlock_spin(&bsd_sched_lock);
	return (newtd);
}

static struct thread *
bsd_throw(struct thread *td)
{
	int cpu = mach_curcpu();
	struct thread *newtd;

	MTX_ASSERT_OWNED(&bsd_sched_lock);
	MPASS(td == ULT_LD(&bsd_curthr[cpu]) && TD_IS_RUNNING(td));
	ULT_ST(&bsd_sched_tdcnt, ULT_LD(&bsd_sched_tdcnt) - 1);
	td->td_lastcpu = td->td_oncpu;
	td->td_oncpu = NOCPU;
	TD_SET_CAN_RUN(td);
	thread_lock_block(td);
	newtd = choosethread(cpu);
	mtx_unlock_spin(&bsd_sched_lock);
	return (newtd);
}

static void
bsd_clock(int cpu, int cnt)
{
	int now = mach_ticks();
	struct thread *td;
	struct td_sched *ts;

	mtx_lock_spin(&bsd_sched_lock);
	if (cpu == 0) {
		if (now - next_loadav >= 0) {
			next_loadav = now + LOADAV_TICKS;
			bsd_loadav();
		}
		if (now - next_schedcpu >= 0) {
			next_schedcpu = now + ULT_HZ;
			schedcpu(now);
		}
	}
	td = ULT_LD(&bsd_curthr[cpu]);
	/* Mid-switch (see sched_ule's clock): not charged. */
	if (td == bsd_idlethr[cpu] || ULT_LD(&td->td_lock) != &bsd_sched_lock)
		goto out;
	ts = ts_of(td);
	for (int i = 0; i < cnt; i++) {
		ts->ts_cpticks++;
		ts->ts_estcpu = ESTCPULIM(ts->ts_estcpu + 1, bsd_iew());
		if (ts->ts_estcpu % bsd_iew() == 0) {
			bsd_resetpriority(td);
			if (td->td_priority >= PRI_MIN_TIMESHARE &&
			    td->td_priority <= PRI_MAX_TIMESHARE)
				bsd_prio(td, td->td_user_pri);
		}
	}
	if (td->td_pri_class & PRI_FIFO_BIT)
		goto out;
	ts->ts_slice -= cnt;
	if (ts->ts_slice <= 0) {
		ts->ts_slice = TUN(bsd_tun.slice);
		td->td_flags |= TDF_SLICEEND;
		mach_ast(td, cpu);
	}
out:
	mtx_unlock_spin(&bsd_sched_lock);
}

static void
bsd_sleep(struct thread *td, int prio)
{
	THREAD_LOCK_ASSERT(td);
	td->td_slptick = mach_ticks();
	prio &= PRI_SLEEP_MASK;
	if (prio != 0 && PRI_BASE(td->td_pri_class) == PRI_TIMESHARE)
		bsd_prio(td, prio);
}

static void
bsd_wakeup(struct thread *td, int srqflags)
{
	struct td_sched *ts = ts_of(td);
	int now = mach_ticks();
	int slptime = td->td_slptick ? (now - td->td_slptick) / ULT_HZ : 0;

	THREAD_LOCK_ASSERT(td);
	MPASS(TD_CAN_RUN(td));
	if (slptime > 1) {
		bsd_updatepri(td, slptime);
		bsd_resetpriority(td);
	}
	bsd_pctcpu_decay(ts, now);
	td->td_slptick = 0;
	ts->ts_slice = TUN(bsd_tun.slice);
	bsd_add(td, SRQ_BORING | srqflags);
}

static void
bsd_preempt(struct thread *td)
{
	struct thread *best;

	THREAD_LOCK_ASSERT(td);
	MPASS(TD_IS_RUNNING(td));
	best = runq_best(td->td_oncpu);
	if (best != NULL && best->td_priority < td->td_priority)
		ULT_ST(&td->td_owepreempt, 1);
}

static void
bsd_unbind(struct thread *td)
{
	struct td_sched *ts = ts_of(td);

	THREAD_LOCK_ASSERT(td);
	if (!(ts->ts_flags & TSF_BOUND))
		return;
	ts->ts_flags &= ~TSF_BOUND;
	td->td_pinned--;
}

static int
bsd_bind(struct thread *td, int cpu)
{
	struct td_sched *ts = ts_of(td);

	THREAD_LOCK_ASSERT(td);
	MPASS(!TD_IS_RUNNING(td) || td->td_oncpu == mach_curcpu());
	bsd_unbind(td);
	ts->ts_flags |= TSF_BOUND;
	ts->ts_cpu = cpu;
	td->td_pinned++;
	if (TD_ON_RUNQ(td)) {
		if (ts->ts_runq != cpu) {
			runq_take(td);
			TD_SET_CAN_RUN(td);
			runq_put(td, 0);
			kick_other_cpu(td->td_priority, cpu);
		}
		return (0);
	}
	if (TD_IS_RUNNING(td) && td->td_oncpu != cpu)
		return (1); /* the caller switches td out next */
	return (0);
}

/*
 * ult: cpu's host thread blocks in the kernel (sched.h, evacuate).  The
 * global queue is every CPU's already; an idle CPU is told in case the
 * last wakeup went to cpu.  Threads bound to cpu wait for it.
 */
static int
bsd_evacuate(int cpu)
{
	mtx_lock_spin(&bsd_sched_lock);
	if (ULT_LD(&bsd_runq_global_len) > 0)
		forward_wakeup(cpu);
	/* A reserve CPU leaving service: its thread goes back to the
	 * global queue at its next switch, unless it is pinned there. */
	if (bsd_reserved(cpu) && !cpu_is_idle(cpu)) {
		struct thread *td = ULT_LD(&bsd_curthr[cpu]);

		if (ULT_LD(&td->td_lock) == &bsd_sched_lock &&
		    td->td_pinned == 0)
			mach_ast(td, cpu);
	}
	mtx_unlock_spin(&bsd_sched_lock);
	return (0);
}

static int
bsd_is_bound(struct thread *td)
{
	return ((ts_of(td)->ts_flags & TSF_BOUND) != 0);
}

int
bsd_cpu_idle_flag(int cpu)
{
	return (ULT_LD(&cpu_idle[cpu]));
}

static int
bsd_idle_poll(int cpu, struct sched_idle *st)
{
	(void)st;
	return (runnable_for(cpu) ? SCHED_IDLE_RUN : SCHED_IDLE_SLEEP);
}

/* The fence pairs with the one in forward_wakeup/kick_other_cpu. */
static int
bsd_idle_enter(int cpu, struct sched_idle *st)
{
	st->busy = 0;
	ULT_ST(&cpu_idle[cpu], 1);
	ULT_FENCE();
	if (runnable_for(cpu)) {
		ULT_ST(&cpu_idle[cpu], 0);
		return (1);
	}
	return (0);
}

static void
bsd_idle_exit(int cpu, struct sched_idle *st)
{
	(void)st;
	ULT_ST(&cpu_idle[cpu], 0);
}

static int
bsd_init(void)
{
	bsd_ncpu = mach_ncpu();
	bsd_nactive = mach_ncpu_active();
	runq_init(&runq);
	runq_pcpu = ult__zalloc_cl((size_t)bsd_ncpu, sizeof(*runq_pcpu));
	bsd_runq_length =
	    ult__calloc((size_t)bsd_ncpu, sizeof(*bsd_runq_length));
	bsd_curthr = ult__calloc((size_t)bsd_ncpu, sizeof(*bsd_curthr));
	bsd_idlethr = ult__calloc((size_t)bsd_ncpu, sizeof(*bsd_idlethr));
	cpu_idle = ult__calloc((size_t)bsd_ncpu, sizeof(*cpu_idle));
	if (runq_pcpu == NULL || bsd_runq_length == NULL ||
	    bsd_curthr == NULL || bsd_idlethr == NULL || cpu_idle == NULL)
		return (ENOMEM);
	for (int c = 0; c < bsd_ncpu; c++)
		runq_init(&runq_pcpu[c]);
	mtx_init(&bsd_sched_lock, "sched_lock");
	ULT_ST(&bsd_runq_global_len, 0);
	ULT_ST(&bsd_sched_tdcnt, 0);
	ULT_ST(&bsd_ldavg, 0);
	next_loadav = mach_ticks() + LOADAV_TICKS;
	next_schedcpu = mach_ticks() + ULT_HZ;
	return (0);
}

static void
bsd_fini(void)
{
	free(runq_pcpu);
	free(bsd_runq_length);
	free(bsd_curthr);
	free(bsd_idlethr);
	free(cpu_idle);
	runq_pcpu = NULL;
	bsd_runq_length = NULL;
	bsd_curthr = NULL;
	bsd_idlethr = NULL;
	cpu_idle = NULL;
}

const struct sched_ops ult__sched_4bsd = {
    .name = "4BSD",
    .init = bsd_init,
    .fini = bsd_fini,
    .thread_init = bsd_thread_init,
    .idle_init = bsd_idle_init,
    .fork = bsd_fork,
    .exit = bsd_exit,
    .add = bsd_add,
    .rem = bsd_rem,
    .switch_ = bsd_switch,
    .throw_ = bsd_throw,
    .sleep = bsd_sleep,
    .wakeup = bsd_wakeup,
    .clock = bsd_clock,
    .preempt = bsd_preempt,
    .userret = bsd_userret,
    .nice = bsd_nice,
    .prio = bsd_prio,
    .lend_prio = bsd_lend_prio,
    .unlend_prio = bsd_unlend_prio,
    .set_class = bsd_set_class,
    .bind = bsd_bind,
    .unbind = bsd_unbind,
    .is_bound = bsd_is_bound,
    .evacuate = bsd_evacuate,
    .idle_poll = bsd_idle_poll,
    .idle_enter = bsd_idle_enter,
    .idle_exit = bsd_idle_exit,
    .load = bsd_load,
    .thread_stats = bsd_thread_stats,
    .cpu_stats = bsd_cpu_stats,
    .tunables = bsd_tunables,
    .slice_min_us = bsd_slice_min_us,
    .check = bsd_check,
    .dump = bsd_dump,
};
