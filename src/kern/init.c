/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult_init / ult_shutdown and configuration.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/mem.h"
#include "io.h"
#include "../sched/topo.h"
#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "clock.h"
#include "host_nice.h"
#include "stack.h"
#include "preempt.h"
#include "signals.h"
#include "../obs/dump.h"
#include "../obs/shm.h"
#include "../obs/stats.h"
#include "tls.h"

struct ult__runtime ult__rt;

/* Serialises init and shutdown against each other. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
/* ult_init or ult_shutdown is between its first and last step (under
 * init_lock; read by the fork handler, which cannot take the lock). */
static volatile sig_atomic_t init_busy;
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

/*
 * fork() copies only the calling kernel thread: the child has no workers
 * and no clock thread, and its copies of the runtime's locks may be held
 * by threads that do not exist there.  The runtime is therefore dead in the
 * child: every call fails with ENXIO (ult_init too, as the parent's state
 * cannot be reclaimed safely), and the child's only thread, even if it
 * forked from a uthread, is a foreign thread from now on.
 */
static void
atfork_child(void)
{
	ult__tls_worker = NULL;
	ult__tls_actcpu = -1;
	ULT_PST(&ult__trace_on, 0); /* its flusher is the parent's */
	if (init_busy || ULT_LD(&ult__rt.state) != RT_STOPPED)
		ULT_ST(&ult__rt.state, RT_FORKED);
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

static const struct sched_ops *
policy_lookup(const char *name)
{
	if (name == NULL || strcmp(name, "ule") == 0 ||
	    strcmp(name, "ULE") == 0)
		return (&ult__sched_ule);
	if (strcmp(name, "4bsd") == 0 || strcmp(name, "4BSD") == 0)
		return (&ult__sched_4bsd);
	return (NULL);
}

/* Parse a decimal environment value; 1 if absent, 0 if good, -1 bad. */
static int
env_long(const char *var, long *out)
{
	const char *s = getenv(var);
	char *end;

	if (s == NULL || *s == '\0')
		return (1);
	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	return (0);
}

static int
configure(const struct ult_config *cfg, int nos)
{
	long v;
	int r;

	ult__rt.ncpu = cfg != NULL ? cfg->ncpu : 0;
	if (ult__rt.ncpu == 0) {
		if ((r = env_long("ULT_NCPU", &v)) < 0)
			return (EINVAL);
		ult__rt.ncpu = r == 0 ? (int)v : nos;
	}
	if (ult__rt.ncpu < 1 || ult__rt.ncpu > ULT_MAXCPU)
		return (EINVAL);
	/* Go's bound on spinning Ms: half the CPUs, so idle spinning never
	 * takes more than the busy workers leave. */
	ult__rt.max_spinning = ult__rt.ncpu / 2 > 0 ? ult__rt.ncpu / 2 : 1;
	ULT_ST(&ult__rt.nspinning, 0);
	/* The spare worker (handoff.c): on unless ULT_SPARE=0. */
	if ((r = env_long("ULT_SPARE", &v)) < 0 || (r == 0 && v != 0 && v != 1))
		return (EINVAL);
	ult__rt.nworkers =
	    ult__rt.ncpu + (ult__rt.ncpu < ULT_MAXCPU && (r != 0 || v == 1));

	/* ult.host_nice (host_nice.c): off unless ULT_HOST_NICE=1. */
	if ((r = env_long("ULT_HOST_NICE", &v)) < 0 ||
	    (r == 0 && v != 0 && v != 1))
		return (EINVAL);
	if ((r = ult__host_nice_configure(r == 0 && v == 1)) != 0)
		return (r);

	ult__rt.sigmask0 = ult__os_sigmask_get();
	ult__rt.stack_size = cfg != NULL ? cfg->stack_size : 0;
	if (ult__rt.stack_size == 0) {
		if ((r = env_long("ULT_STACK_SIZE", &v)) < 0 ||
		    (r == 0 && v <= 0))
			return (EINVAL);
		ult__rt.stack_size = r == 0 ? (size_t)v : ULT_STACK_DEFAULT;
	}
	/* Bounded so that no rounding or slot arithmetic can overflow. */
	if (ult__rt.stack_size < ULT_STACK_MIN ||
	    ult__rt.stack_size > ULT_STACK_MAX)
		return (EINVAL);
	if ((r = env_long("ULT_STACK_GUARD", &v)) < 0 ||
	    (r == 0 && (v <= 0 || (unsigned long)v > ULT_STACK_MAX)))
		return (EINVAL);
	ult__rt.stack_guard = r == 0 ? (size_t)v : ULT_STACK_GUARD_DEFAULT;
	{
		size_t pg = (size_t)sysconf(_SC_PAGESIZE);

		ult__rt.stack_size = (ult__rt.stack_size + pg - 1) & ~(pg - 1);
		ult__rt.stack_guard =
		    (ult__rt.stack_guard + pg - 1) & ~(pg - 1);
	}

	ult__rt.sched = policy_lookup(cfg != NULL && cfg->policy != NULL
		? cfg->policy
		: getenv("ULT_POLICY"));
	if (ult__rt.sched == NULL)
		return (EINVAL);

	if ((r = ult__stats_configure()) != 0 ||
	    (r = ult__shm_configure()) != 0 || (r = ult__dump_configure()) != 0)
		return (r);
	ult__rt.preempt = cfg != NULL ? cfg->preempt : 0;
	if (ult__rt.preempt == 0) {
		if ((r = env_long("ULT_PREEMPT", &v)) < 0)
			return (EINVAL);
		/* On unless ULT_PREEMPT=0 says otherwise. */
		ult__rt.preempt = (r == 0 && v == 0) ? -1 : 1;
	}
	return (ult__tls_configure(cfg));
}

static void
teardown(int workers, int clock, int policy)
{
	ult__dump_stop();
	ult__shm_stop();
	ult__blocking_fini();
	if (clock)
		ult__clock_stop();
	if (workers)
		ult__workers_stop();
	ult__trace_finish(1);
	ult__io_fini();
	if (policy)
		ult__rt.sched->fini();
	ult__preempt_fini();
	ult__signals_fini();
	ult__timers_fini();
	ult__tls_fini();
	ult__stacks_fini();
	ult__thread_slab_fini();
	ult__topo_free(ult__rt.topo);
	ult__rt.topo = NULL;
	free(ult__rt.workers);
	ult__rt.workers = NULL;
}

/* Bring the runtime up, or leave nothing behind (init_lock held). */
static int
start(const struct ult_config *cfg)
{
	int oscpu[ULT_MAXCPU], nos, err, pinned;
	struct topo_cpu *desc = NULL;

	if ((err = ult__fault_setup()) != 0)
		return (err);
	nos = ult__os_cpus(oscpu, ULT_MAXCPU);
	if ((err = configure(cfg, nos)) != 0)
		return (err);
	ult__fastclock_init();
	ult__rt.epoch_ns = ult__now();
	atomic_init(&ult__rt.ticks_max, 0);
	atomic_init(&ult__rt.nspawned_foreign, 0);
	atomic_init(&ult__rt.exit_waiter, 0);
	atomic_init(&ult__rt.shutdown_waits, 0);
	atomic_init(&ult__rt.stopping, 0);
	atomic_init(&ult__rt.nblocked, 0);
	atomic_init(&ult__rt.child_first, 1);
	/* Pin one worker per CPU when there are enough CPUs; with more
	 * workers than CPUs, pinning would stack several on one CPU while
	 * others sit empty, so the kernel places them instead. */
	pinned = ult__rt.ncpu <= nos;
	if (pinned &&
	    (desc = ult__calloc((size_t)ult__rt.ncpu, sizeof(*desc))) != NULL &&
	    ult__os_topology(ult__rt.ncpu, oscpu, desc) != 0) {
		free(desc);
		desc = NULL;
	}
	ult__rt.topo = ult__topo_build(ult__rt.ncpu, desc);
	free(desc);
	ult__rt.workers = ult__zalloc_cl((size_t)ult__rt.nworkers,
	    sizeof(struct ult__worker));
	if (ult__rt.topo == NULL || ult__rt.workers == NULL ||
	    (ult__rt.nworkers > ult__rt.ncpu &&
		ult__topo_add_reserve(ult__rt.topo, ult__rt.ncpu) != 0)) {
		err = ENOMEM;
		goto fail;
	}
	for (int i = 0; i < ult__rt.nworkers; i++) {
		ult__rt.workers[i].id = i;
		ult__rt.workers[i].oscpu =
		    pinned && i < ult__rt.ncpu ? oscpu[i] : -1;
		atomic_init(&ult__rt.workers[i].offline, i >= ult__rt.ncpu);
	}
	if ((err = ult__stacks_init()) != 0 ||
	    (err = ult__timers_init(ult__rt.nworkers + 1)) != 0 ||
	    (err = ult__io_init()) != 0 || (err = ult__signals_init()) != 0 ||
	    (err = ult__preempt_init()) != 0 ||
	    (err = ult__rt.sched->init()) != 0)
		goto fail;
	ult__tls_start();
	if ((err = ult__trace_start()) != 0)
		goto fail_policy;
	if ((err = ult__workers_start()) != 0)
		goto fail_policy;
	if ((err = ult__clock_start()) != 0)
		goto fail_workers;
	ult__shm_start();
	if ((err = ult__dump_start()) != 0) {
		teardown(1, 1, 1);
		return (err);
	}
	return (0);
fail_workers:
	teardown(1, 0, 1);
	return (err);
fail_policy:
	teardown(0, 0, 1);
	return (err);
fail:
	teardown(0, 0, 0);
	return (err);
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
	teardown(1, 1, 1);
	ULT_ST_REL(&ult__rt.state, RT_STOPPED);
	init_busy = 0;
	pthread_mutex_unlock(&init_lock);
	return (0);
}
