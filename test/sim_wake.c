/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult's wake cost model in ULE (kern.sched.wake_local): a thread woken by
 * a running thread that hands work over runs next on the waker's CPU
 * without preempting it, waits at most a stat tick there, and is taken by
 * an idle CPU once it has waited a poll interval; placement prefers a
 * spinning idle CPU to a parked one.  Each case also runs with the
 * tunable off, where FreeBSD's rule must hold instead.
 */
#include <string.h>

#include "sched/sched_ule.h"
#include "sim.h"
#include "test.h"

/* Two CPUs; a hog on CPU 0 (the waker) and a sleeper b that last ran on
 * CPU 0, both free to move; CPU 1 idle or, with busy1, running a bound
 * hog.  With b2 non-NULL, a second sleeper *b2 like b but bound to CPU 0. */
static struct sim *
two_cpus(struct sim_thread **a, struct sim_thread **b, struct sim_thread **b2,
    int busy1)
{
	struct sim *s = sim_create(2, NULL);

	s->check_every = 5;
	*b = sim_spawn(s, 0, 1, 100000, 0);
	if (b2 != NULL)
		*b2 = sim_spawn(s, 0, 1, 100000, 0);
	sim_run(s, 5);
	*a = sim_spawn(s, 0, -1, 0, 0);
	if (busy1)
		sim_spawn(s, 0, -1, 0, 1);
	sim_run(s, 20);
	sim_unbind(s, *a);
	sim_unbind(s, *b);
	CHECK((*b)->state == SIM_SLEEPING);
	if (b2 != NULL)
		CHECK((*b2)->state == SIM_SLEEPING);
	CHECK(s->cpu[0].cur == *a);
	return (s);
}

/* The end of a case: the simulator's own checks all held. */
static void
sim_end(struct sim *s)
{
	CHECK(s->check_failed == NULL);
	sim_destroy(s);
}

/* Run body with kern.sched.wake_local on (ult's rule), then off
 * (FreeBSD's), with rebalancing off; put both tunables back after. */
static void
wake_local_on_off(void (*body)(int on))
{
	ULT_ST(&ule_tun.rebalance, 0);
	for (int on = 1; on >= 0; on--) {
		ULT_ST(&ule_tun.wake_local, on);
		body(on);
	}
	ULT_ST(&ule_tun.wake_local, 1);
	ULT_ST(&ule_tun.rebalance, 1);
}

/* The longest b may wait behind its waker, in ticks: a stat tick (and
 * two of slack) under ult's rule, one under FreeBSD's AST. */
static int64_t
wait_bound(int on)
{
	return (on ? 1000 / ULT_STATHZ + 2 : 1);
}

static int
has_ast(struct sim_thread *t)
{
	return ((ULT_LD(&t->td.td_ast) & TDA_SCHED) != 0);
}

/*
 * The handoff rule: woken by CPU 0's thread, b is queued on CPU 0 with no
 * AST for its waker, although CPU 1 is idle; FreeBSD sends it to the idle
 * CPU.  Either way it runs within a few ticks (a parked CPU 1 is woken to
 * take it, at most once a tick).
 */
static void
wake_sync_local(int on)
{
	struct sim_thread *a, *b;
	struct sim *s = two_cpus(&a, &b, NULL, 0);

	sim_wake_sync(s, b, 0);
	if (on) {
		CHECK_EQ(sim_load(s, 0), 2);
		CHECK_EQ(sim_load(s, 1), 0);
		CHECK(!has_ast(a));
	} else {
		CHECK_EQ(sim_load(s, 0), 1);
		CHECK_EQ(sim_load(s, 1), 1);
	}
	sim_reset_stats(s);
	sim_run(s, 5);
	CHECK(b->cpu_ticks > 0);
	sim_end(s);
}

void
test_wake_sync_local(void)
{
	wake_local_on_off(wake_sync_local);
}

/*
 * With every CPU busy, a thread queued behind its waker without an AST
 * waits at most one stat tick (about 8 ms), not the rest of the waker's
 * slice (12 stat ticks); FreeBSD's AST runs it at once.
 */
static void
wake_sync_bounded(int on)
{
	struct sim_thread *a, *b;
	struct sim *s = two_cpus(&a, &b, NULL, 1);

	sim_wake_sync(s, b, 0);
	CHECK_EQ(sim_load(s, 0), 2);
	CHECK_EQ(has_ast(a), !on);
	sim_run(s, 30);
	CHECK(b->cpu_ticks > 0);
	CHECK(b->ran_on[0] > 0);
	CHECK(b->max_latency <= wait_bound(on));
	sim_end(s);
}

