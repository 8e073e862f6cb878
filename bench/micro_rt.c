/*
 * micro: the helpers, and one interface over both runtimes (uthreads and
 * kernel threads), that the cases in micro.c and micro_tree.c are written in.
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "micro.h"
#include "work.h"

#define MAXTHR 8

const char *const rtname[RT_N] = {"ult", "pthread"};

int rt;	      /* the runtime the current round runs on */
int all_ncpu; /* workers for the "all workers" cases; 0: all */
pthread_attr_t pattr;

_Noreturn void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "micro: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bw_cmp_double);
	return (v[n / 2]);
}

void
emit(const char *c, int r, const char *metric, double v, int prec)
{
	printf("R\tmicro\t%s\t%s\t%s\t%.*f\n", c, rtname[r], metric, prec, v);
	fflush(stdout);
}

/* ---- one interface over both runtimes ---- */

void
rt_start(int r, int ncpu)
{
	struct ult_config cfg = {0};

	rt = r;
	if (r != RT_ULT)
		return;
	cfg.ncpu = ncpu != 0 ? ncpu : all_ncpu;
	cfg.policy = "ule";
	check(ult_init(&cfg), "ult_init");
}

void
rt_stop(void)
{
	if (rt == RT_ULT)
		check(ult_shutdown(), "ult_shutdown");
}

int
thr_spawn(struct thr *t, void *(*fn)(void *), void *arg)
{
	if (rt == RT_ULT)
		return (ult_spawn(&t->u, NULL, fn, arg));
	return (pthread_create(&t->p, &pattr, fn, arg));
}

void *
thr_join(struct thr *t)
{
	void *r;

	if (rt == RT_ULT)
		check(ult_join(t->u, &r), "ult_join");
	else
		check(pthread_join(t->p, &r), "pthread_join");
	return (r);
}

struct xsync xs;

void
xs_init(void)
{
	check(ult_mutex_init(&xs.um), "ult_mutex_init");
	check(pthread_mutex_init(&xs.pm, NULL), "pthread_mutex_init");
	for (int i = 0; i < 2; i++) {
		check(ult_cond_init(&xs.uc[i]), "ult_cond_init");
		check(pthread_cond_init(&xs.pc[i], NULL), "pthread_cond_init");
	}
}

/*
 * Threads of a case wait at a gate until all exist, so that none runs
 * alone meanwhile, and each notes when it finished: a round lasts from
 * opening the gate to the last finish, which keeps thread creation and the
 * main thread's own wakeup from the joins out of it.
 */
static atomic_int gate;
_Atomic uint64_t t_end;

void
gate_wait(void)
{
	while (!atomic_load_explicit(&gate, memory_order_acquire))
		xyield();
}

void
mark_end(void)
{
	uint64_t now = ult_now(), old = atomic_load(&t_end);

	while (old < now && !atomic_compare_exchange_weak(&t_end, &old, now))
		;
}

/* Run fn(arg[i]) on n threads; returns the gated wall time in ns. */
uint64_t
run_threads(int n, void *(*fn)(void *), void **arg)
{
	struct thr t[MAXTHR];
	uint64_t t0;

	atomic_store(&gate, 0);
	atomic_store(&t_end, 0);
	for (int i = 0; i < n; i++)
		check(thr_spawn(&t[i], fn, arg != NULL ? arg[i] : NULL),
		    "spawn");
	t0 = ult_now();
	atomic_store_explicit(&gate, 1, memory_order_release);
	for (int i = 0; i < n; i++)
		thr_join(&t[i]);
	return (atomic_load(&t_end) - t0);
}
