/*
 * One-shot timers on per-CPU min-heaps, expired by the clock thread
 * (src/core/clock.c) exactly at their deadline.  A timer is owned by one
 * thread at a time: it is added by its owner and cancelled by its owner;
 * only the expiry runs elsewhere, and ult__timer_cancel() waits for an
 * expiry in progress, so after it returns nothing touches the timer.
 */
#ifndef ULT_TIME_TIMER_H
#define ULT_TIME_TIMER_H

#include <stdint.h>

#include "../util/lock.h"

struct ult__timer_heap;

struct ult__timer {
	uint64_t deadline; /* CLOCK_MONOTONIC ns */
	void (*fn)(void *);
	void *arg;
	int idx; /* position in the heap, -1 when not queued */
	struct ult__timer_heap *heap;
};

int ult__timers_init(int nheaps);
void ult__timers_fini(void);

/* Queue t on heap `cpu' (cpus >= nheaps share the last heap).  Returns 0
 * or ENOMEM.  Wakes the clock thread if t is now its earliest deadline. */
int ult__timer_add(struct ult__timer *t, int cpu, uint64_t deadline,
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
	t->idx = -1;
	t->heap = 0;
}

#endif