void
test_wake_sync_bounded(void)
{
	wake_local_on_off(wake_sync_bounded);
}

/*
 * The same with work already queued behind the waker: FreeBSD's placement
 * puts b (interactive) on the waker's CPU, and FreeBSD's AST would switch
 * the waker (a hog, batch) out for it at once; a producer then switched
 * once per item.  b waits without an AST; a waker that has not switched
 * for a tick gets the AST at its next such wakeup (b2's), and b runs
 * within a stat tick in any case.  b2 stays bound to CPU 0: b, queued
 * there, is as good as b2, and the placement would send b2 to CPU 1.
 */
static void
wake_sync_queued(int on)
{
	struct sim_thread *a, *b, *b2;
	struct sim *s = two_cpus(&a, &b, &b2, 1);

	sim_spawn(s, 0, -1, 0, 0);
	CHECK_EQ(sim_load(s, 0), 2);
	sim_wake_sync(s, b, 0);
	CHECK_EQ(sim_load(s, 0), 3);
	CHECK_EQ(has_ast(a), !on);
	/* A tick passes without a switch on CPU 0. */
	TDQ_CPU(0)->tdq_syncwait_tick--;
	sim_wake_sync(s, b2, 0);
	CHECK_EQ(sim_load(s, 0), 4);
	CHECK(has_ast(a));
	sim_run(s, 30);
	CHECK(b->cpu_ticks > 0 && b2->cpu_ticks > 0);
	CHECK(b->max_latency <= wait_bound(on));
	sim_end(s);
}

void
test_wake_sync_queued(void)
{
	wake_local_on_off(wake_sync_queued);
}

/*
 * Issue 29's interactive wakeup: an interactive sleeper woken by the
 * clock or the poller (no SRQ_SYNC) while batch hogs hold every CPU
 * preempts one at once, as FreeBSD's AST at the interrupt's return to
 * user mode does: locally an AST on the hog (the runtime delivers it by
 * the preemption signal when the waker is not that worker), remotely
 * ULE's interactive-over-batch IPI.  The handoff rules above never apply
 * to it, whether it is woken as the clock for its CPU or for none.
 */
void
test_wake_interactive_preempts(void)
{
	ULT_ST(&ule_tun.rebalance, 0);
	for (int from = 0; from >= -1; from--) {
		struct sim_thread *a, *b;
		struct sim *s;

		s = two_cpus(&a, &b, NULL, 1);
		CHECK(a->td.td_user_pri > PRI_MAX_INTERACT);
		/* One run and sleep first: its sleep earns it an interactive
		 * priority, which it then sleeps with (below the static
		 * boost, which a batch sleeper gets instead). */
		sim_wake(s, b, 0);
		sim_run(s, 10);
		CHECK(b->state == SIM_SLEEPING);
		CHECK(b->td.td_priority <= PRI_MAX_INTERACT);
		sim_reset_stats(s);
		b->max_latency = 0;
		sim_wake(s, b, from);
		CHECK(has_ast(s->cpu[0].cur) || has_ast(s->cpu[1].cur) ||
		    ULT_LD(&TDQ_CPU(0)->tdq_owepreempt) ||
		    ULT_LD(&TDQ_CPU(1)->tdq_owepreempt));
		sim_run(s, 5);
		CHECK(b->cpu_ticks > 0);
		CHECK(b->max_latency <= 1);
		sim_end(s);
	}
	ULT_ST(&ule_tun.rebalance, 1);
}

/* Priorities say otherwise: a realtime thread woken by a timeshare one
 * would preempt it, so it takes FreeBSD's path to the idle CPU. */
void
test_wake_sync_priority(void)
{
	struct sim_thread *a, *b;
	struct sim *s;

	ULT_ST(&ule_tun.rebalance, 0);
	s = two_cpus(&a, &b, NULL, 0);
	thread_lock(&b->td);
	s->sched->set_class(&b->td, PRI_FIFO);
	b->td.td_base_user_pri = PRI_MIN_REALTIME + 4;
	td_set_user_pri(&b->td, PRI_MIN_REALTIME + 4);
	s->sched->prio(&b->td, PRI_MIN_REALTIME + 4);
	thread_unlock(&b->td);
	sim_wake_sync(s, b, 0);
	CHECK_EQ(sim_load(s, 0), 1);
	CHECK_EQ(sim_load(s, 1), 1);
	sim_end(s);
	ULT_ST(&ule_tun.rebalance, 1);
}

