/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The mechanism's shared state: workers (one kernel thread per CPU), the
 * uthread structure, and the entry points the core files call in each
 * other.  Policy decisions all go through rt.sched (src/sched/sched.h).
 */
#ifndef ULT_CORE_RUNTIME_H
#define ULT_CORE_RUNTIME_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "ult.h"

#include "../arch/context.h"
#include "../arch/sanitizer.h"
#include "../os/linux/os.h"
#include "../sched/machine.h"
#include "../sched/sched.h"
#include "timer.h"
#include "../util/list.h"
#include "../obs/trace.h"

#if defined(__GNUC__) && !defined(__clang__)
#define ULT_NOIPA __attribute__((noipa))
#else
#define ULT_NOIPA __attribute__((noinline))
#endif

/* Lifecycle of a uthread handle (ut_lstate). */
enum {
	UT_ALIVE = 1, /* created, not yet exited */
	UT_ZOMBIE,    /* exited, waiting to be joined */
	UT_FREE	      /* joined or detached-and-exited: handle is dead */
};

struct ult__stack {
	void *base;   /* start of the mapping slot: guard, then stack */
	size_t guard; /* bytes of guard at base */
	size_t size;  /* usable bytes above the guard */
	int user;     /* the spawner's memory (ult__spawn_on): no guard,
			 never pooled or unmapped */
	struct ult__stack *next;
};

/*
 * A uthread.  Locking key (who may write a field, and who reads it):
 *   c  set by ult_spawn before the thread is visible; constant after
 *   t  the thread lock (td.td_lock, whichever lock it names now)
 *   j  the join channel's sleep-queue chain (ult__sleepq_lock(ut))
 *   q  the ts_lock of the turnstile the thread blocks on
 *   x  contested_lock
 *   s  the thread itself, or its own worker's switch path or signal
 *      handler while it is current there (one kernel thread at a time)
 *   z  the thread slab's lock
 *   a  atomic: read without a lock by other threads (said why)
 */
struct ult_thread {
	struct thread td;	  /* (t) policy view; first member */
	struct ult__ctx ctx;	  /* (s) saved and loaded by switches */
	struct ult__san san;	  /* (s) */
	struct ult__stack *stack; /* (c) NULL for a worker's idle thread;
				     given back by the next thread on the
				     worker once this one has exited */
	void *(*fn)(void *);	  /* (c) */
	void *arg;		  /* (c) */
	void *ret;		  /* (s) at exit; the joiner reads it after
				     seeing UT_ZOMBIE under j */
	int saved_errno;	  /* (s) across switches */
	atomic_int lstate; /* (t+j, a) UT_*: handle checks read it first */
	int detached;	   /* (j) */
	int joining;	   /* (j) a joiner is waiting */
	int last_cpu;	   /* (s) worker it last ran on, for nmigrations */
	int last_swt;	   /* (s) SWT_* reason of its last switch (reports) */
	uint64_t id;	   /* (c) */
	char name[32];	   /* (c) */
	/* (s, a) statistics, read by ult_thread_info */
	atomic_uint_fast64_t runtime_ns, nvcsw, nivcsw, nmigrations;
	/* Run-queue delay, from becoming runnable to running (stats.c):
	 * rq_ns and twake are written by whoever makes the thread runnable,
	 * under its thread lock, and read at its next switch-in; the sums by
	 * the thread's own switch-in (s, a).  twake counts wakeups, which
	 * the trace pairs with runs. */
	uint64_t rq_ns;
	uint32_t twake, tseen; /* tseen: (s) the trace's last paired one */
	atomic_uint_fast64_t rqd_sum, rqd_n, rqd_max;
	uint32_t *rqd_hist; /* (c) ULT_STATS's histogram, or NULL */
	/* sleeping */
	struct ult__timer slp_timer; /* (s) armed and cancelled by the
					thread, expired by the clock thread
					(the heap's lock); also the sleep
					wchan */
	struct ult__waiter *_Atomic slp_waiter; /* (s, a) published before
						   the timer is armed, read
						   by its expiry */
	const void *_Atomic wchan; /* (s, a) sleep channel, for reports and
				      ult__sleepq_interrupt */
	const char *_Atomic wmesg; /* (s, a) what it sleeps on ("sem",
				      "mutex", ...): a static string */
	/* Interruptible waits (the pthread drop-in's cancellation points):
	 * intr is set by the thread around such a wait (s, a); intr_pending
	 * by ult__sleepq_interrupt (a), consumed by the wait it ends. */
	atomic_int intr, intr_pending;
	/* locks (src/kern/turnstile.c) */
	struct ult__turnstile *ts_spare;   /* (s) NULL while lent to a lock;
					      handed back under q */
	struct ult__turnstile *ts_blocked; /* (q) blocked on */
	struct ult__waiter *ts_waiter;	   /* (q) its waiter there */
	struct mtx contested_lock;	   /* the lock x, a leaf */
	struct ult__list contested;	   /* (x) turnstiles of locks it owns */
	atomic_int ncontested; /* (x) their number; read without x too */
	atomic_int oncpu;      /* (s, a) running now: lock waiters spin on it */
	/* preemption (src/kern/preempt.c): (s, a), plain loads and stores
	 * in effect; atomic because reports and tests read them */
	atomic_int nopreempt; /* locks held through libc (preempt_shim.c) */
	atomic_int sc_nest;   /* ult_schedctl_start depth */
	atomic_int sc_owed;   /* a preemption was deferred by schedctl */
	atomic_uint_fast64_t sc_since; /* first deferral of this region */
	atomic_uint_fast64_t sc_deferred, sc_forced;
	int preempt_pinned; /* (t) td_pinned holds one for a preemption */
	int bind_pending;   /* (t) a binding (cpu + 1) for the next switch
			       that leaves the thread free to move */
	int chaos_bound;    /* (t) bound by ult.chaos_migrate, not the
			       program (sched_calls.c) */
	void *tls;	    /* (c) its thread block (tls.h), or NULL; for an
			       idle thread, its worker's own descriptor */
	int tls_exiting;    /* (s) its TLS destructors have started */
	uint64_t sigmask;   /* (s) its signal mask, the kernel's bits: its
			       worker's while it runs (ult__sigmask_load) */
	struct ult__worker *tls_w;    /* (s) the worker that last loaded its
					 block, whose words it holds */
	struct ult_thread *free_next; /* (z) thread slab free list */
};

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

