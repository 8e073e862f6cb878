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

#define SIM_MAXCPU 64
#define SIM_MAXTHREADS 512

enum {
	SIM_RUNNABLE = 1,
	SIM_RUNNING,
	SIM_SLEEPING,
	SIM_DONE
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
	int64_t cpu_ticks;   /* hz ticks of CPU received */
	int64_t bursts;	     /* completed run bursts */
	int64_t max_latency; /* worst wakeup-to-run delay, ticks */
	int last_cpu;
	int sleep_cpu; /* where its timeout fires */
	int migrations;
	int64_t ran_on[SIM_MAXCPU]; /* ticks received per cpu */
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
};

struct sim {
	int ncpu;
	int64_t now; /* hz ticks since start */
	int curcpu;  /* CPU whose code runs now, -1 for the clock */
	int statacc;
	struct cpu_group *topo;
	const struct sched_ops *sched;
	struct sim_cpu cpu[SIM_MAXCPU];
	struct sim_thread *threads[SIM_MAXTHREADS];
	int nthreads;
	int check_every; /* run ops->check() every n ticks (0: never) */
	const char *check_failed;
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
/* Fork child from parent (a running or runnable thread) as the runtime
 * does for ult_spawn from a uthread. */
struct sim_thread *sim_fork(struct sim *s, struct sim_thread *parent,
    int run_ms, int sleep_ms);
/* t (sleeping) is woken by the thread running on cpu, which hands work
 * over (SRQ_SYNC), as a uthread's cond signal or semaphore post does. */
void sim_wake_sync(struct sim *s, struct sim_thread *t, int cpu);
/* The thread running on cpu yields (ult_yield). */
void sim_yield(struct sim *s, int cpu);
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
