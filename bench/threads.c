/*
 * threads: sysbench's `threads' workload (benchmarks.md section 1).  T
 * threads; each event takes mutex (event mod M), yields and unlocks,
 * `yields' times over (defaults M = 8, yields = 1000), the mutex chosen
 * round-robin over events globally as sysbench does.  The yields make it
 * a scheduler benchmark: every one is a trip through the run queues and
 * their locks, per-CPU for ULE, one global sched_lock for 4BSD.
 *
 * Runtimes: ult under sched_ule (`ult') and sched_4bsd (`ult-4bsd') on
 * all workers, and kernel threads with pthread mutexes and sched_yield()
 * (`pthread', the baseline; bench/run.sh adds the real `sysbench threads'
 * beside it).  Metrics: events/s and the per-event latency average, 95th
 * percentile and maximum, in ms, as sysbench prints them.
 *
 * The lock-cost table (issue 5) follows: both policies at 1, 2, 4 and 8
 * workers (more workers than CPUs is allowed and measured as such),
 * events/s and how many scheduler-lock acquisitions had to wait.  The
 * FreeBSD result to set against it: per-CPU scheduler locks were 3.8x
 * faster than one global lock on 8 cores.
 *
 * Output: contract R lines on stdout (see bench/README.md).
 * Usage: threads [--quick] [--secs S] [--locks M] [--yields N]
 */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ult.h"
#include "work.h"

#define MAXM 64
#define MAXLAT (1u << 20)

static ult_mutex_t umtx[MAXM];
static pthread_mutex_t pmtx[MAXM];
static int nlocks = 8, nyields = 1000;
static atomic_int stop;
static atomic_long next_event, events;
static double *lat; /* per-event ms, the first MAXLAT events */

static void
record(uint64_t t0)
{
	long i = atomic_fetch_add_explicit(&events, 1, memory_order_relaxed);

	if (i < (long)MAXLAT)
		lat[i] = (double)(bw_now_ns() - t0) / 1e6;
}

static void *
ult_worker(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		long ev = atomic_fetch_add(&next_event, 1);
		ult_mutex_t *m = &umtx[ev % nlocks];
		uint64_t t0 = bw_now_ns();

		for (int i = 0; i < nyields; i++) {
			ult_mutex_lock(m);
			ult_yield();
			ult_mutex_unlock(m);
		}
		record(t0);
	}
	return (NULL);
}

static void *
pthread_worker(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		long ev = atomic_fetch_add(&next_event, 1);
		pthread_mutex_t *m = &pmtx[ev % nlocks];
		uint64_t t0 = bw_now_ns();

		for (int i = 0; i < nyields; i++) {
			pthread_mutex_lock(m);
			sched_yield();
			pthread_mutex_unlock(m);
		}
		record(t0);
	}
	return (NULL);
}

struct result {
	double eps, avg, p95, max;
	uint64_t waits;
};

static void
summarise(struct result *r, uint64_t el)
{
	long n = atomic_load(&events), k = n < (long)MAXLAT ? n : MAXLAT;
	double sum = 0;

	r->eps = (double)n / ((double)el / 1e9);
	if (k == 0)
		return;
	qsort(lat, (size_t)k, sizeof(lat[0]), bw_cmp_double);
	for (long i = 0; i < k; i++)
		sum += lat[i];
	r->avg = sum / (double)k;
	r->p95 = lat[(long)(0.95 * (double)(k - 1))];
	r->max = lat[k - 1];
}

static void
reset(void)
{
	atomic_store(&stop, 0);
	atomic_store(&events, 0);
	atomic_store(&next_event, 0);
}

static struct result
run_ult(const char *policy, int workers, int t, double secs)
{
	struct ult_config cfg = {0};
	ult_thread_t **th = calloc((size_t)t, sizeof(*th));
	struct result r = {0};
	uint64_t t0;
	int err;

	cfg.ncpu = workers;
	cfg.policy = policy;
	cfg.preempt = 1;
	if (th == NULL || (err = ult_init(&cfg)) != 0) {
		fprintf(stderr, "threads: ult_init(%s, %d) failed\n", policy,
		    workers);
		exit(1);
	}
	for (int k = 0; k < nlocks; k++)
		ult_mutex_init(&umtx[k]);
	reset();
	t0 = bw_now_ns();
	for (int i = 0; i < t; i++)
		if ((err = ult_spawn(&th[i], NULL, ult_worker, NULL)) != 0) {
			fprintf(stderr, "threads: ult_spawn: %s\n",
			    strerror(err));
			exit(1);
		}
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < t; i++)
		ult_join(th[i], NULL);
	summarise(&r, bw_now_ns() - t0);
	for (int c = 0; c < ult_ncpu(); c++) {
		struct ult_cpu_info ci;

		if (ult_cpu_info(c, &ci) == 0)
			r.waits += ci.sched_lock_waits;
	}
	for (int k = 0; k < nlocks; k++)
		if (ult_mutex_destroy(&umtx[k]) != 0) {
			fprintf(stderr, "threads: a mutex is still held\n");
			exit(1);
		}
	ult_shutdown();
	free(th);
	return (r);
}

