/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a scheduling policy may ask of its host.  The runtime implements
 * these on real workers (src/kern/machine.c); the simulator on virtual
 * CPUs and virtual time (sim/).  The choice is made at link time; a policy
 * file includes this and util/ headers, nothing else of the host.
 */
#ifndef ULT_SCHED_MACHINE_H
#define ULT_SCHED_MACHINE_H

#include "thread.h"
#include "topo.h"

/* FreeBSD's clocks: hz drives ticks, stathz drives sched_clock. */
#define ULT_HZ 1000
#define ULT_STATHZ 127

/* Number of CPUs (workers); constant between policy init and fini. */
int mach_ncpu(void);
/* ult: CPUs 0..mach_ncpu_active()-1 are the program's; those above are
 * reserve CPUs, which the host keeps out of service (mach_cpu_state says
 * MACH_CPU_BLOCKED) until every active CPU is blocked in the kernel.  A
 * policy places, balances and steals among the active CPUs, adds the
 * reserve ones that are in service only when some CPU is blocked, and
 * lets a reserve CPU out of service run only what is queued on it. */
int mach_ncpu_active(void);

/* The CPU the caller runs on, or -1 when the caller is not a CPU (a
 * foreign thread, the clock thread). */
int mach_curcpu(void);

/* FreeBSD's `ticks': a wrapping count at ULT_HZ per second.  Like the
 * kernel's global it never goes backwards: a caller that synchronised
 * with an earlier caller (through a lock) never sees a smaller value. */
int mach_ticks(void);

/* The topology tree over cpus 0..mach_ncpu()-1. */
const struct cpu_group *mach_cpu_top(void);

/* td, running on cpu, should give up the CPU at its next scheduling point
 * (FreeBSD's ast_sched_locked(td, TDA_SCHED) plus an IPI if remote).  Called
 * with td's thread lock held. */
void mach_ast(struct thread *td, int cpu);

/* IPI_PREEMPT: ask cpu to run sched_preempt() for its current thread. */
void mach_ipi_preempt(int cpu);

/*
 * What telling cpu about new work costs the host, read without locks (the
 * answer may be stale).  A running CPU sees an AST at its next scheduling
 * point; a spinning idle CPU polls its queue and sees the work at once,
 * for nothing; a parked one sleeps in the host kernel, and waking it is a
 * system call plus the host's wakeup latency, microseconds.  FreeBSD has
 * no such question: its idle CPUs all cost an IPI.
 */
enum {
	MACH_CPU_RUNNING = 0,
	MACH_CPU_SPINNING,
	MACH_CPU_PARKED,
	/* ult: its host thread sleeps in the kernel inside the thread it
	 * runs (a blocking system call): it cannot run anything else until
	 * that returns, so new work should go elsewhere. */
	MACH_CPU_BLOCKED
};
int mach_cpu_state(int cpu);
/* How many CPUs are blocked in the kernel now (stale as well); reserve
 * CPUs out of service do not count. */
int mach_cpus_blocked(void);
/* How many CPUs are MACH_CPU_SPINNING now (stale as well).  An idle CPU
 * that stops spinning checks its queue again after it stopped counting,
 * with a full fence, so a caller that queued work, fenced and then saw a
 * spinner may leave the work to it. */
int mach_idle_spinning(void);

/* td moves from one CPU's queue to another's (steal, balance): for the
 * host's trace (FreeBSD's KTR_SCHED points); no effect on the policy. */
void mach_trace_move(const struct thread *td, int from, int to);

/* cpu_idle_wakeup(): wake cpu if it sleeps in its idle loop.  Returns 1 if
 * the host can wake it without an IPI (it always can in user space). */
int mach_cpu_idle_wakeup(int cpu);

#endif
