/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Timer heaps, one per CPU so that threads sleeping on different workers
 * do not share a lock, plus one shared by everything else.  The clock
 * thread scans the heads; with a handful of CPUs that is cheaper than a
 * global heap.
 *
 * Each heap is a pairing heap whose links live in the timers themselves,
 * so queueing a timer never allocates and a timed wait cannot fail for
 * want of memory.  A pairing heap is a tree in which every node's deadline
 * is at most its children's, kept as first-child/next-sibling lists:
 * insert melds the new node with the root (O(1)); delete-min melds the
 * root's children pairwise left to right, then the pairs right to left
 * (amortised O(log n)); an arbitrary delete cuts the node's subtree out,
 * merges its children the same way and melds the result with the root.
 * All of it is iterative: a heap of many sleepers must not recurse deep.
 */
#include <errno.h>
#include <stdlib.h>

#include "../arch/cpu.h"
#include "runtime.h"
#include "worker.h"
#include "clock.h"
#include "../util/kassert.h"
#include "../util/mem.h"
#include "timer.h"
#include "subsys.h"

struct ult__timer_heap {
	struct mtx lock;
	struct ult__timer *root;
	struct ult__timer *_Atomic firing; /* expiry running outside lock */
	_Atomic uint64_t head;		   /* root->deadline or UINT64_MAX */
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
		heaps[i].root = NULL;
		atomic_init(&heaps[i].firing, NULL);
		atomic_init(&heaps[i].head, UINT64_MAX);
	}
	nheaps = n;
	return (0);
}

void
ult__timers_fini(void)
{
	free(heaps);
	heaps = NULL;
	nheaps = 0;
}

/* Two roots (their next and prev unused) become one: the later one turns
 * into the first child of the earlier.  Returns the new root. */
static struct ult__timer *
meld(struct ult__timer *a, struct ult__timer *b)
{
	if (b->deadline < a->deadline) {
		struct ult__timer *t = a;

		a = b;
		b = t;
	}
	b->prev = a;
	b->next = a->child;
	if (a->child != NULL)
		a->child->prev = b;
	a->child = b;
	return (a);
}

/* The sibling list starting at first (a detached node's children) as one
 * tree: the two-pass merge.  Returns its root, or NULL. */
static struct ult__timer *
merge_pairs(struct ult__timer *first)
{
	struct ult__timer *pairs = NULL, *r;

	/* Left to right, meld neighbours; stack the results through next. */
	while (first != NULL) {
		struct ult__timer *a = first, *b = a->next;

		if (b != NULL) {
			first = b->next;
			r = meld(a, b);
		} else {
			first = NULL;
			r = a;
		}
		r->next = pairs;
		pairs = r;
	}
	if (pairs == NULL)
		return (NULL);
	/* Right to left (the stack's order), meld each into the result. */
	r = pairs;
	pairs = r->next;
	while (pairs != NULL) {
		struct ult__timer *a = pairs;

		pairs = a->next;
		r = meld(r, a);
	}
	r->next = r->prev = NULL;
	return (r);
}

/* A node in the heap: its back link names it (the first child of prev,
 * or prev's next sibling) and no child is due before it. */
#define TIMER_ASSERT_LINKED(t)                                       \
	ULT_KASSERT((t)->queued && (t)->prev != NULL &&              \
		((t)->prev->child == (t) || (t)->prev->next == (t)), \
	    "timer_linked: a queued non-root timer must hang from its prev")
#define TIMER_ASSERT_ORDER(t)                          \
	ULT_KASSERT((t)->child == NULL ||              \
		(t)->child->deadline >= (t)->deadline, \
	    "timer_order: a child must not be due before its parent")

static void
publish_head(struct ult__timer_heap *h)
{
	ULT_ST(&h->head, h->root != NULL ? h->root->deadline : UINT64_MAX);
}

static void
heap_insert(struct ult__timer_heap *h, struct ult__timer *t)
{
	MTX_ASSERT_OWNED(&h->lock);
	ULT_KASSERT(!t->queued, "heap_insert: timer queued twice");
	t->child = t->next = t->prev = NULL;
	t->queued = 1;
	h->root = h->root != NULL ? meld(h->root, t) : t;
	publish_head(h);
}

static void
heap_remove(struct ult__timer_heap *h, struct ult__timer *t)
{
	struct ult__timer *sub;

	MTX_ASSERT_OWNED(&h->lock);
	ULT_KASSERT(t->queued && t->heap == h,
	    "heap_remove: timer not queued on this heap");
	TIMER_ASSERT_ORDER(t);
	if (t == h->root) {
		ULT_KASSERT(t->prev == NULL && t->next == NULL,
		    "heap_remove: the root has no siblings");
		h->root = merge_pairs(t->child);
	} else {
		TIMER_ASSERT_LINKED(t);
		/* Cut t (and its subtree) out of its sibling list. */
		if (t->prev->child == t)
			t->prev->child = t->next;
		else
			t->prev->next = t->next;
		if (t->next != NULL)
			t->next->prev = t->prev;
		if ((sub = merge_pairs(t->child)) != NULL)
			h->root = meld(h->root, sub);
	}
	t->queued = 0;
	ULT_KASSERT(h->root == NULL || h->root->prev == NULL,
	    "heap_remove: the new root has a parent");
	publish_head(h);
}

void
ult__timer_add(struct ult__timer *t, int cpu, uint64_t deadline,
    void (*fn)(void *), void *arg)
{
	struct ult__timer_heap *h;
	int first;

	ULT_KASSERT(nheaps > 0, "ult__timer_add: no timer heaps");
	if (cpu < 0 || cpu >= nheaps)
		cpu = nheaps - 1;
	h = &heaps[cpu];
	t->deadline = deadline;
	t->fn = fn;
	t->arg = arg;
	t->heap = h;
	mtx_lock_spin(&h->lock);
	heap_insert(h, t);
	first = (h->root == t);
	mtx_unlock_spin(&h->lock);
	if (first)
		ult__clock_kick(deadline);
}

int
ult__timer_cancel(struct ult__timer *t)
{
	struct ult__timer_heap *h = t->heap;
	unsigned spins = 0;

	if (h == NULL)
		return (0);
	mtx_lock_spin(&h->lock);
	if (t->queued) {
		heap_remove(h, t);
		mtx_unlock_spin(&h->lock);
		t->heap = NULL;
		return (1);
	}
	mtx_unlock_spin(&h->lock);
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
		mtx_lock_spin(&h->lock);
		while (h->root != NULL && h->root->deadline <= now) {
			struct ult__timer *t = h->root;

			heap_remove(h, t);
			ULT_KASSERT(ULT_LD(&h->firing) == NULL,
			    "ult__timers_run: one expiry at a time per heap");
			ULT_ST(&h->firing, t);
			mtx_unlock_spin(&h->lock);
			t->fn(t->arg);
			ULT_ST_REL(&h->firing, NULL);
			mtx_lock_spin(&h->lock);
		}
		if (h->root != NULL && h->root->deadline < next)
			next = h->root->deadline;
		mtx_unlock_spin(&h->lock);
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

/* Leaked: a fork child must not free (subsys.h). */
static void
timers_fork_child(void)
{
	heaps = NULL;
	nheaps = 0;
}

/* One heap per worker, and one shared by everything else. */
static int
timers_init_all(void)
{
	return (ult__timers_init(ult__rt.nworkers + 1));
}

const struct ult__subsys ult__timers_subsys = {.name = "timers",
    .init = timers_init_all,
    .fini = ult__timers_fini,
    .fork_child = timers_fork_child};
