/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The simulator's event loop: threads, switching, the tick.  machine.h
 * for its virtual CPUs is sim_mach.c; the sub-tick engine, sim_fine.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

struct sim *ult__sim;

/* Where sleeping threads keep their thread lock (a sleep-queue chain). */
struct mtx ult__sim_sleep_lock = MTX_INITIALIZER("sim sleep");
struct mtx blocked_lock = MTX_INITIALIZER("blocked");

/* ---- threads ---- */

int64_t
sim_now_ns(const struct sim *s)
{
	return (s->now * SIM_TICK_NS);
}

/* Virtual time on cpu now, or at the clock. */
static int64_t
cpu_now(struct sim *s, int cpu)
{
	return (cpu >= 0 ? s->cpu[cpu].clock : sim_now_ns(s));
}

static struct sim_thread *
thread_new(struct sim *s, int run_ms, int sleep_ms)
{
	struct sim_thread *t = calloc(1, sizeof(*t));

	if (t == NULL)
		abort();
	if (s->nthreads == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->threads =
		    realloc(s->threads, sizeof(*s->threads) * (size_t)s->cap);
		if (s->threads == NULL)
			abort();
	}
	if (!s->no_ran_on &&
	    (t->ran_on = calloc((size_t)s->ncpu, sizeof(*t->ran_on))) == NULL)
		abort();
	ult__list_init(&t->td.td_runq);
	atomic_init(&t->td.td_lock, &ult__sim_sleep_lock);
	s->sched->thread_init(&t->td);
	t->id = s->nthreads;
	t->run_ms = run_ms;
	t->sleep_ms = sleep_ms;
	t->left = run_ms;
	t->last_cpu = -1;
	t->ready_at = s->now;
	t->ready_ns = cpu_now(s, s->curcpu);
	t->woke = 1; /* its first run counts as a wakeup's */
	t->queued_ns = t->ready_ns;
	s->threads[s->nthreads++] = t;
	return (t);
}

/* The first burst of a thread with a behaviour. */
static void
set_behaviour(struct sim *s, struct sim_thread *t,
    const struct sim_behaviour *beh, void *arg)
{
	t->beh = beh;
	t->arg = arg;
	t->run_ms = 1;
	t->left = beh->woken(s, t);
}

static void
add_new(struct sim *s, struct sim_thread *t, int nice, int cpu)
{
	thread_lock(&t->td);
	if (nice != 0)
		s->sched->nice(&t->td, nice);
	if (cpu >= 0)
		s->sched->bind(&t->td, cpu);
	t->state = SIM_RUNNABLE;
	s->sched->add(&t->td, SRQ_BORING);
}

struct sim_thread *
sim_spawn(struct sim *s, int nice, int run_ms, int sleep_ms, int cpu)
{
	struct sim_thread *t;

	s->curcpu = -1;
	t = thread_new(s, run_ms, sleep_ms);
	s->sched->fork(NULL, &t->td);
	add_new(s, t, nice, cpu);
	return (t);
}

struct sim_thread *
sim_spawn_beh(struct sim *s, int nice, int cpu, const struct sim_behaviour *beh,
    void *arg)
{
	struct sim_thread *t;

	s->curcpu = -1;
	t = thread_new(s, 1, 0);
	set_behaviour(s, t, beh, arg);
	s->sched->fork(NULL, &t->td);
	add_new(s, t, nice, cpu);
	return (t);
}

static struct sim_thread *
fork_from(struct sim *s, struct sim_thread *parent, struct sim_thread *t)
{
	int cpu = parent->td.td_oncpu, saved = s->curcpu;

	s->curcpu = cpu;
	t->parent = parent;
	thread_lock(&parent->td);
	s->sched->fork(&parent->td, &t->td);
	thread_unlock(&parent->td);
	thread_lock(&t->td);
	t->state = SIM_RUNNABLE;
	s->sched->add(&t->td, SRQ_BORING);
	s->curcpu = saved;
	return (t);
}

struct sim_thread *
sim_fork(struct sim *s, struct sim_thread *parent, int run_ms, int sleep_ms)
{
	return (fork_from(s, parent, thread_new(s, run_ms, sleep_ms)));
}

struct sim_thread *
sim_fork_beh(struct sim *s, struct sim_thread *parent,
    const struct sim_behaviour *beh, void *arg)
{
	struct sim_thread *t = thread_new(s, 1, 0);

	set_behaviour(s, t, beh, arg);
	return (fork_from(s, parent, t));
}

