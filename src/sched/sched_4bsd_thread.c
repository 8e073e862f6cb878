/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_4bsd.c. */
/*
 * sched_4bsd's per-thread state at the ends of a thread's life: its first
 * state, each CPU's idle thread, fork (the child copies estcpu) and exit
 * (the reaper is charged the child's estcpu).  The queues are in
 * sched_4bsd.c.
 */
#include <string.h>

#include "sched_4bsd.h"

void
bsd_thread_init(struct thread *td)
{
	struct td_sched *ts = ts_of(td);

	memset(ts, 0, sizeof(*ts));
	ts->ts_runq = -1;
	ts->ts_cpu = NOCPU;
	ts->ts_pctstamp = mach_ticks();
	ts->ts_slice = TUN(bsd_tun.slice);
	td->td_pri_class = PRI_TIMESHARE;
	td->td_nice = 0;
	td->td_lend_user_pri = PRI_MAX;
	td->td_oncpu = td->td_lastcpu = NOCPU;
	td->td_pinned = 0;
	td->td_flags &= TDF_IDLETD;
	bsd_resetpriority(td);
	td->td_priority = td->td_base_pri = td->td_user_pri;
}

void
bsd_idle_init(struct thread *td, int cpu)
{
	bsd_thread_init(td);
	td->td_flags |= TDF_IDLETD;
	td->td_pri_class = PRI_IDLE;
	td->td_priority = td->td_base_pri = td->td_user_pri =
	    td->td_base_user_pri = PRI_MAX_IDLE;
	td->td_pinned = 1;
	td->td_oncpu = cpu;
	ULT_ST(&td->td_lock, &bsd_sched_lock);
	TD_SET_RUNNING(td);
	bsd_idlethr[cpu] = td;
	ULT_ST(&bsd_curthr[cpu], td);
}

/* The child copies estcpu and starts with a one-tick slice. */
void
bsd_fork(struct thread *td, struct thread *child)
{
	struct td_sched *ts2 = ts_of(child);

	if (td != NULL)
		THREAD_LOCK_ASSERT(td);
	child->td_oncpu = child->td_lastcpu = NOCPU;
	ULT_ST(&child->td_lock, &bsd_sched_lock);
	ts2->ts_flags = 0;
	ts2->ts_slice = 1;
	ts2->ts_pctstamp = mach_ticks();
	if (td != NULL) {
		ts2->ts_estcpu = ts_of(td)->ts_estcpu;
		child->td_pri_class = td->td_pri_class;
		child->td_nice = td->td_nice;
	}
	bsd_resetpriority(child);
	child->td_priority = child->td_base_pri = child->td_user_pri;
}

void
bsd_exit(struct thread *td, struct thread *child)
{
	struct td_sched *ts = ts_of(td);

	THREAD_LOCK_ASSERT(td);
	ts->ts_estcpu =
	    ESTCPULIM(ts->ts_estcpu + ts_of(child)->ts_estcpu, bsd_iew());
	bsd_resetpriority(td);
}
