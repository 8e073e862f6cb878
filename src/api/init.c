/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult_init, ult_shutdown and ult_sysctl: the runtime's subsystems
 * (src/kern/subsys.h), walked in order.  Here, above the kernel and
 * observability, so that the table may name every level's subsystems.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "../kern/runtime.h"
#include "../kern/sleepq.h"
#include "../kern/turnstile.h"
#include "../kern/subsys.h"
#include "../kern/tls.h"
#include "../kern/uthread.h"
#include "../kern/worker.h"
#include "../obs/dump.h"
#include "../obs/shm.h"
#include "../obs/stats.h"
#include "../obs/trace.h"
#include "blocking.h"
#include "sched_calls.h"

/*
 * In the order they come up; ult_shutdown and a failed ult_init take
 * them down in reverse.  The machine (worker count, stacks, policy,
 * topology) first; the policy before the workers that call it; the clock,
 * which ticks the workers, after them; the statistics segment once
 * everything it shows runs, and last the signal dump, which writes the
 * trace, the report and the segment when a signal ends the process.
 */
static const struct ult__subsys *const subsystems[] = {
    &ult__machine_subsys,
    &ult__host_nice_subsys,
    &ult__stats_subsys,
    &ult__threads_subsys,
    &ult__stacks_subsys,
    &ult__timers_subsys,
    &ult__io_subsys,
    &ult__signals_subsys,
    &ult__preempt_subsys,
    &ult__witness_subsys,
    &ult__policy_subsys,
    &ult__tls_subsys,
    &ult__trace_subsys,
    &ult__workers_subsys,
    &ult__clock_subsys,
    &ult__handoff_subsys,
    &ult__blocking_subsys,
    &ult__shm_subsys,
    &ult__chaos_subsys,
    &ult__dump_subsys,
};
#define NSUBSYS ((int)(sizeof(subsystems) / sizeof(subsystems[0])))

/* Serialises init and shutdown against each other. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
/* ult_init or ult_shutdown is between its first and last step (under
 * init_lock; read by the fork handler, which cannot take the lock). */
static volatile sig_atomic_t init_busy;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

/*
 * fork() copies only the calling kernel thread: the child has no workers
 * and no clock thread, and its copies of the runtime's locks may be held
 * by threads that do not exist there.  So each subsystem forgets the
 * parent's threads (its fork_child: locks made anew, what they held
 * leaked), and the runtime is down in the child, which may start it
 * again (DESIGN.md section 10.1); its only thread, even if it forked
 * from a uthread, is a foreign thread until then.  A fork that
 * interrupted ult_init or ult_shutdown leaves state that cannot be told
 * apart: the runtime is dead there, every call ENXIO.
 */
static void
atfork_child(void)
{
	int state = ULT_LD(&ult__rt.state);

	ult__tls_fork_child();
	ult__tls_worker = NULL;
	ult__tls_actcpu = -1;
	ULT_PST(&ult__trace_on, 0); /* its flusher is the parent's */
	/* Foreign threads sleep there too, runtime or not. */
	ult__sleepq_fork_child();
	ult__ts_fork_child();
	if (init_busy || state == RT_STOPPING)
		ULT_ST(&ult__rt.state, RT_FORKED);
	else if (state == RT_RUNNING) {
		ult__subsys_fork_child(subsystems, NSUBSYS);
		ULT_ST(&ult__rt.state, RT_STOPPED);
	}
	init_busy = 0;
	pthread_mutex_init(&init_lock, NULL);
}

/* A program that exits without ult_shutdown still gets its report and
 * its trace. */
static void
at_exit(void)
{
	if (ULT_LD(&ult__rt.state) != RT_RUNNING)
		return;
	ult__shm_exit();
	ult__stats_report();
	ult__trace_finish(0);
}

static void
process_hooks(void)
{
	(void)pthread_atfork(NULL, NULL, atfork_child);
	(void)atexit(at_exit);
}

/* Bring the runtime up, or leave nothing behind (init_lock held). */
static int
start(const struct ult_config *cfg)
{
	int err;

	if ((err = ult__subsys_configure(subsystems, NSUBSYS, cfg)) != 0)
		return (err);
	return (ult__subsys_start(subsystems, NSUBSYS));
}

int
ult_init(const struct ult_config *cfg)
{
	int err;

	pthread_once(&hooks_once, process_hooks);
	pthread_mutex_lock(&init_lock);
	if (ULT_LD(&ult__rt.state) != RT_STOPPED) {
		err = ULT_LD(&ult__rt.state) == RT_FORKED ? ENXIO : EBUSY;
		pthread_mutex_unlock(&init_lock);
		return (err);
	}
	init_busy = 1;
	if ((err = start(cfg)) == 0)
		ULT_ST_REL(&ult__rt.state, RT_RUNNING);
	init_busy = 0;
	pthread_mutex_unlock(&init_lock);
	return (err);
}

int
ult_shutdown(void)
{
	if (ult__worker_self() != NULL)
		return (ult__running() ? EDEADLK : ENXIO);
	pthread_mutex_lock(&init_lock);
	if (ULT_LD(&ult__rt.state) != RT_RUNNING) {
		pthread_mutex_unlock(&init_lock);
		return (ENXIO);
	}
	init_busy = 1;
	ult__wait_no_threads();
	ult__stats_report();
	ULT_ST(&ult__rt.state, RT_STOPPING);
	ult__subsys_stop(subsystems, NSUBSYS);
	ULT_ST_REL(&ult__rt.state, RT_STOPPED);
	init_busy = 0;
	pthread_mutex_unlock(&init_lock);
	return (0);
}

int
ult_sysctl(const char *name, long *oldval, const long *newval)
{
	const struct sched_tunable *t;

	if (!ult__running())
		return (ENXIO);
	if (name == NULL)
		return (EINVAL);
	if ((t = ult__tunable_find(ult__rt.sched->tunables, name)) == NULL &&
	    (t = ult__subsys_tunable(subsystems, NSUBSYS, name)) == NULL)
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
