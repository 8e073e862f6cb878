/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The runtime's state (struct ult__runtime): what ult_init set up and the
 * words every worker shares.  The workers, the uthreads and each
 * subsystem's calls have headers of their own (worker.h, uthread.h,
 * switch.h, ...; DESIGN.md section 1).
 */
#ifndef ULT_KERN_RUNTIME_H
#define ULT_KERN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "../sched/sched.h"
#include "../util/atomic.h"

struct ult__worker;
struct cpu_group;

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

/* CPU-bound by either policy's reckoning: ULE's batch range (its
 * PRI_MIN_BATCH) and below, where 4BSD's estcpu takes a spinning thread;
 * the idle class too. */
#define PRI_BACKGROUND (PRI_MIN_TIMESHARE + 48)

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

#endif
