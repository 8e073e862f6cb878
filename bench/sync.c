/*
 * sync: the cost of ult's mutex, condvar and semaphore next to the same
 * workload on pthreads (the 1:1 Linux primitives), in the same run.
 *
 *   uncontended  lock + unlock of a private mutex, one thread
 *   contended    4 threads increment one counter under one mutex
 *   pingpong     two threads hand a turn back and forth through a mutex
 *                and a condvar: one round trip = two handoffs
 *   prodcons     one producer, one consumer, a 64-slot buffer guarded by
 *                a mutex and two condvars; time per item
 *
 * ult runs on one worker (pingpong, uncontended) or on every worker
 * (contended, prodcons); the pthreads run unpinned.  Usage:
 * sync [--quick] [uncontended|contended|pingpong|prodcons ...]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ult.h"

static int quick, rounds = 5;

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* One implementation of the primitives per side. */
struct side {
	const char *name;
	void *m, *c1, *c2;
	int (*lock)(void *);
	int (*unlock)(void *);
	int (*wait)(void *, void *);
	int (*signal)(void *);
};

static ult_mutex_t um = ULT_MUTEX_INITIALIZER;
static ult_cond_t uc1 = ULT_COND_INITIALIZER, uc2 = ULT_COND_INITIALIZER;
static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pc1 = PTHREAD_COND_INITIALIZER,
		      pc2 = PTHREAD_COND_INITIALIZER;

static int
u_lock(void *m)
{
	return (ult_mutex_lock(m));
}
static int
u_unlock(void *m)
{
	return (ult_mutex_unlock(m));
}
static int
u_wait(void *c, void *m)
{
	return (ult_cond_wait(c, m));
}
static int
u_signal(void *c)
{
	return (ult_cond_signal(c));
}
static int
p_lock(void *m)
{
	return (pthread_mutex_lock(m));
}
static int
p_unlock(void *m)
{
	return (pthread_mutex_unlock(m));
}
static int
p_wait(void *c, void *m)
{
	return (pthread_cond_wait(c, m));
}
static int
p_signal(void *c)
{
	return (pthread_cond_signal(c));
}

static struct side ult_side = {"ult", &um, &uc1, &uc2, u_lock, u_unlock, u_wait,
    u_signal};
static struct side pt_side = {"pthread", &pm, &pc1, &pc2, p_lock, p_unlock,
    p_wait, p_signal};

/* Run fn on n threads of side s (uthreads on ncpu workers, or pthreads);
 * returns the wall time in ns. */
static uint64_t
run(struct side *s, int ncpu, int n, void *(*fn)(void *), void *arg)
{
	struct ult_config cfg = {0};
	ult_thread_t *ut[8];
	pthread_t pt[8];
	uint64_t t0;

	cfg.ncpu = ncpu;
	if (s == &ult_side && ult_init(&cfg) != 0)
		abort();
	t0 = ult_now();
	for (int i = 0; i < n; i++) {
		if (s == &ult_side)
			ult_spawn(&ut[i], NULL, fn, arg);
		else
			pthread_create(&pt[i], NULL, fn, arg);
	}
	for (int i = 0; i < n; i++) {
		if (s == &ult_side)
			ult_join(ut[i], NULL);
		else
			pthread_join(pt[i], NULL);
	}
	t0 = ult_now() - t0;
	if (s == &ult_side)
		ult_shutdown();
	return (t0);
}

static struct side *cur;
static long iters;
static volatile long counter;

static void *
uncontended(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		cur->lock(cur->m);
		cur->unlock(cur->m);
	}
	return (NULL);
}

static void *
contended(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		cur->lock(cur->m);
		counter++;
		cur->unlock(cur->m);
	}
	return (NULL);
}

static long turn;

