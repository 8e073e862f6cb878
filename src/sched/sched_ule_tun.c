/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_ule.c. */
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
struct ule_tun ule_tun = {
    .interact = SCHED_INTERACT_THRESH,
    .slice = ULT_STATHZ / SCHED_SLICE_DEFAULT_DIVISOR,
    .slice_min =
	ULT_STATHZ / SCHED_SLICE_DEFAULT_DIVISOR / SCHED_SLICE_MIN_DIVISOR,
    .preempt_thresh = PRI_MIN_KERN,
    .static_boost = PRI_MIN_BATCH,
    .idlespins = 10000,
    .idlespinthresh = 2 * 10000 / ULT_STATHZ,
    .affinity = SCHED_AFFINITY_DEFAULT,
    .rebalance = 1,
    .balance_interval = ULT_STATHZ,
    .steal_idle = 1,
    .steal_thresh = 2,
    .trysteal_limit = 2,
    .steal_stranded = 1,
    .always_steal = 0,
    .wake_local = 1,
    .batch_guard = 0,
    .nice_weight = 0,
    .balance_fair = 0,
    .tickincr = (ULT_HZ << SCHED_TICK_SHIFT) / ULT_STATHZ,
    .realstathz = ULT_STATHZ,
};

/* kern.sched.quantum: the slice in microseconds. */
static long
quantum_get(void)
{
	return ((long)(1000000 / TUN(ule_tun.realstathz)) * TUN(ule_tun.slice));
}

static int
quantum_set(long v)
{
	long period = 1000000 / TUN(ule_tun.realstathz), slice;

	if (v <= 0 || v > 1000000000L)
		return (EINVAL);
	slice = (v + period / 2) / period;
	if (slice < 1)
		slice = 1;
	ULT_ST(&ule_tun.slice, (int)slice);
	ULT_ST(&ule_tun.slice_min, (int)slice / SCHED_SLICE_MIN_DIVISOR);
	return (0);
}

/*
 * The minimum slice: a thread on a loaded queue runs sched_slice_min stat
 * ticks (ule_tdq_slice).  That is slice / 6 as kern.sched.quantum sets it,
 * and 0 for a slice under 6 ticks, which still ends only at the next tick.
 */
int
ule_slice_min_us(void)
{
	int ticks = TUN(ule_tun.slice_min);

	if (ticks < 1)
		ticks = 1;
	return ((int)((long)ticks * 1000000 / TUN(ule_tun.realstathz)));
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
    {"kern.sched.slice", &ule_tun.slice, 1, 1000000, NULL, NULL},
    {"kern.sched.interact", &ule_tun.interact, 0, SCHED_INTERACT_MAX, NULL,
	NULL},
    {"kern.sched.preempt_thresh", &ule_tun.preempt_thresh, 0, PRI_MAX_IDLE,
	NULL, NULL},
    {"kern.sched.static_boost", &ule_tun.static_boost, 0, PRI_MAX_IDLE, NULL,
	NULL},
    {"kern.sched.idlespins", &ule_tun.idlespins, 0, INT_MAX, NULL, NULL},
    {"kern.sched.idlespinthresh", &ule_tun.idlespinthresh, 0, INT_MAX, NULL,
	NULL},
    {"kern.sched.affinity", &ule_tun.affinity, 0, 1000000, NULL, NULL},
    {"kern.sched.balance", &ule_tun.rebalance, 0, 1, NULL, NULL},
    {"kern.sched.balance_interval", &ule_tun.balance_interval, 1, 1000000, NULL,
	NULL},
    {"kern.sched.steal_idle", &ule_tun.steal_idle, 0, 1, NULL, NULL},
    {"kern.sched.steal_thresh", &ule_tun.steal_thresh, 0, 1000000, NULL, NULL},
    {"kern.sched.trysteal_limit", &ule_tun.trysteal_limit, 0, 1000000, NULL,
	NULL},
    {"kern.sched.steal_stranded", &ule_tun.steal_stranded, 0, 1, NULL, NULL},
    {"kern.sched.always_steal", &ule_tun.always_steal, 0, 1, NULL, NULL},
    {"kern.sched.wake_local", &ule_tun.wake_local, 0, 1, NULL, NULL},
    {"kern.sched.batch_guard", &ule_tun.batch_guard, 0, 100000, NULL, NULL},
    {"kern.sched.nice_weight", &ule_tun.nice_weight, 0, 1, NULL, NULL},
    {"kern.sched.balance_fair", &ule_tun.balance_fair, 0, 1, NULL, NULL},
    {"kern.sched.preemption", NULL, 0, 0, one_get, NULL},
    {"kern.ccpu", NULL, 0, 0, zero_get, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};