enum {
	RT_STOPPED = 0,
	RT_RUNNING,
	RT_STOPPING,
	RT_FORKED /* a fork child of a process whose runtime was up */
};

struct ult__runtime {
	atomic_int state;  /* RT_* */
	uint64_t sigmask0; /* ult_init's caller's signal mask: the workers'
			      and, by default, every uthread's */
	int sigmask_idle;  /* the drop-in's: an idle worker blocks every
			      signal a fault does not raise */
	int ncpu;	   /* the program's workers: ult_ncpu() */
	int nworkers;	   /* ncpu and the spare (handoff.c), if there is one */
	const struct sched_ops *sched;
	struct ult__worker *workers;
	struct cpu_group *topo;
	size_t stack_size;
	size_t stack_guard; /* below every stack, page-rounded */
	int preempt;
	uint64_t epoch_ns;	   /* ticks are counted from here */
	int max_spinning;	   /* at most this many: half, at least 1 */
	atomic_int shutdown_waits; /* ult_shutdown waits for exits */
	atomic_int stopping;
	atomic_int child_first; /* ult.child_runs_first */
	int tls_want;		/* ult_config.tls, ULT_TLS: per-uthread */
	int tls;		/* per-uthread TLS is in force (tls.h) */
	/* Written often by all workers: each on a line of its own, away
	 * from the fields above that every call reads. */
	atomic_uint ticks_max ULT_ALIGNED_CL; /* see machine.c:mach_ticks */
	/* uthreads spawned by foreign threads; and ult_shutdown's futex
	 * word, 1 while it sleeps there (thread.c:ult__live_threads) */
	atomic_uint_fast64_t nspawned_foreign ULT_ALIGNED_CL;
	atomic_uint exit_waiter;
	atomic_int nspinning ULT_ALIGNED_CL; /* workers spinning idle */
	atomic_int nblocked;		     /* workers blocked in the kernel
						(handoff.c) */
	atomic_uint_fast64_t next_id ULT_ALIGNED_CL; /* ids handed out */
};

