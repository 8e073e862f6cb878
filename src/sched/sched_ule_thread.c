/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_ule.c. */
/*
 * ULE's per-thread state, changed from outside the queues' event paths:
 * priority changes (lent, restored, set), nice and class, binding to a
 * CPU, and a thread's life (its first state, fork, exit, and each CPU's
 * idle thread).  The run queues these requeue into are in sched_ule.c.
 */
#include <string.h>

#include "sched_lend.h"
#include "sched_ule.h"

/*
 * Priority changes.  A queued thread whose priority improves is requeued
 * (it may even migrate); one whose priority worsens moves back on its own
 * queue (FreeBSD keeps its place; see below).  A running thread updates
 * its queue's lowpri.
 */
static void
sched_thread_priority(struct thread *td, int prio)
{
	struct tdq *tdq;
	int oldpri;

	THREAD_LOCK_ASSERT(td);
	if (td->td_priority == prio)
		return;
	if (TD_ON_RUNQ(td) && prio < td->td_priority) {
		ule_rem(td);
		td_set_pri(td, prio);
		ule_add(td, SRQ_BORROWING | SRQ_HOLDTD);
		return;
	}
	if (TD_ON_RUNQ(td)) {
		/*
		 * Worse.  FreeBSD leaves the thread where it is, which the
		 * kernel can afford because it rarely unlends a queued thread;
		 * ult does whenever a lock waiter times out.  Left in place, a
		 * thread unlent from 28 to 136 would sit at the head of the
		 * realtime queue, be chosen before the 30 behind it and set
		 * tdq_lowpri to 136, and the CPU would run it while the better
		 * thread waits.  So it moves to the place its new priority
		 * selects, on the same queue: the load does not change, so no
		 * idle test can see the queue empty for an instant.
		 */
		tdq = TDQ_CPU(td_get_sched(td)->ts_cpu);
		MPASS(ULT_LD(&td->td_lock) == TDQ_LOCKPTR(tdq));
		oldpri = td->td_priority;
		tdq_runq_rem(tdq, td);
		TD_SET_CAN_RUN(td);
		td_set_pri(td, prio);
		tdq_runq_add(tdq, td, SRQ_BORING);
		if (TDQ_LOWPRI(tdq) == oldpri)
			tdq_setlowpri(tdq, NULL);
		tdq_assert_lowpri(tdq);
		return;
	}
	if (TD_IS_RUNNING(td)) {
		/* A running thread's queue is the one it runs on: ts_cpu
		 * names it, since only a switch moves a running thread. */
		tdq = TDQ_CPU(td->td_oncpu);
		MPASS(td_get_sched(td)->ts_cpu == td->td_oncpu);
		MPASS(ULT_LD(&td->td_lock) == TDQ_LOCKPTR(tdq));
		oldpri = td->td_priority;
		td_set_pri(td, prio);
		if (prio < TDQ_LOWPRI(tdq))
			ULT_ST(&tdq->tdq_lowpri, prio);
		else if (TDQ_LOWPRI(tdq) == oldpri)
			tdq_setlowpri(tdq, td);
		tdq_assert_lowpri(tdq);
		return;
	}
	td_set_pri(td, prio);
}

void
ule_lend_prio(struct thread *td, int prio)
{
	sched_common_lend(td, prio, sched_thread_priority);
}

void
ule_unlend_prio(struct thread *td, int prio)
{
	sched_common_unlend(td, prio, sched_thread_priority);
}

void
ule_prio(struct thread *td, int prio)
{
	sched_common_prio(td, prio, sched_thread_priority);
}

void
ule_nice(struct thread *td, int nice)
{
	THREAD_LOCK_ASSERT(td);
	ULT_PST(&td->td_nice, (int8_t)nice); /* read unlocked: host_nice.c */
	ule_priority(td);
	ule_prio(td, td->td_base_user_pri);
}

void
ule_set_class(struct thread *td, int cls)
{
	THREAD_LOCK_ASSERT(td);
	ULT_PST(&td->td_pri_class, (uint8_t)cls);
}

/*
 * Binding pins the thread.  A queued thread is requeued on its new CPU at
 * once.  A running thread is bound only by its own CPU, right before it
 * switches (sched_bind binds curthread and calls mi_switch): sched_switch
 * then moves it because ts_cpu no longer names the CPU it runs on.  The
 * host defers the binding of a thread running elsewhere to that thread's
 * next switch, so that ts_cpu of a running thread always names the queue
 * whose lock is its thread lock.
 */
void
ule_unbind(struct thread *td)
{
	struct td_sched *ts = td_get_sched(td);

	THREAD_LOCK_ASSERT(td);
	if ((ts->ts_flags & TSF_BOUND) == 0)
		return;
	ts->ts_flags &= ~TSF_BOUND;
	td->td_pinned--;
}

