/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_ule.c. */
/*
 * ULE's multiprocessor half: choosing a CPU for a thread (ule_pickcpu),
 * telling another CPU about new work (ule_tdq_notify), idle stealing and
 * the periodic balancer.  The topology searches behind them are in
 * sched_ule_search.c.
 *
 * Load figures read here without locks may be stale; like FreeBSD, every
 * decision is re-checked under the queue locks before anything moves.
 * Two queue locks are only ever held together in address order.
 */
#include "sched_ule.h"

/* ult: tdq's CPU is idle but parked while another spins: the cache
 * warmth of the thread's last CPU is not worth a wakeup of the host. */
static int
parked_for_less(struct tdq *tdq)
{
	return (TUN(ule_tun.wake_local) &&
	    mach_cpu_state(TDQ_ID(tdq)) == MACH_CPU_PARKED &&
	    mach_idle_spinning() > 0);
}

/*
 * Where should td be queued?  In order: its last CPU if that is idle and
 * its cache there is still warm; an idle CPU sharing the last-level cache
 * (while that affinity lasts); any CPU running something worse; the least
 * loaded CPU.  Finally the waker's own CPU wins if it runs something worse
 * and is not much busier, to keep producer and consumer together.
 */
/* ult: the CPUs whose host thread is not blocked in the kernel: the
 * active ones, without building a set, in the usual case; while some are
 * blocked, those that are not and the reserve CPUs in service. */
static const cpuset_t *
usable_cpus(cpuset_t *set)
{
	if (mach_cpus_blocked() == 0)
		return (&ule_all_cpus);
	CS_FILL_N(set, ule_ncpu);
	for (int c = 0; c < ule_ncpu; c++)
		if (mach_cpu_state(c) == MACH_CPU_BLOCKED)
			CS_CLR(c, set);
	return (set);
}

int
ule_pickcpu(struct thread *td, int flags, int self, int now)
{
	struct td_sched *ts = td_get_sched(td);
	const struct cpu_group *cg, *ccg;
	const cpuset_t *mask;
	cpuset_t avail;
	struct tdq *tdq;
	int cpu, pri, r;

	if ((flags & SRQ_OURSELF) || !THREAD_CAN_MIGRATE(td))
		return (ts->ts_cpu);
	if (ule_nactive == 1 && mach_cpus_blocked() == 0)
		return (0);
	tdq = TDQ_CPU(ts->ts_cpu);
	cg = tdq->tdq_cg;
	if (TDQ_LOWPRI(tdq) >= PRI_MIN_IDLE && !ule_cpu_reserved(ts->ts_cpu) &&
	    SCHED_AFFINITY(ts, CG_SHARE_L2, now) && !parked_for_less(tdq)) {
		if (cg->cg_flags & CG_FLAG_THREAD) {
			for (cpu = cg->cg_first; cpu <= cg->cg_last; cpu++)
				if (CS_ISSET(cpu, &cg->cg_mask) &&
				    TDQ_LOWPRI(TDQ_CPU(cpu)) < PRI_MIN_IDLE)
					break;
			if (cpu > cg->cg_last)
				return (ts->ts_cpu);
		} else
			return (ts->ts_cpu);
	}
	/* The topmost cache group whose affinity has not expired. */
	for (ccg = NULL; cg != NULL; cg = cg->cg_parent) {
		if (cg->cg_flags & CG_FLAG_THREAD)
			continue;
		if (cg->cg_children == 1 || cg->cg_count == 1)
			continue;
		if (cg->cg_level == CG_SHARE_NONE ||
		    !SCHED_AFFINITY(ts, cg->cg_level, now))
			continue;
		ccg = cg;
	}
	if (ccg == ule_cpu_top)
		ccg = NULL;
	cpu = -1;
	pri = td->td_priority;
	r = TD_IS_RUNNING(td);
	mask = usable_cpus(&avail);
	if (ccg != NULL)
		cpu = ule_sched_lowest(ccg, mask, imax(pri, PRI_MAX_TIMESHARE),
		    INT_MAX, ts->ts_cpu, r);
	if (cpu < 0)
		cpu = ule_sched_lowest(ule_cpu_top, mask, pri, INT_MAX,
		    ts->ts_cpu, r);
	if (cpu < 0)
		cpu = ule_sched_lowest(ule_cpu_top, mask, -1, INT_MAX,
		    ts->ts_cpu, r);
	if (cpu < 0)
		cpu = ule_sched_lowest(ule_cpu_top, &ule_all_cpus, -1, INT_MAX,
		    ts->ts_cpu, r);
	/* ult: a blocked CPU (the clock acting for it) or a reserve CPU out
	 * of service is no home. */
	if (self >= 0 &&
	    (ule_cpu_reserved(self) ||
		(mach_cpus_blocked() > 0 &&
		    mach_cpu_state(self) == MACH_CPU_BLOCKED)))
		self = -1;
	if (self >= 0) {
		struct tdq *me = TDQ_CPU(self);

		tdq = TDQ_CPU(cpu);
		if (TDQ_LOWPRI(me) > pri && TDQ_LOWPRI(tdq) < PRI_MIN_IDLE &&
		    TDQ_LOAD(me) <= TDQ_LOAD(tdq) + 1)
			cpu = self;
		/* ult: with every CPU busy, a forked child stays with its
		 * creator so the fork tree unfolds depth first (see
		 * DESIGN.md); an idle CPU still takes it. */
		if ((flags & SRQ_FORKING) && TDQ_LOWPRI(tdq) < PRI_MIN_IDLE)
			cpu = self;
	}
	return (cpu);
}