extern struct ult__runtime ult__rt;

/* thread.c: uthreads not yet exited, and ult_shutdown's wait for none. */
uint64_t ult__live_threads(void);
void ult__wait_no_threads(void);

/* CPU-bound by either policy's reckoning: ULE's batch range (its
 * PRI_MIN_BATCH) and below, where 4BSD's estcpu takes a spinning thread;
 * the idle class too. */
#define PRI_BACKGROUND (PRI_MIN_TIMESHARE + 48)

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

static inline struct ult_thread *
ult__td2ut(struct thread *td)
{
	return ((struct ult_thread *)(void *)td);
}

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

static inline int
ult__running(void)
{
	return (ULT_LD_ACQ(&ult__rt.state) == RT_RUNNING);
}

static inline int
ult__ticks_of(uint64_t ns)
{
	return ((int)(uint32_t)((ns - ult__rt.epoch_ns) / 1000000u + 1000u));
}

/* switch.c */
/* errno, read and written out of line: for code that may switch between
 * two uses (with per-worker TLS &errno changes when a uthread migrates). */
int ult__errno(void);
void ult__set_errno(int e);
void ult__mi_switch(struct ult_thread *ut, int flags, struct ult_thread *hint);
void ult__exit_switch(struct ult_thread *ut) __attribute__((noreturn));
void ult__switch_finish(void);
void ult__userret(void);
void ult__thread_entry(void *arg);

/* thread.c */
void ult__thread_dead(struct ult__worker *w, struct ult_thread *ut);

/* sched_calls.c: a class and, outside timeshare, a fixed priority for
 * td (locked); resolve t (NULL: the caller) and lock it (ENXIO, EINVAL
 * for NULL outside a uthread, ESRCH gone or, with alive_only, exited). */
void ult__class_apply(struct thread *td, int cls, int prio);
int ult__thread_lock_handle(ult_thread_t **t, int alive_only);
void ult__thread_slab_fini(void);
/* Call fn for every uthread not yet joined, under the slab's lock; with
 * hang 1 (hang reports) without it if it is taken, reading the slab as it
 * is, half-made structs included. */
void ult__thread_foreach(void (*fn)(struct ult_thread *, void *), void *arg,
    int hang);

/* debug.c: the hang report, written to fd. */
void ult__debug_dump(int fd);

/* worker.c */
int ult__workers_start(void);
void ult__workers_stop(void);
void ult__worker_unpark(struct ult__worker *w);
void ult__worker_became_busy(struct ult__worker *w);
/* Worker cpu sleeps in the kernel although its policy says it has work:
 * a lost wakeup if it lasts (lock-free; for watchdogs). */
int ult__worker_stranded(int cpu);

/* clock.c: the thread that plays the clock interrupt */
int ult__clock_start(void);
void ult__clock_stop(void);
void ult__clock_kick(uint64_t deadline_ns);
/* Wake the clock thread to look at its state again (I/O was armed). */
void ult__clock_rearm(void);

/* handoff.c: the clock thread's look at a busy worker at a stat tick: one
 * that has run the same uthread for ult.handoff_us while its kernel thread
 * sleeps is blocked in the kernel, and its queue goes to the others. */
extern atomic_int ult__handoff_us;
void ult__handoff_tick(int cpu);
void ult__handoff_set(struct ult__worker *w, int on);
void ult__handoff_init(void);
void ult__handoff_fini(void);
/* The spare worker in or out of service, after a round of ticks. */
void ult__handoff_spare(void);
long ult__handoff_spare_runs(void); /* sysctl ult.spare_runs */
long ult__handoff_has_spare(void);  /* sysctl ult.spare */

/* host_nice.c: ult.host_nice, a worker's host nice follows its uthread. */
extern atomic_int ult__host_nice;
int ult__host_nice_configure(int want);
void ult__host_nice_start(struct ult__worker *w);
int ult__host_nice_of(const struct thread *td);
void ult__host_nice_apply(struct ult__worker *w);
void ult__host_nice_restore(struct ult__worker *w);
long ult__host_nice_get(void);
int ult__host_nice_set(long v);

