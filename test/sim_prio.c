/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ULE's per-thread arithmetic, checked against the formulas of
 * docs/ULE.md sections 2-5: the interactivity score and its decay,
 * batch priority from %CPU and nice, the %CPU window, slices and the
 * history a forked thread inherits.  Expected values are computed here
 * from the published formulas, independently of the policy code.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "sched/sched_ule.h"
#include "sim.h"
#include "test.h"

#define K(x) ((unsigned)(x) << SCHED_TICK_SHIFT)

/* The score as docs/ULE.md section 2 states it. */
static int
expect_score(unsigned r, unsigned s, int interact)
{
	if (interact <= 50 && r >= s)
		return (50);
	if (r > s)
		return (50 + (50 - (int)(s / (r / 50 ? r / 50 : 1))));
	if (s > r)
		return ((int)(r / (s / 50 ? s / 50 : 1)));
	return (r ? 50 : 0);
}

static int
score_of(struct sim_thread *t, unsigned r, unsigned s)
{
	td_get_sched(&t->td)->ts_runtime = r;
	td_get_sched(&t->td)->ts_slptime = s;
	return (ule_interact_score(&t->td));
}

void
test_interact_score(void)
{
	static const unsigned hist[][2] = {{0, 0}, {K(200), K(1000)},
	    {K(1), K(5000)}, {K(1000), K(1000)}, {K(1000), K(200)},
	    {K(3000), K(100)}, {K(10), K(20)}, {K(4999), K(5000)}};
	struct sim *s = sim_create(1, NULL);
	struct sim_thread *t = sim_spawn(s, 0, 1, 1, -1);

	for (int interact = 30; interact <= 60; interact += 30) {
		ULT_ST(&ule_tun.interact, interact);
		for (unsigned i = 0; i < sizeof(hist) / sizeof(hist[0]); i++)
			CHECK_EQ(score_of(t, hist[i][0], hist[i][1]),
			    expect_score(hist[i][0], hist[i][1], interact));
	}
	ULT_ST(&ule_tun.interact, SCHED_INTERACT_THRESH);
	/* The approximations: ~50 r/s for sleepers, ~100 - 50 s/r beyond
	 * the threshold shortcut. */
	CHECK(score_of(t, K(250), K(1000)) >= 12 &&
	    score_of(t, K(250), K(1000)) <= 13);
	ULT_ST(&ule_tun.interact, 60);
	CHECK(score_of(t, K(1000), K(250)) >= 87 &&
	    score_of(t, K(1000), K(250)) <= 88);
	ULT_ST(&ule_tun.interact, SCHED_INTERACT_THRESH);

	/* Decay: forget a fifth, halve, or clamp, by how far the sum is over
	 * SCHED_SLP_RUN_MAX. */
	td_get_sched(&t->td)->ts_runtime = SCHED_SLP_RUN_MAX / 2;
	td_get_sched(&t->td)->ts_slptime = SCHED_SLP_RUN_MAX / 2 + 100;
	ule_interact_update(&t->td);
	CHECK_EQ(td_get_sched(&t->td)->ts_runtime,
	    (SCHED_SLP_RUN_MAX / 2) / 5 * 4);
	CHECK_EQ(td_get_sched(&t->td)->ts_slptime,
	    (SCHED_SLP_RUN_MAX / 2 + 100) / 5 * 4);
	td_get_sched(&t->td)->ts_runtime = SCHED_SLP_RUN_MAX;
	td_get_sched(&t->td)->ts_slptime = SCHED_SLP_RUN_MAX / 2;
	ule_interact_update(&t->td);
	CHECK_EQ(td_get_sched(&t->td)->ts_runtime, SCHED_SLP_RUN_MAX / 2);
	CHECK_EQ(td_get_sched(&t->td)->ts_slptime, SCHED_SLP_RUN_MAX / 4);
	td_get_sched(&t->td)->ts_runtime = 100;
	td_get_sched(&t->td)->ts_slptime = 3 * SCHED_SLP_RUN_MAX;
	ule_interact_update(&t->td);
	CHECK_EQ(td_get_sched(&t->td)->ts_slptime, SCHED_SLP_RUN_MAX);
	CHECK_EQ(td_get_sched(&t->td)->ts_runtime, 1);
	sim_destroy(s);

	/* Behaviour: running 2 ms of every 10 scores about 50 * 2/8. */
	s = sim_create(1, NULL);
	t = sim_spawn(s, 0, 2, 8, -1);
	sim_run(s, 20000);
	CHECK(ule_interact_score(&t->td) >= 10 &&
	    ule_interact_score(&t->td) <= 15);
	CHECK(t->td.td_user_pri < PRI_MIN_BATCH); /* interactive */
	sim_destroy(s);
}