void
sim_unbind(struct sim *s, struct sim_thread *t)
{
	thread_lock(&t->td);
	s->sched->unbind(&t->td);
	thread_unlock(&t->td);
}

void
sim_set_class(struct sim *s, struct sim_thread *t, int pc, int pri)
{
	thread_lock(&t->td);
	sched_class_apply(s->sched, &t->td, pc, pri);
	thread_unlock(&t->td);
}

/* ---- switching ---- */

static struct sim_thread *
sim_of(struct thread *td)
{
	return ((struct sim_thread *)(void *)td);
}

/* cpu's current thread changes to `to' at the CPU's clock. */
static void
account(struct sim *s, int cpu, struct sim_thread *to)
{
	struct sim_cpu *c = &s->cpu[cpu];
	struct sim_thread *from = c->cur;
	int64_t lat;

	from->cpu_ns += c->clock - c->seg_start;
	if (s->hooks.segment != NULL && c->clock > c->seg_start)
		s->hooks.segment(s->hooks.arg, cpu, from, c->seg_start,
		    c->clock);
	c->seg_start = c->clock;
	if (to == from)
		return;
	c->switches++;
	c->clock += s->cost.switch_ns;
	if (to == &c->idle || to->state != SIM_RUNNABLE)
		return;
	if (c->clock - to->queued_ns > to->max_wait_ns)
		to->max_wait_ns = c->clock - to->queued_ns;
	if (s->now - to->ready_at > to->max_latency)
		to->max_latency = s->now - to->ready_at;
	if (!to->woke)
		return;
	to->woke = 0;
	lat = c->clock - to->ready_ns;
	if (s->hooks.run != NULL)
		s->hooks.run(s->hooks.arg, cpu, to, lat < 0 ? 0 : lat);
}

/* `to' (from the policy's switch or throw) runs on cpu now. */
static void
run_next(struct sim *s, int cpu, struct sim_thread *to)
{
	struct sim_cpu *c = &s->cpu[cpu];

	account(s, cpu, to);
	c->cur = to;
	if (to == &c->idle)
		return;
	if (s->hooks.place != NULL && to->state != SIM_RUNNING)
		s->hooks.place(s->hooks.arg, cpu, to, to->last_cpu);
	to->state = SIM_RUNNING;
	if (to->last_cpu >= 0 && to->last_cpu != cpu)
		to->migrations++;
	to->last_cpu = cpu;
}

void
ult__sim_switch(struct sim *s, int cpu, int flags)
{
	struct sim_cpu *c = &s->cpu[cpu];
	struct sim_thread *from = c->cur, *to;
	struct mtx *mtx;

	s->curcpu = cpu;
	to = sim_of(s->sched->switch_(&from->td, NULL, flags, &mtx));
	thread_lock_unblock(&from->td, mtx);
	/* A run of under a microsecond (switched in and preempted at the
	 * same tick) does not end the thread's wait. */
	if (from->state == SIM_RUNNING) {
		from->state = SIM_RUNNABLE;
		if (c->clock - c->seg_start >= 1000)
			from->queued_ns = c->clock;
	}
	run_next(s, cpu, to);
}

void
sim_yield(struct sim *s, int cpu)
{
	struct sim_thread *t = s->cpu[cpu].cur;

	if (t == &s->cpu[cpu].idle) {
		fprintf(stderr, "sim: yield needs a running thread\n");
		abort();
	}
	thread_lock(&t->td);
	ult__sim_switch(s, cpu, SW_VOL | SWT_RELINQUISH);
	s->curcpu = -1;
}

/* The runtime's "return to user mode" checks, for cpu's thread. */
void
ult__sim_userret(struct sim *s, int cpu)
{
	struct sim_cpu *c = &s->cpu[cpu];

	for (int guard = 0; guard < 8; guard++) {
		struct thread *td = &c->cur->td;

		s->curcpu = cpu;
		if (c->cur == &c->idle || c->stalled)
			return;
		if (c->ipi) {
			c->ipi = 0;
			thread_lock(td);
			s->sched->preempt(td);
			thread_unlock(td);
		}
		if (atomic_load(&td->td_owepreempt)) {
			thread_lock(td);
			ult__sim_switch(s, cpu,
			    SW_INVOL | SW_PREEMPT | SWT_OWEPREEMPT);
			continue;
		}
		if (atomic_load(&td->td_ast) & TDA_SCHED) {
			thread_lock(td);
			s->sched->prio(td, td->td_user_pri);
			ult__sim_switch(s, cpu, SW_INVOL | SWT_NEEDRESCHED);
			continue;
		}
		if (td_userret_pending(td)) {
			thread_lock(td);
			s->sched->userret(td);
			thread_unlock(td);
		}
		return;
	}
}

