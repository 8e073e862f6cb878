/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_ule.c. */
/*
 * ULE's priority arithmetic: the interactivity score, the %CPU estimate,
 * the user priority that follows from them, and the load-scaled slice.
 * Everything here is integer arithmetic on per-thread history; the
 * formulas and constants are FreeBSD 14's (docs/ULE.md sections 2-5).
 */
#include "sched_ule.h"

static inline int
imin(int a, int b)
{
	return (a < b ? a : b);
}

/*
 * Interactivity score in [0, 100] from voluntary sleep s and run time r:
 * about 50*r/s for sleepers and 100 - 50*s/r for runners.  While the
 * threshold is at most half the range, a thread that runs at least as much
 * as it sleeps can never qualify, so it scores a flat 50 without dividing.
 */
int
ule_interact_score(struct thread *td)
{
	struct td_sched *ts = td_get_sched(td);
	unsigned div;

	if (TUN(ule_tun.interact) <= SCHED_INTERACT_HALF &&
	    ts->ts_runtime >= ts->ts_slptime)
		return (SCHED_INTERACT_HALF);
	if (ts->ts_runtime > ts->ts_slptime) {
		div = ts->ts_runtime / SCHED_INTERACT_HALF;
		if (div < 1)
			div = 1;
		return (SCHED_INTERACT_HALF +
		    (SCHED_INTERACT_HALF - (int)(ts->ts_slptime / div)));
	}
	if (ts->ts_slptime > ts->ts_runtime) {
		div = ts->ts_slptime / SCHED_INTERACT_HALF;
		if (div < 1)
			div = 1;
		return ((int)(ts->ts_runtime / div));
	}
	/* runtime == slptime */
	if (ts->ts_runtime)
		return (SCHED_INTERACT_HALF);
	return (0);
}

/*
 * Keep at most SCHED_SLP_RUN_MAX (5 s) of history, forgetting about a
 * fifth each time it overflows so recent behaviour counts most.  Sums over
 * twice the limit only follow a big fork/exit charge or a long sleep; then
 * the larger side wins outright.
 */
void
ule_interact_update(struct thread *td)
{
	struct td_sched *ts = td_get_sched(td);
	unsigned sum = ts->ts_runtime + ts->ts_slptime;

	if (sum < SCHED_SLP_RUN_MAX)
		return;
	if (sum > SCHED_SLP_RUN_MAX * 2) {
		if (ts->ts_runtime > ts->ts_slptime) {
			ts->ts_runtime = SCHED_SLP_RUN_MAX;
			ts->ts_slptime = 1;
		} else {
			ts->ts_slptime = SCHED_SLP_RUN_MAX;
			ts->ts_runtime = 1;
		}
		return;
	}
	if (sum > (SCHED_SLP_RUN_MAX / 5) * 6) {
		ts->ts_runtime /= 2;
		ts->ts_slptime /= 2;
		return;
	}
	ts->ts_runtime = (ts->ts_runtime / 5) * 4;
	ts->ts_slptime = (ts->ts_slptime / 5) * 4;
}

/*
 * %CPU over a sliding window of 10 to 11 seconds.  When the window grows
 * past SCHED_TICK_MAX it is trimmed back to SCHED_TICK_TARG keeping the
 * average rate; a thread unseen for a whole window starts from zero.
 */
void
ule_pctcpu_update(struct td_sched *ts, int run, int t)
{
	if ((unsigned)(t - ts->ts_ltick) >= SCHED_TICK_TARG) {
		ts->ts_ticks = 0;
		ts->ts_ftick = t - SCHED_TICK_TARG;
	} else if (t - ts->ts_ftick >= SCHED_TICK_MAX) {
		ts->ts_ticks =
		    (ts->ts_ticks / (unsigned)(ts->ts_ltick - ts->ts_ftick)) *
		    (unsigned)(ts->ts_ltick - (t - SCHED_TICK_TARG));
		ts->ts_ftick = t - SCHED_TICK_TARG;
	}
	if (run)
		ts->ts_ticks += (unsigned)(t - ts->ts_ltick)
		    << SCHED_TICK_SHIFT;
	ts->ts_ltick = t;
}

/* %CPU in FSCALE units, as ps(1) and top(1) show it under ULE. */
int
ule_pctcpu(struct thread *td, int now)
{
	struct td_sched *ts = td_get_sched(td);
	int rtick;

	ule_pctcpu_update(ts, TD_IS_RUNNING(td), now);
	if (ts->ts_ticks == 0)
		return (0);
	rtick = imin((int)(SCHED_TICK_HZ(ts) / SCHED_TICK_SECS), ULT_HZ);
	return ((FSCALE * ((FSCALE * rtick) / ULT_HZ)) >> FSHIFT);
}

