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
#include "../time/timer.h"
#include "../util/list.h"

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
	struct ult__stack *next;
};

struct ult_thread {
	struct thread td; /* policy view; first member */
	struct ult__ctx ctx;
	struct ult__san san;
	struct ult__stack *stack; /* NULL for a worker's idle thread */
	void *(*fn)(void *);
	void *arg;
	void *ret;
	int saved_errno;
	atomic_int lstate; /* UT_*; changes under the thread lock */
	int detached;	   /* under the join wait-channel lock */
	int joining;	   /* a joiner is waiting (same lock) */
	int last_cpu;	   /* worker it last ran on, for nmigrations */
	uint64_t id;
	char name[32];
	/* statistics, written only by the thread's own switches */
	atomic_uint_fast64_t runtime_ns, nvcsw, nivcsw, nmigrations;
	/* sleeping */
	struct ult__timer slp_timer; /* timeouts; also the sleep wchan */
	struct ult__waiter *_Atomic slp_waiter;
	const void *_Atomic wchan; /* sleep channel while asleep (reports) */
	/* locks (src/sync/turnstile.c) */
	struct ult__turnstile *ts_spare;   /* NULL while lent to a lock */
	struct ult__turnstile *ts_blocked; /* blocked on (its ts_lock) */
	struct ult__waiter *ts_waiter;	   /* its waiter there */
	struct mtx contested_lock;	   /* leaf lock for `contested' */
	struct ult__list contested;	   /* turnstiles of locks it owns */
	atomic_int oncpu; /* running now: lock waiters may spin */
	/* preemption (src/core/preempt.c); written by the thread itself or
	 * its own worker's signal handler, so plain loads and stores */
	atomic_int nopreempt; /* locks held through libc (preempt_shim.c) */
	atomic_int sc_nest;   /* ult_schedctl_start depth */
	atomic_int sc_owed;   /* a preemption was deferred by schedctl */
	atomic_uint_fast64_t sc_since; /* first deferral of this region */
	atomic_uint_fast64_t sc_deferred, sc_forced;
	int preempt_pinned; /* td_pinned holds one for a preemption */
	int bind_pending;   /* ult_bind while pinned: cpu + 1, applied at the
			       next voluntary switch (td locked) */
	struct ult_thread *free_next; /* thread slab free list */
};

struct ult__worker {
	int id;
	int oscpu; /* pinned OS cpu, or -1 */
	pthread_t pthread;
	struct ult_thread idle;	      /* the idle thread: this worker's
					 own stack, running the loop */
	struct ult_thread *curthread; /* running uthread, or &idle */
	/* hand-off from the switching thread to the one switched to */
	struct ult_thread *sw_prev;
	struct mtx *sw_mtx;
	int sw_dying;
	/* the clock read at the start of the current switch */
	uint64_t clk_ns;
	int clk_valid;
	uint64_t last_switch_ns;
	/* cross-thread words */
	atomic_uint park;  /* parker: see worker.c */
	atomic_int ipi;	   /* IPI_PREEMPT pending */
	atomic_int busy;   /* running a uthread: the clock ticks it */
	atomic_int ready;  /* worker has started */
	atomic_int tid;	   /* kernel thread id, for the preemption signal */
	atomic_int kicked; /* a preemption signal is in flight */
	atomic_int owed;   /* a preemption was deferred: retry at the tick */
	atomic_uint_fast64_t npreempt, nowed;
	/* statistics */
	atomic_uint_fast64_t nswitch, idle_ns, busy_ns;
	struct sched_idle idle_state;
	void *altstack;
	void *scratch_top; /* see switch.c:switch_mid */
	struct ult__san scratch_san;
	struct ult__stack *stack_cache; /* default-size stacks, LIFO */
	int nstack_cache;
} ULT_ALIGNED_CL;

enum {
	RT_STOPPED = 0,
	RT_RUNNING,
	RT_STOPPING,
	RT_FORKED /* a fork child of a process whose runtime was up */
};

struct ult__runtime {
	atomic_int state; /* RT_* */
	int ncpu;
	const struct sched_ops *sched;
	struct ult__worker *workers;
	struct cpu_group *topo;
	size_t stack_size;
	size_t stack_guard; /* below every stack, page-rounded */
	int preempt;
	uint64_t epoch_ns;     /* ticks are counted from here */
	atomic_uint ticks_max; /* see machine.c:mach_ticks */
	atomic_uint nthreads;  /* uthreads not yet exited; futex word */
	atomic_uint_fast64_t next_id;
	atomic_int stopping;
	atomic_int child_first; /* ult.child_runs_first */
};

extern struct ult__runtime ult__rt;

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
void ult__mi_switch(struct ult_thread *ut, int flags, struct ult_thread *hint);
void ult__exit_switch(struct ult_thread *ut) __attribute__((noreturn));
void ult__switch_finish(void);
void ult__userret(void);
void ult__thread_entry(void *arg);

/* thread.c */
void ult__thread_dead(struct ult__worker *w, struct ult_thread *ut);
void ult__thread_slab_fini(void);
/* Call fn for every uthread not yet joined (no lock: for hang reports). */
void ult__thread_foreach(void (*fn)(struct ult_thread *, void *), void *arg);

/* fault.c: read ULT_FAULT (once; EINVAL if malformed), and how many
 * failures it has injected so far.  Debug builds only; elsewhere 0. */
int ult__fault_setup(void);
long ult__fault_injected(void);

/* debug.c: the hang report, written to fd. */
void ult__debug_dump(int fd);
extern struct mtx ult__zombie_lock;

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

/* stack.c */
int ult__stacks_init(void);
void ult__stacks_fini(void);
struct ult__stack *ult__stack_get(struct ult__worker *w, size_t size);
void ult__stack_put(struct ult__worker *w, struct ult__stack *s);
void ult__stack_cache_drain(struct ult__worker *w);

/* preempt.c */
int ult__preempt_init(void);
void ult__preempt_fini(void);
void ult__preempt_kick(int cpu);
void ult__preempt_retry(int cpu);
void ult__preempt_switching(struct ult_thread *ut, int flags);
extern atomic_int ult__preempt_migrate;
extern atomic_int ult__schedctl_bound_us;

/* signals.c */
#define ULT__ALTSTACK_SIZE (64u * 1024)
int ult__signals_init(void);
void ult__signals_fini(void);
int ult__altstack_setup(struct ult__worker *w);
int ult__altstack_install(struct ult__worker *w);
void ult__altstack_uninstall(void);
void ult__altstack_teardown(struct ult__worker *w);

#endif
