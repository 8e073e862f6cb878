/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_ule.c. */
/*
 * Read-only views of ULE's queues: the invariants checker the tests run
 * and the load and statistics the host reports.  None of it takes a
 * scheduling decision, so it is kept out of the files that do; only the
 * checker takes locks (every queue's, in order).
 */
#include <stdio.h>

#include "sched_ule.h"

int
ule_load(int cpu)
{
	return (TDQ_LOAD(TDQ_CPU(cpu)));
}

void
ule_thread_stats(struct thread *td, struct sched_thread_stats *st)
{
	st->interact_score = ule_interact_score(td);
	st->pctcpu = ule_pctcpu(td, mach_ticks());
	st->cpu = td_get_sched(td)->ts_cpu;
}

void
ule_cpu_stats(int cpu, struct sched_cpu_stats *st)
{
	struct tdq *tdq = TDQ_CPU(cpu);

	st->load = TDQ_LOAD(tdq);
	st->transferable = TDQ_TRANSFERABLE(tdq);
	st->lowpri = TDQ_LOWPRI(tdq);
	st->steals = ULT_LD(&tdq->tdq_steals);
	st->lock_contended = ULT_LD(&tdq->tdq_lock.mtx_contended);
}

/*
 * The invariants of docs/ULE.md section 8 that hold exactly in the
 * port, checked with every queue locked.  lowpri is compared at run-queue
 * granularity: queues are FIFO over RQ_PPQ priorities, so FreeBSD's own
 * lowpri is only exact to that.
 */
static const char *
check_tdq(struct tdq *tdq, char *buf, size_t len)
{
	struct runq *rqs[3] = {&tdq->tdq_realtime, &tdq->tdq_timeshare,
	    &tdq->tdq_idle};
	struct thread *cur = ULT_LD(&tdq->tdq_curthread);
	/* cur may be going to sleep, its state under another lock than the
	 * ones held here: only its priority is read, and atomically. */
	int curpri = ULT_PLD(&cur->td_priority);
	int queued = 0, xfer = 0, bestrt = PRI_MAX + 1;

	for (int r = 0; r < 3; r++) {
		for (int q = 0; q < RQ_NQS; q++) {
			struct ult__list *h = &rqs[r]->rq_queues[q], *n;
			int nonempty = !ult__list_empty(h);

			if (nonempty != (int)((rqs[r]->rq_status >> q) & 1)) {
				snprintf(buf, len, "cpu %d: status bit %d",
				    tdq->tdq_id, q);
				return (buf);
			}
			ULT_LIST_FOREACH (n, h) {
				struct thread *td = runq_thread(n);
				struct td_sched *ts = td_get_sched(td);
				struct mtx *m = ULT_LD(&td->td_lock);

				queued++;
				if (ts->ts_flags & TSF_XFERABLE)
					xfer++;
				if (!TD_ON_RUNQ(td) || td->td_rqindex != q ||
				    ts->ts_runq != rqs[r] ||
				    ts->ts_cpu != tdq->tdq_id ||
				    (m != TDQ_LOCKPTR(tdq) &&
					m != &blocked_lock)) {
					snprintf(buf, len,
					    "cpu %d: bad queued thread",
					    tdq->tdq_id);
					return (buf);
				}
				if ((r == 1 &&
					td->td_priority < PRI_MIN_BATCH) ||
				    (r == 2 &&
					td->td_priority < PRI_MIN_IDLE)) {
					snprintf(buf, len,
					    "cpu %d: priority %d in runq %d",
					    tdq->tdq_id, td->td_priority, r);
					return (buf);
				}
				if (ts->ts_runtime + ts->ts_slptime >
				    2u * SCHED_SLP_RUN_MAX) {
					snprintf(buf, len, "cpu %d: history",
					    tdq->tdq_id);
					return (buf);
				}
				if (r == 0 && td->td_priority < bestrt)
					bestrt = td->td_priority;
			}
		}
	}
	/* A thread being switched out (blocked) may already be off the
	 * load while its CPU has dropped the lock to migrate it. */
	if (TDQ_LOAD(tdq) != queued + (cur == tdq->tdq_idlethread ? 0 : 1) &&
	    !(ULT_LD(&cur->td_lock) == &blocked_lock &&
		TDQ_LOAD(tdq) == queued)) {
		snprintf(buf, len, "cpu %d: load %d, %d queued + running",
		    tdq->tdq_id, TDQ_LOAD(tdq), queued);
		return (buf);
	}
	if (TDQ_TRANSFERABLE(tdq) != xfer) {
		snprintf(buf, len, "cpu %d: transferable %d != %d", tdq->tdq_id,
		    TDQ_TRANSFERABLE(tdq), xfer);
		return (buf);
	}
	if (TDQ_LOWPRI(tdq) > curpri ||
	    (bestrt <= PRI_MAX && TDQ_LOWPRI(tdq) / RQ_PPQ > bestrt / RQ_PPQ)) {
		snprintf(buf, len, "cpu %d: lowpri %d, current %d, best rt %d",
		    tdq->tdq_id, TDQ_LOWPRI(tdq), curpri, bestrt);
		return (buf);
	}
	if ((tdq->tdq_idx - tdq->tdq_ridx + RQ_NQS) % RQ_NQS > 1 ||
	    (tdq->tdq_idx != tdq->tdq_ridx &&
		ult__list_empty(
		    &tdq->tdq_timeshare.rq_queues[tdq->tdq_ridx]))) {
		snprintf(buf, len, "cpu %d: calendar idx %d ridx %d",
		    tdq->tdq_id, tdq->tdq_idx, tdq->tdq_ridx);
		return (buf);
	}
	return (NULL);
}

const char *
ule_check(void)
{
	static char buf[128];
	const char *err = NULL;

	for (int c = 0; c < ule_ncpu; c++)
		TDQ_LOCK(TDQ_CPU(c));
	for (int c = 0; c < ule_ncpu && err == NULL; c++)
		err = check_tdq(TDQ_CPU(c), buf, sizeof(buf));
	for (int c = ule_ncpu - 1; c >= 0; c--)
		TDQ_UNLOCK(TDQ_CPU(c));
	return (err);
}

void
ule_dump(int cpu, void (*out)(void *, const char *), void *arg)
{
	struct tdq *tdq = TDQ_CPU(cpu);
	struct thread *cur = ULT_LD(&tdq->tdq_curthread);
	int locked = TDQ_TRYLOCK(tdq);
	char line[200];

	snprintf(line, sizeof(line),
	    "cpu %d%s: load %d transferable %d lowpri %d cpu_idle %d "
	    "owepreempt %d idx %d ridx %d switchcnt %d/%d cur %p%s pri %d",
	    cpu, locked ? "" : " (queue lock busy, read unlocked)",
	    TDQ_LOAD(tdq), TDQ_TRANSFERABLE(tdq), TDQ_LOWPRI(tdq),
	    ULT_LD(&tdq->tdq_cpu_idle), ULT_LD(&tdq->tdq_owepreempt),
	    tdq->tdq_idx, tdq->tdq_ridx, ULT_LD(&tdq->tdq_switchcnt),
	    ULT_LD(&tdq->tdq_oldswitchcnt), (void *)cur,
	    cur == tdq->tdq_idlethread ? " (idle)" : "",
	    ULT_PLD(&cur->td_priority));
	out(arg, line);
	runq_dump("realtime", &tdq->tdq_realtime, out, arg);
	runq_dump("timeshare", &tdq->tdq_timeshare, out, arg);
	runq_dump("idle", &tdq->tdq_idle, out, arg);
	if (locked)
		TDQ_UNLOCK(tdq);
}
