/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * latency: wakeup latency in the manner of schbench (Chris Mason's
 * scheduler benchmark), the delay between "you may run" and running.
 *
 * One message thread and 4 worker threads.  Each round the message thread
 * sleeps 1 ms, takes t0 = now and posts each worker's own semaphore;
 * each worker records now - t0 as its wakeup latency, busy-works 50 us
 * (a calibrated loop) and posts a shared "done" semaphore; the message
 * thread waits for all 4.  The message thread takes t0 once and then
 * posts the four in turn, as schbench stamps once per walk, so a waker
 * that is preempted by the first wakee shows up in the others' latency.
 * Rounds: 2000 (--quick 100).
 *
 * Cases: hogs=0, and hogs=N with N = the CPU count: pure CPU spinners at
 * the default priority, started before the first round (they run 50 ms
 * alone first) and stopped after the last.  Under a scheduler that
 * favours sleepers the latency barely moves; under one that makes a
 * wakee wait for the hog's slice it jumps to milliseconds.
 *
 * Runtimes: ult (sched_ule, all workers, preemption on), ult-4bsd
 * (sched_4bsd, preemption on): every thread a uthread, ult semaphores,
 * ult_sleep_ns; pthread: kernel threads, POSIX semaphores,
 * clock_nanosleep.
 *
 * Reported over the 4 x rounds samples: p50_us, p99_us, p999_us, max_us
 * (nearest-rank percentiles).  --data DIR writes the empirical CDF of each
 * run to DIR/latency-<runtime>-<case>.dat, lines "<latency_us> <fraction>"
 * sorted (bench/plot/latency.gp draws them).
 *
 * Checked: every round got exactly one reply from each of the 4 workers.
 *
 * Usage: latency [--quick] [--data DIR] [hogs=0|hogs=N|ult|ult-4bsd|
 *        pthread ...] (names filter the cases and runtimes)
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract.h"
#include "rt.h"
#include "work.h"

#define NWORKERS 4
#define PERIOD_NS 1000000
#define WORK_US 50
#define HOG_WARMUP_NS 50000000

static int nrounds = 2000;
static double iters_per_us;

/* ---- the benchmark ---- */

static bw_sem_t wake[NWORKERS], done;
static uint64_t t0;	    /* this round's post time; the post orders it */
static uint64_t *lat_ns;    /* [round * NWORKERS + worker] */
static atomic_int *replies; /* per round */
static atomic_int hogs_stop;
static atomic_long hog_loops;

static void *
worker_main(void *arg)
{
	int w = (int)(intptr_t)arg;

	for (int r = 0; r < nrounds; r++) {
		bw_sem_wait(&wake[w]);
		lat_ns[r * NWORKERS + w] = ult_now() - t0;
		atomic_fetch_add(&replies[r], 1);
		bw_busy_us(WORK_US, iters_per_us);
		bw_sem_post(&done);
	}
	return (NULL);
}

static void *
message_main(void *arg)
{
	int nhogs = (int)(intptr_t)arg;

	if (nhogs > 0)
		bw_sleep_ns(HOG_WARMUP_NS);
	for (int r = 0; r < nrounds; r++) {
		bw_sleep_ns(PERIOD_NS);
		t0 = ult_now();
		for (int w = 0; w < NWORKERS; w++)
			bw_sem_post(&wake[w]);
		for (int w = 0; w < NWORKERS; w++)
			bw_sem_wait(&done);
		if (atomic_load(&replies[r]) != NWORKERS)
			bw_die("round %d got %d replies, not %d", r,
			    atomic_load(&replies[r]), NWORKERS);
	}
	return (NULL);
}

static void *
hog_main(void *arg)
{
	long loops = 0;

	(void)arg;
	while (!atomic_load_explicit(&hogs_stop, memory_order_relaxed)) {
		bw_spin(1000);
		loops++;
	}
	atomic_fetch_add(&hog_loops, loops);
	return (NULL);
}

/* Threads in a fixed order: hogs, workers, then the message thread. */
#define MAXTHR (NWORKERS + 1 + ULT_MAXCPU)

static void
run_threads(int nhogs)
{
	bw_thread_t th[MAXTHR];
	int n = 0, msg;

	for (int i = 0; i < nhogs + NWORKERS + 1; i++, n++) {
		void *(*fn)(void *) = hog_main;
		void *arg = NULL;

		if (i >= nhogs + NWORKERS) {
			fn = message_main;
			arg = (void *)(intptr_t)nhogs;
		} else if (i >= nhogs) {
			fn = worker_main;
			arg = (void *)(intptr_t)(i - nhogs);
		}
		bw_must(bw_spawn(&th[i], fn, arg), "spawn");
	}
	/* The message thread first: it ends the case, then the hogs. */
	msg = n - 1;
	bw_join(&th[msg]);
	atomic_store(&hogs_stop, 1);
	for (int i = 0; i < msg; i++)
		bw_join(&th[i]);
}

