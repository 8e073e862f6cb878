/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How ULE shares one CPU: the calendar serves every batch thread, nice
 * mixes of CPU hogs get the shares the reference model predicts, and a
 * thread that mostly sleeps is classified interactive and runs at once.
 */
#include <math.h>

#include "sched/sched_ule.h"
#include "nice_model.h"
#include "sim.h"
#include "test.h"

/*
 * Nice mixes of CPU hogs on one CPU.  The shares they should get come from
 * the independent model of docs/ULE.md section 10 (bench/nice_model.c,
 * written from the algorithm, not from the port), run for 120 s after a
 * 20 s warm-up; the port must agree within 3 percentage points.
 */
static const struct {
	int n;
	int nice[11];
} mixes[] = {
    {2, {0, 20}},
    {2, {0, -20}},
    {2, {0, 19}},
    {2, {0, 10}},
    {3, {0, 0, 20}},
    {4, {0, 0, 0, 20}},
    {4, {0, 0, 0, -20}},
    {4, {0, 0, 0, 10}},
    {4, {0, 0, 0, -10}},
    {11, {-20, -16, -12, -8, -4, 0, 4, 8, 12, 16, 20}},
};

void
test_nice_shares_model(void)
{
	for (unsigned m = 0; m < sizeof(mixes) / sizeof(mixes[0]); m++) {
		struct sim *s = sim_create(1, NULL);
		struct sim_thread *t[11];
		double model[11];

		model_run(mixes[m].nice, mixes[m].n, 120, 20, model);

		s->check_every = 997;
		for (int i = 0; i < mixes[m].n; i++)
			t[i] = sim_spawn(s, mixes[m].nice[i], -1, 0, -1);
		sim_run(s, 20000);
		sim_reset_stats(s);
		sim_run(s, 100000);
		for (int i = 0; i < mixes[m].n; i++) {
			double got = sim_share(s, t[i]);

			if (fabs(got - model[i]) > 3.0) {
				fprintf(stderr,
				    "mix %u thread %d (nice %d): "
				    "%.2f%%, model %.2f%%\n",
				    m, i, mixes[m].nice[i], got, model[i]);
				CHECK(0);
			}
		}
		CHECK(s->check_failed == NULL);
		sim_destroy(s);
	}
}

/*
 * Every batch thread is reached, however bad its priority: 11 hogs from
 * nice -20 to +20 on one CPU all run, and none waits longer than the
 * calendar allows (64 buckets, each drained in at most one slice of every
 * thread in it; far below one second here).
 */
void
test_calendar_no_starvation(void)
{
	struct sim *s = sim_create(1, NULL);
	struct sim_thread *t[11];

	s->check_every = 101;
	for (int i = 0; i < 11; i++)
		t[i] = sim_spawn(s, -20 + 4 * i, -1, 0, -1);
	sim_run(s, 5000);
	sim_reset_stats(s);
	for (int sec = 0; sec < 30; sec++) {
		int64_t before[11];

		for (int i = 0; i < 11; i++)
			before[i] = t[i]->cpu_ticks;
		sim_run(s, 1000);
		for (int i = 0; i < 11; i++)
			CHECK(t[i]->cpu_ticks > before[i]);
	}
	/* And nice still orders them. */
	CHECK(t[0]->cpu_ticks > t[5]->cpu_ticks);
	CHECK(t[5]->cpu_ticks > t[10]->cpu_ticks);
	CHECK(s->check_failed == NULL);
	sim_destroy(s);
}

/*
 * A thread that sleeps 10 ms and runs 1 ms among five hogs: its score
 * marks it interactive, it lands in the realtime queue, and it runs as
 * soon as the running hog's next scheduling point comes (at most one
 * stat tick here, since the wakeup is an AST).
 */
void
test_interactive_wins(void)
{
	struct sim *s = sim_create(1, NULL);
	struct sim_thread *ia;

	s->check_every = 53;
	for (int i = 0; i < 5; i++)
		sim_spawn(s, 0, -1, 0, -1);
	ia = sim_spawn(s, 0, 1, 10, -1);
	sim_run(s, 10000);
	sim_reset_stats(s);
	sim_run(s, 20000);
	CHECK(ule_interact_score(&ia->td) < TUN(ule_tun.interact));
	CHECK(ia->td.td_user_pri <= PRI_MAX_INTERACT);
	/* It completed (nearly) every period: 20 s / 11 ms. */
	CHECK(ia->bursts >= 20000 / 11 * 95 / 100);
	CHECK(ia->max_latency <= 1);
	/* And it got its demand, 1/11 of the CPU. */
	CHECK(sim_share(s, ia) > 8.0 && sim_share(s, ia) < 10.0);
	CHECK(s->check_failed == NULL);
	sim_destroy(s);
}
