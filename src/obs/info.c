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

/* Whether asynchronous preemption is in force (it may have been refused:
 * sanitizer builds, static executables). */
static long
preempt_get(void)
{
	return (ult__rt.preempt > 0);
}

/* Whether every uthread has its own TLS (it may have been refused:
 * ULT_TLS=worker, sanitizers, static executables, an unknown glibc). */
static long
tls_get(void)
{
	return (ult__rt.tls > 0);
}

/* Tunables of the runtime itself, beside the policy's. */
static const struct sched_tunable rt_tunables[] = {
    {"ult.preempt", NULL, 0, 0, preempt_get, NULL},
    {"ult.child_runs_first", &ult__rt.child_first, 0, 1, NULL, NULL},
    {"ult.preempt_migrate", &ult__preempt_migrate, 0, 1, NULL, NULL},
    {"ult.schedctl_bound_us", &ult__schedctl_bound_us, 0, 10000000, NULL, NULL},
    {"ult.tls", NULL, 0, 0, tls_get, NULL},
    {"ult.chaos_migrate", &ult__chaos_migrate, 0, 2, NULL, NULL},
    {"ult.handoff_us", &ult__handoff_us, 0, 1000000, NULL, NULL},
    {"ult.spare", NULL, 0, 0, ult__handoff_has_spare, NULL},
    {"ult.spare_runs", NULL, 0, 0, ult__handoff_spare_runs, NULL},
    {"ult.host_nice", NULL, 0, 0, ult__host_nice_get, ult__host_nice_set},
    {"ult.io_boost", &ult__io_boost, 0, 1, NULL, NULL},
    {"ult.blocking_max", &ult__blocking_max, 1, 4096, NULL, NULL},
    {"ult.blocking_idle_ms", &ult__blocking_idle_ms, 1, 3600000, NULL, NULL},
    {"ult.blocking_threads", NULL, 0, 0, ult__blocking_threads, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

static const struct sched_tunable *
tunable_find(const struct sched_tunable *tab, const char *name)
{
	for (; tab->name != NULL; tab++)
		if (strcmp(tab->name, name) == 0)
			return (tab);
	return (NULL);
}

int
ult_sysctl(const char *name, long *oldval, const long *newval)
{
	const struct sched_tunable *t;

	if (!ult__running())
		return (ENXIO);
	if (name == NULL)
		return (EINVAL);
	if ((t = tunable_find(ult__rt.sched->tunables, name)) == NULL &&
	    (t = tunable_find(rt_tunables, name)) == NULL)
		return (ENOENT);
	if (newval != NULL) {
		if (t->var == NULL && t->set == NULL)
			return (EPERM);
		if (t->var != NULL && (*newval < t->min || *newval > t->max))
			return (EINVAL);
	}
	if (oldval != NULL)
		*oldval = t->var != NULL ? ULT_LD(t->var) : t->get();
	if (newval != NULL) {
		if (t->set != NULL)
			return (t->set(*newval));
		ULT_ST(t->var, (int)*newval);
	}
	return (0);
}

const char *
ult_sched_name(void)
{
	return (ult__running() ? ult__rt.sched->name : NULL);
}
