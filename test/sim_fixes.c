/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult's opt-in departures from ULE (kern.sched.batch_guard, nice_weight,
 * balance_fair), each switched on alone and all together, under a mixed
 * workload with the policy's invariants checked at every tick.  What each
 * one buys is checked by the scenarios in sim/scenarios (starvation_guard,
 * nice_weight, nplus1_fair); here: that none breaks a queue invariant,
 * and that a batch hog starved by default runs with the guard.
 */
#include "sched/sched_ule.h"
#include "sim.h"
#include "test.h"

static const struct {
	atomic_int *var;
	int on;
} fixes[] = {
    {&ule_tun.batch_guard, 10},
    {&ule_tun.nice_weight, 1},
    {&ule_tun.balance_fair, 1},
};
#define NFIX (int)(sizeof(fixes) / sizeof(fixes[0]))

/* A child that runs 3 ms and exits. */
static int
child_woken(struct sim *s, struct sim_thread *t)
{
	(void)s;
	(void)t;
	return (3);
}

static int
child_end(struct sim *s, struct sim_thread *t, int *ms)
{
	(void)s;
	(void)t;
	(void)ms;
	return (SIM_ACT_EXIT);
}

static const struct sim_behaviour child = {child_end, child_woken, NULL};

/* Hogs at several nice values, sleepers that want 2.5 of the 4 CPUs (so
 * that the hogs run, and can fork), and short-lived children forked and
 * exiting. */
static void
mixed_run(void)
{
	struct sim *s = sim_create(4, NULL);
	struct sim_thread *p;
	int forked = 0, exited = 0;

	s->check_every = 1;
	for (int i = 0; i < 5; i++)
		(void)sim_spawn(s, -10 + 5 * i, -1, 0, -1);
	for (int i = 0; i < 10; i++)
		(void)sim_spawn(s, 0, 2, 6, -1);
	p = sim_spawn(s, 0, -1, 0, -1);
	sim_run(s, 500);
	/* sim_fork needs the parent on a CPU: step until it is. */
	for (int i = 0; i < 3000 && forked < 30; i++) {
		if (p->state == SIM_RUNNING) {
			(void)sim_fork_beh(s, p, &child, NULL);
			forked++;
			sim_run(s, 20);
		}
		sim_run(s, 1);
	}
	sim_run(s, 2000);
	if (s->check_failed != NULL)
		fprintf(stderr, "%s\n", s->check_failed);
	CHECK(s->check_failed == NULL);
	for (int i = 0; i < s->nthreads; i++)
		exited += s->threads[i]->state == SIM_DONE;
	CHECK(forked > 0);
	CHECK_EQ(exited, forked);
	sim_destroy(s);
}

void
test_fixes_invariants(void)
{
	for (int k = 0; k <= NFIX; k++) {
		/* Each fix alone, then (k == NFIX) all of them. */
		for (int i = 0; i < NFIX; i++)
			atomic_store(fixes[i].var,
			    i == k || k == NFIX ? fixes[i].on : 0);
		mixed_run();
	}
	for (int i = 0; i < NFIX; i++)
		atomic_store(fixes[i].var, 0);
}

/* Four sleepers that each want a quarter of the one CPU, and a hog: by
 * FreeBSD's rule the hog never runs; with batch_guard = 30 it does. */
static double
starved_share(int guard)
{
	struct sim *s = sim_create(1, NULL);
	struct sim_thread *h;
	double share;

	atomic_store(&ule_tun.batch_guard, guard);
	s->check_every = 1;
	for (int i = 0; i < 4; i++)
		(void)sim_spawn(s, 0, 2, 6, -1);
	h = sim_spawn(s, 0, -1, 0, -1);
	sim_run(s, 3000);
	sim_reset_stats(s);
	sim_run(s, 10000);
	share = sim_share(s, h);
	CHECK(s->check_failed == NULL);
	sim_destroy(s);
	atomic_store(&ule_tun.batch_guard, 0);
	return (share);
}

void
test_batch_guard_runs(void)
{
	double off = starved_share(0), on = starved_share(30);

	if (!(off < 1.0 && on > 2.0))
		fprintf(stderr, "hog: %.2f%% by default, %.2f%% guarded\n", off,
		    on);
	CHECK(off < 1.0);
	CHECK(on > 2.0);
}