/* stack.c */
int ult__stacks_init(void);
void ult__stacks_fini(void);
struct ult__stack *ult__stack_get(struct ult__worker *w, size_t size);
void ult__stack_put(struct ult__worker *w, struct ult__stack *s);

/*
 * Signal masks per uthread.  A uthread starts with its creator's (a
 * foreign creator's: ult__rt.sigmask0), and only the pthread drop-in
 * changes one (ult__sigmask_set, on the caller: how is SIG_BLOCK,
 * SIG_UNBLOCK or SIG_SETMASK, set may be NULL; the runtime's preemption
 * signal and glibc's two internal ones are never blocked).  The switch-in
 * gives the worker the incoming uthread's mask when it differs: one
 * compare per switch while all masks are equal.  The idle loop keeps
 * whatever mask it finds, unless sigmask_idle (the drop-in) asks it to
 * block the program's signals: otherwise the mask of a uthread that has
 * exited could let a signal in that every live one blocks (a system call
 * each way between idle and a uthread, then).
 */
#define ULT_SIGMASK_IDLE (~ULT_SIGMASK_KEEP & ~(1ull << (SIGURG - 1)))
void ult__sigmask_set(int how, const uint64_t *set, uint64_t *old);
static inline uint64_t
ult__sigmask_of(struct ult__worker *w, struct ult_thread *to)
{
	if (to != &w->idle)
		return (to->sigmask);
	return (ult__rt.sigmask_idle ? ULT_SIGMASK_IDLE : w->sigmask);
}

/* In two steps around the move of the thread pointer, so that no signal
 * either thread blocks runs a handler on the other's block: what the
 * incoming thread blocks is blocked before (pre), what it does not is
 * unblocked after. */
static inline void
ult__sigmask_pre(struct ult__worker *w, struct ult_thread *to)
{
	uint64_t m = ult__sigmask_of(w, to);

	if (__builtin_expect((m & ~w->sigmask) != 0, 0)) {
		w->sigmask |= m;
		ult__os_sigmask(w->sigmask);
	}
}

static inline void
ult__sigmask_load(struct ult__worker *w, struct ult_thread *to)
{
	uint64_t m = ult__sigmask_of(w, to);

	if (__builtin_expect(m != w->sigmask, 0)) {
		w->sigmask = m;
		ult__os_sigmask(m);
	}
}
/* ult_spawn on the caller's stack [stack, stack + size) (the pthread
 * drop-in's pthread_attr_setstack): EINVAL NULL or below ULT_STACK_MIN;
 * the memory must outlive the thread, as with pthreads. */
int ult__spawn_on(ult_thread_t **t, const struct ult_attr *a,
    void *(*fn)(void *), void *arg, void *stack, size_t size);
void ult__stack_cache_drain(struct ult__worker *w);

/* preempt.c */
int ult__preempt_init(void);
void ult__preempt_fini(void);
void ult__preempt_kick(int cpu);
extern int (*ult__preempt_hook_due)(void);
extern void (*ult__preempt_hook_run)(void);
void ult__preempt_retry(int cpu);
void ult__preempt_switching(struct ult_thread *ut, int flags);
extern atomic_int ult__preempt_migrate;
extern atomic_int ult__schedctl_bound_us;

/* sched_calls.c: ult.chaos_migrate (tests): ut (locked, current) is
 * about to switch with `flags'; a voluntary switch moves it to the next
 * worker. */
extern atomic_int ult__chaos_migrate;
void ult__chaos_switching(struct ult_thread *ut, int flags);

/* worker.c: set before ult_init by the pthread drop-in (its syscall
 * trap), run by each worker's kernel thread as it starts. */
extern void (*ult__worker_start_hook)(void);

/* signals.c */
#define ULT__ALTSTACK_SIZE (64u * 1024)
int ult__signals_init(void);
/* Call the handler that old describes for sig, if it is one (not
 * SIG_DFL or SIG_IGN); 1 if it was called. */
int ult__sig_chain(const struct sigaction *old, int sig, siginfo_t *si,
    void *uc);
void ult__signals_fini(void);
int ult__altstack_setup(struct ult__worker *w);
int ult__altstack_install(struct ult__worker *w);
void ult__altstack_uninstall(void);
void ult__altstack_teardown(struct ult__worker *w);

#endif
