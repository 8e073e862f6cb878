/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The deterministic simulator: machine.h on virtual CPUs and virtual
 * time, driving the unchanged policy objects.  Time advances in hz ticks
 * (1 ms); the stat clock fires at stathz on every busy CPU and on CPU 0,
 * as the runtime's clock thread does.  Threads follow scripted behaviour
 * (run r ms, sleep s ms, repeat) and every switch goes through the
 * policy's switch verb, with the same AST and IPI handling as the runtime.
 */
#ifndef ULT_SIM_H
#define ULT_SIM_H

#include <stdint.h>

#include "sched/machine.h"
#include "sched/sched.h"

#define SIM_MAXCPU ULT_CPUSET_MAX
#define SIM_TICK_NS (1000000000 / ULT_HZ)

enum {
	SIM_RUNNABLE = 1,
	SIM_RUNNING,
	SIM_SLEEPING,
	SIM_DONE
};

/* What a thread does when a burst ends (struct sim_behaviour). */
enum {
	SIM_ACT_SLEEP, /* sleep *ms, then wake and ask for the next burst */
	SIM_ACT_WAIT,  /* sleep until sim_wake() */
	SIM_ACT_RUN,   /* go on running for *ms more */
	SIM_ACT_EXIT   /* exit */
};

#define SIM_FOREVER (1 << 30) /* a burst that never ends */

struct sim;
struct sim_thread;

/*
 * A thread's behaviour, for the scenario tool: called on the CPU where the
 * thread runs (it may sim_fork() or sim_wake() from there).  Without one a
 * thread runs run_ms, sleeps sleep_ms, and repeats.
 */
struct sim_behaviour {
	/* A burst ended: an SIM_ACT_* action and its length in *ms. */
	int (*burst_end)(struct sim *s, struct sim_thread *t, int *ms);
	/* The thread woke: the length of its next burst in ms. */
	int (*woken)(struct sim *s, struct sim_thread *t);
	/* The thread exited (optional). */
	void (*exited)(struct sim *s, struct sim_thread *t);
};

/* Observers, for the scenario tool's statistics and timeline. */
struct sim_hooks {
	/* thread t ran on cpu from start_ns to end_ns (idle included). */
	void (*segment)(void *arg, int cpu, const struct sim_thread *t,
	    int64_t start_ns, int64_t end_ns);
	/* t, woken, starts to run on cpu lat_ns after its wakeup. */
	void (*run)(void *arg, int cpu, const struct sim_thread *t,
	    int64_t lat_ns);
	/* t starts to run on cpu, having last run on from (-1: never). */
	void (*place)(void *arg, int cpu, const struct sim_thread *t, int from);
	void *arg;
};

/* A user-level mutex of the yielders' workload (struct sim_yielders). */
struct sim_umtx {
	struct sim_thread *owner;
	struct sim_thread **waiters; /* FIFO */
	int nwait, cap;
};

/*
 * sysbench's threads workload, run at sub-tick resolution (sim_fine.c):
 * each event takes mutex (event mod nlocks), then `yields' times yields
 * and relocks it; every yield is a trip through the policy's switch.
 */
struct sim_yielders {
	int yields, nlocks;
	struct sim_umtx *mtx;
	int64_t next_event;
	int64_t events; /* completed */
	int64_t nyields;
};

/*
 * Costs of the sub-tick model in virtual ns, all 0 (free) by default: the
 * tick-level model and the tests do not see them.  A scheduler lock held
 * lock_ns per acquisition serialises its holders; taking it after
 * another CPU adds xfer_ns (the cache line moves).
 */
struct sim_cost {
	int64_t lock_ns, xfer_ns;
	int64_t switch_ns; /* a context switch to another thread */
	int64_t yield_ns;  /* the policy call and the wrapper of a yield */
	int64_t umtx_ns;   /* a user mutex lock or unlock, uncontended */
	int64_t block_ns;  /* more for a contended one: to block, to wake */
	int64_t wake_ns;   /* an idle CPU that spins notices work */
	int64_t park_ns;   /* a parked CPU wakes up (a futex wake) */
};

struct sim_thread {
	struct thread td; /* first: the policy's view */
	int id;
	int state;
	int run_ms;	     /* run this long per burst; <= 0: forever */
	int sleep_ms;	     /* then sleep this long */
	int left;	     /* ms left in the current burst */
	int64_t wake_at;     /* tick to wake at while sleeping */
	int64_t ready_at;    /* tick it became runnable (latency) */
	int64_t ready_ns;    /* the same in virtual ns */
	int woke;	     /* woken and not yet run (hooks.run) */
	int64_t queued_ns;   /* runnable since, for whatever reason */
	int64_t max_wait_ns; /* longest time runnable and not running */
	int64_t cpu_ticks;   /* hz ticks of CPU received */
	int64_t cpu_ns;	     /* virtual ns of CPU received */
	int64_t bursts;	     /* completed run bursts */
	int64_t max_latency; /* worst wakeup-to-run delay, ticks */
	int last_cpu;
	int sleep_cpu; /* where its timeout fires */
	int migrations;
	int64_t *ran_on; /* ticks received per cpu; NULL with no_ran_on */
	struct sim_thread *parent;
	const struct sim_behaviour *beh;
	void *arg; /* the behaviour's */
	int group; /* the tool's */
	/* A yielder (sim_fine.c) */
	struct sim_yielders *yw;
	int yphase, ymtx, ydone;
	int64_t ev_start;
};

