/*
 * Binary min-heaps of timers, one per CPU so that threads sleeping on
 * different workers do not share a lock.  The clock thread scans the
 * heads; with a handful of CPUs that is cheaper than a global heap.
 */
#include <errno.h>
#include <stdlib.h>

#include "../arch/cpu.h"
#include "../core/runtime.h"
#include "../util/mem.h"
#include "timer.h"

struct ult__timer_heap {
	struct mtx lock;
	struct ult__timer **v;
	int n, cap;
	struct ult__timer *_Atomic firing; /* expiry running outside lock */
	_Atomic uint64_t head;		   /* v[0]->deadline or UINT64_MAX */
} ULT_ALIGNED_CL;

static struct ult__timer_heap *heaps;
static int nheaps;

int
ult__timers_init(int n)
{
	heaps = ult__zalloc_cl((size_t)n, sizeof(*heaps));
	if (heaps == NULL)
		return (ENOMEM);
	for (int i = 0; i < n; i++) {
		mtx_init(&heaps[i].lock, "timers");
		heaps[i].v = NULL;
		heaps[i].n = heaps[i].cap = 0;
		atomic_init(&heaps[i].firing, NULL);
		atomic_init(&heaps[i].head, UINT64_MAX);
	}
	nheaps = n;
	return (0);
}

void
ult__timers_fini(void)
{
	for (int i = 0; i < nheaps; i++)
		free(heaps[i].v);
	free(heaps);
	heaps = NULL;
	nheaps = 0;
}

static void
heap_set(struct ult__timer_heap *h, int i, struct ult__timer *t)
{
	h->v[i] = t;
	t->idx = i;
}

static void
sift_up(struct ult__timer_heap *h, int i)
{
	struct ult__timer *t = h->v[i];

	while (i > 0) {
		int p = (i - 1) / 2;

		if (h->v[p]->deadline <= t->deadline)
			break;
		heap_set(h, i, h->v[p]);
		i = p;
	}
	heap_set(h, i, t);
}

static void
sift_down(struct ult__timer_heap *h, int i)
{
	struct ult__timer *t = h->v[i];

	for (;;) {
		int c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1]->deadline < h->v[c]->deadline)
			c++;
		if (t->deadline <= h->v[c]->deadline)
			break;
		heap_set(h, i, h->v[c]);
		i = c;
	}
	heap_set(h, i, t);
}

static void
heap_remove(struct ult__timer_heap *h, struct ult__timer *t)
{
	int i = t->idx;
	struct ult__timer *last = h->v[--h->n];

	t->idx = -1;
	if (last != t) {
		heap_set(h, i, last);
		sift_down(h, i);
		sift_up(h, last->idx);
	}
	ULT_ST(&h->head, h->n ? h->v[0]->deadline : UINT64_MAX);
}

int
ult__timer_add(struct ult__timer *t, int cpu, uint64_t deadline,
    void (*fn)(void *), void *arg)
{
	struct ult__timer_heap *h;
	int first;

	if (cpu < 0 || cpu >= nheaps)
		cpu = nheaps - 1;
	h = &heaps[cpu];
	t->deadline = deadline;
	t->fn = fn;
	t->arg = arg;
	t->heap = h;
	mtx_lock(&h->lock);
	if (h->n == h->cap) {
		int cap = h->cap ? h->cap * 2 : 64;
		struct ult__timer **v = realloc(h->v, sizeof(*v) * (size_t)cap);

		if (v == NULL) {
			mtx_unlock(&h->lock);
			t->heap = NULL;
			return (ENOMEM);
		}
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n] = t;
	t->idx = h->n++;
	sift_up(h, t->idx);
	first = (t->idx == 0);
	ULT_ST(&h->head, h->v[0]->deadline);
	mtx_unlock(&h->lock);
	if (first)
		ult__clock_kick(deadline);
	return (0);
}

int
ult__timer_cancel(struct ult__timer *t)
{
	struct ult__timer_heap *h = t->heap;
	unsigned spins = 0;

	if (h == NULL)
		return (0);
	mtx_lock(&h->lock);
	if (t->idx >= 0) {
		heap_remove(h, t);
		mtx_unlock(&h->lock);
		t->heap = NULL;
		return (1);
	}
	mtx_unlock(&h->lock);
	/* Fired: wait until its function has returned. */
	while (ULT_LD_ACQ(&h->firing) == t)
		ult__spin_backoff(&spins);
	t->heap = NULL;
	return (0);
}

uint64_t
ult__timers_run(uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (int i = 0; i < nheaps; i++) {
		struct ult__timer_heap *h = &heaps[i];

		if (ULT_LD(&h->head) > now) {
			if (ULT_LD(&h->head) < next)
				next = ULT_LD(&h->head);
			continue;
		}
		/* Expire as the CPU the timers were armed on (machine.c). */
		ult__tls_actcpu = i < nheaps - 1 ? i : -1;
		mtx_lock(&h->lock);
		while (h->n > 0 && h->v[0]->deadline <= now) {
			struct ult__timer *t = h->v[0];

			heap_remove(h, t);
			ULT_ST(&h->firing, t);
			mtx_unlock(&h->lock);
			t->fn(t->arg);
			ULT_ST_REL(&h->firing, NULL);
			mtx_lock(&h->lock);
		}
		if (h->n > 0 && h->v[0]->deadline < next)
			next = h->v[0]->deadline;
		mtx_unlock(&h->lock);
		ult__tls_actcpu = -1;
	}
	return (next);
}

uint64_t
ult__timers_next(void)
{
	uint64_t next = UINT64_MAX;

	for (int i = 0; i < nheaps; i++)
		if (ULT_LD(&heaps[i].head) < next)
			next = ULT_LD(&heaps[i].head);
	return (next);
}
