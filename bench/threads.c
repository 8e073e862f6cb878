/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * threads: sysbench's `threads' workload (sysbench --test=threads).  T
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
 * The lock-cost table follows: both policies at 1, 2, 4 and 8
 * workers (more workers than CPUs is allowed and measured as such),
 * events/s and how many scheduler-lock acquisitions had to wait.  The
 * FreeBSD result to set against it: per-CPU scheduler locks were 3.8x
 * faster than one global lock on 8 cores.
 *
 * Output: contract R lines on stdout (see bench/README.md).
 * Usage: threads [--quick] [--secs S] [--locks M] [--yields N]
 */

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "contract.h"
#include "rt.h"
#include "ult.h"
#include "work.h"

#define MAXM 64
#define MAXLAT (1u << 20)

static bw_mutex_t mtx[MAXM];
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
worker(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		long ev = atomic_fetch_add(&next_event, 1);
		bw_mutex_t *m = &mtx[ev % nlocks];
		uint64_t t0 = bw_now_ns();

		for (int i = 0; i < nyields; i++) {
			bw_mutex_lock(m);
			bw_yield();
			bw_mutex_unlock(m);
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
	r->p95 = lat[bw_rank((size_t)k, 0.95)];
	r->max = lat[k - 1];
}

static void
reset(void)
{
	atomic_store(&stop, 0);
	atomic_store(&events, 0);
	atomic_store(&next_event, 0);
}

/* T threads on runtime rt (ult: on that many workers, 0: all). */
static struct result
run(const char *rt, int workers, int t, double secs)
{
	bw_thread_t *th = calloc((size_t)t, sizeof(*th));
	struct result r = {0};
	uint64_t t0;

	if (th == NULL)
		bw_die("out of memory");
	bw_rt_start(rt, workers, 1);
	for (int k = 0; k < nlocks; k++)
		bw_mutex_init(&mtx[k]);
	reset();
	t0 = bw_now_ns();
	for (int i = 0; i < t; i++)
		bw_must(bw_spawn(&th[i], worker, NULL), "spawn");
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < t; i++)
		bw_join(&th[i]);
	summarise(&r, bw_now_ns() - t0);
	for (int c = 0; bw_ult && c < ult_ncpu(); c++) {
		struct ult_cpu_info ci;

		if (ult_cpu_info(c, &ci) == 0)
			r.waits += ci.sched_lock_waits;
	}
	/* A mutex still held would fail its destroy. */
	for (int k = 0; k < nlocks; k++)
		bw_mutex_destroy(&mtx[k]);
	bw_rt_stop();
	free(th);
	return (r);
}

static void
emit(const char *cs, const char *rt, const struct result *r)
{
	bw_emit(cs, rt, "events/s", 1, r->eps);
	bw_emit(cs, rt, "avg_ms", 3, r->avg);
	bw_emit(cs, rt, "p95_ms", 3, r->p95);
	bw_emit(cs, rt, "max_ms", 3, r->max);
}

static void
check(const struct result *r, const char *what)
{
	/* Every thread runs its event to the end once started: a run with
	 * no event at all means the workload never made progress. */
	if (r->eps <= 0)
		bw_die("%s completed no event", what);
}

int
main(int argc, char **argv)
{
	static const int ts[] = {1, 2, 8, 64}, ws[] = {1, 2, 4, 8};
	double secs = 0, lsecs;
	const struct bw_opt opts[] = {
	    {"--secs", BW_DOUBLE, &secs, 0.001, 3600, "S"},
	    {"--locks", BW_INT, &nlocks, 1, MAXM, "M"},
	    {"--yields", BW_INT, &nyields, 1, INT_MAX, "N"},
	    {0},
	};
	char cs[32];

	/* --secs is every cell's length, else the lock table's are short. */
	bw_args("threads", argc, argv, opts, NULL);
	lsecs = secs != 0 ? secs : bw_quick ? 0.1 : 0.5;
	if (secs == 0)
		secs = bw_quick ? 0.1 : 2.0;
	if ((lat = malloc(MAXLAT * sizeof(*lat))) == NULL)
		bw_die("out of memory");
	fprintf(stderr,
	    "threads: M=%d locks, %d yields per event, %.1f s per cell, "
	    "%ld CPUs\n",
	    nlocks, nyields, secs, sysconf(_SC_NPROCESSORS_ONLN));
	for (unsigned k = 0; k < sizeof(ts) / sizeof(ts[0]); k++) {
		struct result u, b, p;

		snprintf(cs, sizeof(cs), "T=%d", ts[k]);
		u = run("ult", 0, ts[k], secs);
		b = run("ult-4bsd", 0, ts[k], secs);
		p = run("pthread", 0, ts[k], secs);
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
			struct result u = run("ult", ws[w], ts[k], lsecs);
			struct result b = run("ult-4bsd", ws[w], ts[k], lsecs);

			check(&u, "ule");
			check(&b, "4bsd");
			snprintf(cs, sizeof(cs), "w=%d,T=%d", ws[w], ts[k]);
			bw_emit(cs, "ult", "events/s", 1, u.eps);
			bw_emit(cs, "ult-4bsd", "events/s", 1, b.eps);
			bw_emit(cs, "ult", "lock_waits", 0, (double)u.waits);
			bw_emit(cs, "ult-4bsd", "lock_waits", 0,
			    (double)b.waits);
		}
	}
	free(lat);
	return (0);
}