/* ---- timed sleepers: a binary heap by (wake_at, id) ---- */

static int
wakes_first(const struct sim_thread *a, const struct sim_thread *b)
{
	return (a->wake_at < b->wake_at ||
	    (a->wake_at == b->wake_at && a->id < b->id));
}

static void
sleeper_push(struct sim *s, struct sim_thread *t)
{
	int i;

	if (s->nsleepers == s->sleepcap) {
		s->sleepcap = s->sleepcap ? 2 * s->sleepcap : 64;
		s->sleepers = realloc(s->sleepers,
		    sizeof(*s->sleepers) * (size_t)s->sleepcap);
		if (s->sleepers == NULL)
			abort();
	}
	for (i = s->nsleepers++;
	     i > 0 && wakes_first(t, s->sleepers[(i - 1) / 2]); i = (i - 1) / 2)
		s->sleepers[i] = s->sleepers[(i - 1) / 2];
	s->sleepers[i] = t;
}

static struct sim_thread *
sleeper_pop(struct sim *s)
{
	struct sim_thread *top = s->sleepers[0], *last;
	int i = 0;

	last = s->sleepers[--s->nsleepers];
	for (;;) {
		int k = 2 * i + 1;

		if (k >= s->nsleepers)
			break;
		if (k + 1 < s->nsleepers &&
		    wakes_first(s->sleepers[k + 1], s->sleepers[k]))
			k++;
		if (!wakes_first(s->sleepers[k], last))
			break;
		s->sleepers[i] = s->sleepers[k];
		i = k;
	}
	if (s->nsleepers > 0)
		s->sleepers[i] = last;
	return (top);
}

/* The thread on cpu sleeps, for `ms' ticks or (ms < 0) until woken. */
static void
sleep_for(struct sim *s, int cpu, int ms)
{
	struct sim_thread *t = s->cpu[cpu].cur;
	struct thread *td = &t->td;

	s->curcpu = cpu;
	t->bursts++;
	mtx_lock_spin(&ult__sim_sleep_lock);
	thread_lock(td);
	s->sched->sleep(td, 0);
	thread_lock_set(td, &ult__sim_sleep_lock);
	TD_SET_SLEEPING(td);
	t->state = SIM_SLEEPING;
	t->wake_at = ms < 0 ? INT64_MAX : s->now + ms;
	t->sleep_cpu = cpu;
	if (ms >= 0)
		sleeper_push(s, t);
	ult__sim_switch(s, cpu, SW_VOL | SWT_SLEEPQ);
}

void
ult__sim_block(struct sim *s, int cpu)
{
	sleep_for(s, cpu, -1);
}

/* The thread on cpu exits: its parent, if alive, is charged its time. */
static void
do_exit(struct sim *s, int cpu)
{
	struct sim_cpu *c = &s->cpu[cpu];
	struct sim_thread *t = c->cur, *to, *p = t->parent;

	s->curcpu = cpu;
	t->bursts++;
	if (p != NULL && p->state != SIM_DONE) {
		thread_lock(&p->td);
		s->sched->exit(&p->td, &t->td);
		thread_unlock(&p->td);
	}
	thread_lock(&t->td);
	to = sim_of(s->sched->throw_(&t->td));
	t->state = SIM_DONE;
	run_next(s, cpu, to);
	if (t->beh != NULL && t->beh->exited != NULL)
		t->beh->exited(s, t);
}

/* A burst of cpu's thread ended. */
static void
burst_end(struct sim *s, int cpu)
{
	struct sim_thread *t = s->cpu[cpu].cur;
	int ms = t->sleep_ms;

	s->curcpu = cpu;
	if (t->beh == NULL) {
		sleep_for(s, cpu, ms);
		return;
	}
	switch (t->beh->burst_end(s, t, &ms)) {
	case SIM_ACT_SLEEP:
		sleep_for(s, cpu, ms < 1 ? 1 : ms);
		break;
	case SIM_ACT_WAIT:
		sleep_for(s, cpu, -1);
		break;
	case SIM_ACT_RUN:
		t->left = ms < 1 ? 1 : ms;
		break;
	default:
		do_exit(s, cpu);
		break;
	}
}

