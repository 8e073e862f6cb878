/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * machine.h for the simulator's virtual CPUs, and the host hooks the
 * policy's locks and assertions call.  Single threaded: every lock is
 * free when taken.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim_int.h"
#include "util/fault.h"

/* Under the sub-tick engine a CPU that is woken or sent an IPI acts at
 * once, a wakeup's cost later, rather than at the next tick. */
static void
kick(int cpu)
{
	struct sim_cpu *c = &S->cpu[cpu];
	int64_t at;

	if (S->nyielders == 0 || S->curcpu < 0 || cpu == S->curcpu)
		return;
	at = S->cpu[S->curcpu].clock +
	    (c->sleeping ? S->cost.park_ns : S->cost.wake_ns);
	if (!c->in_kick) {
		S->kicked[S->nkicked++] = cpu;
		c->in_kick = 1;
		c->kick_at = at;
	} else if (at < c->kick_at) {
		c->kick_at = at;
	}
}

/* ---- machine.h ---- */

int
mach_ncpu(void)
{
	return (S->ncpu);
}

/* The simulator has no reserve CPUs. */
int
mach_ncpu_active(void)
{
	return (S->ncpu);
}

int
mach_curcpu(void)
{
	return (S->curcpu);
}

int
mach_ticks(void)
{
	return ((int)(S->now + 1000));
}

const struct cpu_group *
mach_cpu_top(void)
{
	return (S->topo);
}

void
mach_ast(struct thread *td, int cpu)
{
	atomic_fetch_or(&td->td_ast, TDA_SCHED);
	if (td == &S->cpu[cpu].idle.td) {
		S->cpu[cpu].awake = 1;
		kick(cpu);
	}
}

void
mach_ipi_preempt(int cpu)
{
	S->cpu[cpu].ipi = 1;
	kick(cpu);
}

/* A virtual CPU spins only between its idle thread's poll and its sleep,
 * within one event: idle CPUs are parked, except while they look. */
int
mach_cpu_state(int cpu)
{
	const struct sim_cpu *c = &S->cpu[cpu];

	if (c->cur != &c->idle)
		return (MACH_CPU_RUNNING);
	return (c->sleeping ? MACH_CPU_PARKED : MACH_CPU_SPINNING);
}

/* Virtual CPUs never block in a host kernel. */
int
mach_cpus_blocked(void)
{
	return (0);
}

int
mach_idle_spinning(void)
{
	int n = 0;

	for (int cpu = 0; cpu < S->ncpu; cpu++)
		n += mach_cpu_state(cpu) == MACH_CPU_SPINNING;
	return (n);
}

int
mach_cpu_idle_wakeup(int cpu)
{
	S->cpu[cpu].awake = 1;
	kick(cpu);
	return (1);
}

/* Nothing can hold a lock while the simulator waits for it. */
void
ult__mtx_lock_slow(struct mtx *m)
{
	fprintf(stderr, "sim: lock %s contended\n", m->mtx_name);
	abort();
}

/* Nobody ever sleeps on a lock here. */
void
ult__mtx_wake(struct mtx *m)
{
	(void)m;
}

#ifdef ULT_INVARIANTS
/* The simulator never fails an allocation on purpose. */
int
ult__fault(int kind)
{
	(void)kind;
	return (0);
}
#endif

/* One host thread plays every CPU: it owns every lock it takes. */
const void *
ult__mtx_self(void)
{
	return (&S);
}

void
ult__assert_fail(const char *file, int line, const char *func, const char *expr,
    const char *msg)
{
	fprintf(stderr,
	    "sim: assertion failed at %s:%d in %s(): %s%s%s%s, cpu %d\n", file,
	    line, func, expr, msg ? " (" : "", msg ? msg : "", msg ? ")" : "",
	    S != NULL ? S->curcpu : -1);
	abort();
}

void
ult__spin_backoff(unsigned *iter)
{
	if (++*iter > 1000) {
		fprintf(stderr, "sim: waited on a blocked thread\n");
		abort();
	}
}

void
mach_trace_move(const struct thread *td, int from, int to)
{
	(void)td;
	(void)from;
	(void)to;
}