/*
 * Point td at cpu's queue and lock it.  Moving the thread lock from one
 * queue to another goes through blocked_lock so that no two queue locks
 * are ever held at once here.
 */
struct tdq *
ule_setcpu(struct thread *td, int cpu, int flags)
{
	struct tdq *tdq = TDQ_CPU(cpu);
	struct mtx *mtx;

	THREAD_LOCK_ASSERT(td);
	td_get_sched(td)->ts_cpu = cpu;
	if (ULT_LD(&td->td_lock) == TDQ_LOCKPTR(tdq))
		return (tdq);
	mtx = thread_lock_block(td);
	if ((flags & SRQ_HOLD) == 0)
		mtx_unlock_spin(mtx);
	TDQ_LOCK(tdq);
	thread_lock_unblock(td, TDQ_LOCKPTR(tdq));
	return (tdq);
}

/* The running thread td goes to another CPU's queue as it switches out. */
struct mtx *
ule_switch_migrate(struct tdq *tdq, struct thread *td, int flags)
{
	struct tdq *tdn = TDQ_CPU(td_get_sched(td)->ts_cpu);
	int lowpri;

	TDQ_LOCK_ASSERT(tdq);
	MPASS(tdn != tdq && ULT_LD(&td->td_lock) == &blocked_lock);
	ULT_ST(&tdq->tdq_load, TDQ_LOAD(tdq) - 1);
	TDQ_UNLOCK(tdq);
	TDQ_LOCK(tdn);
	lowpri = ule_tdq_add(tdn, td, flags);
	ule_tdq_notify(tdn, lowpri);
	TDQ_UNLOCK(tdn);
	TDQ_LOCK(tdq);
	return (TDQ_LOCKPTR(tdn));
}

/*
 * A thread was added to a remote queue (locked).  An idle CPU is woken
 * through its idle word, whatever the thread's priority: FreeBSD tests the
 * priority first, which is enough in a kernel whose idle CPUs also wake at
 * every clock interrupt, but a parked worker wakes only when told, and a
 * stale tdq_lowpri or an idle-class thread tying with the idle thread
 * would leave the thread on a sleeping CPU for good.  A busy CPU is
 * interrupted only if the thread beats the best it had (running or queued)
 * by ule_shouldpreempt.  The fence pairs with the one in the idle loop
 * (ule_idle_enter): the load was raised before it, tdq_cpu_idle is read
 * after it, so either the idle loop sees the load or we see it asleep.
 */