/* Wake t with srqflags, from the CPU running `cpu' (-1: the clock). */
static void
wake_from(struct sim *s, struct sim_thread *t, int cpu, int srqflags)
{
	struct thread *td = &t->td;

	s->curcpu = cpu;
	thread_lock(td);
	TD_CLR_SLEEPING(td);
	t->state = SIM_RUNNABLE;
	t->left = t->beh != NULL ? t->beh->woken(s, t) : t->run_ms;
	t->ready_at = s->now;
	t->ready_ns = cpu_now(s, cpu);
	t->woke = 1;
	t->queued_ns = t->ready_ns;
	s->sched->wakeup(td, srqflags);
}

/* The timeout fires on the CPU the thread slept on, as FreeBSD's sleepq
 * callouts do. */
static void
wake(struct sim *s, struct sim_thread *t)
{
	wake_from(s, t, t->sleep_cpu, 0);
}

void
sim_wake(struct sim *s, struct sim_thread *t, int cpu)
{
	int saved = s->curcpu;

	if (t->state != SIM_SLEEPING) {
		fprintf(stderr, "sim: wakeup of a thread that is not asleep\n");
		abort();
	}
	wake_from(s, t, cpu, 0);
	s->curcpu = saved;
}

void
sim_wake_sync(struct sim *s, struct sim_thread *t, int cpu)
{
	if (t->state != SIM_SLEEPING || s->cpu[cpu].cur == &s->cpu[cpu].idle) {
		fprintf(stderr,
		    "sim: sync wakeup needs a sleeper and a waker\n");
		abort();
	}
	wake_from(s, t, cpu, SRQ_SYNC);
	s->curcpu = -1;
}

void
ult__sim_idle(struct sim *s, int cpu)
{
	struct sim_cpu *c = &s->cpu[cpu];
	int r;

	if (c->cur != &c->idle || c->stalled)
		return;
	s->curcpu = cpu;
	if (c->sleeping) {
		if (!c->awake)
			return;
		c->sleeping = 0;
		s->sched->idle_exit(cpu, &c->ist);
	}
	/* The host polls again a spin interval later, within the tick. */
	r = s->sched->idle_poll(cpu, &c->ist);
	if (r != SCHED_IDLE_RUN)
		r = s->sched->idle_poll(cpu, &c->ist);
	if (r == SCHED_IDLE_RUN) {
		thread_lock(&c->idle.td);
		ult__sim_switch(s, cpu, SW_VOL | SWT_IDLE);
		return;
	}
	/* Spinning lasts well under a tick: then sleep. */
	if (c->spin || s->sched->idle_enter(cpu, &c->ist))
		return;
	c->sleeping = 1;
	c->awake = 0;
}

static void
tick(struct sim *s)
{
	int64_t now_ns;

	if (s->nyielders > 0)
		ult__sim_fine_run(s, (s->now + 1) * SIM_TICK_NS);
	s->now++;
	now_ns = sim_now_ns(s);
	/* Threads consume the tick that just passed. */
	for (int cpu = 0; cpu < s->ncpu; cpu++) {
		struct sim_cpu *c = &s->cpu[cpu];
		struct sim_thread *t = c->cur;

		if (c->clock < now_ns)
			c->clock = now_ns;
		if (t == &c->idle)
			continue;
		t->cpu_ticks++;
		if (t->ran_on != NULL)
			t->ran_on[cpu]++;
	}
	/* The stat clock, at stathz, samples whoever ran that tick, on busy
	 * CPUs and on CPU 0 (which drives the balancer). */
	s->statacc += ULT_STATHZ;
	if (s->statacc >= ULT_HZ) {
		s->statacc -= ULT_HZ;
		for (int cpu = 0; cpu < s->ncpu; cpu++) {
			s->curcpu = cpu;
			if (cpu == 0 || s->cpu[cpu].cur != &s->cpu[cpu].idle)
				s->sched->clock(cpu, 1);
		}
	}
	/* Bursts that ended go to sleep; sleeps that ended wake. */
	for (int cpu = 0; cpu < s->ncpu; cpu++) {
		struct sim_thread *t = s->cpu[cpu].cur;

		if (t != &s->cpu[cpu].idle && t->run_ms > 0 && --t->left <= 0)
			burst_end(s, cpu);
	}
	/* In (wake_at, id) order, as a scan of the threads by id would: a
	 * thread woken early (sim_wake) is skipped when its entry comes. */
	while (s->nsleepers > 0 && s->sleepers[0]->wake_at <= s->now) {
		struct sim_thread *t = sleeper_pop(s);

		if (t->state == SIM_SLEEPING && t->wake_at <= s->now)
			wake(s, t);
	}
	for (int cpu = 0; cpu < s->ncpu; cpu++) {
		ult__sim_idle(s, cpu);
		ult__sim_userret(s, cpu);
	}
	if (s->check_every && s->now % s->check_every == 0 &&
	    s->check_failed == NULL)
		s->check_failed = s->sched->check();
	s->curcpu = -1;
}

