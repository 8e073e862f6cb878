/*
 * micro: what micro.c, micro_rt.c and micro_tree.c share; micro_rt.c has
 * the helpers and the one interface over both runtimes.
 */
#ifndef BENCH_MICRO_H
#define BENCH_MICRO_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "ult.h"

enum {
	RT_ULT,
	RT_PTHREAD,
	RT_N
};
extern const char *const rtname[RT_N];

#define MAXROUNDS 5
#define LONG_ROUND_NS 1000000000u /* see median_of() */
#define RING 503

extern int rounds;   /* rounds per figure (micro.c) */
extern int rt;	     /* the runtime the current round runs on */
extern int all_ncpu; /* workers for the "all workers" cases; 0: all */
extern pthread_attr_t pattr;
extern _Atomic uint64_t t_end; /* the last finish, see mark_end() */

/* micro_rt.c */
_Noreturn void die(const char *fmt, ...);
double median(double *v, int n);
void emit(const char *c, int r, const char *metric, double v, int prec);

void rt_start(int r, int ncpu);
void rt_stop(void);

struct thr {
	ult_thread_t *u;
	pthread_t p;
};

int thr_spawn(struct thr *t, void *(*fn)(void *), void *arg);
void *thr_join(struct thr *t);
void xs_init(void);

/*
 * The operations the timed loops run, inline here so that both runtimes'
 * figures include the call into the library and nothing more.
 */
static inline void
check(int err, const char *what)
{
	if (err != 0)
		die("%s: %s", what, strerror(err));
}

static inline void
xyield(void)
{
	if (rt == RT_ULT)
		ult_yield();
	else
		sched_yield();
}

/* One mutex and two condvars of each kind; a round uses its runtime's. */
struct xsync {
	ult_mutex_t um;
	ult_cond_t uc[2];
	pthread_mutex_t pm;
	pthread_cond_t pc[2];
};
extern struct xsync xs;

static inline void
xlock(void)
{
	if (rt == RT_ULT)
		check(ult_mutex_lock(&xs.um), "ult_mutex_lock");
	else
		check(pthread_mutex_lock(&xs.pm), "pthread_mutex_lock");
}

static inline void
xunlock(void)
{
	if (rt == RT_ULT)
		check(ult_mutex_unlock(&xs.um), "ult_mutex_unlock");
	else
		check(pthread_mutex_unlock(&xs.pm), "pthread_mutex_unlock");
}

static inline void
xwait(int c)
{
	if (rt == RT_ULT)
		check(ult_cond_wait(&xs.uc[c], &xs.um), "ult_cond_wait");
	else
		check(pthread_cond_wait(&xs.pc[c], &xs.pm),
		    "pthread_cond_wait");
}

static inline void
xsignal(int c)
{
	if (rt == RT_ULT)
		check(ult_cond_signal(&xs.uc[c]), "ult_cond_signal");
	else
		check(pthread_cond_signal(&xs.pc[c]), "pthread_cond_signal");
}

void gate_wait(void);
void mark_end(void);
uint64_t run_threads(int n, void *(*fn)(void *), void **arg);

/* micro_tree.c */
double thread_ring_ns(int r, long n);
int skynet_child(const char *rts, int levels);
void bench_skynet(const char *c, int r, int levels);

#endif /* !BENCH_MICRO_H */