void
ule_tdq_notify(struct tdq *tdq, int lowpri)
{
	int cpu = TDQ_ID(tdq);

	TDQ_LOCK_ASSERT(tdq);
	MPASS(TDQ_LOAD(tdq) > 0);
	ULT_FENCE();
	if (ULT_LD(&tdq->tdq_curthread) == tdq->tdq_idlethread) {
		if (ULT_LD(&tdq->tdq_cpu_idle) != 0)
			mach_cpu_idle_wakeup(cpu);
		return;
	}
	/* A preemption already requested covers this thread too. */
	if (ULT_LD(&tdq->tdq_owepreempt))
		return;
	if (!ule_shouldpreempt(TDQ_LOWPRI(tdq), lowpri, 1))
		return;
	ULT_ST(&tdq->tdq_owepreempt, 1);
	mach_ipi_preempt(cpu);
}

static void
tdq_lock_pair(struct tdq *one, struct tdq *two)
{
	if (one < two) {
		TDQ_LOCK(one);
		TDQ_LOCK(two);
	} else {
		TDQ_LOCK(two);
		TDQ_LOCK(one);
	}
}

static void
tdq_unlock_pair(struct tdq *one, struct tdq *two)
{
	TDQ_UNLOCK(one);
	TDQ_UNLOCK(two);
}

/* First migratable thread in priority order. */
static struct thread *
runq_steal(struct runq *rq)
{
	struct ult__list *n;

	for (int q = runq_findbit_from(rq, 0); q >= 0;
	     q = runq_findbit_from(rq, q + 1))
		ULT_LIST_FOREACH (n, &rq->rq_queues[q]) {
			if (THREAD_CAN_MIGRATE(runq_thread(n)))
				return (runq_thread(n));
		}
	return (NULL);
}

/*
 * Steal from the calendar starting at the removal index.  The very first
 * thread found is the one this CPU would run next, so it is skipped in
 * favour of the next migratable one, and taken only if nothing else is.
 */
static struct thread *
runq_steal_from(struct runq *rq, int start)
{
	struct thread *first = NULL;
	struct ult__list *n;

	for (int i = 0; i < RQ_NQS; i++) {
		int q = (start + i) % RQ_NQS;

		if (((rq->rq_status >> q) & 1) == 0)
			continue;
		ULT_LIST_FOREACH (n, &rq->rq_queues[q]) {
			struct thread *td = runq_thread(n);

			if (first == NULL)
				first = td;
			else if (THREAD_CAN_MIGRATE(td))
				return (td);
		}
	}
	if (first != NULL && THREAD_CAN_MIGRATE(first))
		return (first);
	return (NULL);
}

static struct thread *
tdq_steal(struct tdq *tdq)
{
	struct thread *td;

	if ((td = runq_steal(&tdq->tdq_realtime)) != NULL)
		return (td);
	if ((td = runq_steal_from(&tdq->tdq_timeshare, tdq->tdq_ridx)) != NULL)
		return (td);
	return (runq_steal(&tdq->tdq_idle));
}

/*
 * Move one thread from one locked queue to another; returns the target's
 * old lowpri, or -1 if nothing could move.  The thread may still be
 * blocked by a CPU that has not finished switching away from it; wait for
 * that before taking it over.
 */
static int
tdq_move(struct tdq *from, struct tdq *to)
{
	struct thread *td;

	TDQ_LOCK_ASSERT(from);
	TDQ_LOCK_ASSERT(to);
	if ((td = tdq_steal(from)) == NULL)
		return (-1);
	thread_lock_block_wait(td);
	mach_trace_move(td, TDQ_ID(from), TDQ_ID(to));
	ule_rem(td);
	thread_lock_unblock(td, TDQ_LOCKPTR(to));
	td_get_sched(td)->ts_cpu = TDQ_ID(to);
	return (ule_tdq_add(to, td, SRQ_YIELDING));
}

/*
 * Ask tdq's running thread, if it may migrate, to pick its CPU again with
 * expired affinity at its next switch (TDF_PICKCPU).  Its flags are ours
 * only while its lock is the queue's: a thread going to sleep has moved
 * it.  Called with tdq unlocked.
 */
