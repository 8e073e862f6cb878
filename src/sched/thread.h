/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's struct thread (sys/sys/proc.h). */
/*
 * The part of a thread the scheduling policies see: FreeBSD's struct
 * thread, cut down to what sched_ule and sched_4bsd use.  The runtime
 * embeds it in its uthreads and worker idle threads; the simulator in its
 * virtual threads.
 *
 * Thread lock (FreeBSD's td_lock): td_lock names the lock that protects the
 * thread's scheduling state right now: its CPU queue's lock while runnable
 * or running, a sleep-queue chain lock while asleep.  Migration moves the
 * pointer.  While a thread is between two owners its td_lock points at
 * blocked_lock, which nobody ever takes: thread_lock() waits for the
 * pointer to change.  That is how a switch lets go of the run-queue lock
 * before the outgoing thread's registers are saved: until the switch code
 * stores the final lock, nobody can run or move the thread.
 */
#ifndef ULT_SCHED_THREAD_H
#define ULT_SCHED_THREAD_H

#include <stdint.h>

#include "../util/atomic.h"
#include "../util/list.h"
#include "../util/lock.h"
#include "priority.h"

/* td_state */
enum {
	TDS_INACTIVE = 0, /* not yet started, or exited */
	TDS_INHIBITED,	  /* asleep or blocked: see td_inhibitors */
	TDS_CAN_RUN,	  /* runnable, not on a queue (idle thread off CPU) */
	TDS_RUNQ,	  /* on a run queue */
	TDS_RUNNING	  /* on a CPU */
};

/* td_inhibitors */
#define TDI_SLEEPING 0x0002 /* on a sleep queue */
#define TDI_LOCK 0x0008	    /* on a turnstile */

/* td_flags, under the thread lock */
#define TDF_IDLETD 0x0001    /* a CPU's idle thread */
#define TDF_BORROWING 0x0002 /* running with a lent priority */
#define TDF_SLICEEND 0x0004  /* the pending AST is a slice end */
#define TDF_PICKCPU 0x0008   /* re-pick the CPU at the next switch */

/* td_ast bits: reschedule requests checked at runtime entry and exit,
 * where FreeBSD checks them on return to user mode. */
#define TDA_SCHED 0x0001

#define TD_SCHED_SIZE 96

/*
 * Locking key:
 *   (t)  td's thread lock: whatever td_lock points to (a run-queue lock
 *        while td is runnable or running, a sleep queue's or turnstile's
 *        lock while it waits).  While td_lock is &blocked_lock the fields
 *        belong to whoever blocked td (the CPU switching it out, or
 *        moving it between queues), as if it held the lock.
 *   (ta) stored under (t), with relaxed atomic stores (td_set_pri,
 *        td_set_user_pri), because they are also loaded without it: by td
 *        itself on its way out of the runtime (td_userret_pending), by
 *        4BSD comparing another CPU's current thread (pri_of), and by the
 *        checkers and hang reports
 *   (a)  atomic requests that td switch: set by other CPUs, the clock
 *        thread or the host (td_owepreempt always under (t), td_ast
 *        nearly always: 4BSD's maybe_resched sets another CPU's current
 *        thread's without its lock, which the atomic or makes safe),
 *        cleared by td's own switch, loaded lock-free by td at runtime
 *        entry and exit and by its preemption signal handler
 *   (l)  td_lock itself: stored only by the holder of the lock it names
 *        (or of td, while blocked), loaded lock-free by thread_lock(),
 *        which takes the lock it names and checks that it still does
 * td_sched has each policy's own key (sched_ule.h, sched_4bsd.h).  A
 * thread not yet created or already exited (thread_init, fork's child,
 * exit's child) belongs to its creator or reaper, unlocked.
 */
struct thread {
	struct mtx *_Atomic td_lock; /* (l) */
	struct ult__list td_runq;    /* (t) run-queue link */
	int td_rqindex;		     /* (t) queue index while on a runq */
	int td_state;		     /* (t) TDS_* */
	int td_inhibitors;	     /* (t) TDI_* */
	int td_flags;		     /* (t) TDF_* */
	atomic_int td_ast;	     /* (a) TDA_* */
	atomic_int td_owepreempt;    /* (a) a preemption is owed */
	int td_pinned;		     /* (t) nonzero: must not migrate */
	int td_oncpu;		     /* (t) CPU running it, or NOCPU */
	int td_lastcpu;		     /* (t) CPU it last ran on */
	int td_slptick;		     /* (t) ticks when it went to sleep, or 0 */
	uint8_t td_priority;	     /* (ta) effective priority, for queueing */
	uint8_t td_base_pri;	     /* (t) priority without lending */
	uint8_t td_user_pri;	     /* (ta) lesser of the two below */
	uint8_t td_base_user_pri;    /* (t) user priority the policy computed */
	uint8_t td_lend_user_pri;    /* (t) lent by user PI; PRI_MAX: none */
	uint8_t td_pri_class;	     /* (t) PRI_TIMESHARE, PRI_REALTIME, ... */
	int8_t td_nice;		     /* (t) -20..20 (p_nice) */
	_Alignas(8) unsigned char td_sched[TD_SCHED_SIZE]; /* policy data */
};

#define NOCPU (-1)