static void *
pingpong(void *arg)
{
	long me = (long)(intptr_t)arg & 1;

	/* Two threads share arg's counter: the first to start is 0. */
	cur->lock(cur->m);
	me = counter++;
	for (long i = 0; i < iters; i++) {
		while ((turn & 1) != me)
			cur->wait(cur->c1, cur->m);
		turn++;
		cur->signal(cur->c1);
	}
	cur->unlock(cur->m);
	return (NULL);
}

#define QCAP 64
static long qbuf[QCAP], qhead, qn, qsum;

static void *
prodcons(void *arg)
{
	int producer;

	(void)arg;
	cur->lock(cur->m);
	producer = counter++ == 0;
	for (long i = 0; i < iters; i++) {
		if (producer) {
			while (qn == QCAP)
				cur->wait(cur->c1, cur->m);
			qbuf[(qhead + qn++) % QCAP] = i;
			cur->signal(cur->c2);
		} else {
			while (qn == 0)
				cur->wait(cur->c2, cur->m);
			qsum += qbuf[qhead];
			qhead = (qhead + 1) % QCAP;
			qn--;
			cur->signal(cur->c1);
		}
		/* Let the other side in now and then, as real code would. */
		if ((i & 15) == 15) {
			cur->unlock(cur->m);
			cur->lock(cur->m);
		}
	}
	cur->unlock(cur->m);
	return (NULL);
}

struct bench {
	const char *name, *unit;
	int ult_ncpu, nthreads;
	long n, per_op; /* ops counted per iteration, over all threads */
	void *(*fn)(void *);
};

static const struct bench benches[] = {
    {"uncontended", "lock+unlock", 1, 1, 20000000, 1, uncontended},
    {"contended", "lock+unlock", 0, 4, 2000000, 4, contended},
    {"pingpong", "round trip", 1, 2, 200000, 1, pingpong},
    {"prodcons", "item", 0, 2, 2000000, 1, prodcons},
};

static double
measure(const struct bench *b, struct side *s)
{
	double v[9];

	for (int r = 0; r < rounds; r++) {
		uint64_t ns;

		cur = s;
		counter = 0;
		turn = 0;
		qhead = qn = qsum = 0;
		iters = quick ? b->n / 20 : b->n;
		ns = run(s, b->ult_ncpu, b->nthreads, b->fn, NULL);
		if (b->fn == contended && counter != b->nthreads * iters) {
			fprintf(stderr, "sync: %s lost updates\n", s->name);
			exit(1);
		}
		if (b->fn == prodcons && qsum != iters * (iters - 1) / 2) {
			fprintf(stderr, "sync: %s lost items\n", s->name);
			exit(1);
		}
		v[r] = (double)ns / (double)(iters * b->per_op);
	}
	qsort(v, (size_t)rounds, sizeof(v[0]), cmp_double);
	return (v[rounds / 2]);
}

int
main(int argc, char **argv)
{
	int any = 0;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
			rounds = 3;
		}
	for (int i = 1; i < argc; i++)
		for (size_t k = 0; k < sizeof(benches) / sizeof(benches[0]);
		     k++)
			if (strcmp(argv[i], benches[k].name) == 0)
				any = 1;
	printf("ult sync benchmarks: median of %d rounds%s; ns per unit, "
	       "ratio = pthread/ult (>1: ult faster)\n",
	    rounds, quick ? " (quick)" : "");
	for (size_t k = 0; k < sizeof(benches) / sizeof(benches[0]); k++) {
		const struct bench *b = &benches[k];
		int want = !any;
		double u, p;

		for (int i = 1; i < argc; i++)
			if (strcmp(argv[i], b->name) == 0)
				want = 1;
		if (!want)
			continue;
		u = measure(b, &ult_side);
		p = measure(b, &pt_side);
		printf("%-12s %d threads, ult on %s: ult %9.1f ns  pthread "
		       "%9.1f ns per %-11s ratio %.2fx\n",
		    b->name, b->nthreads,
		    b->ult_ncpu == 1 ? "1 worker " : "all workers", u, p,
		    b->unit, p / u);
		fflush(stdout);
	}
	return (0);
}
