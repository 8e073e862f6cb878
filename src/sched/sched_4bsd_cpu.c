/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_4bsd.c. */
/*
 * 4BSD's CPU-usage accounting: the decayed estimate td_estcpu and the
 * timeshare priority that follows from it, %CPU, the load average that
 * sets the decay, and the catch-up a sleeper gets when it wakes.  Like
 * sched_ule_prio.c it is integer arithmetic on per-thread history (and on
 * the one load average), kept apart from the queues: the once-a-second
 * walk that applies it to every queued and running thread stays in
 * sched_4bsd.c, which owns the queues.
 */
#include "sched_4bsd.h"

#define NICE_WEIGHT 1
/* exp(-1/12) * FSCALE: the 1-minute load average, sampled every 5 s */
#define CEXP0 1884

/*
 * The load average, FSCALE fixed point: (s), written by CPU 0's clock
 * under bsd_sched_lock.  Two readers do without the lock: bsd_updatepri,
 * for a thread waking up under its sleep queue's lock, and the
 * vm.loadavg.1min sysctl.  It is a plain int, so those two reads race
 * with the clock's store (a stale or new value, never a torn one on the
 * targets, but a data race all the same).
 */
/* (s, a) FSCALE fixed point: written by CPU 0's clock under
 * bsd_sched_lock, read without it by wakeups (updatepri) and the sysctl */
atomic_int bsd_ldavg;

int
bsd_iew(void)
{
	/* INVERSE_ESTCPU_WEIGHT: 8 per CPU on FreeBSD <= 15 SMP kernels. */
	return (8 * (bsd_nactive > 1 ? bsd_nactive : 1));
}

static int
decay_cpu(int loadfac, int cpu)
{
	return ((int)(((int64_t)loadfac * cpu) / (loadfac + FSCALE)));
}

static void
user_prio(struct thread *td, int prio)
{
	td->td_base_user_pri = (uint8_t)prio;
	td_set_user_pri(td,
	    prio < td->td_lend_user_pri ? prio : td->td_lend_user_pri);
}

/* bsd_resetpriority: timeshare priority from estcpu and nice. */
void
bsd_resetpriority(struct thread *td)
{
	int pri;

	if (PRI_BASE(td->td_pri_class) != PRI_TIMESHARE)
		return;
	pri = PUSER + ts_of(td)->ts_estcpu / bsd_iew() +
	    NICE_WEIGHT * (td->td_nice - PRIO_MIN);
	if (pri < PRI_MIN_TIMESHARE)
		pri = PRI_MIN_TIMESHARE;
	if (pri > PRI_MAX_TIMESHARE)
		pri = PRI_MAX_TIMESHARE;
	user_prio(td, pri);
}

/* pctcpu forgets 1 - ccpu of itself each second. */
void
bsd_pctcpu_decay(struct td_sched *ts, int now)
{
	int secs = (now - ts->ts_pctstamp) / ULT_HZ;

	if (secs <= 0)
		return;
	ts->ts_pctstamp += secs * ULT_HZ;
	while (secs-- > 0 && ts->ts_pctcpu != 0)
		ts->ts_pctcpu =
		    (int)(((int64_t)ts->ts_pctcpu * CCPU) >> FSHIFT);
}

void
bsd_schedcpu_thread(struct thread *td, int loadfac, int now)
{
	struct td_sched *ts = ts_of(td);

	bsd_pctcpu_decay(ts, now);
	if (ts->ts_cpticks != 0) {
		ts->ts_pctcpu +=
		    (int)((100 * ((int64_t)ts->ts_cpticks << (FSHIFT - 11))) /
			ULT_STATHZ);
		ts->ts_cpticks = 0;
	}
	ts->ts_didrun = 0;
	ts->ts_estcpu = decay_cpu(loadfac, ts->ts_estcpu);
	bsd_resetpriority(td);
	if (td->td_priority >= PRI_MIN_TIMESHARE &&
	    td->td_priority <= PRI_MAX_TIMESHARE) {
		td->td_base_pri = td->td_user_pri;
		if (!(td->td_flags & TDF_BORROWING))
			td_set_pri(td, td->td_user_pri);
	}
}

void
bsd_loadav(void)
{
	int nrun = ULT_LD(&bsd_sched_tdcnt);

	int64_t l = ((int64_t)CEXP0 * ULT_LD(&bsd_ldavg) +
			(int64_t)nrun * FSCALE * (FSCALE - CEXP0)) >>
	    FSHIFT;

	ULT_ST(&bsd_ldavg, (int)l);
}

void
bsd_updatepri(struct thread *td, int slptime)
{
	struct td_sched *ts = ts_of(td);
	int loadfac = 2 * ULT_LD(&bsd_ldavg), newcpu;

	/* The units mix seconds and fixed point, as they always have. */
	if (slptime > 5 * loadfac) {
		ts->ts_estcpu = 0;
		return;
	}
	newcpu = ts->ts_estcpu;
	slptime--;
	while (newcpu && --slptime > 0)
		newcpu = decay_cpu(loadfac, newcpu);
	ts->ts_estcpu = newcpu;
}

/* For the policy tests: a thread's estcpu and the load average. */
int
ult__4bsd_estcpu(struct thread *td)
{
	return (ts_of(td)->ts_estcpu);
}

int
ult__4bsd_ldavg(void)
{
	return (ULT_LD(&bsd_ldavg));
}
