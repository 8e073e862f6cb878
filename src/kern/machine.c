/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * machine.h for real workers: CPUs are workers, ticks come from
 * CLOCK_MONOTONIC (read once per switch and reused for the policy's own
 * reads), an IPI or an AST is a flag the worker checks at its next
 * scheduling point plus, for a busy worker, the preemption signal
 * (preempt.c), and waking an idle CPU is unparking its worker.
 *
 * The clock thread acts on behalf of a CPU when it runs that CPU's stat
 * clock or a timer armed there, as FreeBSD's statclock and callouts run
 * on their own CPU: mach_curcpu() then names that CPU, so a timeout that
 * wakes a better thread requests an AST locally, as it would in the
 * kernel.
 */
#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "preempt.h"

struct mtx blocked_lock = MTX_INITIALIZER("blocked");
#undef ult__tls_actcpu /* worker.h: the definition, not a fresh read */
__thread int ult__tls_actcpu = -1;

int
mach_ncpu(void)
{
	return (ult__rt.nworkers);
}

int
mach_ncpu_active(void)
{
	return (ult__rt.ncpu);
}

int
mach_curcpu(void)
{
	struct ult__worker *w = ult__tls_worker;

	return (w != NULL ? w->id : ult__tls_actcpu);
}

/*
 * The policy compares tick stamps taken by different threads (a wakeup on
 * the clock thread, a switch on a worker), and a worker reuses the clock
 * it read at the start of a switch; so ticks are published through one
 * global that only moves forward.  It changes once a millisecond, so the
 * shared cache line is almost always clean.
 */
int
mach_ticks(void)
{
	struct ult__worker *w = ult__tls_worker;
	uint64_t ns =
	    (w != NULL && w->clk_valid) ? w->clk_ns : ult__fastclock_now();
	unsigned t = (unsigned)ult__ticks_of(ns),
		 cur = ULT_LD(&ult__rt.ticks_max);

	while ((int)(t - cur) > 0) {
		if (atomic_compare_exchange_weak_explicit(&ult__rt.ticks_max,
			&cur, t, memory_order_relaxed, memory_order_relaxed))
			return ((int)t);
	}
	return ((int)cur);
}

void
mach_trace_move(const struct thread *td, int from, int to)
{
	uint64_t id = ult__td2ut((struct thread *)(uintptr_t)td)->id;

	if (mach_curcpu() == to)
		ULT_TRACE(TEV_STEAL, steal, 0, id, from, to, 0);
	else
		ULT_TRACE(TEV_PUSH, push, 0, id, from, to, 0);
}

const struct cpu_group *
mach_cpu_top(void)
{
	return (ult__rt.topo);
}

void
mach_ast(struct thread *td, int cpu)
{
	atomic_fetch_or_explicit(&td->td_ast, TDA_SCHED, memory_order_relaxed);
	/* An AST for an idle thread means "look at your queue": its worker
	 * may be parked. */
	if (td == &ult__rt.workers[cpu].idle.td)
		ult__worker_unpark(&ult__rt.workers[cpu]);
	else
		ult__preempt_kick(cpu);
}

void
mach_ipi_preempt(int cpu)
{
	ULT_ST(&ult__rt.workers[cpu].ipi, 1);
	ult__preempt_kick(cpu);
}

int
mach_cpu_state(int cpu)
{
	struct ult__worker *w = &ult__rt.workers[cpu];

	return (ULT_LD(&w->blocked) | ULT_LD(&w->offline) ? MACH_CPU_BLOCKED
							  : ULT_LD(&w->state));
}

int
mach_cpus_blocked(void)
{
	return (ULT_LD(&ult__rt.nblocked));
}

int
mach_idle_spinning(void)
{
	return (ULT_LD(&ult__rt.nspinning));
}

int
mach_cpu_idle_wakeup(int cpu)
{
	ult__worker_unpark(&ult__rt.workers[cpu]);
	return (1);
}