struct sim_cpu {
	struct sim_thread idle;
	struct sim_thread *cur;
	int ipi;      /* IPI_PREEMPT pending */
	int awake;    /* woken since it went to sleep */
	int sleeping; /* idle and asleep (tdq_cpu_idle set) */
	int stalled;  /* its worker is off the host CPU: it runs nothing */
	int spin;     /* idle, it keeps polling instead of sleeping, as a
			 spinning worker does (MACH_CPU_SPINNING) */
	struct sched_idle ist;
	int64_t switches;
	int64_t clock;	   /* virtual ns this CPU has executed up to */
	int64_t seg_start; /* when cur started to run */
	int64_t kick_at;   /* sub-tick: woken for this time */
	int in_kick;	   /* listed in sim.kicked */
	int heap_at;	   /* index in the sub-tick heap, -1: not in it */
};

struct sim {
	int ncpu;
	int64_t now; /* hz ticks since start */
	int curcpu;  /* CPU whose code runs now, -1 for the clock */
	int statacc;
	struct cpu_group *topo;
	const struct sched_ops *sched;
	struct sim_cpu *cpu;
	struct sim_thread **threads;
	int nthreads, cap;
	int check_every; /* run ops->check() every n ticks (0: never) */
	int no_ran_on;	 /* threads keep no ran_on[] (large scenarios) */
	const char *check_failed;
	struct sim_hooks hooks;
	struct sim_cost cost;
	int nyielders; /* live yielders: the sub-tick engine runs */
	int64_t lock_acq, lock_wait_ns; /* scheduler locks, cost model */
	/* sub-tick engine */
	int *heap;
	int nheap;
	int *kicked;
	int nkicked;
	struct sim_lockstate *locks;
	int nlocks, lockcap;
	/* timed sleepers by (wake_at, id): the tick wakes them in that
	 * order without scanning every thread ever made */
	struct sim_thread **sleepers;
	int nsleepers, sleepcap;
};

/* Create a simulation of ncpu CPUs with the given topology description
 * (NULL: one flat group).  Only one simulation exists at a time. */
struct sim *sim_create(int ncpu, const struct topo_cpu *desc);
/* The same with another policy (&ult__sched_4bsd). */
struct sim *sim_create_policy(int ncpu, const struct topo_cpu *desc,
    const struct sched_ops *ops);
void sim_destroy(struct sim *s);

/* Add a thread: run run_ms, sleep sleep_ms, repeat (run_ms <= 0: a hog).
 * cpu >= 0 binds it there (sim_unbind() releases it). */
struct sim_thread *sim_spawn(struct sim *s, int nice, int run_ms, int sleep_ms,
    int cpu);
void sim_unbind(struct sim *s, struct sim_thread *t);
/* t takes class pc (PRI_TIMESHARE, PRI_REALTIME, PRI_FIFO, PRI_IDLE) at
 * user priority pri outside timeshare. */
void sim_set_class(struct sim *s, struct sim_thread *t, int pc, int pri);
/* Fork child from parent (a running or runnable thread) as the runtime
 * does for ult_spawn from a uthread. */
struct sim_thread *sim_fork(struct sim *s, struct sim_thread *parent,
    int run_ms, int sleep_ms);
/* t (sleeping) is woken by the thread running on cpu, which hands work
 * over (SRQ_SYNC), as a uthread's cond signal or semaphore post does. */
void sim_wake_sync(struct sim *s, struct sim_thread *t, int cpu);
/* The thread running on cpu yields (ult_yield). */
void sim_yield(struct sim *s, int cpu);
/* t (sleeping or waiting) is woken by the thread running on cpu, or by
 * the clock for cpu -1. */
void sim_wake(struct sim *s, struct sim_thread *t, int cpu);
/* Add a thread with a behaviour, as sim_spawn does; its first burst is
 * beh->woken()'s. */
struct sim_thread *sim_spawn_beh(struct sim *s, int nice, int cpu,
    const struct sim_behaviour *beh, void *arg);
/* Fork a child with a behaviour from parent, as sim_fork does. */
struct sim_thread *sim_fork_beh(struct sim *s, struct sim_thread *parent,
    const struct sim_behaviour *beh, void *arg);
/* Make t (not yet run) a yielder of workload w. */
void sim_make_yielder(struct sim *s, struct sim_thread *t,
    struct sim_yielders *w);
/* Queue t on m / take the first waiter off it (NULL: none). */
void sim_umtx_wait(struct sim_umtx *m, struct sim_thread *t);
struct sim_thread *sim_umtx_next(struct sim_umtx *m);
/* Report every CPU's current segment up to now (for the hooks). */
void sim_flush(struct sim *s);
/* Virtual time now, ns. */
int64_t sim_now_ns(const struct sim *s);
/* Advance virtual time by ms milliseconds. */
void sim_run(struct sim *s, int64_t ms);
/* Zero every thread's CPU counters (after a warm-up). */
void sim_reset_stats(struct sim *s);
/* Percentage of the total CPU time counted since the last reset. */
double sim_share(struct sim *s, struct sim_thread *t);
/* Load of a CPU as the policy sees it. */
int sim_load(struct sim *s, int cpu);

/* Symmetric topology for tests: `ncpu' CPUs where groups of `l3' share
 * an L3, of `l2' an L2 and of `smt' are SMT siblings (0: none). */
void sim_topo_desc(struct topo_cpu *desc, int ncpu, int l3, int l2, int smt);

#endif
