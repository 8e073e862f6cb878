/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * preempt: what asynchronous preemption costs a CPU-bound uthread.  A busy
 * loop runs on one worker for S seconds with preemption on (the default)
 * and off; with it on, every slice end (kern.sched.slice stat ticks) sends
 * the worker a signal and goes through a switch, even when the same
 * thread is chosen again.  Cases: `busy_loop' (one hog: only the slice
 * ends) and `two_hogs' (two hogs that take turns, so each slice end is a
 * real switch).  Reported: loop iterations per second summed over the
 * hogs, for `ult' and `ult-nopreempt' (the baseline), and the loss in
 * percent.  Rounds alternate on and off and the medians are compared, so
 * drift in the host's speed falls on both alike.  The target: under 1%
 * lost.
 *
 * Usage: preempt [--quick] [--data DIR]
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "contract.h"
#include "rt.h"
#include "ult.h"
#include "work.h"

#define MAXROUNDS 16

static atomic_int stop;
static atomic_ullong total;

static void *
hog(void *arg)
{
	unsigned long long n = 0;
	volatile unsigned sink = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < 100000; i++)
			sink = sink * 33 + (unsigned)i;
		n += 100000;
	}
	atomic_fetch_add(&total, n);
	return (NULL);
}

/* One round: iterations per second with nhogs on one worker. */
static double
round_ips(int preempt, int nhogs, double secs)
{
	bw_thread_t t[2];
	uint64_t t0, el;

	bw_rt_start(preempt ? "ult" : "ult-nopreempt", 1, 1);
	atomic_store(&stop, 0);
	atomic_store(&total, 0);
	t0 = ult_now();
	for (int i = 0; i < nhogs; i++)
		bw_must(bw_spawn(&t[i], hog, NULL), "spawn");
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < nhogs; i++)
		bw_join(&t[i]);
	el = ult_now() - t0;
	bw_rt_stop();
	if (atomic_load(&total) == 0)
		bw_die("the hogs did not run");
	return ((double)atomic_load(&total) / ((double)el / 1e9));
}

int
main(int argc, char **argv)
{
	static const char *cases[] = {"busy_loop", "two_hogs"};
	double secs = 1.0, on[MAXROUNDS], off[MAXROUNDS];
	int rounds = 7;

	bw_args("preempt", argc, argv, NULL, NULL);
	if (bw_quick) {
		secs = 0.2;
		rounds = 1;
	}
	fprintf(stderr,
	    "preempt: one worker, %.1f s rounds, %d rounds each, on and "
	    "off alternating\n",
	    secs, rounds);
	for (int c = 0; c < 2; c++) {
		double m_on, m_off;

		for (int r = 0; r < rounds; r++) {
			on[r] = round_ips(1, c + 1, secs);
			off[r] = round_ips(0, c + 1, secs);
		}
		m_on = bw_median(on, rounds);
		m_off = bw_median(off, rounds);
		bw_emit(cases[c], "ult", "Miter/s", 2, m_on / 1e6);
		bw_emit(cases[c], "ult-nopreempt", "Miter/s", 2, m_off / 1e6);
		bw_emit(cases[c], "ult", "loss%", 2,
		    100.0 * (m_off - m_on) / m_off);
		fprintf(stderr, "  %-9s on %.2f  off %.2f Miter/s\n", cases[c],
		    m_on / 1e6, m_off / 1e6);
	}
	return (0);
}