/* SCHED_PRI_MIN + ticks / (roundup(window, 48) / 48) + nice (5). */
static int
expect_batch(unsigned ticks, int window, int nice)
{
	int total = window > ULT_HZ ? window : ULT_HZ;
	int per = ((total + 47) / 48 * 48) / 48;
	int add = (int)(ticks >> SCHED_TICK_SHIFT) / per;

	return (156 + (add < 47 ? add : 47) + nice);
}

void
test_batch_priority(void)
{
	static const int fracs[] = {0, 10, 50, 90, 100};
	struct sim *s = sim_create(1, NULL);
	struct sim_thread *t = sim_spawn(s, 0, -1, 0, -1);
	struct td_sched *ts = td_get_sched(&t->td);

	for (int nice = -20; nice <= 20; nice += 10) {
		for (unsigned i = 0; i < sizeof(fracs) / sizeof(fracs[0]);
		     i++) {
			ts->ts_runtime =
			    K(5000); /* batch: runs more than sleeps */
			ts->ts_slptime = K(100);
			ts->ts_ftick = 1000;
			ts->ts_ltick = 11000;
			ts->ts_ticks = K(100u * (unsigned)fracs[i]);
			t->td.td_nice = (int8_t)nice;
			ule_priority(&t->td);
			CHECK_EQ(t->td.td_user_pri,
			    expect_batch(ts->ts_ticks, 10000, nice));
		}
	}
	/* Nice does not move an interactive thread, whose priority depends
	 * on the score alone (88 + 48 * score / 30). */
	ts->ts_runtime = K(100);
	ts->ts_slptime = K(1000);
	t->td.td_nice = 0;
	ule_priority(&t->td);
	CHECK_EQ(t->td.td_user_pri, 88 + 48 * 5 / 30);
	t->td.td_nice = -5;
	ule_priority(&t->td);
	CHECK_EQ(t->td.td_user_pri, 88);
	sim_destroy(s);

	/* Behaviour: one hog alone settles near 203, two sharing a CPU near
	 * 179-180 (docs/ULE.md section 3). */
	s = sim_create(1, NULL);
	t = sim_spawn(s, 0, -1, 0, -1);
	sim_run(s, 30000);
	CHECK(t->td.td_user_pri >= 200 && t->td.td_user_pri <= 203);
	sim_destroy(s);
	s = sim_create(1, NULL);
	t = sim_spawn(s, 0, -1, 0, -1);
	sim_spawn(s, 0, -1, 0, -1);
	sim_run(s, 30000);
	CHECK(t->td.td_user_pri >= 177 && t->td.td_user_pri <= 182);
	sim_destroy(s);
}

void
test_pctcpu_window(void)
{
	struct sim *s = sim_create(1, NULL);
	struct sim_thread *hog = sim_spawn(s, 0, -1, 0, -1);
	struct sim_thread *half = sim_spawn(s, 0, 5, 5, -1);
	int p;

	sim_run(s, 30000);
	/* The sleeper takes its 50 %; the hog gets the rest. */
	p = ule_pctcpu(&half->td, mach_ticks());
	CHECK(p > FSCALE * 40 / 100 && p < FSCALE * 60 / 100);
	p = ule_pctcpu(&hog->td, mach_ticks());
	CHECK(p > FSCALE * 40 / 100 && p < FSCALE * 60 / 100);
	sim_destroy(s);

	/* A thread not seen for a whole window starts over at zero. */
	s = sim_create(1, NULL);
	half = sim_spawn(s, 0, 12000, 12000, -1);
	sim_run(s, 12000);
	CHECK(ule_pctcpu(&half->td, mach_ticks()) > FSCALE * 90 / 100);
	sim_run(s, 11000);
	CHECK_EQ(ule_pctcpu(&half->td, mach_ticks()), 0);
	sim_destroy(s);
}

void
test_slice_scaling(void)
{
	/* The slice by runnable threads: 12 12 6 4 3 2 2 2 (section 6.3). */
	static const int want[] = {0, 12, 12, 6, 4, 3, 2, 2, 2};

	for (int n = 1; n <= 8; n++) {
		struct sim *s = sim_create(1, NULL);
		int64_t sw;

		for (int i = 0; i < n; i++)
			sim_spawn(s, 0, -1, 0, -1);
		sim_run(s, 100);
		CHECK_EQ(ule_tdq_slice(TDQ_CPU(0)), want[n]);
		/* Hogs switch once per slice: stathz / slice per second. */
		sw = s->cpu[0].switches;
		sim_run(s, 10000);
		sw = s->cpu[0].switches - sw;
		if (n > 1)
			CHECK(sw >= 10 * ULT_STATHZ / want[n] * 9 / 10 &&
			    sw <= 10 * ULT_STATHZ / want[n] * 11 / 10 + 2);
		sim_destroy(s);
	}
}

