/*
 * latency: wakeup latency in the manner of schbench (docs: shared
 * benchmarks.md section 2), the delay between "you may run" and running.
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
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ult.h"
#include "work.h"

#define NWORKERS 4
#define PERIOD_NS 1000000
#define WORK_US 50
#define HOG_WARMUP_NS 50000000

static int quick, nrounds = 2000;
static const char *datadir;
static double iters_per_us;

/* ---- the runtime under test: ult objects or pthread ones ---- */

static int use_ult;
static ult_sem_t u_wake[NWORKERS], u_done;
static sem_t p_wake[NWORKERS], p_done;

static void
must(int err, const char *what)
{
	if (err != 0) {
		fprintf(stderr, "latency: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void
sem_take(ult_sem_t *us, sem_t *ps)
{
	if (use_ult) {
		must(ult_sem_wait(us), "ult_sem_wait");
		return;
	}
	while (sem_wait(ps) != 0)
		if (errno != EINTR)
			must(errno, "sem_wait");
}

static void
sem_give(ult_sem_t *us, sem_t *ps)
{
	if (use_ult)
		must(ult_sem_post(us), "ult_sem_post");
	else if (sem_post(ps) != 0)
		must(errno, "sem_post");
}

static void
nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000),
	    (long)(ns % 1000000000)};

	if (use_ult) {
		must(ult_sleep_ns(ns), "ult_sleep_ns");
		return;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* ---- the benchmark ---- */

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
		sem_take(&u_wake[w], &p_wake[w]);
		lat_ns[r * NWORKERS + w] = ult_now() - t0;
		atomic_fetch_add(&replies[r], 1);
		bw_busy_us(WORK_US, iters_per_us);
		sem_give(&u_done, &p_done);
	}
	return (NULL);
}

static void *
message_main(void *arg)
{
	int nhogs = (int)(intptr_t)arg;

	if (nhogs > 0)
		nap(HOG_WARMUP_NS);
	for (int r = 0; r < nrounds; r++) {
		nap(PERIOD_NS);
		t0 = ult_now();
		for (int w = 0; w < NWORKERS; w++)
			sem_give(&u_wake[w], &p_wake[w]);
		for (int w = 0; w < NWORKERS; w++)
			sem_take(&u_done, &p_done);
		if (atomic_load(&replies[r]) != NWORKERS) {
			fprintf(stderr,
			    "latency: round %d got %d replies, not %d\n", r,
			    atomic_load(&replies[r]), NWORKERS);
			exit(1);
		}
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
	ult_thread_t *ut[MAXTHR];
	pthread_t pt[MAXTHR];
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
		if (use_ult)
			must(ult_spawn(&ut[i], NULL, fn, arg), "ult_spawn");
		else
			must(pthread_create(&pt[i], NULL, fn, arg),
			    "pthread_create");
	}
	/* The message thread first: it ends the case, then the hogs. */
	msg = n - 1;
	if (use_ult)
		must(ult_join(ut[msg], NULL), "ult_join");
	else
		must(pthread_join(pt[msg], NULL), "pthread_join");
	atomic_store(&hogs_stop, 1);
	for (int i = 0; i < msg; i++)
		if (use_ult)
			must(ult_join(ut[i], NULL), "ult_join");
		else
			must(pthread_join(pt[i], NULL), "pthread_join");
}

/* Nearest rank: the smallest sample with at least p of them at or
 * below it. */
