/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The interface between the mechanism (workers, switch path, sleep
 * queues, clock) and a scheduling policy: FreeBSD's sched_* verbs as an
 * ops table, so sched_ule and sched_4bsd can be swapped at ult_init().
 *
 * Locking, as in FreeBSD: "td locked" means the caller holds td's thread
 * lock (thread_lock(td)).  A policy takes run-queue locks itself only where
 * FreeBSD's does (migration, stealing, balancing, the clock).
 */
#ifndef ULT_SCHED_SCHED_H
#define ULT_SCHED_SCHED_H

#include <stdint.h>

#include "thread.h"

/* sched_add flags (SRQ_*) */
#define SRQ_BORING 0x0000    /* no special circumstances */
#define SRQ_YIELDING 0x0001  /* the caller is about to switch anyway */
#define SRQ_OURSELF 0x0002   /* re-adding the running thread */
#define SRQ_INTR 0x0004	     /* urgent */
#define SRQ_PREEMPTED 0x0008 /* head of its queue: it was preempted */
#define SRQ_BORROWING 0x0010 /* priority lent: current calendar bucket */
#define SRQ_HOLD 0x0020	     /* keep the thread's old lock held */
#define SRQ_HOLDTD 0x0040    /* return with the thread still locked */
#define SRQ_FORKING                                          \
	0x0080 /* ult: a new thread whose creator runs on    \
		  this CPU and lets children run first: keep \
		  it here unless another CPU is idle */
#define SRQ_SYNC                                            \
	0x0100 /* ult: woken by the thread running on the   \
		  calling CPU, which hands work over and is \
		  likely to block soon: run it next, here */

/* switch flags (SW_*) and switch reasons (SWT_*, low byte) */
#define SWT_NONE 0
#define SWT_PREEMPT 1	     /* a better thread was added locally */
#define SWT_OWEPREEMPT 2     /* a deferred preemption */
#define SWT_TURNSTILE 3	     /* blocked on a lock */
#define SWT_SLEEPQ 4	     /* went to sleep */
#define SWT_RELINQUISH 6     /* yield */
#define SWT_NEEDRESCHED 7    /* slice end or AST */
#define SWT_IDLE 8	     /* idle thread looking for work */
#define SWT_REMOTEPREEMPT 11 /* IPI_PREEMPT from another CPU */
#define SWT_BIND 13	     /* sched_bind moved us */
#define SWT_CHILDFIRST 14    /* ult: a new child runs before its creator */
#define SW_TYPE_MASK 0xff
#define SW_VOL 0x0100	  /* voluntary switch */
#define SW_INVOL 0x0200	  /* involuntary switch */
#define SW_PREEMPT 0x0400 /* the outgoing thread was preempted */

/* A kern.sched.* tunable: a plain variable with a range, or get/set
 * functions where setting one value recomputes others. */
struct sched_tunable {
	const char *name; /* FreeBSD sysctl name, "kern.sched.slice" */
	atomic_int *var;  /* NULL when get/set are given */
	int min, max;	  /* accepted range for var */
	long (*get)(void);
	/* 0, EINVAL or EPERM; var and set both NULL: read-only */
	int (*set)(long v);
};

struct sched_thread_stats {
	int interact_score; /* 0..100, -1 if the policy has none */
	int pctcpu;	    /* %CPU in FSCALE units (2048 = 100%) */
	int cpu;	    /* ts_cpu */
};

struct sched_cpu_stats {
	int load;
	int transferable;
	int lowpri;
	uint64_t steals; /* threads this cpu took from others */
	uint64_t lock_contended;
};

/* Results of idle_poll(). */
enum {
	SCHED_IDLE_RUN = 0, /* there is work: switch to it */
	SCHED_IDLE_SPIN,    /* poll load() for a while before sleeping */
	SCHED_IDLE_SLEEP    /* call idle_enter() and sleep if it says 0 */
};

struct sched_idle {
	int oldswitchcnt; /* idle loop's private copy, as in sched_idletd */
	int switchcnt;
	int busy; /* set by idle_enter: switching fast, sleep lightly */
	/* ult: the busy CPU seen at the previous poll, and its tdq_nlow
	 * then; a thread it still has queued, its load never having fallen
	 * to one since, waited a whole poll interval */
	int victim;
	unsigned victim_nlow;
};

struct sched_ops {
	const char *name; /* "ULE", "4BSD" (kern.sched.name) */

	/* Set up per-CPU state for mach_ncpu() CPUs; 0 or an errno. */
	int (*init)(void);
	void (*fini)(void);

	/* A new thread with no history: timeshare, nice 0. */
	void (*thread_init)(struct thread *td);
	/* td becomes cpu's idle thread, running; its td_lock is set. */
	void (*idle_init)(struct thread *td, int cpu);

	/* parent (locked, may be NULL for a creator that is not a thread)
	 * creates child, which inherits its history as thr_new's does.  On
	 * return the child's td_lock is a run-queue lock. */
	void (*fork)(struct thread *parent, struct thread *child);
	/* child has exited; charge its run time to parent (locked). */
	void (*exit)(struct thread *parent, struct thread *child);