static struct result
run_pthread(int t, double secs)
{
	pthread_t *th = calloc((size_t)t, sizeof(*th));
	struct result r = {0};
	uint64_t t0;

	if (th == NULL)
		exit(1);
	for (int k = 0; k < nlocks; k++)
		pthread_mutex_init(&pmtx[k], NULL);
	reset();
	t0 = bw_now_ns();
	for (int i = 0; i < t; i++)
		if (pthread_create(&th[i], NULL, pthread_worker, NULL) != 0) {
			fprintf(stderr, "threads: pthread_create failed\n");
			exit(1);
		}
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	summarise(&r, bw_now_ns() - t0);
	free(th);
	return (r);
}

static void
emit(const char *cs, const char *rt, const struct result *r)
{
	printf("R\tthreads\t%s\t%s\tevents/s\t%.1f\n", cs, rt, r->eps);
	printf("R\tthreads\t%s\t%s\tavg_ms\t%.3f\n", cs, rt, r->avg);
	printf("R\tthreads\t%s\t%s\tp95_ms\t%.3f\n", cs, rt, r->p95);
	printf("R\tthreads\t%s\t%s\tmax_ms\t%.3f\n", cs, rt, r->max);
	fflush(stdout);
}

static void
check(const struct result *r, const char *what)
{
	/* Every thread runs its event to the end once started: a run with
	 * no event at all means the workload never made progress. */
	if (r->eps <= 0) {
		fprintf(stderr, "threads: %s completed no event\n", what);
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	static const int ts[] = {1, 2, 8, 64}, ws[] = {1, 2, 4, 8};
	double secs = 2.0, lsecs = 0.5;
	char cs[32];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			secs = lsecs = 0.1;
		else if (strcmp(argv[i], "--secs") == 0 && i + 1 < argc)
			secs = lsecs = atof(argv[++i]);
		else if (strcmp(argv[i], "--locks") == 0 && i + 1 < argc)
			nlocks = atoi(argv[++i]);
		else if (strcmp(argv[i], "--yields") == 0 && i + 1 < argc)
			nyields = atoi(argv[++i]);
		else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
			i++; /* no plot data of its own: run.sh plots R lines */
	}
	if (nlocks < 1 || nlocks > MAXM || nyields < 1 || secs <= 0 ||
	    (lat = malloc(MAXLAT * sizeof(*lat))) == NULL) {
		fprintf(stderr, "threads: bad arguments\n");
		return (2);
	}
	fprintf(stderr,
	    "threads: M=%d locks, %d yields per event, %.1f s per cell, "
	    "%ld CPUs\n",
	    nlocks, nyields, secs, sysconf(_SC_NPROCESSORS_ONLN));
	for (unsigned k = 0; k < sizeof(ts) / sizeof(ts[0]); k++) {
		struct result u, b, p;

		snprintf(cs, sizeof(cs), "T=%d", ts[k]);
		u = run_ult("ule", 0, ts[k], secs);
		b = run_ult("4bsd", 0, ts[k], secs);
		p = run_pthread(ts[k], secs);
		check(&u, "ule");
		check(&b, "4bsd");
		check(&p, "pthread");
		emit(cs, "ult", &u);
		emit(cs, "ult-4bsd", &b);
		emit(cs, "pthread", &p);
		fprintf(stderr,
		    "  %-5s ult %.0f  ult-4bsd %.0f  pthread %.0f ev/s\n", cs,
		    u.eps, b.eps, p.eps);
	}
	/* Lock cost: the same workload across worker counts. */
	for (unsigned w = 0; w < sizeof(ws) / sizeof(ws[0]); w++) {
		for (unsigned k = 0; k < sizeof(ts) / sizeof(ts[0]); k++) {
			struct result u = run_ult("ule", ws[w], ts[k], lsecs);
			struct result b = run_ult("4bsd", ws[w], ts[k], lsecs);

			check(&u, "ule");
			check(&b, "4bsd");
			snprintf(cs, sizeof(cs), "w=%d,T=%d", ws[w], ts[k]);
			printf("R\tthreads\t%s\tult\tevents/s\t%.1f\n", cs,
			    u.eps);
			printf("R\tthreads\t%s\tult-4bsd\tevents/s\t%.1f\n", cs,
			    b.eps);
			printf("R\tthreads\t%s\tult\tlock_waits\t%llu\n", cs,
			    (unsigned long long)u.waits);
			printf("R\tthreads\t%s\tult-4bsd\tlock_waits\t%llu\n",
			    cs, (unsigned long long)b.waits);
			fflush(stdout);
		}
	}
	free(lat);
	return (0);
}
