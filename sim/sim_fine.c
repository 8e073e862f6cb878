/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sub-tick engine: yielders (sysbench's threads workload) step in
 * virtual nanoseconds between ticks, each CPU in the order of its own
 * clock, so that a scheduler lock taken on one CPU delays the others in
 * the order they reach it.  A CPU running a tick-level thread, or idle,
 * stays out of the heap until an IPI or a wakeup kicks it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_int.h"

/* Cost-model state of one scheduler lock, found by its address in an
 * open-addressing table (ULE has one lock per CPU). */
struct sim_lockstate {
	const struct mtx *m;
	int64_t free_at; /* virtual ns it is next free */
	int last_cpu;
};

static size_t
lock_slot(const struct sim *s, const struct mtx *m)
{
	size_t h = (size_t)((uintptr_t)m >> 4) * 0x9e3779b97f4a7c15ull;

	return ((h >> 20) & (size_t)(s->lockcap - 1));
}

static void
lock_grow(struct sim *s)
{
	struct sim_lockstate *old = s->locks;
	int oldcap = s->lockcap;

	s->lockcap = oldcap ? 2 * oldcap : 64;
	s->locks = calloc((size_t)s->lockcap, sizeof(*s->locks));
	if (s->locks == NULL)
		abort();
	for (int i = 0; i < oldcap; i++) {
		size_t k;

		if (old[i].m == NULL)
			continue;
		for (k = lock_slot(s, old[i].m); s->locks[k].m != NULL;
		     k = (k + 1) & (size_t)(s->lockcap - 1))
			;
		s->locks[k] = old[i];
	}
	free(old);
}

static struct sim_lockstate *
lockstate(struct sim *s, const struct mtx *m)
{
	size_t k;

	if (2 * (s->nlocks + 1) > s->lockcap)
		lock_grow(s);
	for (k = lock_slot(s, m); s->locks[k].m != NULL;
	     k = (k + 1) & (size_t)(s->lockcap - 1))
		if (s->locks[k].m == m)
			return (&s->locks[k]);
	s->locks[k] = (struct sim_lockstate){m, 0, -1};
	s->nlocks++;
	return (&s->locks[k]);
}

/*
 * Every acquisition of a policy lock: the CPU waits for the lock to be
 * free, pulls its cache line if another CPU held it last, and holds it
 * lock_ns.  The lock's critical sections are not timed one by one: each
 * costs lock_ns, which is what the calibration measures.
 */
void
ult__sim_lock_note(struct mtx *m)
{
	struct sim *s = S;
	struct sim_lockstate *l;
	struct sim_cpu *c;
	int64_t t;

	if (s == NULL || s->curcpu < 0 || s->cost.lock_ns == 0)
		return;
	l = lockstate(s, m);
	c = &s->cpu[s->curcpu];
	t = c->clock;
	s->lock_acq++;
	if (l->free_at > t) {
		s->lock_wait_ns += l->free_at - t;
		t = l->free_at;
	}
	if (l->last_cpu >= 0 && l->last_cpu != s->curcpu)
		t += s->cost.xfer_ns;
	t += s->cost.lock_ns;
	l->free_at = t;
	l->last_cpu = s->curcpu;
	c->clock = t;
}

/* ---- the heap of CPUs running yielders, by clock ---- */

static int
earlier(struct sim *s, int a, int b)
{
	int64_t ca = s->cpu[a].clock, cb = s->cpu[b].clock;

	return (ca < cb || (ca == cb && a < b));
}

static void
heap_set(struct sim *s, int i, int cpu)
{
	s->heap[i] = cpu;
	s->cpu[cpu].heap_at = i;
}

static void
heap_up(struct sim *s, int i)
{
	int cpu = s->heap[i];

	while (i > 0 && earlier(s, cpu, s->heap[(i - 1) / 2])) {
		heap_set(s, i, s->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(s, i, cpu);
}

static void
heap_down(struct sim *s, int i)
{
	int cpu = s->heap[i];

	for (;;) {
		int k = 2 * i + 1;

		if (k >= s->nheap)
			break;
		if (k + 1 < s->nheap && earlier(s, s->heap[k + 1], s->heap[k]))
			k++;
		if (!earlier(s, s->heap[k], cpu))
			break;
		heap_set(s, i, s->heap[k]);
		i = k;
	}
	heap_set(s, i, cpu);
}

static void
heap_push(struct sim *s, int cpu)
{
	if (s->cpu[cpu].heap_at >= 0)
		return;
	s->heap[s->nheap] = cpu;
	s->cpu[cpu].heap_at = s->nheap++;
	heap_up(s, s->nheap - 1);
}

static void
heap_pop(struct sim *s)
{
	s->cpu[s->heap[0]].heap_at = -1;
	if (--s->nheap > 0) {
		heap_set(s, 0, s->heap[s->nheap]);
		heap_down(s, 0);
	}
}

/* ---- yielders ---- */

enum {
	Y_TAKE,
	Y_YIELD,
	Y_RELEASE
};

void
sim_make_yielder(struct sim *s, struct sim_thread *t, struct sim_yielders *w)
{
	t->yw = w;
	t->run_ms = 0; /* never ends a burst at a tick */
	s->nyielders++;
	ult__sim_yielder_start(s, t);
}

void
ult__sim_yielder_start(struct sim *s, struct sim_thread *t)
{
	struct sim_yielders *w = t->yw;

	t->ymtx = (int)(w->next_event++ % w->nlocks);
	t->ydone = 0;
	t->yphase = Y_TAKE;
	t->ev_start = s->curcpu >= 0 ? s->cpu[s->curcpu].clock : sim_now_ns(s);
}

void
sim_umtx_wait(struct sim_umtx *m, struct sim_thread *t)
{
	if (m->nwait == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 8;
		m->waiters =
		    realloc(m->waiters, sizeof(*m->waiters) * (size_t)m->cap);
		if (m->waiters == NULL)
			abort();
	}
	m->waiters[m->nwait++] = t;
}

struct sim_thread *
sim_umtx_next(struct sim_umtx *m)
{
	struct sim_thread *w;

	if (m->nwait == 0)
		return (NULL);
	w = m->waiters[0];
	for (int i = 1; i < m->nwait; i++)
		m->waiters[i - 1] = m->waiters[i];
	m->nwait--;
	return (w);
}

/* Release m; the first waiter, woken, tries again (FreeBSD's umtx and
 * ult's mutex wake a waiter rather than hand the lock over). */
static void
umtx_release(struct sim *s, struct sim_umtx *m, int cpu)
{
	struct sim_thread *w = sim_umtx_next(m);

	m->owner = NULL;
	if (w != NULL) {
		s->cpu[cpu].clock += s->cost.block_ns;
		sim_wake(s, w, cpu);
	}
}

/* One step of the yielder running on cpu. */
static void
yielder_phase(struct sim *s, int cpu)
{
	struct sim_cpu *c = &s->cpu[cpu];
	struct sim_thread *t = c->cur;
	struct sim_yielders *w = t->yw;
	struct sim_umtx *m = &w->mtx[t->ymtx];

	s->curcpu = cpu;
	switch (t->yphase) {
	case Y_TAKE:
		c->clock += s->cost.umtx_ns;
		if (m->owner != NULL) {
			c->clock += s->cost.block_ns;
			sim_umtx_wait(m, t);
			ult__sim_block(s, cpu);
			break;
		}
		m->owner = t;
		t->yphase = Y_YIELD;
		break;
	case Y_YIELD:
		c->clock += s->cost.yield_ns;
		t->yphase = Y_RELEASE;
		w->nyields++;
		thread_lock(&t->td);
		ult__sim_switch(s, cpu, SW_VOL | SWT_RELINQUISH);
		break;
	default:
		c->clock += s->cost.umtx_ns;
		umtx_release(s, m, cpu);
		if (++t->ydone < w->yields) {
			t->yphase = Y_TAKE;
			break;
		}
		w->events++;
		ult__sim_yielder_start(s, t);
		break;
	}
}

/* Every step takes time, even with every cost 0 (sim_create's default):
 * else a lone yielder would never reach the tick. */
static void
yielder_step(struct sim *s, int cpu)
{
	int64_t before = s->cpu[cpu].clock;

	yielder_phase(s, cpu);
	if (s->cpu[cpu].clock == before)
		s->cpu[cpu].clock++;
}

/* A CPU that was kicked acts now: it takes the IPI or leaves idle. */
static void
run_kicked(struct sim *s, int64_t end_ns)
{
	while (s->nkicked > 0) {
		int cpu = s->kicked[--s->nkicked];
		struct sim_cpu *c = &s->cpu[cpu];
		int64_t at = c->kick_at;

		c->in_kick = 0;
		if (c->heap_at >= 0)
			continue; /* it checks at its next step */
		if (at > c->clock)
			c->clock = at;
		if (c->clock >= end_ns)
			continue; /* the tick sees to it */
		ult__sim_idle(s, cpu);
		ult__sim_userret(s, cpu);
		if (c->cur->yw != NULL)
			heap_push(s, cpu);
	}
}

static void
clear_kicked(struct sim *s)
{
	while (s->nkicked > 0)
		s->cpu[s->kicked[--s->nkicked]].in_kick = 0;
}

void
ult__sim_fine_run(struct sim *s, int64_t end_ns)
{
	/* Whatever the tick kicked, the tick's own idle loop has seen. */
	clear_kicked(s);
	for (int cpu = 0; cpu < s->ncpu; cpu++)
		if (s->cpu[cpu].cur->yw != NULL)
			heap_push(s, cpu);
	while (s->nheap > 0) {
		int cpu = s->heap[0];
		struct sim_cpu *c = &s->cpu[cpu];

		if (c->clock >= end_ns)
			break;
		yielder_step(s, cpu);
		ult__sim_userret(s, cpu);
		if (c->cur == &c->idle) {
			/* The idle loop looks for work at once. */
			ult__sim_idle(s, cpu);
			ult__sim_userret(s, cpu);
		}
		if (c->cur->yw == NULL)
			heap_pop(s);
		else
			heap_down(s, c->heap_at);
		run_kicked(s, end_ns);
	}
	while (s->nheap > 0)
		heap_pop(s);
	clear_kicked(s);
	s->curcpu = -1;
}

void
ult__sim_fine_free(struct sim *s)
{
	free(s->locks);
}