/* Set a tunable through the policy's table, as ult_sysctl does. */
static int
tun_set(const struct sched_ops *ops, const char *name, long v)
{
	for (const struct sched_tunable *t = ops->tunables; t->name; t++)
		if (strcmp(t->name, name) == 0) {
			if (t->set != NULL)
				return (t->set(v));
			ULT_ST(t->var, (int)v);
			return (0);
		}
	return (ENOENT);
}

/*
 * The minimum slice the host bounds its deferrals by: sched_slice_min
 * stat ticks, which kern.sched.quantum keeps at slice / 6, and one tick
 * when that is 0 (a zero slice still ends only at the next tick).
 */
void
test_slice_min_ule(void)
{
	const struct sched_ops *ops = &ult__sched_ule;

	CHECK_EQ(ops->slice_min_us(), 2 * 1000000 / ULT_STATHZ);
	/* One second: 127 ticks, a minimum of 21. */
	CHECK_EQ(tun_set(ops, "kern.sched.quantum", 1000000), 0);
	CHECK_EQ(TUN(ule_tun.slice_min), 21);
	CHECK_EQ(ops->slice_min_us(), 21 * 1000000 / ULT_STATHZ);
	/* 30 ms: 4 ticks, a minimum of 0. */
	CHECK_EQ(tun_set(ops, "kern.sched.quantum", 30000), 0);
	CHECK_EQ(TUN(ule_tun.slice_min), 0);
	CHECK_EQ(ops->slice_min_us(), 1000000 / ULT_STATHZ);
	/* The default quantum restores the default. */
	CHECK_EQ(tun_set(ops, "kern.sched.quantum", 94488), 0);
	CHECK_EQ(ops->slice_min_us(), 2 * 1000000 / ULT_STATHZ);
}

void
test_fork_exit_history(void)
{
	struct sim *s = sim_create(1, NULL);
	struct sim_thread *p = sim_spawn(s, 0, 2, 8, -1), *c;
	struct td_sched *pts = td_get_sched(&p->td), *cts;
	unsigned r0, s0;
	int pri0;

	/* Run the parent until it has several seconds of history and is
	 * running at the moment it creates a thread. */
	sim_run(s, 8000);
	while (s->cpu[0].cur != p)
		sim_run(s, 1);
	r0 = pts->ts_runtime;
	s0 = pts->ts_slptime;
	pri0 = p->td.td_user_pri;
	CHECK(r0 > 0 && s0 > 0);
	c = sim_fork(s, p, 2, 8);
	cts = td_get_sched(&c->td);
	/* Child: the parent's whole history and priority (thr_new). */
	CHECK_EQ(cts->ts_runtime, r0);
	CHECK_EQ(cts->ts_slptime, s0);
	CHECK_EQ(c->td.td_user_pri, pri0);
	/* Same %CPU window and "almost used" slice. */
	CHECK_EQ(cts->ts_ticks, pts->ts_ticks);
	CHECK_EQ(cts->ts_ftick, pts->ts_ftick);
	CHECK_EQ(cts->ts_slice,
	    ule_tdq_slice(TDQ_CPU(0)) - TUN(ule_tun.slice_min));
	/* Parent: not charged for creating it, however many it creates
	 * (a thread-per-connection acceptor stays what it was). */
	for (int i = 0; i < 200; i++)
		(void)sim_fork(s, p, 2, 8);
	CHECK_EQ(pts->ts_runtime, r0);
	CHECK_EQ(pts->ts_slptime, s0);
	CHECK_EQ(p->td.td_user_pri, pri0);
	/* Exit charges the child's run time, not its sleep, to the parent. */
	cts->ts_runtime = K(700);
	cts->ts_slptime = K(5000);
	pts->ts_runtime = K(300);
	pts->ts_slptime = K(600);
	thread_lock(&p->td);
	s->sched->exit(&p->td, &c->td);
	thread_unlock(&p->td);
	CHECK_EQ(pts->ts_runtime, K(1000));
	CHECK_EQ(pts->ts_slptime, K(600));
	sim_destroy(s);
}
