/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ULE's multiprocessor decisions on 4 and 8 virtual CPUs: placement with
 * cache affinity (ule_pickcpu), idle stealing, the periodic balancer,
 * and the topology tree they search.
 */
#include <string.h>

#include "sched/sched_ule.h"
#include "sim.h"
#include "test.h"

/* n hogs queued on cpu, free to move afterwards (bound, then unbound). */
static void
hogs_on(struct sim *s, struct sim_thread **h, int n, int cpu)
{
	for (int i = 0; i < n; i++)
		h[i] = sim_spawn(s, 0, -1, 0, cpu);
	sim_run(s, 10);
	CHECK(sim_load(s, cpu) >= n);
	for (int i = 0; i < n; i++)
		sim_unbind(s, h[i]);
}

/*
 * A thread that sleeps briefly comes back to its last CPU while that CPU
 * is idle and the L2 affinity window (2 ticks) has not expired, even with
 * other CPUs idle too.
 */
void
test_pickcpu_affinity(void)
{
	struct topo_cpu desc[4];
	struct sim *s;
	struct sim_thread *t;

	sim_topo_desc(desc, 4, 4, 2, 0);
	s = sim_create(4, desc);
	s->check_every = 7;
	t = sim_spawn(s, 0, 1, 1, 2);
	sim_run(s, 100);
	sim_unbind(s, t);
	sim_reset_stats(s);
	sim_run(s, 5000);
	CHECK(t->bursts > 1000);
	CHECK_EQ(t->migrations, 0);
	CHECK_EQ(t->ran_on[2], t->cpu_ticks);
	CHECK(s->check_failed == NULL);
	sim_destroy(s);
}

/*
 * When its last CPU is busy, a waking thread goes to an idle CPU in the
 * same last-level cache while the L3 affinity lasts: with two L3 groups
 * of four, a thread from CPU 1 lands on 0-3, never on 4-7.
 */
void
test_pickcpu_idle_llc(void)
{
	struct topo_cpu desc[8];
	struct sim *s;
	struct sim_thread *t;

	/* The balancer would also move it (TDF_PICKCPU); keep it out. */
	ULT_ST(&ule_tun.rebalance, 0);
	sim_topo_desc(desc, 8, 4, 0, 0);
	s = sim_create(8, desc);
	s->check_every = 11;
	sim_spawn(s, 0, -1, 0, 1); /* a hog that keeps CPU 1 busy */
	t = sim_spawn(s, -20, 2, 1, 1);
	sim_run(s, 50);
	sim_unbind(s, t);
	sim_reset_stats(s);
	sim_run(s, 5000);
	CHECK(t->bursts > 1000);
	for (int c = 4; c < 8; c++)
		CHECK_EQ(t->ran_on[c], 0);
	CHECK(t->ran_on[0] + t->ran_on[2] + t->ran_on[3] > 0);
	CHECK(s->check_failed == NULL);
	sim_destroy(s);
	ULT_ST(&ule_tun.rebalance, 1);

	/* Same thread, flat topology: any idle CPU will do. */
	s = sim_create(8, NULL);
	sim_spawn(s, 0, -1, 0, 1);
	t = sim_spawn(s, 0, 2, 5, 1);
	sim_run(s, 50);
	sim_unbind(s, t);
	sim_run(s, 5000);
	CHECK(t->migrations > 0);
	sim_destroy(s);
}

/*
 * A CPU whose thread goes to sleep steals from a CPU with at least
 * steal_thresh (2) threads.  With the balancer off, only stealing can
 * spread hogs that were all created on CPU 0.
 */
void
test_idle_steal(void)
{
	struct sim_thread *h[6];
	struct sim *s = sim_create(4, NULL);
	uint64_t steals = 0;

	ULT_ST(&ule_tun.rebalance, 0);
	s->check_every = 13;
	/* Sleepy threads on CPUs 1-3 make those CPUs go idle again and
	 * again; each time they look for work to steal. */
	for (int c = 1; c < 4; c++)
		sim_spawn(s, 0, 1, 3, c);
	hogs_on(s, h, 6, 0);
	sim_run(s, 3000);
	for (int c = 0; c < 4; c++) {
		struct sched_cpu_stats st;

		s->sched->cpu_stats(c, &st);
		steals += st.steals;
		CHECK(sim_load(s, c) >= 1);
	}
	CHECK(steals >= 3);
	CHECK(sim_load(s, 0) <= 3);
	CHECK(s->check_failed == NULL);
	ULT_ST(&ule_tun.rebalance, 1);
	sim_destroy(s);

	/* steal_thresh is honoured: a victim with a single waiting thread
	 * (load 2) is not robbed when the threshold is 3. */
	ULT_ST(&ule_tun.steal_thresh, 3);
	ULT_ST(&ule_tun.rebalance, 0);
	s = sim_create(2, NULL);
	sim_spawn(s, 0, 1, 3, 1);
	hogs_on(s, h, 2, 0);
	sim_run(s, 2000);
	CHECK_EQ(h[0]->ran_on[1] + h[1]->ran_on[1], 0);
	ULT_ST(&ule_tun.steal_thresh, 2);
	ULT_ST(&ule_tun.rebalance, 1);
	sim_destroy(s);
}

/*
 * A thread queued on an idle CPU whose worker the host does not run (the
 * simulator's `stalled') is taken by an idle CPU that runs: ult's
 * kern.sched.steal_stranded.  With it off, FreeBSD's steal_thresh leaves
 * the thread there for good.
 */
