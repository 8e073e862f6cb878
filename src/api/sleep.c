/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sleeping and the clock's public face: ult_sleep_until and ult_sleep_ns
 * (a uthread sleeps on its CPU's timer heap, a foreign thread in
 * clock_nanosleep), ult_now, and the deadline makers ult_after and
 * ult_deadline_ts.
 */
#include <errno.h>
#include <time.h>

#include "../kern/runtime.h"
#include "../kern/worker.h"
#include "../kern/uthread.h"
#include "../kern/switch.h"
#include "../kern/sleepq.h"

int
ult_sleep_until(uint64_t deadline)
{
	struct ult_thread *ut = ult__self_ut();
	struct ult__waiter w;
	struct timespec ts;
	int r;

	if (ut == NULL) {
		ult__os_timespec(deadline, &ts);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
			   NULL) == EINTR)
			;
		return (0);
	}
	if (!ult__running())
		return (ENXIO);
	/* 0 means "no deadline" to the sleep queue; here it has passed, and
	 * the wait returns at once.  Only the timeout ends this sleep. */
	if (deadline == 0)
		deadline = 1;
	do {
		ult__waiter_self(&w);
		ult__sleepq_lock(&ut->slp_timer);
		ult__sleepq_add(&ut->slp_timer, &w, "sleep");
		r = ult__sleepq_wait(&ut->slp_timer, &w, deadline);
	} while (r != ETIMEDOUT && r != EINTR);
	ult__userret();
	/* EINTR: only the drop-in interrupts sleeps (ult__sleepq_interrupt),
	 * and it sleeps again for what is left. */
	return (r == EINTR ? EINTR : 0);
}

int
ult_sleep_ns(uint64_t ns)
{
	uint64_t now = ult_now();

	/* Saturate: a wrapped sum would be a deadline in the past. */
	return (ult_sleep_until(ns > UINT64_MAX - now ? UINT64_MAX : now + ns));
}

uint64_t
ult_now(void)
{
	return (ult__now_unmarked());
}

uint64_t
ult_after(uint64_t ns)
{
	uint64_t now = ult__now_unmarked();

	return (ns > ULT_DEADLINE_NONE - now ? ULT_DEADLINE_NONE : now + ns);
}

uint64_t
ult_deadline_ts(int clock, const struct timespec *abs)
{
	struct timespec now;
	uint64_t mono, at, cur;

	if (abs == NULL)
		return (ULT_DEADLINE_NONE);
	if (abs->tv_nsec < 0 || abs->tv_nsec >= 1000000000L ||
	    (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME))
		return (0);
	if (abs->tv_sec < 0)
		return (ULT_DEADLINE_NOW);
	/* Past what 64 bits of ns hold (year 2554): never. */
	if ((uint64_t)abs->tv_sec >= UINT64_MAX / 1000000000u - 1)
		return (ULT_DEADLINE_NONE);
	at = (uint64_t)abs->tv_sec * 1000000000u + (uint64_t)abs->tv_nsec;
	mono = ult__now_unmarked();
	if (clock == CLOCK_MONOTONIC)
		cur = mono;
	else if (clock_gettime(CLOCK_REALTIME, &now) == 0)
		cur =
		    (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	else
		return (0);
	if (at <= cur)
		return (ULT_DEADLINE_NOW);
	at -= cur;
	return (
	    at > ULT_DEADLINE_NONE - 1 - mono ? ULT_DEADLINE_NONE : mono + at);
}
