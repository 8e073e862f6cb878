/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The workers (worker.c): one kernel thread per CPU, its idle loop,
 * parking and spinning; and what a runtime call knows about the worker it
 * runs on.
 */
#ifndef ULT_KERN_WORKER_H
#define ULT_KERN_WORKER_H

#include <pthread.h>
#include <stdint.h>

#include "../arch/tp.h"
#include "../os/linux/os.h"
#include "../obs/trace.h"
#include "../sched/machine.h"
#include "../sched/sched.h"
#include "../util/atomic.h"
#include "runtime.h"
#include "uthread.h"

/*
 * A worker: one kernel thread per CPU.  Locking key:
 *   c  set before the worker starts; constant after
 *   k  only the worker's own kernel thread (its switch path, its idle
 *      loop, its signal handlers)
 *   a  atomic: written or read by other threads (said who)
 */
/* Thread structs a worker keeps for reuse (thread.c). */
#define ULT_TCACHE 64

struct ult__worker {
	int id;			      /* (c) */
	int oscpu;		      /* (c) pinned OS cpu, or -1 */
	pthread_t pthread;	      /* (c) */
	struct ult_thread idle;	      /* (k) the idle thread: this worker's
					 own stack, running the loop */
	struct ult_thread *curthread; /* (k) running uthread, or &idle */
	uint64_t sigmask;	      /* (k) the signal mask in force now */
	/* (k) hand-off from the switching thread to the one switched to */
	struct ult_thread *sw_prev;
	int sw_poll; /* (k) the thread switched to is CPU-bound: poll for I/O
			before it resumes (switch.c) */
	int wake_bg; /* (k) wakeups now are not handovers: the waker
			polls for I/O and goes on running */
	struct mtx *sw_mtx;
	int sw_dying;
	/* (k) the clock read at the start of the current switch */
	uint64_t clk_ns;
	int clk_valid;
	/* (k, a) when the running thread started: ult_thread_info adds
	 * the time since to a running thread's runtime */
	atomic_uint_fast64_t last_switch_ns;
	/* (k, a) the running thread is CPU-bound (chosen(), switch.c): the
	 * clock thread watches the poller for it (clock.c) */
	atomic_int run_bg;
	/* (a) cross-thread words */
	atomic_uint park; /* parker (worker.c): parked by k, unparked by
			     anyone adding work */
	atomic_int ipi;	  /* IPI_PREEMPT pending: set by others, cleared
			     by k */
	/* Parked in the poller (io.h's ult__io_park_*) instead of on its
	 * futex: written by k before it parks, read by unparkers. */
	atomic_int park_io;
	int park_ep, park_efd; /* (k) its own epoll set: the poller's, and
				  an eventfd that unparks it; -1: none */
	atomic_int busy;       /* running a uthread: written by k, read by the
				  clock, which ticks it */
	atomic_int ready;      /* the worker has started (ult_init waits) */
	atomic_int tid;	       /* kernel thread id, for the preemption signal */
	atomic_int kicked;     /* a preemption signal is in flight: set by the
				  kicker, cleared by k's handler */
	atomic_int owed;       /* a preemption was deferred: set by k, retried
				  and cleared by the clock */
	atomic_uint_fast64_t nhandoffs; /* written by the clock thread */
	/* host_nice.c: its kernel thread's nice now (written by k, and by
	 * anyone restoring it) and the one k wants after this switch */
	atomic_int hn_now;
	int hn_want; /* (k) */
	/* Read by other workers' placement decisions (mach_cpu_state), so
	 * on a line that changes only when the worker idles or blocks. */
	atomic_int state ULT_ALIGNED_CL; /* MACH_CPU_*: written by k */
	atomic_int blocked; /* blocked in the kernel: set by the clock
			       thread (handoff.c), cleared by it or k */
	atomic_int stolen;  /* its kernel thread waits for a CPU the host
			       gives others: written by the clock (steal.c) */
	atomic_int offline; /* the spare, out of service: written by the
			       clock thread (handoff.c) */
	/* (k, a) uthreads spawned here and exited here, only ever growing:
	 * read by ult__live_threads */
	atomic_uint_fast64_t nspawned ULT_ALIGNED_CL, nexited;
	/* (k, a) statistics, read by ult_cpu_info */
	atomic_uint_fast64_t npreempt, nowed, nparks, nfutex_wakes;
	atomic_uint_fast64_t nswitch, idle_ns, busy_ns;
	void *tbuf; /* (c) its trace buffer (trace.c), or NULL */
	struct sched_idle idle_state;	/* (k) */
	void *altstack;			/* (c) */
	void *scratch_top;		/* (c) see switch.c:switch_mid */
	struct ult__san scratch_san;	/* (k) */
	struct ult__stack *stack_cache; /* (k) default-size stacks, LIFO */
	int nstack_cache;		/* (k) */
	/* (k) thread structs freed here, FIFO (thread.c) */
	struct ult_thread *tcache[ULT_TCACHE];
	unsigned tcache_head, tcache_n;
	uint64_t id_next, id_end; /* (k) a block of thread ids */
	/* per-uthread TLS (tls.h): (c) once the worker has started */
	void *tls_tp;		      /* its own descriptor */
	void *tls_tcache, *tls_arena; /* its malloc words, lent to blocks */
	void *tls_cache;	      /* (k) free thread blocks, LIFO */
	int ntls_cache;		      /* (k) */
} ULT_ALIGNED_CL;

