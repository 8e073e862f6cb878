/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One-shot timers on per-CPU min-heaps, expired by the clock thread
 * (clock.c) exactly at their deadline.  A timer is owned by one
 * thread at a time: it is added by its owner and cancelled by its owner;
 * only the expiry runs elsewhere, and ult__timer_cancel() waits for an
 * expiry in progress, so after it returns nothing touches the timer.
 */
#ifndef ULT_TIME_TIMER_H
#define ULT_TIME_TIMER_H

#include <stdint.h>

#include "../util/lock.h"

struct ult__timer_heap;

/* Everything a queued timer needs lives here: arming never allocates, so
 * it cannot fail. */
struct ult__timer {
	uint64_t deadline; /* CLOCK_MONOTONIC ns */
	void (*fn)(void *);
	void *arg;
	/* Pairing-heap links, under the heap lock: the first child, the
	 * next sibling, and prev, the parent of a first child or else the
	 * previous sibling. */
	struct ult__timer *child, *next, *prev;
	int queued;
	struct ult__timer_heap *heap; /* where it was last added */
};

int ult__timers_init(int nheaps);
void ult__timers_fini(void);

/* Queue t (not queued) on heap `cpu' (cpus >= nheaps, and negative ones,
 * share the last heap).  Wakes the clock thread if t is now its earliest
 * deadline, which must not be 0 (to ult__clock_kick that means "a
 * worker became busy"). */
void ult__timer_add(struct ult__timer *t, int cpu, uint64_t deadline,
    void (*fn)(void *), void *arg);
/* 1 if t was dequeued before firing; 0 if it fired (any expiry in progress
 * has finished when this returns) or was never added. */
int ult__timer_cancel(struct ult__timer *t);
/* Run every timer due at now; returns the earliest remaining deadline,
 * or UINT64_MAX. */
uint64_t ult__timers_run(uint64_t now);
/* Earliest pending deadline without running anything. */
uint64_t ult__timers_next(void);

static inline void
ult__timer_init(struct ult__timer *t)
{
	t->queued = 0;
	t->heap = 0;
}

#endif