static double
pct_us(const uint64_t *v, int n, double p)
{
	long k = (long)((p * n) + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return ((double)v[k - 1] / 1e3);
}

static void
write_cdf(const char *rt, const char *cs, const uint64_t *v, int n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/latency-%s-%s.dat", datadir, rt, cs);
	if ((f = fopen(path, "w")) == NULL) {
		fprintf(stderr, "latency: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fprintf(f,
	    "# wakeup latency CDF: %s %s, %d samples\n"
	    "# latency_us fraction\n",
	    rt, cs, n);
	for (int i = 0; i < n; i++)
		fprintf(f, "%.3f %.6f\n", (double)v[i] / 1e3,
		    (double)(i + 1) / n);
	if (fclose(f) != 0) {
		fprintf(stderr, "latency: %s: write failed\n", path);
		exit(1);
	}
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
	struct ult_config cfg = {0};
	int n = nrounds * NWORKERS;
	uint64_t start;
	char cs[32];

	snprintf(cs, sizeof(cs), "hogs=%d", nhogs);
	use_ult = strncmp(rt, "ult", 3) == 0;
	lat_ns = calloc((size_t)n, sizeof(*lat_ns));
	replies = calloc((size_t)nrounds, sizeof(*replies));
	if (lat_ns == NULL || replies == NULL) {
		fprintf(stderr, "latency: out of memory\n");
		exit(1);
	}
	atomic_store(&hogs_stop, 0);
	atomic_store(&hog_loops, 0);
	if (use_ult) {
		cfg.policy = strcmp(rt, "ult-4bsd") == 0 ? "4bsd" : "ule";
		cfg.preempt = 1;
		must(ult_init(&cfg), "ult_init");
		if (nhogs > 0 && !preempt_in_force()) {
			/* Hogs that never yield would keep every worker. */
			fprintf(stderr,
			    "skip: %s %s: no asynchronous preemption in this "
			    "build (sanitizer or static)\n",
			    rt, cs);
			must(ult_shutdown(), "ult_shutdown");
			free(lat_ns);
			free(replies);
			return;
		}
		for (int w = 0; w < NWORKERS; w++)
			must(ult_sem_init(&u_wake[w], 0), "ult_sem_init");
		must(ult_sem_init(&u_done, 0), "ult_sem_init");
	} else {
		for (int w = 0; w < NWORKERS; w++)
			if (sem_init(&p_wake[w], 0, 0) != 0)
				must(errno, "sem_init");
		if (sem_init(&p_done, 0, 0) != 0)
			must(errno, "sem_init");
	}
	alarm(quick ? 60 : 300);
	start = ult_now();
	run_threads(nhogs);
	start = ult_now() - start;
	alarm(0);
	if (use_ult)
		must(ult_shutdown(), "ult_shutdown");
	else {
		for (int w = 0; w < NWORKERS; w++)
			sem_destroy(&p_wake[w]);
		sem_destroy(&p_done);
	}
	for (int r = 0; r < nrounds; r++)
		if (atomic_load(&replies[r]) != NWORKERS) {
			fprintf(stderr,
			    "latency: %s %s: round %d got %d "
			    "replies\n",
			    rt, cs, r, atomic_load(&replies[r]));
			exit(1);
		}
	qsort(lat_ns, (size_t)n, sizeof(*lat_ns), bw_cmp_u64);
	printf("R\tlatency\t%s\t%s\tp50_us\t%.1f\n", cs, rt,
	    pct_us(lat_ns, n, 0.50));
	printf("R\tlatency\t%s\t%s\tp99_us\t%.1f\n", cs, rt,
	    pct_us(lat_ns, n, 0.99));
	printf("R\tlatency\t%s\t%s\tp999_us\t%.1f\n", cs, rt,
	    pct_us(lat_ns, n, 0.999));
	printf("R\tlatency\t%s\t%s\tmax_us\t%.1f\n", cs, rt,
	    (double)lat_ns[n - 1] / 1e3);
	fflush(stdout);
	fprintf(stderr, "latency: %-7s %-8s %d rounds in %.2f s%s\n", cs, rt,
	    nrounds, (double)start / 1e9,
	    nhogs > 0 && atomic_load(&hog_loops) == 0 ? " (hogs never ran)"
						      : "");
	if (datadir != NULL)
		write_cdf(rt, cs, lat_ns, n);
	free(lat_ns);
	free(replies);
}

int
main(int argc, char **argv)
{
	static const char *const rts[] = {"ult", "ult-4bsd", "pthread"};
	static char cases[2][32];
	const char *const casep[2] = {cases[0], cases[1]};
	cpu_set_t set;
	long ncpu;
	int hogs[2];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
			nrounds = 100;
		} else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
			datadir = argv[++i];
	}
	/* The CPUs this process may use: what ult starts workers for. */
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		ncpu = CPU_COUNT(&set);
	else
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	hogs[0] = 0;
	hogs[1] = (int)ncpu;
	if (ncpu < 1 || ncpu > ULT_MAXCPU) {
		fprintf(stderr, "latency: odd CPU count %ld\n", ncpu);
		return (1);
	}
	bw_watchdog("latency");
	iters_per_us = bw_calibrate();
	fprintf(stderr,
	    "latency: 1 message + %d workers, %d rounds of %d ms, %d us work; "
	    "busy loop %.0f iterations/us\n",
	    NWORKERS, nrounds, PERIOD_NS / 1000000, WORK_US, iters_per_us);
	for (int c = 0; c < 2; c++)
		snprintf(cases[c], sizeof(cases[c]), "hogs=%d", hogs[c]);
	for (int c = 0; c < 2; c++) {
		if (!bw_selected(argc, argv, cases[c], casep, 2))
			continue;
		for (int r = 0; r < 3; r++)
			if (bw_selected(argc, argv, rts[r], rts, 3))
				run_one(rts[r], hogs[c]);
	}
	return (0);
}