/*
 * An idle CPU that polls while it spins takes a thread another CPU has
 * left queued across two of its polls, and leaves it alone when that CPU's
 * load fell to one in between (its waker blocked and it ran, or may have).
 * A switch that leaves the load at two (the waker yields) is no reason
 * to leave it: the two threads then share one CPU while another idles.
 */
void
test_wake_take_stale(void)
{
	for (int sw = 0; sw < 3; sw++) {
		struct sim_thread *a, *b;
		struct sched_idle *st;
		struct sim *s;
		struct tdq *t0;

		ULT_ST(&ule_tun.rebalance, 0);
		s = two_cpus(&a, &b, NULL, 0);
		st = &s->cpu[1].ist;
		t0 = TDQ_CPU(0);
		/* CPU 1 has looked since its last switch: polls now go to
		 * the stale test, not FreeBSD's steal. */
		st->oldswitchcnt = TDQ_SWITCHCNT(TDQ_CPU(1));
		sim_wake_sync(s, b, 0);
		s->curcpu = 1;
		CHECK_EQ(s->sched->idle_poll(1, st), SCHED_IDLE_SLEEP);
		CHECK_EQ(st->victim, 0);
		if (sw == 1)
			ULT_ST(&t0->tdq_nlow, ULT_LD(&t0->tdq_nlow) + 1);
		if (sw == 2) {
			sim_yield(s, 0);
			s->curcpu = 1;
			CHECK_EQ(sim_load(s, 0), 2);
		}
		if (sw == 1) {
			CHECK_EQ(s->sched->idle_poll(1, st), SCHED_IDLE_SLEEP);
			CHECK_EQ(sim_load(s, 0), 2);
		} else {
			CHECK_EQ(s->sched->idle_poll(1, st), SCHED_IDLE_RUN);
			CHECK_EQ(sim_load(s, 0), 1);
			CHECK_EQ(sim_load(s, 1), 1);
		}
		s->curcpu = -1;
		sim_run(s, 3);
		sim_end(s);
		ULT_ST(&ule_tun.rebalance, 1);
	}
}

/*
 * Placement weighs what a wakeup costs: a thread whose last CPU is idle
 * but parked goes to a CPU that spins instead, and stays there; FreeBSD
 * keeps it on its cache-warm last CPU.
 */
static void
wake_prefers_spinning(int on)
{
	struct sim *s = sim_create(4, NULL);
	struct sim_thread *t;

	s->check_every = 7;
	s->cpu[3].spin = 1;
	sim_spawn(s, 0, -1, 0, 0);
	t = sim_spawn(s, 0, 1, 2, 1);
	sim_run(s, 20);
	sim_unbind(s, t);
	sim_reset_stats(s);
	sim_run(s, 3000);
	CHECK(t->bursts > 500);
	if (on)
		CHECK(t->ran_on[3] >= t->cpu_ticks - 2);
	else
		CHECK_EQ(t->ran_on[1], t->cpu_ticks);
	sim_end(s);
}

void
test_wake_prefers_spinning(void)
{
	wake_local_on_off(wake_prefers_spinning);
}

/* 4BSD's kern.sched.wake_local, through its tunable table (its header
 * and ULE's cannot meet in one file). */
static void
bsd_wake_local(int v)
{
	const struct sched_tunable *t = ult__sched_4bsd.tunables;

	while (t->name != NULL && strcmp(t->name, "kern.sched.wake_local") != 0)
		t++;
	CHECK(t->name != NULL && t->var != NULL);
	ULT_ST(t->var, v);
}

/* 4BSD's one queue needs no placement, but which idle CPU it wakes for a
 * new thread weighs the cost: one that spins sees it without a wakeup;
 * FreeBSD wakes the first idle CPU it finds. */
void
test_bsd_wake_spinning(void)
{
	for (int on = 1; on >= 0; on--) {
		struct sim_thread *t;
		struct sim *s;

		bsd_wake_local(on);
		s = sim_create_policy(4, NULL, &ult__sched_4bsd);
		s->check_every = 7;
		s->cpu[3].spin = 1;
		sim_spawn(s, 0, -1, 0, 0);
		t = sim_spawn(s, 0, 1, 2, -1);
		sim_run(s, 50);
		sim_reset_stats(s);
		sim_run(s, 3000);
		CHECK(t->bursts > 500);
		if (on)
			CHECK_EQ(t->ran_on[3], t->cpu_ticks);
		else
			CHECK(t->ran_on[1] + t->ran_on[2] > t->cpu_ticks / 2);
		sim_end(s);
	}
	bsd_wake_local(1);
}