static void
tdq_ask_repick(struct tdq *tdq)
{
	struct thread *td;

	TDQ_LOCK(tdq);
	td = ULT_LD(&tdq->tdq_curthread);
	if (ULT_LD(&td->td_lock) == TDQ_LOCKPTR(tdq) && !TD_IS_IDLETHREAD(td) &&
	    THREAD_CAN_MIGRATE(td)) {
		td->td_flags |= TDF_PICKCPU;
		mach_ast(td, TDQ_ID(tdq));
	}
	TDQ_UNLOCK(tdq);
}

/*
 * ult: cpu's host thread blocks in the kernel, or cpu is a reserve CPU
 * leaving service (see sched.h, evacuate).  Hand every queued thread that
 * may migrate to the least loaded usable CPU, one at a time as the
 * balancer moves them, and notify it.  A reserve CPU's running thread is
 * asked to pick another CPU at its next switch, as the balancer asks.
 */
int
ule_evacuate(int cpu)
{
	struct tdq *from = TDQ_CPU(cpu);
	int moved = 0;

	if (ule_cpu_reserved(cpu))
		tdq_ask_repick(from);

	for (int n = TDQ_LOAD(from); n > 0; n--) {
		cpuset_t avail;
		const cpuset_t *mask = usable_cpus(&avail);
		struct tdq *to;
		int c, lowpri;

		if (TDQ_TRANSFERABLE(from) == 0)
			break;
		c = ule_sched_lowest(ule_cpu_top, mask, -1, INT_MAX, -1, 0);
		if (c < 0 || c == cpu)
			break;
		to = TDQ_CPU(c);
		tdq_lock_pair(from, to);
		lowpri = tdq_move(from, to);
		if (lowpri >= 0)
			ule_tdq_notify(to, lowpri);
		tdq_unlock_pair(from, to);
		if (lowpri < 0)
			break;
		moved++;
	}
	return (moved);
}

/* Next group to search after cg found nothing; see ule_tdq_idled(). */
static const struct cpu_group *
steal_escalate(const struct cpu_group *cg, int *goup)
{
	const struct cpu_group *parent;

	if (*goup) {
		cg = cg->cg_parent;
		*goup = 0;
	}
	if (cg == NULL || (parent = cg->cg_parent) == NULL)
		return (NULL);
	if (parent->cg_children == 2) {
		*goup = 1;
		return (cg == &parent->cg_child[0] ? &parent->cg_child[1]
						   : &parent->cg_child[0]);
	}
	return (parent);
}

/*
 * ult's addition, with no FreeBSD counterpart.  steal_thresh leaves a CPU
 * its one queued thread because that CPU will run it within an IPI's
 * microseconds.  A worker is a kernel thread: a thread queued on an idle
 * CPU waits until the host wakes and schedules that worker, and on a
 * loaded host that took up to a second (bench/latency) while another
 * worker, awake, went idle beside it.  So an idle CPU that is about to go
 * idle itself takes a thread stranded on a CPU whose idle thread is
 * current; the victim's worker, when it runs, finds its queue empty and
 * goes back to sleep.  kern.sched.steal_stranded = 0 turns it off.  Only
 * the idle loop looks (ule_tdq_idled), not the switch path (ule_tdq_trysteal):
 * the scan covers every CPU, and the idle loop runs right after anyway.
 * Called with tdq unlocked; returns 1 if this CPU now has work.
 */
static int
tdq_rescue(struct tdq *tdq)
{
	if (TUN(ule_tun.steal_stranded) == 0 || ule_cpu_reserved(TDQ_ID(tdq)))
		return (0);
	if (TDQ_LOAD(tdq) > 0)
		return (1);
	for (int i = 1; i < ule_ncpu; i++) {
		struct tdq *v = TDQ_CPU((TDQ_ID(tdq) + i) % ule_ncpu);
		int moved;

		if (TDQ_TRANSFERABLE(v) == 0 ||
		    ULT_LD(&v->tdq_curthread) != v->tdq_idlethread)
			continue;
		tdq_lock_pair(tdq, v);
		moved = TDQ_LOAD(tdq) == 0 && TDQ_TRANSFERABLE(v) != 0 &&
		    ULT_LD(&v->tdq_curthread) == v->tdq_idlethread &&
		    tdq_move(v, tdq) != -1;
		if (moved)
			ULT_ST(&tdq->tdq_steals, ULT_LD(&tdq->tdq_steals) + 1);
		tdq_unlock_pair(tdq, v);
		if (moved || TDQ_LOAD(tdq) > 0)
			return (1);
	}
	return (0);
}

