/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pipeline: the shape of issue 29.  A feeder puts N items into a bounded
 * queue; four stages of T threads each (default 8) take an item from their
 * queue and put it into the next; the last stage hands its items to the
 * sink (per-thread sums, added up at the end).  Each queue holds 256 items
 * and is guarded by a mutex with two condition variables, not-empty and
 * not-full, as a program written on pthreads would do it.
 *
 *   pipeline --impl ult|pthread --feed main|thread [--items N]
 *            [--workers W] [--threads T]
 *
 * --impl ult runs it on ult (ult_mutex, ult_cond, ult_spawn), pthread on
 * kernel threads (pthread_mutex, pthread_cond, pthread_create): the same
 * program.  --feed main feeds from main (a foreign thread under ult),
 * --feed thread from a thread of the implementation (a uthread under ult).
 * --workers W: ult's workers (0, the default: one per CPU, or ULT_NCPU);
 * pthread ignores it.  One line on stdout:
 *
 *   pipeline impl=.. feed=.. items=N seconds=S switches=.. steals=..
 *   migrations=..
 *
 * switches and steals summed over ult's workers (ult_cpu_info), migrations
 * over the pipeline's uthreads (ult_thread_info); 0 for pthread.  The sink
 * must get every item exactly once (count, sum and sum of squares), else
 * the program says so and exits 1.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ult.h"

#define QCAP 256
#define NSTAGE 4
#define MAXT 1024

static int use_ult;

static void
die(const char *what, int err)
{
	fprintf(stderr, "pipeline: %s: %s\n", what, strerror(err));
	exit(2);
}

static void
must(int err, const char *what)
{
	if (err != 0)
		die(what, err);
}

/* A mutex and a condition variable of either implementation. */
typedef union {
	ult_mutex_t u;
	pthread_mutex_t p;
} mtx_t;

typedef union {
	ult_cond_t u;
	pthread_cond_t p;
} cnd_t;

static void
mtx_init(mtx_t *m)
{
	must(use_ult ? ult_mutex_init(&m->u) : pthread_mutex_init(&m->p, NULL),
	    "mutex_init");
}

static void
mtx_lock(mtx_t *m)
{
	must(use_ult ? ult_mutex_lock(&m->u) : pthread_mutex_lock(&m->p),
	    "mutex_lock");
}

static void
mtx_unlock(mtx_t *m)
{
	must(use_ult ? ult_mutex_unlock(&m->u) : pthread_mutex_unlock(&m->p),
	    "mutex_unlock");
}

static void
mtx_destroy(mtx_t *m)
{
	must(use_ult ? ult_mutex_destroy(&m->u) : pthread_mutex_destroy(&m->p),
	    "mutex_destroy");
}

static void
cnd_init(cnd_t *c)
{
	must(use_ult ? ult_cond_init(&c->u) : pthread_cond_init(&c->p, NULL),
	    "cond_init");
}

static void
cnd_wait(cnd_t *c, mtx_t *m)
{
	must(use_ult ? ult_cond_wait(&c->u, &m->u)
		     : pthread_cond_wait(&c->p, &m->p),
	    "cond_wait");
}

static void
cnd_signal(cnd_t *c)
{
	must(use_ult ? ult_cond_signal(&c->u) : pthread_cond_signal(&c->p),
	    "cond_signal");
}

static void
cnd_broadcast(cnd_t *c)
{
	must(use_ult ? ult_cond_broadcast(&c->u)
		     : pthread_cond_broadcast(&c->p),
	    "cond_broadcast");
}

static void
cnd_destroy(cnd_t *c)
{
	must(use_ult ? ult_cond_destroy(&c->u) : pthread_cond_destroy(&c->p),
	    "cond_destroy");
}

/* A thread of either implementation. */
typedef union {
	ult_thread_t *u;
	pthread_t p;
} thr_t;

