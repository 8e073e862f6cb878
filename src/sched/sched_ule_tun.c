/*
 * ULE's tunables (kern.sched.*): the variables the policy reads and the
 * table through which the host lists, reads and sets them.  They are
 * defined here, apart from their readers, because every sched_ule*.c file
 * reads some; the table's getters and setters only convert units or
 * report constants, and take no scheduling decision.
 */
#include <errno.h>

#include "sched_ule.h"

/* Tunables, with FreeBSD's defaults at hz = 1000, stathz = 127. */
atomic_int realstathz = ULT_STATHZ;
atomic_int sched_slice = ULT_STATHZ / SCHED_SLICE_DEFAULT_DIVISOR;
atomic_int sched_slice_min =
    ULT_STATHZ / SCHED_SLICE_DEFAULT_DIVISOR / SCHED_SLICE_MIN_DIVISOR;
atomic_int tickincr = (ULT_HZ << SCHED_TICK_SHIFT) / ULT_STATHZ;
atomic_int sched_interact = SCHED_INTERACT_THRESH;
atomic_int preempt_thresh = PRI_MIN_KERN;
atomic_int static_boost = PRI_MIN_BATCH;
atomic_int sched_idlespins = 10000;
atomic_int sched_idlespinthresh = 2 * 10000 / ULT_STATHZ;
atomic_int affinity = SCHED_AFFINITY_DEFAULT;
atomic_int rebalance = 1;
atomic_int balance_interval = ULT_STATHZ;
atomic_int steal_idle = 1;
atomic_int steal_thresh = 2;
atomic_int trysteal_limit = 2;
atomic_int steal_stranded = 1;
atomic_int always_steal = 0;

/* kern.sched.quantum: the slice in microseconds. */
static long
quantum_get(void)
{
	return ((long)(1000000 / TUN(realstathz)) * TUN(sched_slice));
}

static int
quantum_set(long v)
{
	long period = 1000000 / TUN(realstathz), slice;

	if (v <= 0 || v > 1000000000L)
		return (EINVAL);
	slice = (v + period / 2) / period;
	if (slice < 1)
		slice = 1;
	ULT_ST(&sched_slice, (int)slice);
	ULT_ST(&sched_slice_min, (int)slice / SCHED_SLICE_MIN_DIVISOR);
	return (0);
}

static long
one_get(void)
{
	return (1);
}

static long
zero_get(void)
{
	return (0);
}

const struct sched_tunable ule_tunables[] = {
    {"kern.sched.quantum", NULL, 0, 0, quantum_get, quantum_set},
    {"kern.sched.slice", &sched_slice, 1, 1000000, NULL, NULL},
    {"kern.sched.interact", &sched_interact, 0, SCHED_INTERACT_MAX, NULL, NULL},
    {"kern.sched.preempt_thresh", &preempt_thresh, 0, PRI_MAX_IDLE, NULL, NULL},
    {"kern.sched.static_boost", &static_boost, 0, PRI_MAX_IDLE, NULL, NULL},
    {"kern.sched.idlespins", &sched_idlespins, 0, INT_MAX, NULL, NULL},
    {"kern.sched.idlespinthresh", &sched_idlespinthresh, 0, INT_MAX, NULL,
	NULL},
    {"kern.sched.affinity", &affinity, 0, 1000000, NULL, NULL},
    {"kern.sched.balance", &rebalance, 0, 1, NULL, NULL},
    {"kern.sched.balance_interval", &balance_interval, 1, 1000000, NULL, NULL},
    {"kern.sched.steal_idle", &steal_idle, 0, 1, NULL, NULL},
    {"kern.sched.steal_thresh", &steal_thresh, 0, 1000000, NULL, NULL},
    {"kern.sched.trysteal_limit", &trysteal_limit, 0, 1000000, NULL, NULL},
    {"kern.sched.steal_stranded", &steal_stranded, 0, 1, NULL, NULL},
    {"kern.sched.always_steal", &always_steal, 0, 1, NULL, NULL},
    {"kern.sched.preemption", NULL, 0, 0, one_get, NULL},
    {"kern.ccpu", NULL, 0, 0, zero_get, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};
