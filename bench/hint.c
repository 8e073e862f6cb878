/*
 * hint: Robert Love's scheduler-hint semaphore test (benchmarks.md
 * section 6).  Five threads share one semaphore (initial value 1); each
 * loops a fixed number of times: compute, wait, compute as long again
 * inside the critical section, post.  A thread preempted while it holds
 * the semaphore stalls the other four, which run into it and block: the
 * lock-holder-preemption convoy that Love's sched_hint(HINT_TIME) and
 * Solaris' schedctl_start() address.
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
#include <sched.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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
static int one_cpu; /* case w=1 */
static cpu_set_t first_cpu;
static long counter; /* guarded by the semaphore alone */
static ult_sem_t usem;
static sem_t psem;

struct tstat {
	uint64_t nvcsw, nivcsw, deferred, forced;
};
static struct tstat ts[NTHR];

static void *
ult_worker(void *arg)
{
	struct tstat *st = arg;
	struct ult_thread_info i;

	for (long k = 0; k < iters; k++) {
		bw_spin(spins);
		if (ult_sem_wait(&usem) != 0)
			abort();
		if (hinted)
			ult_schedctl_start();
		bw_spin(spins);
		counter++;
		if (hinted)
			ult_schedctl_stop();
		if (ult_sem_post(&usem) != 0)
			abort();
	}
	if (ult_thread_info(NULL, &i) != 0)
		abort();
	st->nvcsw = i.nvcsw;
	st->nivcsw = i.nivcsw;
	st->deferred = i.deferred;
	st->forced = i.forced;
	return (NULL);
}

static void *
pt_worker(void *arg)
{
	struct tstat *st = arg;
	struct rusage ru;

	if (one_cpu)
		pthread_setaffinity_np(pthread_self(), sizeof(first_cpu),
		    &first_cpu);
	for (long k = 0; k < iters; k++) {
		bw_spin(spins);
		while (sem_wait(&psem) != 0)
			if (errno != EINTR)
				abort();
		bw_spin(spins);
		counter++;
		if (sem_post(&psem) != 0)
			abort();
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
	struct ult_config cfg = {0};
	ult_thread_t *ut[NTHR];
	pthread_t pt[NTHR];
	uint64_t t0, t1;
	int e;

	counter = 0;
	memset(ts, 0, sizeof(ts));
	if (v == V_PTHREAD) {
		sem_init(&psem, 0, 1);
		t0 = bw_now_ns();
		for (int i = 0; i < NTHR; i++)
			if (pthread_create(&pt[i], NULL, pt_worker, &ts[i]) !=
			    0)
				abort();
		for (int i = 0; i < NTHR; i++)
			pthread_join(pt[i], NULL);
		t1 = bw_now_ns();
		sem_destroy(&psem);
	} else {
		cfg.ncpu = one_cpu ? 1 : 0; /* 0: all workers */
		cfg.policy = "ule";
		cfg.preempt = 1;
		if ((e = ult_init(&cfg)) != 0) {
			fprintf(stderr, "hint: ult_init: %s\n", strerror(e));
			exit(1);
		}
		hinted = v == V_HINT;
		ult_sem_init(&usem, 1);
		t0 = bw_now_ns();
		for (int i = 0; i < NTHR; i++)
			if (ult_spawn(&ut[i], NULL, ult_worker, &ts[i]) != 0)
				abort();
		for (int i = 0; i < NTHR; i++)
			ult_join(ut[i], NULL);
		t1 = bw_now_ns();
		ult_sem_destroy(&usem);
		ult_shutdown();
	}
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < NTHR; i++) {
		sum->nvcsw += ts[i].nvcsw;
		sum->nivcsw += ts[i].nivcsw;
		sum->deferred += ts[i].deferred;
		sum->forced += ts[i].forced;
	}
	if (counter != NTHR * iters) {
		fprintf(stderr,
		    "hint: FAIL %s: counter %ld, want %ld: the semaphore did "
		    "not exclude\n",
		    vname[v], counter, NTHR * iters);
		exit(1);
	}
	return ((double)(t1 - t0) / 1e9);
}

static double
median(const double *v, int n)
{
	double s[MAXRUNS];

	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), bw_cmp_double);
	return (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2);
}

static void
result(const char *rt, const char *metric, double v)
{
	printf("R\thint\t%s\t%s\t%s\t%.4f\n", one_cpu ? "w=1" : "all", rt,
	    metric, v);
}

int
main(int argc, char **argv)
{
	static double sec[NV][MAXRUNS], vol[NV][MAXRUNS], invol[NV][MAXRUNS];
	const char *data = NULL;
	int quick = 0, runs = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
			data = argv[++i];
		else {
			fprintf(stderr,
			    "usage: hint [--quick] [--runs N] "
			    "[--data DIR]\n");
			return (2);
		}
	}
	if (runs == 0)
		runs = quick ? 2 : 10;
	if (runs < 1 || runs > MAXRUNS) {
		fprintf(stderr, "hint: --runs 1..%d\n", MAXRUNS);
		return (2);
	}
	iters = quick ? 100 : 1600;
	bw_watchdog("hint");
	spins_per_us = bw_calibrate();
	spins = (unsigned long)(WORK_US * spins_per_us);
	fprintf(stderr,
	    "hint: %d threads x %ld iterations of %.0f us + %.0f us "
	    "(critical section), %lu spins each (%.0f/us), %d runs\n",
	    NTHR, iters, WORK_US, WORK_US, spins, spins_per_us, runs);
	if (sched_getaffinity(0, sizeof(first_cpu), &first_cpu) != 0)
		CPU_ZERO(&first_cpu);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &first_cpu)) {
			CPU_ZERO(&first_cpu);
			CPU_SET(c, &first_cpu);
			break;
		}
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
			result(vname[v], "s", median(sec[v], runs));
			result(vname[v], "nvcsw", median(vol[v], runs));
			result(vname[v], "nivcsw", median(invol[v], runs));
		}
		if (data != NULL)
			for (int v = 0; v < NV; v++) {
				char path[4096];
				FILE *f;

				snprintf(path, sizeof(path), "%s/hint-%s%s.txt",
				    data, vname[v], one_cpu ? "-w1" : "");
				if ((f = fopen(path, "w")) == NULL) {
					perror(path);
					return (1);
				}
				for (int r = 0; r < runs; r++)
					fprintf(f, "%.6f\n", sec[v][r]);
				fclose(f);
				fprintf(stderr, "wrote %s\n", path);
			}
	}
	return (0);
}
