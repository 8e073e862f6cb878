/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host steal.  A spin pays only while the thread it waits for runs, and
 * on a host with more runnable threads than CPUs a worker's kernel
 * thread is often runnable but not running: its owner of a lock makes no
 * progress while a waiter spins for it.  The kernel counts that time
 * (run_delay, the second field of /proc/self/task/TID/schedstat: time
 * spent runnable on a run queue), so the clock thread samples it: a
 * worker whose kernel thread waited for a CPU for more than 1/STEAL_SET
 * of the wall time since its previous sample is marked `stolen' (and
 * unmarked once it waits less than 1/STEAL_CLEAR).  Lock waiters do not
 * spin on an owner whose worker is marked, and a marked worker does not
 * spin while idle (mutex.c, worker.c).  The mark is as old as a few
 * stat ticks, which suits a host's load: it changes over seconds, and a
 * waiter's own spin is bounded besides.  Cost: one pread of a procfs file
 * per worker every SAMPLE_TICKS ticks, at most SAMPLE_MAX workers a tick;
 * nothing on the workers.  Without schedstat nothing is ever marked.
 *
 * The clock thread's own time on a CPU is not counted as stolen: it is
 * taken off every worker's wait.  Where it shares a worker's CPU, each
 * of its wakeups keeps that worker waiting, and while it waits in the
 * poller (clock.c) it wakes often enough to mark the worker by itself; the
 * mark would then keep it in the poller, which is what made the mark.
 * Taken off workers it does not share a CPU with, it only makes their
 * mark later.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "worker.h"
#include "steal.h"

#define STEAL_SET 8
#define STEAL_CLEAR 32
#define SAMPLE_MAX 8

/* Clock thread only. */
static struct {
	int fd;		    /* its schedstat + 1, or 0 */
	uint64_t delay, at; /* run_delay and the clock at the last sample */
	uint64_t own;	    /* the clock thread's CPU time then */
} sw[ULT_MAXCPU];
static int next_cpu;
atomic_int ult__steal_on = 1;

/* Opened as the clock starts, as handoff.c's files are, so as not to take
 * a descriptor number the program has just freed. */
void
ult__steal_init(void)
{
	for (int cpu = 0; cpu < ult__rt.nworkers; cpu++) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat",
		    ULT_LD(&ult__rt.workers[cpu].tid));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		sw[cpu].fd = fd >= 0 ? fd + 1 : 0;
		sw[cpu].at = 0;
	}
	next_cpu = 0;
}

void
ult__steal_fini(void)
{
	for (int cpu = 0; cpu < ult__rt.nworkers; cpu++) {
		if (sw[cpu].fd != 0)
			close(sw[cpu].fd - 1);
		sw[cpu].fd = 0;
		ULT_ST(&ult__rt.workers[cpu].stolen, 0);
	}
}

static void
sample(int cpu, uint64_t now, uint64_t own)
{
	char buf[128], *p;
	ssize_t n = pread(sw[cpu].fd - 1, buf, sizeof(buf) - 1, 0);
	uint64_t delay, wall;
	struct ult__worker *w = &ult__rt.workers[cpu];

	if (n <= 0)
		return;
	buf[n] = '\0';
	(void)strtoull(buf, &p, 10); /* time on a CPU */
	delay = strtoull(p, NULL, 10);
	wall = now - sw[cpu].at;
	if (!ULT_LD(&ult__steal_on)) {
		ULT_ST(&w->stolen, 0);
	} else if (sw[cpu].at != 0 && delay >= sw[cpu].delay && wall > 0) {
		uint64_t d = delay - sw[cpu].delay, o = own - sw[cpu].own;

		d = d > o ? d - o : 0;

		if (d > wall / STEAL_SET)
			ULT_ST(&w->stolen, 1);
		else if (d < wall / STEAL_CLEAR)
			ULT_ST(&w->stolen, 0);
	}
	sw[cpu].delay = delay;
	sw[cpu].at = now;
	sw[cpu].own = own;
}

/* After each round of stat ticks: the next few workers, round robin. */
void
ult__steal_tick(void)
{
	uint64_t now = ult__now(), own = 0;
	int n = ult__rt.nworkers < SAMPLE_MAX ? ult__rt.nworkers : SAMPLE_MAX;
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		own = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;

	for (int i = 0; i < n; i++) {
		int cpu = next_cpu;

		next_cpu = (next_cpu + 1) % ult__rt.nworkers;
		if (sw[cpu].fd != 0)
			sample(cpu, now, own);
	}
}
