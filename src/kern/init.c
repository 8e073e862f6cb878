/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The runtime's state and the machine it runs on: the worker count, the
 * stack sizes, the policy, the topology and the workers' array, as
 * subsystems for ult_init (subsys.h, src/api/init.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sched/topo.h"
#include "../util/fault.h"
#include "../util/mem.h"
#include "runtime.h"
#include "subsys.h"
#include "worker.h"

struct ult__runtime ult__rt;

/* The host's CPUs, read at configure and used at init (under the init
 * lock of src/api/init.c). */
static int oscpu[ULT_MAXCPU], nos;

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

static int
machine_configure(const struct ult_config *cfg)
{
	long v;
	int r, err;

	if ((err = ult__fault_setup()) != 0)
		return (err);
	nos = ult__os_cpus(oscpu, ULT_MAXCPU);

	ult__rt.ncpu = cfg != NULL ? cfg->ncpu : 0;
	if (ult__rt.ncpu == 0) {
		if ((r = ult__env_long("ULT_NCPU", &v)) < 0)
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
	if ((r = ult__env_long("ULT_SPARE", &v)) < 0 ||
	    (r == 0 && v != 0 && v != 1))
		return (EINVAL);
	ult__rt.nworkers =
	    ult__rt.ncpu + (ult__rt.ncpu < ULT_MAXCPU && (r != 0 || v == 1));

	ult__rt.sigmask0 = ult__os_sigmask_get();
	ult__rt.stack_size = cfg != NULL ? cfg->stack_size : 0;
	if (ult__rt.stack_size == 0) {
		if ((r = ult__env_long("ULT_STACK_SIZE", &v)) < 0 ||
		    (r == 0 && v <= 0))
			return (EINVAL);
		ult__rt.stack_size = r == 0 ? (size_t)v : ULT_STACK_DEFAULT;
	}
	/* Bounded so that no rounding or slot arithmetic can overflow. */
	if (ult__rt.stack_size < ULT_STACK_MIN ||
	    ult__rt.stack_size > ULT_STACK_MAX)
		return (EINVAL);
	if ((r = ult__env_long("ULT_STACK_GUARD", &v)) < 0 ||
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

	return (0);
}

static void
machine_fini(void)
{
	ult__topo_free(ult__rt.topo);
	ult__rt.topo = NULL;
	free(ult__rt.workers);
	ult__rt.workers = NULL;
}

/* The clock's epoch, the shared counters, the topology and the
 * workers' array. */
static int
machine_init(void)
{
	struct topo_cpu *desc = NULL;
	int pinned;

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
		machine_fini();
		return (ENOMEM);
	}
	for (int i = 0; i < ult__rt.nworkers; i++) {
		ult__rt.workers[i].id = i;
		ult__rt.workers[i].oscpu =
		    pinned && i < ult__rt.ncpu ? oscpu[i] : -1;
		atomic_init(&ult__rt.workers[i].offline, i >= ult__rt.ncpu);
	}
	return (0);
}

/* The workers' structs are leaked with what their caches hold. */
static void
machine_fork_child(void)
{
	ult__rt.workers = NULL;
	ult__rt.topo = NULL;
}

const struct ult__subsys ult__machine_subsys = {.name = "machine",
    .configure = machine_configure,
    .init = machine_init,
    .fini = machine_fini,
    .fork_child = machine_fork_child};

static int
policy_init(void)
{
	return (ult__rt.sched->init());
}

static void
policy_fini(void)
{
	ult__rt.sched->fini();
}

/* The policy chosen by machine_configure; its tunables are found through
 * ult__rt.sched (ult_sysctl looks there first). */
const struct ult__subsys ult__policy_subsys = {.name = "policy",
    .init = policy_init,
    .fini = policy_fini};
