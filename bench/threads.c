/*
 * threads: sysbench's `threads' workload on ult, under sched_ule and
 * sched_4bsd: T uthreads; each event takes mutex (event mod M), yields
 * and unlocks, `yields' times over (defaults M = 8, yields = 1000).  The
 * yields make it a scheduler benchmark: every one is a trip through the
 * run queues and their locks, per-CPU for ULE, one global sched_lock for
 * 4BSD.  Reported: events/s, the 4BSD/ULE ratio, and how many scheduler-
 * lock acquisitions had to wait, for T = 1, 2, 8, 64 at 1, 2, 4 and 8
 * workers (more workers than CPUs is allowed and measured as such).
 *
 * The FreeBSD result to set against it: per-CPU scheduler locks were
 * 3.8x faster than one global lock on 8 cores.
 *
 * Usage: threads [--quick] [--secs S] [--locks M] [--yields N]
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ult.h"

#define MAXM 64

static ult_mutex_t mtx[MAXM];
static int nlocks = 8, nyields = 1000;
static atomic_int stop;
static atomic_long events;

static void *
worker(void *arg)
{
	long ev = (long)(intptr_t)arg, mine = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		ult_mutex_t *m = &mtx[ev % nlocks];

		for (int i = 0; i < nyields; i++) {
			ult_mutex_lock(m);
			ult_yield();
			ult_mutex_unlock(m);
		}
		mine++;
		ev++;
	}
	atomic_fetch_add(&events, mine);
	return (NULL);
}

struct result {
	double eps;
	uint64_t waits;
};

static struct result
run(const char *policy, int workers, int t, double secs)
{
	struct ult_config cfg = {0};
	ult_thread_t **th = calloc((size_t)t, sizeof(*th));
	struct result r = {0, 0};
	uint64_t t0, el;

	cfg.ncpu = workers;
	cfg.policy = policy;
	if (th == NULL || ult_init(&cfg) != 0) {
		fprintf(stderr, "threads: ult_init(%s, %d) failed\n", policy,
		    workers);
		exit(1);
	}
	for (int k = 0; k < nlocks; k++)
		ult_mutex_init(&mtx[k]);
	atomic_store(&stop, 0);
	atomic_store(&events, 0);
	t0 = ult_now();
	for (int i = 0; i < t; i++)
		ult_spawn(&th[i], NULL, worker, (void *)(intptr_t)i);
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < t; i++)
		ult_join(th[i], NULL);
	el = ult_now() - t0;
	for (int c = 0; c < workers; c++) {
		struct ult_cpu_info ci;

		if (ult_cpu_info(c, &ci) == 0)
			r.waits += ci.sched_lock_waits;
	}
	ult_shutdown();
	r.eps = (double)atomic_load(&events) / ((double)el / 1e9);
	free(th);
	return (r);
}

int
main(int argc, char **argv)
{
	static const int ts[] = {1, 2, 8, 64}, ws[] = {1, 2, 4, 8};
	double secs = 1.0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			secs = 0.1;
		else if (strcmp(argv[i], "--secs") == 0 && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (strcmp(argv[i], "--locks") == 0 && i + 1 < argc)
			nlocks = atoi(argv[++i]);
		else if (strcmp(argv[i], "--yields") == 0 && i + 1 < argc)
			nyields = atoi(argv[++i]);
	}
	if (nlocks < 1 || nlocks > MAXM || nyields < 1 || secs <= 0) {
		fprintf(stderr, "threads: bad arguments\n");
		return (2);
	}
	printf("sysbench threads on ult: M=%d locks, %d yields per event, "
	       "%.1f s per cell; %ld CPUs here\n",
	    nlocks, nyields, secs, sysconf(_SC_NPROCESSORS_ONLN));
	printf("%7s %3s | %12s %12s | %7s | %14s %14s\n", "workers", "T",
	    "ULE ev/s", "4BSD ev/s", "4BSD/ULE", "ULE lock waits",
	    "4BSD lock waits");
	for (unsigned w = 0; w < sizeof(ws) / sizeof(ws[0]); w++) {
		for (unsigned k = 0; k < sizeof(ts) / sizeof(ts[0]); k++) {
			struct result u = run("ule", ws[w], ts[k], secs);
			struct result b = run("4bsd", ws[w], ts[k], secs);

			printf("%7d %3d | %12.0f %12.0f | %7.2f | %14llu "
			       "%14llu\n",
			    ws[w], ts[k], u.eps, b.eps,
			    u.eps > 0 ? b.eps / u.eps : 0.0,
			    (unsigned long long)u.waits,
			    (unsigned long long)b.waits);
			fflush(stdout);
		}
	}
	return (0);
}