static void
sched_user_prio(struct thread *td, int prio)
{
	td->td_base_user_pri = (uint8_t)prio;
	if (td->td_lend_user_pri <= prio)
		return;
	td_set_user_pri(td, prio);
}

/*
 * ult (kern.sched.nice_weight, off by default): nice weighs a timeshare
 * thread by 1.25 per level, the weights Linux gives nice (nice_w is 1024
 * * 1.25^nice).  Its %CPU term grows nice_w / 1024 times as fast, so that
 * nice spreads batch threads over the calendar, and its slice is scaled
 * by 1024 / nice_w, between one stat tick and four times the usual slice.
 * FreeBSD only adds nice to the priority, which CPU hogs hardly feel: at
 * nice 0 and +10 on one CPU two of them share 50/50; weighted, 91/9 (Linux
 * gives 90/10).  sim/scenarios/nice_weight.scn has the figures.
 */
static const int nice_w[PRIO_MAX - PRIO_MIN + 1] = {12, 15, 18, 23, 29, 36, 45,
    56, 70, 88, 110, 137, 172, 215, 268, 336, 419, 524, 655, 819, 1024, 1280,
    1600, 2000, 2500, 3125, 3906, 4883, 6104, 7629, 9537, 11921, 14901, 18626,
    23283, 29104, 36380, 45475, 56843, 71054, 88818};

static int
cpu_term(int rate, int nice)
{
	long long w;

	if (!TUN(ule_tun.nice_weight))
		return (imin(rate, SCHED_PRI_RANGE - 1));
	w = (long long)rate * nice_w[nice - PRIO_MIN] / 1024;
	return (w > SCHED_PRI_RANGE - 1 ? SCHED_PRI_RANGE - 1 : (int)w);
}

static int
weigh_slice(int slice, int nice)
{
	long long s = (long long)slice * 1024 / nice_w[nice - PRIO_MIN];

	return (s < 1 ? 1 : s > 4LL * slice ? 4 * slice : (int)s);
}

/*
 * The user priority of a timeshare thread.  Interactive threads (score +
 * nice below kern.sched.interact) spread over the interactive band by
 * score; batch threads sit at SCHED_PRI_MIN plus their share of the last
 * ~10 s of CPU scaled to SCHED_PRI_RANGE, plus nice.  Only td_user_pri
 * changes here; td_priority follows at the next AST or return to user.
 */
void
ule_priority(struct thread *td)
{
	struct td_sched *ts = td_get_sched(td);
	int score, pri;

	if (PRI_BASE(td->td_pri_class) != PRI_TIMESHARE)
		return;
	score = imax(0, ule_interact_score(td) + td->td_nice);
	if (score < TUN(ule_tun.interact)) {
		pri = PRI_MIN_INTERACT;
		pri += (PRI_MAX_INTERACT - PRI_MIN_INTERACT + 1) * score /
		    TUN(ule_tun.interact);
	} else {
		pri = SCHED_PRI_MIN;
		if (ts->ts_ticks) {
			int total = imax(ts->ts_ltick - ts->ts_ftick, ULT_HZ);
			int per = ((total + SCHED_PRI_RANGE - 1) /
				      SCHED_PRI_RANGE * SCHED_PRI_RANGE) /
			    SCHED_PRI_RANGE;

			pri +=
			    cpu_term((int)SCHED_TICK_HZ(ts) / per, td->td_nice);
		}
		pri += SCHED_PRI_NICE(td->td_nice);
	}
	sched_user_prio(td, pri);
}

/*
 * The slice shrinks with load so that the threads waiting behind the
 * running one share about one full slice of latency, but never below
 * sched_slice_min.
 */
int
ule_tdq_slice(struct tdq *tdq)
{
	int load = TDQ_LOAD(tdq) - 1;

	if (load >= SCHED_SLICE_MIN_DIVISOR)
		return (TUN(ule_tun.slice_min));
	if (load <= 1)
		return (TUN(ule_tun.slice));
	return (TUN(ule_tun.slice) / load);
}

int
ule_td_slice(struct thread *td, struct tdq *tdq)
{
	if (PRI_BASE(td->td_pri_class) == PRI_ITHD)
		return (TUN(ule_tun.slice));
	if (ULT_UNLIKELY(TUN(ule_tun.nice_weight)) &&
	    PRI_BASE(td->td_pri_class) == PRI_TIMESHARE)
		return (weigh_slice(ule_tdq_slice(tdq), td->td_nice));
	return (ule_tdq_slice(tdq));
}
