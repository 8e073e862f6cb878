/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's priority lending (sys/kern/sched_ule.c). */
/*
 * The priority verbs both policies share (FreeBSD keeps a copy in each
 * scheduler): sched_prio, sched_lend_prio, sched_unlend_prio and the
 * userret drop of a boost.  They differ only in how a changed priority
 * reaches the run queue, which each policy passes as `set' (ULE's
 * sched_thread_priority, 4BSD's requeue-on-index-change).  td locked.
 */
#ifndef ULT_SCHED_SCHED_LEND_H
#define ULT_SCHED_SCHED_LEND_H

#include "thread.h"

typedef void (*sched_setpri_fn)(struct thread *td, int prio);

static inline void
sched_common_prio(struct thread *td, int prio, sched_setpri_fn set)
{
	THREAD_LOCK_ASSERT(td);
	td->td_base_pri = (uint8_t)prio;
	/* Never lower a borrowed priority. */
	if ((td->td_flags & TDF_BORROWING) && td->td_priority < prio)
		return;
	set(td, prio);
}

static inline void
sched_common_lend(struct thread *td, int prio, sched_setpri_fn set)
{
	THREAD_LOCK_ASSERT(td);
	td->td_flags |= TDF_BORROWING;
	set(td, prio);
}

/* prio is the best priority still needed by waiters on locks td holds. */
static inline void
sched_common_unlend(struct thread *td, int prio, sched_setpri_fn set)
{
	int base;

	THREAD_LOCK_ASSERT(td);
	if (td->td_base_pri >= PRI_MIN_TIMESHARE &&
	    td->td_base_pri <= PRI_MAX_TIMESHARE)
		base = td->td_user_pri;
	else
		base = td->td_base_pri;
	if (prio >= base) {
		td->td_flags &= ~TDF_BORROWING;
		set(td, base);
	} else
		sched_common_lend(td, prio, set);
}

/*
 * Back to user mode: a priority boost from sleeping ends here.  Unlike a
 * kernel thread, a uthread returns to its own code while holding locks,
 * so a lent priority is kept until the lock's release unlends it.
 * Returns 1 if td_priority was reset to the user priority.
 */
static inline int
sched_common_userret(struct thread *td)
{
	td->td_base_pri = td->td_user_pri;
	if ((td->td_flags & TDF_BORROWING) && td->td_priority < td->td_user_pri)
		return (0);
	td_set_pri(td, td->td_user_pri);
	return (1);
}

#endif
