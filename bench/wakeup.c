/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wakeup: how soon an interactive thread runs when it is woken by the
 * poller or by a timed sleep while a CPU hog runs where it runs (issue 29,
 * deliverable 3).  FreeBSD gives such a thread its sleep priority and
 * preempts the hog at once; ult's equivalent is in DESIGN.md ("Wakeups
 * that preempt").
 *
 *   wakeup [--quick] [--impl ult|pthread] [--hog 0|1] [--workers W]
 *          [--rounds N] [--source sleep|fd|sem] [--armed 0|1]
 *
 * One interactive thread wakes every millisecond, from three sources in
 * turn (or the one --source names), N times each (default 2000, --quick
 * 200):
 *
 *   sleep  it sleeps until a deadline (ult_sleep_until; for pthread
 *          clock_nanosleep): latency = now - deadline
 *   fd     a kernel thread outside the runtime writes the time into a
 *          pipe every millisecond and the thread reads it (ult_read,
 *          which waits in the poller; for pthread read): latency = now -
 *          the time written
 *   sem    the same kernel thread stores the time and posts a semaphore
 *          the thread waits on (ult_sem: a sleep-queue wakeup by a
 *          foreign thread; for pthread sem_t)
 *
 * ult runs W workers (--workers, default 1), pthread pins its threads to
 * CPUs 0..W-1.  With --hog 1 one thread per worker (CPU) spins without
 * calling the runtime, so the woken thread's worker always runs a hog
 * (with W = 1 it has no other worker to go to).  With --armed 1 one more
 * thread waits all along in a read of a pipe nobody writes until the end,
 * as a server's idle connections do: ult's poller is then armed, its idle
 * workers park in it and its clock thread waits in epoll.  The hog spins alone
 * for 300 ms first, so that ULE's score calls it batch and the other
 * interactive.  The figures mean something only beside the other impl and hog
 * setting measured in the same session, as ratios.  One line per source:
 *
 *   wakeup impl=.. hog=.. source=.. n=N p50_us=.. p99_us=.. max_us=..
 *   [pri=.. score=.. hog_pri=.. hog_score=..]
 *
 * (the rest for ult: the woken thread's mean run-queue delay, from being
 * made runnable to running, which is the scheduler's part of the
 * latency, the rest being the host's timer and the clock thread's or the
 * waker's wakeup; and ULE's priority and interactivity score of the woken
 * thread and of a hog at the end).  Checked: every fd wakeup read
 * the value written (else exit 1).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ult.h"

#define PERIOD_NS 1000000ull
#define MAXW 64
#define HOG_WARMUP_NS 300000000ull

static int use_ult = 1, hog_on, nrounds = 2000, nworkers = 1;
static atomic_int stop_hog;
static int pipefd[2], armed_on, armed_pipe[2];
static uint64_t *lat;

static void
must(int err, const char *what)
{
	if (err != 0) {
		fprintf(stderr, "wakeup: %s: %s\n", what, strerror(err));
		exit(2);
	}
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

static void
pin_cpus(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int c = 0; c < nworkers; c++)
		CPU_SET(c, &set);
	must(pthread_setaffinity_np(pthread_self(), sizeof(set), &set),
	    "pthread_setaffinity_np");
}

static int
preempt_in_force(void)
{
	long on = 0;

	return (ult_sysctl("ult.preempt", &on, NULL) == 0 && on);
}

/* --armed: waits until the end. */
static void *
armed_main(void *a)
{
	char c;

	(void)a;
	if ((use_ult ? ult_read(armed_pipe[0], &c, 1)
		     : read(armed_pipe[0], &c, 1)) != 1)
		must(errno, "read");
	return (NULL);
}

static void *
hog_main(void *a)
{
	volatile uint64_t x = 0;

	(void)a;
	if (!use_ult)
		pin_cpus();
	while (!atomic_load_explicit(&stop_hog, memory_order_relaxed))
		x++;
	return (NULL);
}

static union {
	ult_sem_t u;
	sem_t p;
} sem;
static _Atomic uint64_t sem_t0;

/* The waker of the fd and sem cases: a kernel thread, never a uthread. */
static void *
waker_main(void *a)
{
	uint64_t next = now_ns();
	int fd = a != NULL;
	for (int i = 0; i < nrounds; i++) {
		struct timespec ts;
		uint64_t t0;

		next += PERIOD_NS;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
			   NULL) == EINTR)
			;
		t0 = now_ns();
		if (fd) {
			if (write(pipefd[1], &t0, sizeof(t0)) != sizeof(t0))
				must(errno, "write");
			continue;
		}
		atomic_store(&sem_t0, t0);
		if (use_ult)
			must(ult_sem_post(&sem.u), "ult_sem_post");
		else if (sem_post(&sem.p) != 0)
			must(errno, "sem_post");
	}
	return (NULL);
}

