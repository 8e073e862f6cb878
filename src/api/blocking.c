/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult_blocking: calls no poller covers run on helper kernel threads while
 * the calling uthread sleeps on its job (the job's address is the wait
 * channel).  Helpers start on demand up to ult.blocking_max, take jobs in
 * FIFO order, and exit after ult.blocking_idle_ms without one; those
 * started beyond the bound for the waits of ult__blocking_unbounded exit
 * as soon as they find no job.  The pool
 * is plain pthreads: its lock is held for a few instructions, by uthreads
 * too, which is safe because nothing blocks under it.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "../kern/runtime.h"
#include "../kern/worker.h"
#include "../kern/uthread.h"
#include "../kern/switch.h"
#include "../kern/sleepq.h"
#include "../util/fault.h"
#include "../kern/io.h"
#include "blocking.h"
#include "../kern/subsys.h"

atomic_int ult__blocking_max = 64;
atomic_int ult__blocking_idle_ms = 10000;

struct job {
	void *(*fn)(void *);
	void *arg;
	void *ret;
	int err;	 /* errno: the caller's, then as fn left it */
	atomic_int done; /* under the job's chain lock */
	struct job *next;
};

/* Locking key: p, pool.lock. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t work; /* (p) a job was queued, or stop */
	pthread_cond_t gone; /* (p) a helper exited */
	pthread_once_t once;
	struct job *head, *tail; /* (p) */
	int nqueued;		 /* (p) jobs no helper has taken yet */
	int nthreads, nidle;	 /* (p) */
	int stop;		 /* (p) */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

static void
pool_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pool.work, &ca);
	pthread_cond_init(&pool.gone, &ca);
	pthread_condattr_destroy(&ca);
}

static void
job_finish(struct job *j)
{
	ult__sleepq_lock(j);
	ULT_ST(&j->done, 1);
	ult__sleepq_signal(j);
	ult__sleepq_release(j);
}

static void *
helper_main(void *arg)
{
	(void)arg;
	ult__os_set_name("ult-blocking");
	ult__os_block_async_signals();
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct job *j = pool.head;
		struct timespec ts;

		if (j != NULL) {
			if ((pool.head = j->next) == NULL)
				pool.tail = NULL;
			pool.nqueued--;
			pthread_mutex_unlock(&pool.lock);
			ult__set_errno(j->err);
			j->ret = j->fn(j->arg);
			j->err = ult__errno();
			job_finish(j);
			pthread_mutex_lock(&pool.lock);
			continue;
		}
		/* Beyond the bound only for jobs that wait (unbounded): gone
		 * with the wait, not kept for ult.blocking_idle_ms, since
		 * each idle one keeps a stack that every fork copies. */
		if (pool.stop || pool.nthreads > ULT_LD(&ult__blocking_max))
			break;
		ult__os_timespec(ult__now() +
			(uint64_t)ULT_LD(&ult__blocking_idle_ms) * 1000000u,
		    &ts);
		pool.nidle++;
		int r = pthread_cond_timedwait(&pool.work, &pool.lock, &ts);
		pool.nidle--;
		if (r == ETIMEDOUT && pool.head == NULL)
			break;
	}
	pool.nthreads--;
	pthread_cond_broadcast(&pool.gone);
	pthread_mutex_unlock(&pool.lock);
	return (NULL);
}

/* pool.lock held: queue j and see that a helper will take it; EAGAIN if
 * there is none and none can be started. */