int
ule_bind(struct thread *td, int cpu)
{
	struct td_sched *ts = td_get_sched(td);

	THREAD_LOCK_ASSERT(td);
	MPASS(!TD_IS_RUNNING(td) || td->td_oncpu == mach_curcpu());
	ule_unbind(td);
	ts->ts_flags |= TSF_BOUND;
	td->td_pinned++;
	if (TD_ON_RUNQ(td)) {
		if (ts->ts_cpu != cpu) {
			ule_rem(td);
			ts->ts_cpu = cpu;
			ule_add(td, SRQ_BORING | SRQ_HOLDTD);
		}
		return (0);
	}
	if (TD_IS_RUNNING(td)) {
		if (td->td_oncpu == cpu)
			return (0);
		ts->ts_cpu = cpu;
		return (1);
	}
	ts->ts_cpu = cpu;
	return (0);
}

int
ule_is_bound(struct thread *td)
{
	return ((td_get_sched(td)->ts_flags & TSF_BOUND) != 0);
}

void
ule_thread_init(struct thread *td)
{
	struct td_sched *ts = td_get_sched(td);
	int now = mach_ticks();

	memset(ts, 0, sizeof(*ts));
	ts->ts_ltick = ts->ts_ftick = now;
	ts->ts_rltick = now - TUN(ule_tun.affinity) * MAX_CACHE_LEVELS;
	td->td_pri_class = PRI_TIMESHARE;
	td->td_nice = 0;
	td->td_base_user_pri = td->td_user_pri = td->td_base_pri =
	    td->td_priority = SCHED_PRI_MIN;
	td->td_lend_user_pri = PRI_MAX;
	td->td_oncpu = td->td_lastcpu = NOCPU;
	td->td_pinned = 0;
	td->td_flags &= TDF_IDLETD;
}

/*
 * A new thread, as thr_new makes one (sched_fork_thread): from a thread it
 * inherits the %CPU estimate, the run/sleep history and the priority, and
 * starts with almost its whole slice used so that its own behaviour is
 * learned quickly.  The creator is not charged: FreeBSD charges a tick and
 * scales the child's history only for a process fork (sched_fork), and a
 * thread-per-connection acceptor charged a tick a spawn would score batch
 * (DESIGN.md section 6.2).  From a creator that is not a thread the child
 * starts with no history.
 */
void
ule_fork(struct thread *td, struct thread *child)
{
	int self = mach_curcpu(), now = mach_ticks();
	struct td_sched *ts, *ts2 = td_get_sched(child);
	struct tdq *tdq;

	if (td != NULL)
		THREAD_LOCK_ASSERT(td);
	child->td_oncpu = child->td_lastcpu = NOCPU;
	ts2->ts_flags = 0;
	if (td == NULL || self < 0) {
		ts2->ts_cpu = self >= 0 ? self : 0;
		ts2->ts_slice = 0;
		ULT_ST(&child->td_lock, TDQ_LOCKPTR(TDQ_CPU(ts2->ts_cpu)));
		ule_priority(child);
		child->td_priority = child->td_base_pri = child->td_user_pri;
		return;
	}
	tdq = TDQ_CPU(self);
	ts = td_get_sched(td);
	ULT_ST(&child->td_lock, TDQ_LOCKPTR(tdq));
	ts2->ts_cpu = ts->ts_cpu;
	ts2->ts_ticks = ts->ts_ticks;
	ts2->ts_ltick = ts->ts_ltick;
	ts2->ts_ftick = ts->ts_ftick;
	ts2->ts_rltick = now - TUN(ule_tun.affinity) * MAX_CACHE_LEVELS;
	child->td_pri_class = td->td_pri_class;
	child->td_base_pri = td->td_base_pri;
	child->td_priority = td->td_base_pri; /* no borrowed priority */
	child->td_user_pri = td->td_user_pri;
	child->td_base_user_pri = td->td_base_user_pri;
	ts2->ts_slptime = ts->ts_slptime;
	ts2->ts_runtime = ts->ts_runtime;
	ts2->ts_slice = ule_tdq_slice(tdq) - TUN(ule_tun.slice_min);
}

/* The child's run time, not its sleep time, is charged to the parent. */
void
ule_exit(struct thread *td, struct thread *child)
{
	THREAD_LOCK_ASSERT(td);
	td_get_sched(td)->ts_runtime += td_get_sched(child)->ts_runtime;
	ule_interact_update(td);
	ule_priority(td);
}

void
ule_idle_init(struct thread *td, int cpu)
{
	struct tdq *tdq = TDQ_CPU(cpu);

	ule_thread_init(td);
	td->td_flags |= TDF_IDLETD;
	td->td_pri_class = PRI_IDLE;
	td->td_priority = td->td_base_pri = td->td_user_pri =
	    td->td_base_user_pri = PRI_MAX_IDLE;
	td->td_pinned = 1;
	td_get_sched(td)->ts_cpu = cpu;
	td->td_oncpu = cpu;
	ULT_ST(&td->td_lock, TDQ_LOCKPTR(tdq));
	TD_SET_RUNNING(td);
	tdq->tdq_idlethread = td;
	ULT_ST(&tdq->tdq_curthread, td);
}
