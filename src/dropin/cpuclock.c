/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPU-time clocks of uthreads.  The kernel's thread CPU clock is the
 * worker's, which runs many uthreads: CLOCK_THREAD_CPUTIME_ID in a
 * uthread, and the clock pthread_getcpuclockid gives for one, read the
 * time the runtime charged the uthread (its runtime_ns, the current run
 * included) instead.  A uthread's clock id has the kernel's form of a
 * per-thread CPU clock with a clock type the kernel does not have (3),
 * so that no system call takes it for another clock; above the type
 * bits it carries a slot in a table of thread records, which are never
 * freed (thread.c), so a clock of a thread that has gone says EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "util/lock.h"
#include "dropin.h"

#define CHUNK 1024
#define NCHUNKS 1024

static struct dp_thread *_Atomic *_Atomic chunks[NCHUNKS];
static int nslots; /* under lock */
/* Taken only to hand out a slot (pthread_getcpuclockid), never in a
 * signal handler: reads need no lock. */
static struct mtx lock = MTX_INITIALIZER("dropin cpu clocks");

void
ult__dropin_cpuclock_fork_child(void)
{
	mtx_init(&lock, "dropin cpu clocks");
}

static clockid_t
clock_of(int slot)
{
	return ((clockid_t) ~((unsigned)slot << 3));
}

/* The slot of a clock id of ours, or -1. */
static int
slot_of(clockid_t c)
{
	if (c >= 0 || (c & 7) != 7)
		return (-1);
	return ((int)(~(unsigned)c >> 3));
}

static int
slot_new(struct dp_thread *dp)
{
	struct dp_thread *_Atomic *ch;
	int s;

	mtx_lock_spin(&lock);
	s = nslots;
	if (s >= CHUNK * NCHUNKS) {
		mtx_unlock_spin(&lock);
		return (-1);
	}
	if ((ch = ULT_PLD_ACQ(&chunks[s / CHUNK])) == NULL) {
		if ((ch = calloc(CHUNK, sizeof(*ch))) == NULL) {
			mtx_unlock_spin(&lock);
			return (-1);
		}
		ULT_PST_REL(&chunks[s / CHUNK], ch);
	}
	ULT_PST_REL(&ch[s % CHUNK], dp);
	nslots = s + 1;
	mtx_unlock_spin(&lock);
	return (s);
}

/* The record a slot names, or NULL. */
static struct dp_thread *
slot_dp(int s)
{
	struct dp_thread *_Atomic *ch;

	if (s < 0 || s >= CHUNK * NCHUNKS ||
	    (ch = ULT_PLD_ACQ(&chunks[s / CHUNK])) == NULL)
		return (NULL);
	return (ULT_PLD_ACQ(&ch[s % CHUNK]));
}

int
pthread_getcpuclockid(pthread_t t, clockid_t *clock)
{
	struct dp_thread *dp;
	int s;

	ult__dropin_up();
	if ((dp = ult__dropin_of(t)) == NULL)
		return (ult__dropin_forked && !ult__dropin_dead(t)
			? ULT__DROPIN_LIBC(pthread_getcpuclockid,
			      int (*)(pthread_t, clockid_t *))(t, clock)
			: ESRCH);
	/* The record keeps its slot when it is reused (thread.c). */
	if ((s = ULT_PLD_ACQ(&dp->clock_slot)) == 0) {
		if ((s = slot_new(dp)) < 0)
			return (ENOENT);
		s++;
		if (!ULT_PCAS_ACQREL_ACQ(&dp->clock_slot, &(int){0}, s))
			s = ULT_PLD_ACQ(&dp->clock_slot);
	}
	*clock = clock_of(s - 1);
	return (0);
}

/* ut's CPU time: 0, or EINVAL for a thread that has gone. */
static int
cputime(ult_thread_t *ut, struct timespec *ts)
{
	struct ult_thread_info in;

	if (ult_thread_info(ut, &in) != 0)
		return (EINVAL);
	ts->tv_sec = (time_t)(in.runtime_ns / 1000000000u);
	ts->tv_nsec = (long)(in.runtime_ns % 1000000000u);
	return (0);
}

int
clock_gettime(clockid_t c, struct timespec *ts)
{
	static void *_Atomic slot;
	struct dp_thread *dp;
	ult_thread_t *ut;
	int s, err;

	if (c == CLOCK_THREAD_CPUTIME_ID && ult__dropin_self() != NULL &&
	    !ult__dropin_forked)
		err = cputime(NULL, ts);
	else if ((s = slot_of(c)) >= 0) {
		dp = slot_dp(s);
		if (dp == NULL || ULT_PLD_ACQ(&dp->magic) != DP_MAGIC)
			err = EINVAL;
		else if ((ut = ULT_PLD_ACQ(&dp->ut)) == NULL) {
			/* Not started yet: no time charged. */
			ts->tv_sec = 0;
			ts->tv_nsec = 0;
			err = 0;
		} else
			err = cputime(ut, ts);
	} else
		return (
		    ((int (*)(clockid_t, struct timespec *))ult__dropin_next(
			"clock_gettime", &slot))(c, ts));
	if (err != 0) {
		errno = err;
		return (-1);
	}
	return (0);
}

int
clock_getres(clockid_t c, struct timespec *ts)
{
	static void *_Atomic slot;
	int s = slot_of(c);

	if (s < 0)
		return (
		    ((int (*)(clockid_t, struct timespec *))ult__dropin_next(
			"clock_getres", &slot))(c, ts));
	if (slot_dp(s) == NULL) {
		errno = EINVAL;
		return (-1);
	}
	if (ts != NULL) {
		ts->tv_sec = 0;
		ts->tv_nsec = 1;
	}
	return (0);
}