	/* td locked and not on a run queue: make it runnable. */
	void (*add)(struct thread *td, int flags);
	/* td locked and on a run queue: take it off. */
	void (*rem)(struct thread *td);
	/*
	 * td (locked, the CPU's current thread) gives up the CPU.  If td is
	 * still TDS_RUNNING it is requeued (or migrated); otherwise it is
	 * going to sleep and its lock is a sleep-queue lock.  newtd, if not
	 * NULL, was just removed with rem() under this CPU's run-queue lock
	 * and is run next (td must then be running).  Returns the thread to
	 * run, with every lock released and td blocked (td_lock ==
	 * &blocked_lock); *mtxp is the lock to store in td->td_lock once its
	 * context is saved (thread_lock_unblock).
	 */
	struct thread *(*switch_)(struct thread *td, struct thread *newtd,
	    int flags, struct mtx **mtxp);
	/* td (locked, current) exits.  Returns the next thread with every
	 * lock released; td is left blocked and belongs to the caller. */
	struct thread *(*throw_)(struct thread *td);

	/* td (locked) is going to sleep on a sleep queue. */
	void (*sleep)(struct thread *td, int prio);
	/* td (locked, asleep) wakes up and becomes runnable. */
	void (*wakeup)(struct thread *td, int srqflags);

	/* One or more stat ticks on cpu (FreeBSD statclock -> sched_clock).
	 * Takes the run-queue lock itself. */
	void (*clock)(int cpu, int cnt);
	/* cpu received IPI_PREEMPT; td is its current thread (locked).
	 * Sets td_owepreempt if td should switch. */
	void (*preempt)(struct thread *td);
	/* td (locked, running) returns to "user mode": drop any boost. */
	void (*userret)(struct thread *td);

	/* Priorities (td locked). */
	void (*nice)(struct thread *td, int nice);
	void (*prio)(struct thread *td, int prio);
	void (*lend_prio)(struct thread *td, int prio);
	void (*unlend_prio)(struct thread *td, int prio);
	void (*set_class)(struct thread *td, int cls);

	/* Bind td (locked) to cpu / unbind it.  A running td must be the
	 * calling CPU's current thread; bind then returns 1 when cpu is
	 * another CPU, and the caller must switch td out next (its switch
	 * moves it).  Queued and sleeping threads are simply re-homed. */
	int (*bind)(struct thread *td, int cpu);
	void (*unbind)(struct thread *td);
	int (*is_bound)(struct thread *td);

	/* ult: cpu's host thread is blocked in the kernel inside the thread
	 * it runs, or cpu is a reserve CPU leaving service (mach_cpu_state
	 * says MACH_CPU_BLOCKED either way): move what is queued there and
	 * may migrate to CPUs that can run it, and wake them; a reserve
	 * CPU's running thread leaves at its next switch.  Called from the
	 * clock, no lock held; takes the run-queue locks itself.  Returns
	 * how many threads moved. */
	int (*evacuate)(int cpu);

	/*
	 * The idle thread's loop, split at the points where it waits.  The
	 * host calls idle_poll again every poll interval while it spins
	 * (SCHED_IDLE_SPIN asks for the longer spin of a busy CPU), and the
	 * policy may then take work that another CPU has left queued for a
	 * whole interval.
	 */
	int (*idle_poll)(int cpu, struct sched_idle *st);
	/* Publish "about to sleep" with a full fence; nonzero means work
	 * appeared and the caller must not sleep.  Sets st->busy. */
	int (*idle_enter)(int cpu, struct sched_idle *st);
	void (*idle_exit)(int cpu, struct sched_idle *st);

	/* Lock-free reads for the host. */
	int (*load)(int cpu);
	void (*thread_stats)(struct thread *td, struct sched_thread_stats *);
	void (*cpu_stats)(int cpu, struct sched_cpu_stats *);

	/* kern.sched.* tunables, terminated by a NULL name. */
	const struct sched_tunable *tunables;
	/* The shortest slice the policy gives a thread, in microseconds, at
	 * least one stat tick, from the tunables as they are now: what the
	 * host bounds its own deferrals of a preemption by (the default
	 * ult.schedctl_bound_us).  Reads only tunables, so it may be called
	 * before init(). */
	int (*slice_min_us)(void);

	/* Check the invariants of every CPU queue (docs/ULE.md section 8)
	 * with all queues locked; returns 0 or a line describing the first
	 * violation.  For tests. */
	const char *(*check)(void);
	/* Describe cpu's queues for a hang report, one line per call of
	 * out; threads are named by their struct thread address.  Takes no
	 * lock that it cannot get at once (the report must not hang too),
	 * so what it prints may be inconsistent. */
	void (*dump)(int cpu, void (*out)(void *arg, const char *line),
	    void *arg);
};

/*
 * FreeBSD's rtp_to_pri, the policy's half: td (locked) takes class pc at
 * the fixed user priority pri; PRI_TIMESHARE goes back to the priority
 * the policy computes (pri unused).  The runtime maps ult's classes onto
 * this; the simulator calls it directly.
 */
static inline void
sched_class_apply(const struct sched_ops *s, struct thread *td, int pc, int pri)
{
	if (pc == PRI_TIMESHARE) {
		s->set_class(td, PRI_TIMESHARE);
		s->nice(td, td->td_nice);
		return;
	}
	s->set_class(td, pc);
	td->td_base_user_pri = (uint8_t)pri;
	td_set_user_pri(td,
	    pri < td->td_lend_user_pri ? pri : td->td_lend_user_pri);
	s->prio(td, td->td_user_pri);
}

extern const struct sched_ops ult__sched_ule;
extern const struct sched_ops ult__sched_4bsd;
/* sched_4bsd internals the policy tests check against the formulas. */
int ult__4bsd_estcpu(struct thread *td);
int ult__4bsd_ldavg(void);

/* FSCALE as in FreeBSD: fixed point with 11 fractional bits. */
#define FSHIFT 11
#define FSCALE (1 << FSHIFT)

#endif