/*
 * An idle CPU looks for a thread to steal, nearest cache first, from a
 * CPU with at least steal_thresh threads (so the victim keeps one to run),
 * then for a stranded one (tdq_rescue).
 * Returns 0 when this CPU now has work, 1 when it should go idle.
 */
int
ule_tdq_idled(struct tdq *tdq)
{
	const struct cpu_group *cg;
	struct tdq *steal;
	cpuset_t mask;
	int cpu, switchcnt, goup;

	if (TUN(ule_tun.steal_idle) == 0 || ule_ncpu == 1 ||
	    tdq->tdq_cg == NULL || ule_cpu_reserved(TDQ_ID(tdq)))
		return (1);
	CS_FILL_N(&mask, ule_ncpu);
	CS_CLR(TDQ_ID(tdq), &mask);
restart:
	switchcnt = TDQ_SWITCHCNT(tdq);
	for (cg = tdq->tdq_cg, goup = 0;;) {
		cpu =
		    ule_sched_highest(cg, &mask, TUN(ule_tun.steal_thresh), 1);
		if (TDQ_LOAD(tdq))
			return (0);
		if (cpu == -1) {
			cg = steal_escalate(cg, &goup);
			if (cg == NULL)
				return (tdq_rescue(tdq) ? 0 : 1);
			continue;
		}
		steal = TDQ_CPU(cpu);
		if (TDQ_LOAD(steal) < TUN(ule_tun.steal_thresh) ||
		    TDQ_TRANSFERABLE(steal) == 0)
			goto restart;
		TDQ_LOCK(tdq);
		if (TDQ_LOAD(tdq) > 0) {
			TDQ_UNLOCK(tdq);
			return (0);
		}
		if (!TDQ_TRYLOCK(steal)) {
			TDQ_UNLOCK(tdq);
			CS_CLR(cpu, &mask);
			continue;
		}
		if (TDQ_LOAD(steal) < TUN(ule_tun.steal_thresh) ||
		    TDQ_TRANSFERABLE(steal) == 0 ||
		    switchcnt != TDQ_SWITCHCNT(tdq)) {
			tdq_unlock_pair(tdq, steal);
			goto restart;
		}
		if (tdq_move(steal, tdq) != -1) {
			ULT_ST(&tdq->tdq_steals, ULT_LD(&tdq->tdq_steals) + 1);
			tdq_unlock_pair(tdq, steal);
			return (0);
		}
		CS_CLR(cpu, &mask);
		tdq_unlock_pair(tdq, steal);
	}
}

/*
 * ult (kern.sched.wake_local): between two polls of a spinning idle CPU,
 * take a thread from the busiest CPU if that CPU's load has not fallen to
 * one since the previous poll, so the thread has waited a whole poll
 * interval.  Switches alone do not count: a waker that yields, or one of
 * better priority, may run on and on while the thread waits.  A
 * thread woken to run next behind its waker (SRQ_SYNC) is meant to run
 * there when the waker blocks, which is usually within a microsecond; one
 * whose waker keeps running is taken here, as Go's spinning Ms take a
 * running P's runnext only after a few microseconds.  Returns 0 when this
 * CPU now has work.
 */
int
ule_tdq_take_stale(struct tdq *tdq, struct sched_idle *st)
{
	struct tdq *v;
	cpuset_t mask;
	unsigned nlow;
	int cpu, moved;

	if (!TUN(ule_tun.wake_local) || !TUN(ule_tun.steal_idle) ||
	    ule_nactive == 1 || ule_cpu_reserved(TDQ_ID(tdq)))
		return (1);
	CS_FILL_N(&mask, ule_ncpu);
	CS_CLR(TDQ_ID(tdq), &mask);
	cpu =
	    ule_sched_highest(ule_cpu_top, &mask, TUN(ule_tun.steal_thresh), 1);
	if (cpu < 0) {
		st->victim = -1;
		return (1);
	}
	v = TDQ_CPU(cpu);
	nlow = ULT_LD(&v->tdq_nlow);
	if (cpu != st->victim || nlow != st->victim_nlow) {
		st->victim = cpu;
		st->victim_nlow = nlow;
		return (1);
	}
	st->victim = -1;
	tdq_lock_pair(tdq, v);
	moved = TDQ_LOAD(tdq) == 0 &&
	    TDQ_LOAD(v) >= TUN(ule_tun.steal_thresh) &&
	    TDQ_TRANSFERABLE(v) != 0 && ULT_LD(&v->tdq_nlow) == nlow &&
	    tdq_move(v, tdq) != -1;
	if (moved)
		ULT_ST(&tdq->tdq_steals, ULT_LD(&tdq->tdq_steals) + 1);
	tdq_unlock_pair(tdq, v);
	return (moved || TDQ_LOAD(tdq) > 0 ? 0 : 1);
}