void
sim_run(struct sim *s, int64_t ms)
{
	/* Newly queued threads are picked up without waiting a tick. */
	for (int cpu = 0; cpu < s->ncpu; cpu++) {
		ult__sim_idle(s, cpu);
		ult__sim_userret(s, cpu);
	}
	while (ms-- > 0)
		tick(s);
}

void
sim_flush(struct sim *s)
{
	for (int cpu = 0; cpu < s->ncpu; cpu++)
		account(s, cpu, s->cpu[cpu].cur);
}

void
sim_reset_stats(struct sim *s)
{
	sim_flush(s);
	for (int i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];

		t->cpu_ticks = 0;
		t->cpu_ns = 0;
		t->bursts = 0;
		t->max_latency = 0;
		t->max_wait_ns = 0;
		t->migrations = 0;
		if (t->ran_on != NULL)
			memset(t->ran_on, 0,
			    sizeof(*t->ran_on) * (size_t)s->ncpu);
	}
	for (int cpu = 0; cpu < s->ncpu; cpu++)
		s->cpu[cpu].idle.cpu_ns = 0;
	s->lock_acq = s->lock_wait_ns = 0;
}

double
sim_share(struct sim *s, struct sim_thread *t)
{
	int64_t total = 0;

	for (int i = 0; i < s->nthreads; i++)
		total += s->threads[i]->cpu_ticks;
	return (total ? 100.0 * (double)t->cpu_ticks / (double)total : 0.0);
}

int
sim_load(struct sim *s, int cpu)
{
	return (s->sched->load(cpu));
}

void
sim_topo_desc(struct topo_cpu *desc, int ncpu, int l3, int l2, int smt)
{
	memset(desc, 0, sizeof(*desc) * (size_t)ncpu);
	for (int c = 0; c < ncpu; c++) {
		int sizes[4] = {0, smt, l2, l3};

		for (int l = 1; l <= 3; l++) {
			int g = sizes[l];

			if (g <= 0)
				continue;
			for (int o = c - c % g; o < c - c % g + g && o < ncpu;
			     o++)
				CS_SET(o, &desc[c].share[l]);
		}
		if (smt > 0)
			desc[c].smt = desc[c].share[1];
	}
}

struct sim *
sim_create(int ncpu, const struct topo_cpu *desc)
{
	return (sim_create_policy(ncpu, desc, &ult__sched_ule));
}

struct sim *
sim_create_policy(int ncpu, const struct topo_cpu *desc,
    const struct sched_ops *ops)
{
	struct sim *s = calloc(1, sizeof(*s));

	if (s == NULL || ncpu < 1 || ncpu > SIM_MAXCPU)
		abort();
	s->cpu = calloc((size_t)ncpu, sizeof(*s->cpu));
	s->heap = calloc((size_t)ncpu, sizeof(*s->heap));
	s->kicked = calloc((size_t)ncpu, sizeof(*s->kicked));
	if (s->cpu == NULL || s->heap == NULL || s->kicked == NULL)
		abort();
	S = s;
	s->ncpu = ncpu;
	s->curcpu = -1;
	s->sched = ops;
	s->topo = ult__topo_build(ncpu, desc);
	if (s->topo == NULL || s->sched->init() != 0)
		abort();
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct sim_cpu *c = &s->cpu[cpu];

		ult__list_init(&c->idle.td.td_runq);
		s->sched->idle_init(&c->idle.td, cpu);
		c->idle.id = -1 - cpu;
		c->idle.group = -1;
		c->cur = &c->idle;
		c->awake = 1;
		c->heap_at = -1;
		c->ist.oldswitchcnt = -1;
		c->ist.victim = -1;
	}
	return (s);
}

void
sim_destroy(struct sim *s)
{
	s->sched->fini();
	ult__topo_free(s->topo);
	for (int i = 0; i < s->nthreads; i++) {
		free(s->threads[i]->ran_on);
		free(s->threads[i]);
	}
	ult__sim_fine_free(s);
	free(s->sleepers);
	free(s->threads);
	free(s->cpu);
	free(s->heap);
	free(s->kicked);
	free(s);
	S = NULL;
}