static void
thr_spawn(thr_t *t, void *(*fn)(void *), void *arg)
{
	if (use_ult)
		must(ult_spawn(&t->u, NULL, fn, arg), "ult_spawn");
	else
		must(pthread_create(&t->p, NULL, fn, arg), "pthread_create");
}

/* Join t; its migrations (ult) are added to *migr first. */
static void
thr_join(thr_t *t, uint64_t *migr)
{
	struct ult_thread_info ti;

	if (!use_ult) {
		must(pthread_join(t->p, NULL), "pthread_join");
		return;
	}
	if (ult_thread_info(t->u, &ti) == 0)
		*migr += ti.nmigrations;
	must(ult_join(t->u, NULL), "ult_join");
}

struct queue {
	mtx_t m;
	cnd_t not_empty, not_full;
	uint64_t buf[QCAP];
	unsigned head, count;
	int closed; /* no more puts: getters drain, then end */
};

static void
q_init(struct queue *q)
{
	memset(q, 0, sizeof(*q));
	mtx_init(&q->m);
	cnd_init(&q->not_empty);
	cnd_init(&q->not_full);
}

static void
q_destroy(struct queue *q)
{
	cnd_destroy(&q->not_full);
	cnd_destroy(&q->not_empty);
	mtx_destroy(&q->m);
}

static void
q_put(struct queue *q, uint64_t v)
{
	mtx_lock(&q->m);
	while (q->count == QCAP)
		cnd_wait(&q->not_full, &q->m);
	q->buf[(q->head + q->count) % QCAP] = v;
	q->count++;
	cnd_signal(&q->not_empty);
	mtx_unlock(&q->m);
}

/* 1 and *v, or 0 once the queue is closed and empty. */
static int
q_get(struct queue *q, uint64_t *v)
{
	mtx_lock(&q->m);
	while (q->count == 0 && !q->closed)
		cnd_wait(&q->not_empty, &q->m);
	if (q->count == 0) {
		mtx_unlock(&q->m);
		return (0);
	}
	*v = q->buf[q->head];
	q->head = (q->head + 1) % QCAP;
	q->count--;
	cnd_signal(&q->not_full);
	mtx_unlock(&q->m);
	return (1);
}

static void
q_close(struct queue *q)
{
	mtx_lock(&q->m);
	q->closed = 1;
	cnd_broadcast(&q->not_empty);
	mtx_unlock(&q->m);
}

static struct queue queues[NSTAGE];
static long nitems = 1000000;
static int nthreads = 8; /* per stage */

struct stage {
	int idx;
	mtx_t m; /* guards left: the last thread out closes the next queue */
	int left;
};
static struct stage stages[NSTAGE];

/* What the sink got, per thread of the last stage (no sharing). */
struct sink {
	uint64_t count, sum, sumsq;
	char pad[64 - 3 * sizeof(uint64_t)];
};
static struct sink sinks[MAXT];

struct worker_arg {
	struct stage *st;
	int id;
};

static void *
stage_main(void *a)
{
	struct worker_arg *wa = a;
	struct stage *st = wa->st;
	struct queue *in = &queues[st->idx];
	struct sink *sk = &sinks[wa->id];
	uint64_t v;
	int last;

	while (q_get(in, &v)) {
		if (st->idx + 1 < NSTAGE) {
			q_put(&queues[st->idx + 1], v);
			continue;
		}
		sk->count++;
		sk->sum += v;
		sk->sumsq += v * v;
	}
	mtx_lock(&st->m);
	last = --st->left == 0;
	mtx_unlock(&st->m);
	if (last && st->idx + 1 < NSTAGE)
		q_close(&queues[st->idx + 1]);
	return (NULL);
}

static void *
feed_main(void *a)
{
	(void)a;
	for (long i = 1; i <= nitems; i++)
		q_put(&queues[0], (uint64_t)i);
	q_close(&queues[0]);
	return (NULL);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: pipeline --impl ult|pthread --feed main|thread "
	    "[--items N] [--workers W] [--threads T]\n");
	exit(2);
}