/* The tick of the last ule_wakep() wakeup, for all CPUs. */
atomic_int ule_wakep_tick;

/*
 * ult: self queued a thread behind its running one (SRQ_SYNC).  If no
 * idle CPU spins to take it should the waker keep running, wake a parked
 * one, which then spins (Go's wakep).  At most one such wakeup per tick
 * while self has only the waker and this thread (a waker that blocks at
 * once, as most do, needs none, and a system call per handoff is what
 * this placement is there to avoid); more when work piles up behind the
 * waker, as a fork tree's creators do.
 */
void
ule_wakep(int self)
{
	int now, seen;

	if (ule_nactive == 1 || mach_idle_spinning() > 0)
		return;
	now = mach_ticks();
	seen = ULT_LD(&ule_wakep_tick);
	if (seen == now && TDQ_LOAD(TDQ_CPU(self)) < 3)
		return;
	for (int i = 1; i < ule_ncpu; i++) {
		int c = (self + i) % ule_ncpu;
		struct tdq *tdq = TDQ_CPU(c);

		/* The state first: its line changes only when c parks or
		 * wakes, and curthread's at every switch. */
		if (mach_cpu_state(c) != MACH_CPU_PARKED ||
		    ULT_LD(&tdq->tdq_curthread) != tdq->tdq_idlethread)
			continue;
		if (seen == now ||
		    /* seq_cst, as before the explicit form: one waker per
		     * tick; nothing else is published through the word. */
		    ULT_CAS_SC(&ule_wakep_tick, &seen, now))
			mach_cpu_idle_wakeup(c);
		return;
	}
}

/*
 * The same search, bounded, when a thread goes to sleep and leaves its CPU
 * empty: one attempt within trysteal_limit topology levels, so the switch
 * path stays short.  Called and returns with tdq locked.
 */
void
ule_tdq_trysteal(struct tdq *tdq)
{
	const struct cpu_group *cg;
	struct tdq *steal;
	cpuset_t mask;
	int cpu, i, goup;

	if (TUN(ule_tun.steal_idle) == 0 || TUN(ule_tun.trysteal_limit) == 0 ||
	    ule_nactive == 1 || tdq->tdq_cg == NULL ||
	    ule_cpu_reserved(TDQ_ID(tdq)))
		return;
	CS_FILL_N(&mask, ule_ncpu);
	CS_CLR(TDQ_ID(tdq), &mask);
	TDQ_UNLOCK(tdq);
	for (i = 1, cg = tdq->tdq_cg, goup = 0;;) {
		cpu =
		    ule_sched_highest(cg, &mask, TUN(ule_tun.steal_thresh), 1);
		if (TDQ_LOAD(tdq) > 0)
			break;
		if (cpu == -1) {
			if (++i > TUN(ule_tun.trysteal_limit))
				break;
			cg = steal_escalate(cg, &goup);
			if (cg == NULL)
				break;
			continue;
		}
		steal = TDQ_CPU(cpu);
		if (TDQ_LOAD(steal) < TUN(ule_tun.steal_thresh) ||
		    TDQ_TRANSFERABLE(steal) == 0)
			continue;
		tdq_lock_pair(tdq, steal);
		if (TDQ_LOAD(tdq) == 0 &&
		    TDQ_LOAD(steal) >= TUN(ule_tun.steal_thresh) &&
		    TDQ_TRANSFERABLE(steal) != 0 && tdq_move(steal, tdq) != -1)
			ULT_ST(&tdq->tdq_steals, ULT_LD(&tdq->tdq_steals) + 1);
		TDQ_UNLOCK(steal);
		return;
	}
	TDQ_LOCK(tdq);
}