static void
sleep_until(uint64_t deadline)
{
	struct timespec ts;

	if (use_ult) {
		must(ult_sleep_until(deadline), "ult_sleep_until");
		return;
	}
	ts.tv_sec = (time_t)(deadline / 1000000000ull);
	ts.tv_nsec = (long)(deadline % 1000000000ull);
	while (
	    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int bad_reads;

static void
case_fd(void)
{
	pthread_t wr;

	must(pthread_create(&wr, NULL, waker_main, "fd"), "pthread_create");
	for (int i = 0; i < nrounds; i++) {
		uint64_t t0 = 0;
		ssize_t r;

		r = use_ult ? ult_read(pipefd[0], &t0, sizeof(t0))
			    : read(pipefd[0], &t0, sizeof(t0));
		if (r != sizeof(t0) || t0 == 0) {
			bad_reads++;
			lat[i] = 0;
			continue;
		}
		lat[i] = now_ns() - t0;
	}
	must(pthread_join(wr, NULL), "pthread_join");
}

static void
case_sem(void)
{
	pthread_t wr;

	must(use_ult ? ult_sem_init(&sem.u, 0)
		     : (sem_init(&sem.p, 0, 0) != 0 ? errno : 0),
	    "sem_init");
	must(pthread_create(&wr, NULL, waker_main, NULL), "pthread_create");
	for (int i = 0; i < nrounds; i++) {
		if (use_ult)
			must(ult_sem_wait(&sem.u), "ult_sem_wait");
		else
			while (sem_wait(&sem.p) != 0)
				if (errno != EINTR)
					must(errno, "sem_wait");
		lat[i] = now_ns() - atomic_load(&sem_t0);
	}
	must(pthread_join(wr, NULL), "pthread_join");
	if (use_ult)
		must(ult_sem_destroy(&sem.u), "ult_sem_destroy");
	else
		sem_destroy(&sem.p);
}

static void
case_sleep(void)
{
	uint64_t next = now_ns();

	for (int i = 0; i < nrounds; i++) {
		next += PERIOD_NS;
		sleep_until(next);
		lat[i] = now_ns() - next;
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

static double
pct(const uint64_t *v, int n, double p)
{
	int i = (int)(p * n + 0.999999) - 1;

	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return ((double)v[i] / 1000.0);
}

struct run {
	ult_thread_t *hog_u[MAXW];
};

/* ult: the woken thread's run-queue delay so far (runs, sum in ns). */
static uint64_t rq_runs, rq_sum;

static void
rq_mark(void)
{
	struct ult_thread_info me;

	if (use_ult && ult_thread_info(NULL, &me) == 0) {
		rq_runs = me.nruns;
		rq_sum = me.nruns * me.rq_delay_avg_ns;
	}
}

static void
report(const char *source, struct run *r)
{
	struct ult_thread_info me, hog;
	uint64_t runs0 = rq_runs, sum0 = rq_sum;

	qsort(lat, (size_t)nrounds, sizeof(*lat), cmp_u64);
	printf("wakeup impl=%s workers=%d hog=%d armed=%d source=%s n=%d "
	       "p50_us=%.1f p99_us=%.1f max_us=%.1f",
	    use_ult ? "ult" : "pthread", nworkers, hog_on, armed_on, source,
	    nrounds, pct(lat, nrounds, 0.50), pct(lat, nrounds, 0.99),
	    pct(lat, nrounds, 1.0));
	if (use_ult && ult_thread_info(NULL, &me) == 0) {
		rq_mark();
		if (rq_runs > runs0)
			printf(" rq_avg_us=%.1f",
			    (double)(rq_sum - sum0) / 1000.0 /
				(double)(rq_runs - runs0));
		printf(" pri=%d score=%d", me.priority, me.interact_score);
		if (r->hog_u[0] != NULL &&
		    ult_thread_info(r->hog_u[0], &hog) == 0)
			printf(" hog_pri=%d hog_score=%d", hog.priority,
			    hog.interact_score);
	}
	printf("\n");
	fflush(stdout);
}

static const char *only; /* --source: one source, else all in turn */

static int
want(const char *source)
{
	return (only == NULL || strcmp(only, source) == 0);
}

static void *
measure_main(void *a)
{
	struct run *r = a;

	if (!use_ult)
		pin_cpus();
	if (hog_on)
		sleep_until(now_ns() + HOG_WARMUP_NS);
	rq_mark();
	if (want("sleep")) {
		case_sleep();
		report("sleep", r);
	}
	if (want("fd")) {
		case_fd();
		report("fd", r);
	}
	if (want("sem")) {
		case_sem();
		report("sem", r);
	}
	return (NULL);
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: wakeup [--quick] [--impl ult|pthread] "
	    "[--hog 0|1] [--rounds N] [--source S] [--armed 0|1]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct ult_config cfg;
	struct ult_attr at;
	struct run r = {{NULL}};
	ult_thread_t *mu, *au = NULL;
	pthread_t hp[MAXW], mp, ap;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			nrounds = 200;
		else if (i + 1 >= argc)
			usage();
		else if (strcmp(argv[i], "--impl") == 0) {
			i++;
			if (strcmp(argv[i], "ult") == 0)
				use_ult = 1;
			else if (strcmp(argv[i], "pthread") == 0)
				use_ult = 0;
			else
				usage();
		} else if (strcmp(argv[i], "--hog") == 0)
			hog_on = atoi(argv[++i]) != 0;
		else if (strcmp(argv[i], "--armed") == 0)
			armed_on = atoi(argv[++i]) != 0;
		else if (strcmp(argv[i], "--source") == 0)
			only = argv[++i];
		else if (strcmp(argv[i], "--workers") == 0) {
			nworkers = atoi(argv[++i]);
			if (nworkers < 1 || nworkers > MAXW)
				usage();
		} else if (strcmp(argv[i], "--rounds") == 0) {
			nrounds = atoi(argv[++i]);
			if (nrounds < 1)
				usage();
		} else
			usage();
	}
	lat = calloc((size_t)nrounds, sizeof(*lat));
	if (lat == NULL)
		must(ENOMEM, "calloc");
	if (pipe(pipefd) != 0 || pipe(armed_pipe) != 0)
		must(errno, "pipe");

	if (use_ult) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.ncpu = nworkers;
		must(ult_init(&cfg), "ult_init");
		if (hog_on && !preempt_in_force()) {
			/* A hog that never yields would keep its worker and
			 * the woken thread would never run. */
			fprintf(stderr,
			    "skip: wakeup --hog: no asynchronous preemption "
			    "in this build (sanitizer or static)\n");
			must(ult_shutdown(), "ult_shutdown");
			return (77);
		}
		for (int i = 0; hog_on && i < nworkers; i++) {
			ult_attr_init(&at);
			at.name = "hog";
			must(ult_spawn(&r.hog_u[i], &at, hog_main, NULL),
			    "ult_spawn");
		}
		if (armed_on)
			must(ult_spawn(&au, NULL, armed_main, NULL),
			    "ult_spawn");
		ult_attr_init(&at);
		at.name = "woken";
		must(ult_spawn(&mu, &at, measure_main, &r), "ult_spawn");
		must(ult_join(mu, NULL), "ult_join");
		if (armed_on) {
			if (write(armed_pipe[1], "x", 1) != 1)
				must(errno, "write");
			must(ult_join(au, NULL), "ult_join");
		}
		atomic_store(&stop_hog, 1);
		for (int i = 0; hog_on && i < nworkers; i++)
			must(ult_join(r.hog_u[i], NULL), "ult_join");
		must(ult_shutdown(), "ult_shutdown");
	} else {
		for (int i = 0; hog_on && i < nworkers; i++)
			must(pthread_create(&hp[i], NULL, hog_main, NULL),
			    "pthread_create");
		if (armed_on)
			must(pthread_create(&ap, NULL, armed_main, NULL),
			    "pthread_create");
		must(pthread_create(&mp, NULL, measure_main, &r),
		    "pthread_create");
		must(pthread_join(mp, NULL), "pthread_join");
		if (armed_on) {
			if (write(armed_pipe[1], "x", 1) != 1)
				must(errno, "write");
			must(pthread_join(ap, NULL), "pthread_join");
		}
		atomic_store(&stop_hog, 1);
		for (int i = 0; hog_on && i < nworkers; i++)
			must(pthread_join(hp[i], NULL), "pthread_join");
	}
	if (bad_reads != 0) {
		fprintf(stderr,
		    "wakeup: %d reads did not get the value "
		    "written\n",
		    bad_reads);
		return (1);
	}
	return (0);
}
