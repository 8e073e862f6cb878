/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One interface over the two kinds of threads the programs compare:
 * uthreads (ult, under either policy) and kernel threads (pthread).  A
 * run starts one runtime, makes its threads and sync objects with the
 * bw_ calls below and stops it; every call goes to the runtime started
 * last.  Objects are made after the start and destroyed before the stop.
 * The operations that timed loops run are inline, so that both runtimes'
 * figures include the call into the library, one branch and nothing
 * more.  Errors end the program (bw_die), except where a function says.
 */
#ifndef BENCH_RT_H
#define BENCH_RT_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"
#include "ult.h"

extern int bw_ult; /* the runtime started last is ult */

/*
 * Start the runtime called rt in the contract: ult (sched_ule), ult-4bsd,
 * ult-nopreempt (ULE, asynchronous preemption off whatever preempt says),
 * ult+hint (ULE; the hints are the program's), ult-tlsworker (ULE, the
 * uthreads of a worker sharing its TLS, as ULT_TLS=worker) or pthread.  For
 * ult, ncpu workers (0: one per CPU) and preempt as in struct ult_config (0:
 * the library default); kernel threads ignore both.  ULT_BENCH_SYSCTL
 * (name=value, comma-separated) sets tunables after ult_init.
 */
void bw_rt_start(const char *rt, int ncpu, int preempt);
void bw_rt_stop(void);

/* The stack size of the kernel threads bw_spawn() makes from now on
 * (0, the start: the system default). */
void bw_pthread_stack(size_t size);

typedef union {
	ult_thread_t *u;
	pthread_t p;
} bw_thread_t;

/* A thread running fn(arg); 0 or the errno value of a failure, which
 * may be a limit of the machine rather than a bug. */
int bw_spawn(bw_thread_t *t, void *(*fn)(void *), void *arg);

/* Wait for the thread to end; its fn's return value. */
void *bw_join(bw_thread_t *t);

typedef union {
	ult_mutex_t u;
	pthread_mutex_t p;
} bw_mutex_t;

typedef union {
	ult_cond_t u;
	pthread_cond_t p;
} bw_cond_t;

typedef union {
	ult_sem_t u;
	sem_t p;
} bw_sem_t;

void bw_mutex_init(bw_mutex_t *m);
void bw_mutex_destroy(bw_mutex_t *m);
void bw_cond_init(bw_cond_t *c);
void bw_cond_destroy(bw_cond_t *c);
void bw_sem_init(bw_sem_t *s, unsigned value);
void bw_sem_destroy(bw_sem_t *s);

/* Sleep ns nanoseconds: the calling thread blocks, its CPU is free. */
void bw_sleep_ns(uint64_t ns);

static inline void
bw_yield(void)
{
	if (bw_ult)
		ult_yield();
	else
		sched_yield();
}

static inline void
bw_mutex_lock(bw_mutex_t *m)
{
	if (bw_ult)
		bw_must(ult_mutex_lock(&m->u), "ult_mutex_lock");
	else
		bw_must(pthread_mutex_lock(&m->p), "pthread_mutex_lock");
}

static inline void
bw_mutex_unlock(bw_mutex_t *m)
{
	if (bw_ult)
		bw_must(ult_mutex_unlock(&m->u), "ult_mutex_unlock");
	else
		bw_must(pthread_mutex_unlock(&m->p), "pthread_mutex_unlock");
}

static inline void
bw_cond_wait(bw_cond_t *c, bw_mutex_t *m)
{
	if (bw_ult)
		bw_must(ult_cond_wait(&c->u, &m->u), "ult_cond_wait");
	else
		bw_must(pthread_cond_wait(&c->p, &m->p), "pthread_cond_wait");
}

static inline void
bw_cond_signal(bw_cond_t *c)
{
	if (bw_ult)
		bw_must(ult_cond_signal(&c->u), "ult_cond_signal");
	else
		bw_must(pthread_cond_signal(&c->p), "pthread_cond_signal");
}

/* A signal that interrupts a kernel thread's wait does not end it. */
static inline void
bw_sem_wait(bw_sem_t *s)
{
	if (bw_ult) {
		bw_must(ult_sem_wait(&s->u), "ult_sem_wait");
		return;
	}
	while (sem_wait(&s->p) != 0)
		if (errno != EINTR)
			bw_must(errno, "sem_wait");
}

static inline void
bw_sem_post(bw_sem_t *s)
{
	if (bw_ult)
		bw_must(ult_sem_post(&s->u), "ult_sem_post");
	else if (sem_post(&s->p) != 0)
		bw_must(errno, "sem_post");
}

#endif /* !BENCH_RT_H */
