/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_4bsd.c. */
/*
 * Read-only views of 4BSD's queues, and its tunables: the invariants
 * checker the tests run, the load and statistics the host reports, and the
 * kern.sched table.  None of it takes a scheduling decision, so it is
 * kept out of sched_4bsd.c; only the checker takes bsd_sched_lock.
 */
#include <errno.h>
#include <stdio.h>

#include "sched_4bsd.h"

int
bsd_load(int cpu)
{
	return (runnable_for(cpu));
}

void
bsd_thread_stats(struct thread *td, struct sched_thread_stats *st)
{
	struct td_sched *ts = ts_of(td);

	st->interact_score = -1;
	st->pctcpu = ts->ts_pctcpu > FSCALE ? FSCALE : ts->ts_pctcpu;
	st->cpu = (ts->ts_flags & TSF_BOUND) ? ts->ts_cpu : td->td_lastcpu;
	if (st->cpu == NOCPU)
		st->cpu = 0;
}

void
bsd_cpu_stats(int cpu, struct sched_cpu_stats *st)
{
	struct thread *cur = ULT_LD(&bsd_curthr[cpu]);

	st->load = (cur != bsd_idlethr[cpu]) + ULT_LD(&bsd_runq_length[cpu]);
	st->transferable = ULT_LD(&bsd_runq_global_len);
	st->lowpri = pri_of(cur);
	st->steals = 0;
	/* One lock for all CPUs: reported once, on CPU 0. */
	st->lock_contended =
	    cpu == 0 ? ULT_LD(&bsd_sched_lock.mtx_contended) : 0;
}

/* Queued threads counted twice or lost; takes bsd_sched_lock. */
const char *
bsd_check(void)
{
	const char *err = NULL;
	int queued = 0, running = 0, len = 0;

	mtx_lock_spin(&bsd_sched_lock);
	for (int q = -1; q < bsd_ncpu; q++) {
		struct runq *rq = bsd_rq_of(q);

		for (int i = 0; i < RQ_NQS; i++) {
			struct ult__list *n;

			ULT_LIST_FOREACH (n, &rq->rq_queues[i]) {
				if (!TD_ON_RUNQ(runq_thread(n)))
					err = "a queued thread not TDS_RUNQ";
				queued++;
			}
		}
		len += q < 0 ? ULT_LD(&bsd_runq_global_len)
			     : ULT_LD(&bsd_runq_length[q]);
	}
	for (int c = 0; c < bsd_ncpu; c++)
		running += !cpu_is_idle(c);
	if (len != queued)
		err = "queue lengths do not match the queues";
	/* Threads mid-switch are counted but neither queued nor current. */
	if (queued > ULT_LD(&bsd_sched_tdcnt) ||
	    queued + running > ULT_LD(&bsd_sched_tdcnt) + bsd_ncpu)
		err = "sched_tdcnt does not match the queues";
	mtx_unlock_spin(&bsd_sched_lock);
	return (err);
}

static long
quantum_get(void)
{
	return ((long)(1000000 / ULT_STATHZ) * TUN(bsd_tun.slice));
}

static int
quantum_set(long v)
{
	long period = 1000000 / ULT_STATHZ, slice;

	if (v <= 0 || v > 1000000000L)
		return (EINVAL);
	slice = (v + period / 2) / period;
	ULT_ST(&bsd_tun.slice, (int)(slice < 1 ? 1 : slice));
	return (0);
}

/*
 * 4BSD has no minimum slice: every slice is kern.sched.slice stat ticks
 * whatever the load (only a forked child's first is shorter, one tick).
 * What the host bounds its deferrals by is ULE's figure for the same
 * kern.sched.slice, slice / 6 (SCHED_SLICE_MIN_DIVISOR) ticks and at
 * least one, so that a program's schedctl bound does not depend on the
 * policy.
 */
int
bsd_slice_min_us(void)
{
	int ticks = TUN(bsd_tun.slice) / 6;

	if (ticks < 1)
		ticks = 1;
	return ((int)((long)ticks * 1000000 / ULT_STATHZ));
}

static long
one_get(void)
{
	return (1);
}

static long
ccpu_get(void)
{
	return (CCPU);
}

static long
ldavg_get(void)
{
	return (ULT_LD(&bsd_ldavg));
}

const struct sched_tunable bsd_tunables[] = {
    {"kern.sched.quantum", NULL, 0, 0, quantum_get, quantum_set},
    {"kern.sched.slice", &bsd_tun.slice, 1, 1000000, NULL, NULL},
    {"kern.sched.wake_local", &bsd_tun.wake_local, 0, 1, NULL, NULL},
    {"kern.sched.runq_fuzz", NULL, 0, 0, one_get, NULL},
    {"kern.sched.preemption", NULL, 0, 0, one_get, NULL},
    {"kern.ccpu", NULL, 0, 0, ccpu_get, NULL},
    {"vm.loadavg.1min", NULL, 0, 0, ldavg_get, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

/* The global queue is shown with CPU 0. */
void
bsd_dump(int cpu, void (*out)(void *, const char *), void *arg)
{
	struct thread *cur = ULT_LD(&bsd_curthr[cpu]);
	int locked = mtx_trylock_spin(&bsd_sched_lock);
	char line[200];

	snprintf(line, sizeof(line),
	    "cpu %d%s: queued here %d, global %d, tdcnt %d, cpu_idle %d, "
	    "cur %p%s pri %d",
	    cpu, locked ? "" : " (sched_lock busy, read unlocked)",
	    ULT_LD(&bsd_runq_length[cpu]), ULT_LD(&bsd_runq_global_len),
	    ULT_LD(&bsd_sched_tdcnt), bsd_cpu_idle_flag(cpu), (void *)cur,
	    cur == bsd_idlethr[cpu] ? " (idle)" : "", pri_of(cur));
	out(arg, line);
	runq_dump("pcpu", bsd_rq_of(cpu), out, arg);
	if (cpu == 0)
		runq_dump("global", bsd_rq_of(-1), out, arg);
	if (locked)
		mtx_unlock_spin(&bsd_sched_lock);
}
