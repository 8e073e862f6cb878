/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Introspection: per-thread and per-CPU snapshots, and kern.sched.*
 * tunables by their FreeBSD names.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../kern/io.h"
#include "../kern/runtime.h"
#include "../kern/worker.h"
#include "../kern/uthread.h"
#include "../kern/handoff.h"
#include "../kern/host_nice.h"
#include "../kern/preempt.h"
#include "../api/sched_calls.h"

int
ult_ncpu(void)
{
	return (ult__running() ? ult__rt.ncpu : 0);
}

static int
state_of(struct ult_thread *ut)
{
	if (ULT_LD(&ut->lstate) == UT_ZOMBIE)
		return (ULT_STATE_FINISHED);
	switch (ut->td.td_state) {
	case TDS_RUNNING:
		return (ut->td.td_oncpu != NOCPU &&
			    ULT_LD(&ult__rt.workers[ut->td.td_oncpu].blocked)
			? ULT_STATE_BLOCKED
			: ULT_STATE_RUNNING);
	case TDS_INHIBITED:
		return (ULT_STATE_SLEEPING);
	default:
		return (ULT_STATE_RUNNABLE);
	}
}

int
ult_thread_info(ult_thread_t *t, struct ult_thread_info *out)
{
	struct sched_thread_stats st;
	int err;

	if (out == NULL)
		return (ult__running() ? EINVAL : ENXIO);
	if ((err = ult__thread_lock_handle(&t, 0)) != 0)
		return (err);
	ult__rt.sched->thread_stats(&t->td, &st);
	memset(out, 0, sizeof(*out));
	memcpy(out->name, t->name, sizeof(out->name));
	out->id = t->id;
	out->cpu = t->td.td_oncpu != NOCPU ? t->td.td_oncpu : st.cpu;
	out->priority = t->td.td_priority;
	out->nice = t->td.td_nice;
	out->interact_score = st.interact_score;
	/* A uthread that asks about itself runs, whatever the clock thread
	 * saw of its worker a moment ago. */
	out->state = state_of(t);
	if (out->state == ULT_STATE_BLOCKED && t == ult__self_ut())
		out->state = ULT_STATE_RUNNING;
	out->pctcpu = 100.0 * st.pctcpu / FSCALE;
	out->runtime_ns = ULT_LD(&t->runtime_ns);
	/* A running thread's current run counts too: it cannot switch (and
	 * charge it) while we hold its lock. */
	if (t->td.td_state == TDS_RUNNING && t->td.td_oncpu != NOCPU) {
		uint64_t since =
		    ULT_LD(&ult__rt.workers[t->td.td_oncpu].last_switch_ns);
		uint64_t now = ult__fastclock_now();

		if (now > since)
			out->runtime_ns += now - since;
	}
	out->nvcsw = ULT_LD(&t->nvcsw);
	out->nivcsw = ULT_LD(&t->nivcsw);
	out->deferred = ULT_LD(&t->sc_deferred);
	out->forced = ULT_LD(&t->sc_forced);
	out->nmigrations = ULT_LD(&t->nmigrations);
	if (out->state == ULT_STATE_SLEEPING && ULT_LD(&t->wmesg) != NULL)
		snprintf(out->wchan, sizeof(out->wchan), "%s",
		    ULT_LD(&t->wmesg));
	if (out->state == ULT_STATE_SLEEPING) {
		/* A lock's waiter: the turnstile (its thread lock, held)
		 * names the owner; a sleeper: its channel, unless that is its
		 * own timer (a plain sleep). */
		out->wait_obj = ult__ts_blocked_on(t, &out->wait_owner_id);
		if (out->wait_obj == NULL &&
		    ULT_LD(&t->wchan) != (const void *)&t->slp_timer)
			out->wait_obj = ULT_LD(&t->wchan);
	}
	out->nruns = ULT_LD(&t->rqd_n);
	out->rq_delay_avg_ns =
	    out->nruns != 0 ? ULT_LD(&t->rqd_sum) / out->nruns : 0;
	out->rq_delay_max_ns = ULT_LD(&t->rqd_max);
	thread_unlock(&t->td);
	return (0);
}

int
ult_cpu_info(int cpu, struct ult_cpu_info *out)
{
	struct sched_cpu_stats st;
	struct ult__worker *w;

	if (!ult__running())
		return (ENXIO);
	if (out == NULL || cpu < 0 || cpu >= ult__rt.ncpu)
		return (EINVAL);
	w = &ult__rt.workers[cpu];
	ult__rt.sched->cpu_stats(cpu, &st);
	memset(out, 0, sizeof(*out));
	out->cpu = cpu;
	out->load = st.load;
	out->switches = ULT_LD(&w->nswitch);
	out->steals = st.steals;
	out->sched_lock_waits = st.lock_contended;
	out->idle_ns = ULT_LD(&w->idle_ns);
	out->busy_ns = ULT_LD(&w->busy_ns);
	out->preemptions = ULT_LD(&w->npreempt);
	out->owed = ULT_LD(&w->nowed);
	out->parks = ULT_LD(&w->nparks);
	out->futex_wakes = ULT_LD(&w->nfutex_wakes);
	out->handoffs = ULT_LD(&w->nhandoffs);
	out->blocked = ULT_LD(&w->blocked);
	return (0);
}

const char *
ult_sched_name(void)
{
	return (ult__running() ? ult__rt.sched->name : NULL);
}