static void
write_cdf(const char *rt, const char *cs, const uint64_t *v, int n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/latency-%s-%s.dat", bw_data, rt, cs);
	if ((f = fopen(path, "w")) == NULL)
		bw_die("%s: %s", path, strerror(errno));
	fprintf(f,
	    "# wakeup latency CDF: %s %s, %d samples\n"
	    "# latency_us fraction\n",
	    rt, cs, n);
	for (int i = 0; i < n; i++)
		fprintf(f, "%.3f %.6f\n", (double)v[i] / 1e3,
		    (double)(i + 1) / n);
	if (fclose(f) != 0)
		bw_die("%s: write failed", path);
}

static int
preempt_in_force(void)
{
	long on = 0;

	return (ult_sysctl("ult.preempt", &on, NULL) == 0 && on);
}

static void
run_one(const char *rt, int nhogs)
{
	int n = nrounds * NWORKERS;
	uint64_t start;
	char cs[32];

	snprintf(cs, sizeof(cs), "hogs=%d", nhogs);
	lat_ns = calloc((size_t)n, sizeof(*lat_ns));
	replies = calloc((size_t)nrounds, sizeof(*replies));
	if (lat_ns == NULL || replies == NULL)
		bw_die("out of memory");
	atomic_store(&hogs_stop, 0);
	atomic_store(&hog_loops, 0);
	bw_rt_start(rt, 0, 1);
	if (bw_ult && nhogs > 0 && !preempt_in_force()) {
		/* Hogs that never yield would keep every worker. */
		fprintf(stderr,
		    "skip: %s %s: no asynchronous preemption in this "
		    "build (sanitizer or static)\n",
		    rt, cs);
		bw_rt_stop();
		free(lat_ns);
		free(replies);
		return;
	}
	for (int w = 0; w < NWORKERS; w++)
		bw_sem_init(&wake[w], 0);
	bw_sem_init(&done, 0);
	alarm(bw_quick ? 60 : 300);
	start = ult_now();
	run_threads(nhogs);
	start = ult_now() - start;
	alarm(0);
	for (int w = 0; w < NWORKERS; w++)
		bw_sem_destroy(&wake[w]);
	bw_sem_destroy(&done);
	bw_rt_stop();
	for (int r = 0; r < nrounds; r++)
		if (atomic_load(&replies[r]) != NWORKERS)
			bw_die("%s %s: round %d got %d replies", rt, cs, r,
			    atomic_load(&replies[r]));
	qsort(lat_ns, (size_t)n, sizeof(*lat_ns), bw_cmp_u64);
	bw_emit(cs, rt, "p50_us", 1,
	    (double)lat_ns[bw_rank((size_t)n, 0.50)] / 1e3);
	bw_emit(cs, rt, "p99_us", 1,
	    (double)lat_ns[bw_rank((size_t)n, 0.99)] / 1e3);
	bw_emit(cs, rt, "p999_us", 1,
	    (double)lat_ns[bw_rank((size_t)n, 0.999)] / 1e3);
	bw_emit(cs, rt, "max_us", 1, (double)lat_ns[n - 1] / 1e3);
	fprintf(stderr, "latency: %-7s %-8s %d rounds in %.2f s%s\n", cs, rt,
	    nrounds, (double)start / 1e9,
	    nhogs > 0 && atomic_load(&hog_loops) == 0 ? " (hogs never ran)"
						      : "");
	if (bw_data != NULL)
		write_cdf(rt, cs, lat_ns, n);
	free(lat_ns);
	free(replies);
}

int
main(int argc, char **argv)
{
	static const char *const rts[] = {"ult", "ult-4bsd", "pthread", NULL};
	static char cases[2][32];
	const char *const casep[3] = {cases[0], cases[1], NULL};
	const char *const *const groups[] = {casep, rts, NULL};
	/* The CPUs this process may use: what ult starts workers for. */
	int ncpu = bw_ncpus(), hogs[2] = {0, ncpu};

	for (int c = 0; c < 2; c++)
		snprintf(cases[c], sizeof(cases[c]), "hogs=%d", hogs[c]);
	bw_args("latency", argc, argv, NULL, groups);
	if (bw_quick)
		nrounds = 100;
	if (ncpu < 1 || ncpu > ULT_MAXCPU)
		bw_die("odd CPU count %d", ncpu);
	bw_watchdog("latency");
	iters_per_us = bw_calibrate();
	fprintf(stderr,
	    "latency: 1 message + %d workers, %d rounds of %d ms, %d us work; "
	    "busy loop %.0f iterations/us\n",
	    NWORKERS, nrounds, PERIOD_NS / 1000000, WORK_US, iters_per_us);
	for (int c = 0; c < 2; c++) {
		if (!bw_selected(cases[c]))
			continue;
		for (int r = 0; r < 3; r++)
			if (bw_selected(rts[r]))
				run_one(rts[r], hogs[c]);
	}
	return (0);
}