/*
 * td_priority and td_user_pri are written under the thread lock but read
 * without it where FreeBSD does (the return-to-user check), so writes are
 * relaxed atomic stores and lock-free reads relaxed atomic loads.
 */
static inline void
td_set_pri(struct thread *td, int pri)
{
	ULT_PST(&td->td_priority, (uint8_t)pri);
}

static inline void
td_set_user_pri(struct thread *td, int pri)
{
	ULT_PST(&td->td_user_pri, (uint8_t)pri);
}

/* Nonzero if the thread must pass through sched userret (lock-free). */
static inline int
td_userret_pending(struct thread *td)
{
	return (ULT_PLD(&td->td_priority) != ULT_PLD(&td->td_user_pri));
}

#define TD_IS_RUNNING(td) ((td)->td_state == TDS_RUNNING)
#define TD_ON_RUNQ(td) ((td)->td_state == TDS_RUNQ)
#define TD_CAN_RUN(td) ((td)->td_state == TDS_CAN_RUN)
#define TD_IS_INHIBITED(td) ((td)->td_state == TDS_INHIBITED)
#define TD_IS_SLEEPING(td) ((td)->td_inhibitors & TDI_SLEEPING)
#define TD_ON_LOCK(td) ((td)->td_inhibitors & TDI_LOCK)
#define TD_IS_IDLETHREAD(td) ((td)->td_flags & TDF_IDLETD)

#define TD_SET_RUNNING(td) ((td)->td_state = TDS_RUNNING)
#define TD_SET_RUNQ(td) ((td)->td_state = TDS_RUNQ)
#define TD_SET_CAN_RUN(td) ((td)->td_state = TDS_CAN_RUN)

static inline void
td_set_inhib(struct thread *td, int bit)
{
	td->td_inhibitors |= bit;
	td->td_state = TDS_INHIBITED;
}

static inline void
td_clr_inhib(struct thread *td, int bit)
{
	td->td_inhibitors &= ~bit;
	if (td->td_inhibitors == 0)
		td->td_state = TDS_CAN_RUN;
}

#define TD_SET_SLEEPING(td) td_set_inhib((td), TDI_SLEEPING)
#define TD_CLR_SLEEPING(td) td_clr_inhib((td), TDI_SLEEPING)
#define TD_SET_LOCK(td) td_set_inhib((td), TDI_LOCK)
#define TD_CLR_LOCK(td) td_clr_inhib((td), TDI_LOCK)

/* The lock no one ever acquires; see the comment at the top. */
extern struct mtx blocked_lock;

/*
 * FreeBSD's THREAD_LOCK_ASSERT(td, MA_OWNED): the caller holds td's thread
 * lock.  A thread being handed over (td_lock == &blocked_lock) belongs to
 * whoever blocked it, which this cannot tell, so it passes, as in FreeBSD.
 */
#ifdef ULT_INVARIANTS
#define THREAD_LOCK_ASSERT(td)                                            \
	do {                                                              \
		struct mtx *tla_m_ = ULT_LD(&(td)->td_lock);              \
		ULT_KASSERT(tla_m_ == &blocked_lock || mtx_owned(tla_m_), \
		    "thread lock not held");                              \
	} while (0)
#else
#define THREAD_LOCK_ASSERT(td) ((void)sizeof((td)->td_lock))
#endif

/* Lock the thread's current owner; returns the lock taken. */
static inline struct mtx *
thread_lock(struct thread *td)
{
	unsigned spins = 0;

	for (;;) {
		struct mtx *m = ULT_LD_ACQ(&td->td_lock);

		if (m == &blocked_lock) {
			ult__spin_backoff(&spins);
			continue;
		}
		mtx_lock_spin(m);
		/* Acquire: td may have gone through blocked_lock and back to
		 * m meanwhile (asleep: chain, blocked, chain), and what the
		 * switch wrote before it handed td back must be seen. */
		if (ULT_LD_ACQ(&td->td_lock) == m)
			return (m);
		mtx_unlock_spin(m);
	}
}

static inline void
thread_unlock(struct thread *td)
{
	mtx_unlock_spin(ULT_LD(&td->td_lock));
}

/* The held lock stays held and is returned; the thread becomes blocked. */
static inline struct mtx *
thread_lock_block(struct thread *td)
{
	struct mtx *m = ULT_LD(&td->td_lock);

	MTX_ASSERT_OWNED(m);
	ULT_ST(&td->td_lock, &blocked_lock);
	return (m);
}

/* Give a blocked thread its new owner lock (which the caller holds, or
 * which is already the right one for a thread that is now off CPU). */
static inline void
thread_lock_unblock(struct thread *td, struct mtx *m)
{
	ULT_ST_REL(&td->td_lock, m);
}

/* Wait until whoever blocked the thread has handed it on. */
static inline void
thread_lock_block_wait(struct thread *td)
{
	unsigned spins = 0;

	while (ULT_LD_ACQ(&td->td_lock) == &blocked_lock)
		ult__spin_backoff(&spins);
}

/* Both locks held: move the thread to new and release the old one. */
static inline void
thread_lock_set(struct thread *td, struct mtx *new)
{
	struct mtx *old = ULT_LD(&td->td_lock);

	MTX_ASSERT_OWNED(old);
	MTX_ASSERT_OWNED(new);
	ULT_ST_REL(&td->td_lock, new);
	mtx_unlock_spin(old);
}

#endif