void
test_steal_stranded(void)
{
	for (int on = 1; on >= 0; on--) {
		struct sim *s = sim_create(2, NULL);
		struct sim_thread *t;
		int guard = 0;

		ULT_ST(&ule_tun.rebalance, 0);
		ULT_ST(&ule_tun.steal_stranded, on);
		s->check_every = 7;
		sim_spawn(s, 0, 1, 2, 0); /* keeps CPU 0 going idle */
		t = sim_spawn(s, 0, 2, 5, 1);
		sim_run(s, 20);
		sim_unbind(s, t);
		/* Stall CPU 1 while t sleeps there: it wakes to CPU 1's queue
		 * (its last CPU, idle, cache warm) and nobody runs CPU 1. */
		while ((t->state != SIM_SLEEPING ||
			   s->cpu[1].cur != &s->cpu[1].idle) &&
		    guard++ < 1000)
			sim_run(s, 1);
		CHECK(guard < 1000);
		s->cpu[1].stalled = 1;
		sim_reset_stats(s);
		sim_run(s, 300);
		if (on)
			CHECK(t->ran_on[0] > 0);
		else
			CHECK_EQ(t->ran_on[0] + t->ran_on[1], 0);
		CHECK(s->check_failed == NULL);
		sim_destroy(s);
	}
	ULT_ST(&ule_tun.steal_stranded, 1);
	ULT_ST(&ule_tun.rebalance, 1);
}

/*
 * The balancer alone (stealing off) moves one thread per CPU pair per
 * pass, every 0.5-1.5 s, from the most to the least loaded CPUs: 16 hogs
 * that start on CPU 0 of 8 end up two per CPU.
 */
void
test_balancer_spreads(void)
{
	struct topo_cpu desc[8];
	struct sim_thread *h[16];
	struct sim *s;
	int lo = 100, hi = 0;

	ULT_ST(&ule_tun.steal_idle, 0);
	sim_topo_desc(desc, 8, 8, 2, 0);
	s = sim_create(8, desc);
	s->check_every = 17;
	hogs_on(s, h, 16, 0);
	sim_run(s, 1000);
	/* One pass cannot do it all: the balancer is gradual. */
	CHECK(sim_load(s, 0) > 2);
	sim_run(s, 30000);
	for (int c = 0; c < 8; c++) {
		int l = sim_load(s, c);

		lo = l < lo ? l : lo;
		hi = l > hi ? l : hi;
	}
	CHECK(hi - lo <= 1);
	CHECK(s->check_failed == NULL);
	ULT_ST(&ule_tun.steal_idle, 1);
	sim_destroy(s);
}

/*
 * n+1 hogs on n CPUs: a CPU with one running thread asks it to re-pick
 * its CPU with expired affinity (TDF_PICKCPU), so which CPU is doubled up
 * keeps rotating and over time the hogs get similar shares.
 */
void
test_balancer_rotates(void)
{
	struct sim_thread *h[5];
	struct sim *s = sim_create(4, NULL);
	int moved = 0;

	s->check_every = 19;
	for (int i = 0; i < 5; i++)
		h[i] = sim_spawn(s, 0, -1, 0, -1);
	sim_run(s, 5000);
	sim_reset_stats(s);
	sim_run(s, 120000);
	for (int i = 0; i < 5; i++) {
		double share = sim_share(s, h[i]);

		moved += h[i]->migrations > 0;
		CHECK(share > 20.0 * 0.8 && share < 20.0 * 1.2);
	}
	CHECK(moved >= 3);
	CHECK(s->check_failed == NULL);
	sim_destroy(s);
}

static void
topo_expect(int ncpu, int l3, int l2, int smt, const char *want)
{
	struct topo_cpu desc[16];
	struct cpu_group *root;
	char buf[256];

	sim_topo_desc(desc, ncpu, l3, l2, smt);
	root = ult__topo_build(ncpu, l3 || l2 || smt ? desc : NULL);
	CHECK(root != NULL);
	ult__topo_format(root, buf, sizeof(buf));
	if (strcmp(buf, want) != 0) {
		fprintf(stderr, "topology %d/%d/%d/%d: %s\nexpected: %s\n",
		    ncpu, l3, l2, smt, buf, want);
		CHECK(0);
	}
	for (int c = 0; c < ncpu; c++) {
		const struct cpu_group *g = ult__topo_find(root, c);

		CHECK(g->cg_children == 0 && CS_ISSET(c, &g->cg_mask));
	}
	ult__topo_free(root);
}

void
test_topology_tree(void)
{
	topo_expect(4, 0, 0, 0, "0-3 none {}");
	topo_expect(2, 2, 0, 0, "0-1 L3 {}");
	topo_expect(8, 4, 0, 0, "0-7 none { 0-3 L3 {} 4-7 L3 {} }");
	topo_expect(8, 8, 2, 2,
	    "0-7 L3 { 0-1 L2 SMT {} 2-3 L2 SMT {} 4-5 L2 SMT {} "
	    "6-7 L2 SMT {} }");
	topo_expect(8, 8, 4, 0, "0-7 L3 { 0-3 L2 {} 4-7 L2 {} }");
	topo_expect(16, 8, 4, 2,
	    "0-15 none { 0-7 L3 { 0-3 L2 { 0-1 L1 SMT {} 2-3 L1 SMT {} } "
	    "4-7 L2 { 4-5 L1 SMT {} 6-7 L1 SMT {} } } 8-15 L3 { 8-11 L2 { "
	    "8-9 L1 SMT {} 10-11 L1 SMT {} } 12-15 L2 { 12-13 L1 SMT {} "
	    "14-15 L1 SMT {} } } }");
}
