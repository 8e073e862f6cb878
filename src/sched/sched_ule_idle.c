/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_ule.c. */
/*
 * ULE's idle loop (sched_idletd), split where it waits so that the host
 * can spin or sleep between the calls.  It reads its queue's load and
 * switch counts and publishes the idle flag that ule_tdq_notify() checks; the
 * stealing it starts is in sched_ule_smp.c.  Kept apart from the event
 * entry points because the host's idle thread drives it, not an event.
 */
#include "sched_ule.h"

/*
 * The idle thread's loop (sched_idletd), cut where it waits.  A CPU that
 * switched since it last looked tries to steal; one that switches fast
 * spins on its load before sleeping, because waking a sleeping CPU costs
 * far more than a few microseconds of polling.  (FreeBSD spins
 * sched_idlespins iterations; the host spins for a time instead, and
 * kern.sched.idlespins = 0 still turns the longer spin off.)  Polled again
 * while spinning without a switch, it takes work left waiting elsewhere
 * (ule_tdq_take_stale).
 */
int
ule_idle_poll(int cpu, struct sched_idle *st)
{
	struct tdq *tdq = TDQ_CPU(cpu);
	int switchcnt;

	if (TDQ_LOAD(tdq))
		return (SCHED_IDLE_RUN);
	switchcnt = TDQ_SWITCHCNT(tdq);
	if (TUN(ule_tun.always_steal) || switchcnt != st->oldswitchcnt) {
		st->oldswitchcnt = switchcnt;
		st->victim = -1;
		if (ule_tdq_idled(tdq) == 0)
			return (SCHED_IDLE_RUN);
	} else if (ule_tdq_take_stale(tdq, st) == 0)
		return (SCHED_IDLE_RUN);
	switchcnt = TDQ_SWITCHCNT(tdq);
	st->switchcnt = switchcnt;
	if ((tdq->tdq_cg == NULL ||
		(tdq->tdq_cg->cg_flags & CG_FLAG_THREAD) == 0) &&
	    switchcnt > TUN(ule_tun.idlespinthresh) && TUN(ule_tun.idlespins))
		return (SCHED_IDLE_SPIN);
	return (SCHED_IDLE_SLEEP);
}

/*
 * Announce that this CPU is about to sleep.  The full fence between the
 * store to tdq_cpu_idle and the load of tdq_load pairs with the one in
 * ule_tdq_notify (load stored, fence, tdq_cpu_idle read): at least one side
 * sees the other, so a thread added concurrently is never missed.
 */
int
ule_idle_enter(int cpu, struct sched_idle *st)
{
	struct tdq *tdq = TDQ_CPU(cpu);
	int switchcnt = TDQ_SWITCHCNT(tdq);

	if (TDQ_LOAD(tdq) != 0 || switchcnt != st->oldswitchcnt)
		return (1);
	st->busy = switchcnt * 4 > TUN(ule_tun.idlespinthresh);
	ULT_ST(&tdq->tdq_cpu_idle, 1);
	ULT_FENCE();
	if (TDQ_LOAD(tdq) != 0) {
		ULT_ST(&tdq->tdq_cpu_idle, 0);
		return (1);
	}
	return (0);
}

void
ule_idle_exit(int cpu, struct sched_idle *st)
{
	struct tdq *tdq = TDQ_CPU(cpu);

	ULT_ST(&tdq->tdq_cpu_idle, 0);
	/* A wakeup without work counts as a switch, as in FreeBSD.  (Under
	 * the lock: the clock resets the count under it.) */
	if (TDQ_SWITCHCNT(tdq) != st->oldswitchcnt)
		return;
	TDQ_LOCK(tdq);
	ULT_ST(&tdq->tdq_switchcnt, ULT_LD(&tdq->tdq_switchcnt) + 1);
	TDQ_UNLOCK(tdq);
	st->oldswitchcnt++;
}