/* Move one thread from high to low if high is busier; 1 if moved. */
static int
sched_balance_pair(struct tdq *high, struct tdq *low)
{
	int moved = 0, lowpri;

	tdq_lock_pair(high, low);
	if (TDQ_TRANSFERABLE(high) != 0 && TDQ_LOAD(high) > TDQ_LOAD(low)) {
		lowpri = tdq_move(high, low);
		if (lowpri != -1) {
			if (TDQ_ID(low) != mach_curcpu())
				ule_tdq_notify(low, lowpri);
			else
				ule_setpreempt(low, TDQ_LOWPRI(low));
			moved = 1;
		}
	}
	tdq_unlock_pair(high, low);
	return (moved);
}

/*
 * ult (kern.sched.balance_fair, off by default): of the CPUs in mask as
 * lightly loaded as low, the one whose running thread has had the most
 * CPU lately.  The balancer moves a queued thread there, so the thread
 * that has had most will share next.  FreeBSD's choice among equals is
 * by cache affinity and chance, and n+1 CPU hogs on n CPUs then spend
 * unequal times doubled up: over a minute their shares spread from 82%
 * to 95% on 8 CPUs (sim/scenarios/nplus1.scn) where all should get 89%.
 */
static int
fairest_low(const struct cpu_group *cg, const cpuset_t *mask, int low)
{
	int load = TDQ_LOAD(TDQ_CPU(low)), best = low;
	int bpct = ULT_LD(&TDQ_CPU(low)->tdq_curpct);

	for (int c = 0; c < ule_ncpu; c++) {
		struct tdq *t = TDQ_CPU(c);

		if (!CS_ISSET(c, mask) || !CS_ISSET(c, &cg->cg_mask) ||
		    TDQ_LOAD(t) != load)
			continue;
		if (ULT_LD(&t->tdq_curpct) > bpct) {
			bpct = ULT_LD(&t->tdq_curpct);
			best = c;
		}
	}
	return (best);
}

/*
 * Pair the most loaded CPUs with the least loaded ones and move one thread
 * per pair.  A CPU whose only thread is running cannot give it away; that
 * thread is asked to re-pick its CPU with expired affinity at its next
 * switch, which is how n+1 hogs on n CPUs end up rotating.
 */
static void
sched_balance_group(const struct cpu_group *cg)
{
	cpuset_t hmask, lmask;
	int high, low, anylow;

	CS_FILL_N(&hmask, ule_ncpu);
	for (;;) {
		struct tdq *tdq;

		high = ule_sched_highest(cg, &hmask, 1, 0);
		if (high == -1)
			break;
		CS_CLR(high, &hmask);
		lmask = hmask;
		/* ult: never towards a CPU blocked in the host kernel or a
		 * reserve CPU out of service. */
		{
			cpuset_t avail;

			CS_AND(&lmask, usable_cpus(&avail));
		}
		if (CS_EMPTY(&lmask))
			break;
		tdq = TDQ_CPU(high);
		if (TDQ_LOAD(tdq) == 1) {
			tdq_ask_repick(tdq);
			break;
		}
		anylow = 1;
nextlow:
		if (TDQ_TRANSFERABLE(tdq) == 0)
			continue;
		low = ule_sched_lowest(cg, &lmask, -1, TDQ_LOAD(tdq) - 1, high,
		    1);
		if (anylow && low == -1)
			break;
		if (low == -1)
			continue;
		if (ULT_UNLIKELY(TUN(ule_tun.balance_fair)))
			low = fairest_low(cg, &lmask, low);
		if (sched_balance_pair(tdq, TDQ_CPU(low))) {
			CS_CLR(low, &hmask);
		} else {
			CS_CLR(low, &lmask);
			anylow = 0;
			goto nextlow;
		}
	}
}

void
ule_balance(void)
{
	sched_balance_group(ule_cpu_top);
}