static long
num_arg(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		usage();
	return (v);
}

int
main(int argc, char **argv)
{
	static thr_t th[NSTAGE][MAXT];
	static struct worker_arg wa[NSTAGE][MAXT];
	const char *impl = NULL, *feed = NULL;
	struct ult_config cfg;
	uint64_t switches = 0, steals = 0, migr = 0;
	uint64_t count = 0, sum = 0, sumsq = 0, want_sum = 0, want_sq = 0;
	int workers = 0, feed_thread;
	double t0, t1;
	thr_t feeder;

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--impl") == 0)
			impl = argv[++i];
		else if (strcmp(argv[i], "--feed") == 0)
			feed = argv[++i];
		else if (strcmp(argv[i], "--items") == 0)
			nitems = num_arg(argv[++i], 1, 1L << 40);
		else if (strcmp(argv[i], "--workers") == 0)
			workers = (int)num_arg(argv[++i], 0, ULT_MAXCPU);
		else if (strcmp(argv[i], "--threads") == 0)
			nthreads = (int)num_arg(argv[++i], 1, MAXT);
		else
			usage();
	}
	if (impl == NULL || feed == NULL)
		usage();
	if (strcmp(impl, "ult") == 0)
		use_ult = 1;
	else if (strcmp(impl, "pthread") != 0)
		usage();
	if (strcmp(feed, "thread") == 0)
		feed_thread = 1;
	else if (strcmp(feed, "main") == 0)
		feed_thread = 0;
	else
		usage();

	if (use_ult) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.ncpu = workers;
		must(ult_init(&cfg), "ult_init");
	}
	for (int s = 0; s < NSTAGE; s++) {
		q_init(&queues[s]);
		stages[s].idx = s;
		stages[s].left = nthreads;
		mtx_init(&stages[s].m);
	}

	t0 = now_s();
	for (int s = 0; s < NSTAGE; s++)
		for (int i = 0; i < nthreads; i++) {
			wa[s][i].st = &stages[s];
			wa[s][i].id = i;
			thr_spawn(&th[s][i], stage_main, &wa[s][i]);
		}
	if (feed_thread)
		thr_spawn(&feeder, feed_main, NULL);
	else
		feed_main(NULL);
	if (feed_thread)
		thr_join(&feeder, &migr);
	for (int s = 0; s < NSTAGE; s++)
		for (int i = 0; i < nthreads; i++)
			thr_join(&th[s][i], &migr);
	t1 = now_s();

	if (use_ult)
		for (int c = 0; c < ult_ncpu(); c++) {
			struct ult_cpu_info ci;

			must(ult_cpu_info(c, &ci), "ult_cpu_info");
			switches += ci.switches;
			steals += ci.steals;
		}
	for (int s = 0; s < NSTAGE; s++) {
		mtx_destroy(&stages[s].m);
		q_destroy(&queues[s]);
	}
	if (use_ult)
		must(ult_shutdown(), "ult_shutdown");

	for (int i = 0; i < nthreads; i++) {
		count += sinks[i].count;
		sum += sinks[i].sum;
		sumsq += sinks[i].sumsq;
	}
	for (long i = 1; i <= nitems; i++) {
		want_sum += (uint64_t)i;
		want_sq += (uint64_t)i * (uint64_t)i;
	}
	printf("pipeline impl=%s feed=%s items=%ld seconds=%.3f switches=%llu "
	       "steals=%llu migrations=%llu\n",
	    impl, feed, nitems, t1 - t0, (unsigned long long)switches,
	    (unsigned long long)steals, (unsigned long long)migr);
	if (count != (uint64_t)nitems || sum != want_sum || sumsq != want_sq) {
		fprintf(stderr,
		    "pipeline: the sink got %llu items (want %ld), sum %llu "
		    "(want %llu): lost or duplicated items\n",
		    (unsigned long long)count, nitems, (unsigned long long)sum,
		    (unsigned long long)want_sum);
		return (1);
	}
	return (0);
}