/* The worker of the calling kernel thread (NULL for foreign threads).
 * Never inlined: after a switch the caller may be on another worker, and
 * a cached thread pointer would name the old one. */
struct ult__worker *ult__worker_self(void);
/* Same read, for code that cannot have switched since its last call. */
extern __thread struct ult__worker *ult__tls_worker
    __attribute__((tls_model("initial-exec")));

/* The CPU the clock thread acts for while it runs that CPU's clock or
 * timers; -1 otherwise.  See machine.c. */
extern __thread int ult__tls_actcpu;

/* Where the compiler keeps the thread pointer of a function's start
 * (AArch64), a function that spans a switch would read the previous
 * worker's words after it with per-worker TLS: both are read through the
 * thread pointer of the moment there (arch/tp.h).  switch.c and
 * machine.c, which define them, #undef these. */
ULT_TLS_FRESH_DECLARE(ult__tls_worker)
ULT_TLS_FRESH_DECLARE(ult__tls_actcpu)
#ifdef ULT_TLS_TP_CACHED
#define ult__tls_worker ULT_TLS_FRESH(ult__tls_worker)
#define ult__tls_actcpu ULT_TLS_FRESH(ult__tls_actcpu)
#endif

/* The calling uthread, or NULL (foreign thread, or a worker's idle loop). */
static inline struct ult_thread *
ult__self_ut(void)
{
	struct ult__worker *w = ult__worker_self();

	if (w == NULL || w->curthread == &w->idle)
		return (NULL);
	return (w->curthread);
}

/*
 * One clock read for a whole runtime call: the policy asks for ticks
 * several times while it forks, sleeps or wakes a thread (mach_ticks), a
 * switch reads the clock too, and on this VM a TSC read costs as much as
 * the rest of a wakeup.  ult__clock_hold reads the clock into the worker
 * for the calls that follow, a switch included, and returns 1; it returns
 * 0 and does nothing for a foreign caller or inside an outer hold.
 * ult__clock_drop(held) ends a hold that was taken, on whatever worker the
 * caller is on by then (a switch in between has dropped its own worker's
 * already).  Never left held across a return to the program.
 */
static inline int
ult__clock_hold(struct ult__worker *w)
{
	if (w == NULL || w->clk_valid)
		return (0);
	w->clk_ns = ult__fastclock_now();
	w->clk_valid = 1;
	return (1);
}

static inline void
ult__clock_drop(int held)
{
	if (held)
		ult__worker_self()->clk_valid = 0;
}

/* ut becomes runnable (woken; its thread lock held): stamp it for its
 * run-queue delay (stats.h) and the trace.  A waking worker holds the
 * clock already (ult__clock_hold); a foreign waker reads it. */
void ult__trace_wakeup(struct ult_thread *ut, uint64_t now);

static inline void
ult__became_runnable(struct ult_thread *ut)
{
	struct ult__worker *w = ult__tls_worker;
	uint64_t now =
	    w != NULL && w->clk_valid ? w->clk_ns : ult__fastclock_now();

	ut->rq_ns = now;
	ut->twake++;
	ULT_USDT(wakeup, ut->id, w != NULL ? w->id : -1, 0);
	if (ULT_UNLIKELY(ULT_PLD(&ult__trace_on)))
		ult__trace_wakeup(ut, now);
}

/* A futex wake for a sleeping worker or foreign waiter, counted against
 * the worker sending it (ult_cpu_info's futex_wakes). */
static inline void
ult__wake_counted(atomic_uint *addr)
{
	struct ult__worker *w = ult__tls_worker;

	if (w != NULL)
		ULT_ST(&w->nfutex_wakes, ULT_LD(&w->nfutex_wakes) + 1);
	ult__futex_wake(addr, 1);
}

/* The add flags for a thread the caller wakes: SRQ_SYNC from a uthread,
 * which hands work over and is likely to block soon (the policy may run
 * the woken thread next on the caller's CPU); none from a foreign thread
 * or the clock thread, which have no CPU to share, nor from a CPU-bound
 * uthread polling for I/O on its way back to work (wake_bg). */
static inline int
ult__wake_flags(void)
{
	struct ult__worker *w = ult__tls_worker;

	if (w == NULL || w->curthread == &w->idle || w->wake_bg)
		return (0);
	return (SRQ_SYNC);
}

/* worker.c */
int ult__workers_start(void);
void ult__workers_stop(void);
void ult__worker_unpark(struct ult__worker *w);
void ult__worker_became_busy(struct ult__worker *w);
/* Worker cpu sleeps in the kernel although its policy says it has work:
 * a lost wakeup if it lasts (lock-free; for watchdogs). */
int ult__worker_stranded(int cpu);

/* worker.c: set before ult_init by the pthread drop-in (its syscall
 * trap), run by each worker's kernel thread as it starts. */
extern void (*ult__worker_start_hook)(void);

#endif
