/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hint: Robert Love's scheduler-hint semaphore test.  Five threads share one
 * semaphore (initial value 1); each loops a fixed number of times: compute,
 * wait, compute as long again inside the critical section, post.  A thread
 * preempted while it holds the semaphore stalls the other four, which run into
 * it and block: the lock-holder-preemption convoy that Love's
 * sched_hint(HINT_TIME) and Solaris' schedctl_start() address.
 *
 *   ult       uthreads, preempt=1, ult_sem_t
 *   ult+hint  the same, with ult_schedctl_start() after the wait and
 *             ult_schedctl_stop() before the post (a preemption owed
 *             inside is deferred to the stop, up to a bound)
 *   pthread   five pthreads and a POSIX sem_t
 *
 * Two cases: `all' (every worker; pthreads unpinned) and `w=1' (one
 * worker; pthreads pinned to one CPU), where a preempted holder stalls
 * everyone and the hint should pay most.
 *
 * Work is a calibrated loop (iterations per microsecond measured at
 * start), not a wall-clock spin: 30 us outside and 30 us inside, 1600
 * iterations per thread (about 0.5 s a run on 2 CPUs); --quick does 100.
 * Reported per variant, the median of 10 runs (2 with --quick): wall time
 * `s', and the voluntary and involuntary switches of the five threads
 * (ult_thread_info for uthreads, getrusage(RUSAGE_THREAD) for pthreads).
 * Check: a counter incremented inside the critical section without any
 * atomic must end at 5 x iterations.
 *
 * Usage: hint [--quick] [--runs N] [--data DIR]
 *   --data DIR  write DIR/hint-<runtime>.txt (case all) and
 *               DIR/hint-<runtime>-w1.txt, one duration (s) per line,
 *               for ministat
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "contract.h"
#include "rt.h"
#include "ult.h"
#include "work.h"

#define NTHR 5
#define WORK_US 30.0
#define MAXRUNS 100

enum {
	V_ULT,
	V_HINT,
	V_PTHREAD,
	NV
};
static const char *vname[NV] = {"ult", "ult+hint", "pthread"};

static double spins_per_us;
static long iters;
static unsigned long spins;
static int hinted;
static int one_cpu;   /* case w=1 */
static int first_cpu; /* where w=1 pins kernel threads */
static long counter;  /* guarded by the semaphore alone */
static bw_sem_t sem;

struct tstat {
	uint64_t nvcsw, nivcsw, deferred, forced;
};
static struct tstat ts[NTHR];

static void *
worker(void *arg)
{
	struct tstat *st = arg;
	struct ult_thread_info i;
	struct rusage ru;

	if (!bw_ult && one_cpu)
		(void)bw_pin(first_cpu);
	for (long k = 0; k < iters; k++) {
		bw_spin(spins);
		bw_sem_wait(&sem);
		if (hinted)
			ult_schedctl_start();
		bw_spin(spins);
		counter++;
		if (hinted)
			ult_schedctl_stop();
		bw_sem_post(&sem);
	}
	if (bw_ult) {
		bw_must(ult_thread_info(NULL, &i), "ult_thread_info");
		st->nvcsw = i.nvcsw;
		st->nivcsw = i.nivcsw;
		st->deferred = i.deferred;
		st->forced = i.forced;
		return (NULL);
	}
	/* The thread's own counts since it was created. */
	getrusage(RUSAGE_THREAD, &ru);
	st->nvcsw = (uint64_t)ru.ru_nvcsw;
	st->nivcsw = (uint64_t)ru.ru_nivcsw;
	st->deferred = st->forced = 0;
	return (NULL);
}

/* One run of variant v; returns its wall time in s and fills the sums. */
static double
run(int v, struct tstat *sum)
{
	bw_thread_t th[NTHR];
	uint64_t t0, t1;

	counter = 0;
	memset(ts, 0, sizeof(ts));
	bw_rt_start(vname[v], one_cpu ? 1 : 0, 1); /* 0: all workers */
	hinted = v == V_HINT;
	bw_sem_init(&sem, 1);
	t0 = bw_now_ns();
	for (int i = 0; i < NTHR; i++)
		bw_must(bw_spawn(&th[i], worker, &ts[i]), "spawn");
	for (int i = 0; i < NTHR; i++)
		bw_join(&th[i]);
	t1 = bw_now_ns();
	bw_sem_destroy(&sem);
	bw_rt_stop();
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < NTHR; i++) {
		sum->nvcsw += ts[i].nvcsw;
		sum->nivcsw += ts[i].nivcsw;
		sum->deferred += ts[i].deferred;
		sum->forced += ts[i].forced;
	}
	if (counter != NTHR * iters)
		bw_die("FAIL %s: counter %ld, want %ld: the semaphore did "
		       "not exclude",
		    vname[v], counter, NTHR * iters);
	return ((double)(t1 - t0) / 1e9);
}

static void
result(const char *rt, const char *metric, double v)
{
	bw_emit(one_cpu ? "w=1" : "all", rt, metric, 4, v);
}

int
main(int argc, char **argv)
{
	static double sec[NV][MAXRUNS], vol[NV][MAXRUNS], invol[NV][MAXRUNS];
	int runs = 0;
	const struct bw_opt opts[] = {
	    {"--runs", BW_INT, &runs, 1, MAXRUNS, "N"},
	    {0},
	};

	bw_args("hint", argc, argv, opts, NULL);
	if (runs == 0)
		runs = bw_quick ? 2 : 10;
	iters = bw_quick ? 100 : 1600;
	bw_watchdog("hint");
	spins_per_us = bw_calibrate();
	spins = (unsigned long)(WORK_US * spins_per_us);
	fprintf(stderr,
	    "hint: %d threads x %ld iterations of %.0f us + %.0f us "
	    "(critical section), %lu spins each (%.0f/us), %d runs\n",
	    NTHR, iters, WORK_US, WORK_US, spins, spins_per_us, runs);
	first_cpu = bw_first_cpu();
	for (one_cpu = 0; one_cpu < 2; one_cpu++) {
		fprintf(stderr, "case %s\n", one_cpu ? "w=1" : "all");
		/* Interleave the variants so that drift in the machine's speed
		 * or load spreads over all three alike. */
		for (int r = 0; r < runs; r++)
			for (int v = 0; v < NV; v++) {
				struct tstat s;

				alarm(120);
				sec[v][r] = run(v, &s);
				alarm(0);
				vol[v][r] = (double)s.nvcsw;
				invol[v][r] = (double)s.nivcsw;
				fprintf(stderr,
				    "  run %d %-8s %.3f s  nvcsw %llu  nivcsw "
				    "%llu",
				    r + 1, vname[v], sec[v][r],
				    (unsigned long long)s.nvcsw,
				    (unsigned long long)s.nivcsw);
				if (v == V_HINT)
					fprintf(stderr,
					    "  deferred %llu forced %llu",
					    (unsigned long long)s.deferred,
					    (unsigned long long)s.forced);
				fprintf(stderr, "\n");
			}
		for (int v = 0; v < NV; v++) {
			result(vname[v], "s", bw_median(sec[v], runs));
			result(vname[v], "nvcsw", bw_median(vol[v], runs));
			result(vname[v], "nivcsw", bw_median(invol[v], runs));
		}
		if (bw_data != NULL)
			for (int v = 0; v < NV; v++) {
				char path[4096];
				FILE *f;

				snprintf(path, sizeof(path), "%s/hint-%s%s.txt",
				    bw_data, vname[v], one_cpu ? "-w1" : "");
				if ((f = fopen(path, "w")) == NULL)
					bw_die("%s: %s", path, strerror(errno));
				for (int r = 0; r < runs; r++)
					fprintf(f, "%.6f\n", sec[v][r]);
				fclose(f);
				fprintf(stderr, "wrote %s\n", path);
			}
	}
	return (0);
}