static int
submit(struct job *j, int unbounded)
{
	pthread_attr_t attr;
	pthread_t t;
	int err = 0;

	j->next = NULL;
	if (pool.tail != NULL)
		pool.tail->next = j;
	else
		pool.head = j;
	pool.tail = j;
	/* An idle helper that was signalled but has not woken yet counts
	 * for the jobs queued before this one: a job that blocks on one
	 * queued after it must not wait behind it. */
	if (++pool.nqueued <= pool.nidle) {
		pthread_cond_signal(&pool.work);
		return (0);
	}
	if (!unbounded && pool.nthreads >= ULT_LD(&ult__blocking_max))
		return (0); /* a busy helper takes it next */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Not the creating worker's one CPU: the process's. */
	ult__os_attr_cpus(&attr);
	err = ult__os_thread_attr(&t, &attr, helper_main, NULL);
	pthread_attr_destroy(&attr);
	if (err == 0) {
		pool.nthreads++;
		return (0);
	}
	if (pool.nthreads > 0)
		return (0);
	/* Nobody will run it: take it back (it is the only job). */
	pool.head = pool.tail = NULL;
	pool.nqueued = 0;
	return (EAGAIN);
}

static int
blocking(void *(*fn)(void *), void *arg, void **ret, int unbounded)
{
	struct ult_thread *ut = ult__self_ut();
	struct ult__waiter w;
	struct job j;
	int err;

	if (fn == NULL)
		return (EINVAL);
	if (ut == NULL) {
		void *r = fn(arg);

		if (ret != NULL)
			*ret = r;
		return (0);
	}
	if (!ult__running())
		return (ENXIO);
	pthread_once(&pool.once, pool_init);
	j.fn = fn;
	j.arg = arg;
	j.ret = NULL;
	j.err = ult__errno(); /* fn starts with the caller's errno */
	atomic_init(&j.done, 0);
	pthread_mutex_lock(&pool.lock);
	pool.stop = 0;
	err = submit(&j, unbounded);
	pthread_mutex_unlock(&pool.lock);
	if (err != 0)
		return (err);
	for (;;) {
		ult__sleepq_lock(&j);
		if (ULT_LD(&j.done)) {
			ult__sleepq_release(&j);
			break;
		}
		ult__waiter_self(&w);
		ult__sleepq_add(&j, &w, "blocking");
		ult__sleepq_wait(&j, &w, 0);
	}
	ult__userret();
	if (ret != NULL)
		*ret = j.ret;
	ult__set_errno(j.err);
	return (0);
}

int
ult_blocking(void *(*fn)(void *), void *arg, void **ret)
{
	return (blocking(fn, arg, ret, 0));
}

/* A job that may wait for another job (the drop-in's process-shared
 * condition and barrier waits, which hold what their wakers need until
 * they wait): it never queues behind busy helpers, ult.blocking_max
 * or not. */
int
ult__blocking_unbounded(void *(*fn)(void *), void *arg, void **ret)
{
	return (blocking(fn, arg, ret, 1));
}

long
ult__blocking_threads(void)
{
	long n;

	pthread_mutex_lock(&pool.lock);
	n = pool.nthreads;
	pthread_mutex_unlock(&pool.lock);
	return (n);
}

/* At shutdown no uthread is left, so no job is queued or running: tell
 * the idle helpers to go and wait until they have. */
void
ult__blocking_fini(void)
{
	pthread_once(&pool.once, pool_init);
	pthread_mutex_lock(&pool.lock);
	pool.stop = 1;
	pthread_cond_broadcast(&pool.work);
	while (pool.nthreads > 0)
		pthread_cond_wait(&pool.gone, &pool.lock);
	pthread_mutex_unlock(&pool.lock);
}

static const struct sched_tunable blocking_tunables[] = {
    {"ult.blocking_max", &ult__blocking_max, 1, 4096, NULL, NULL},
    {"ult.blocking_idle_ms", &ult__blocking_idle_ms, 1, 3600000, NULL, NULL},
    {"ult.blocking_threads", NULL, 0, 0, ult__blocking_threads, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

/* The helpers and their jobs are the parent's. */
static void
blocking_fork_child(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pool.once = (pthread_once_t)PTHREAD_ONCE_INIT;
	pool.head = pool.tail = NULL;
	pool.nqueued = pool.nthreads = pool.nidle = 0;
	pool.stop = 0;
}

const struct ult__subsys ult__blocking_subsys = {.name = "blocking",
    .fini = ult__blocking_fini,
    .fork_child = blocking_fork_child,
    .tunables = blocking_tunables};
