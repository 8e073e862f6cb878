/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Destroying busy objects, as glibc does it (POSIX allows EBUSY, which
 * ult's own API returns): pthread_cond_destroy with a thread blocked on
 * the condition waits until that thread has been woken, then returns 0;
 * pthread_barrier_destroy with a thread blocked in a round that has not
 * ended waits until the round ends, then returns 0.
 */
#include <stdatomic.h>
#include <unistd.h>

#include "conf.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int go, waiting;
static atomic_int signalled;

static void *
waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	waiting = 1;
	while (!go)
		pthread_cond_wait(&c, &m);
	pthread_mutex_unlock(&m);
	return (NULL);
}

static void *
signaller(void *arg)
{
	(void)arg;
	conf_msleep(100);
	pthread_mutex_lock(&m);
	go = 1;
	atomic_store(&signalled, 1);
	pthread_cond_signal(&c);
	pthread_mutex_unlock(&m);
	return (NULL);
}

static void
cond_busy(void)
{
	pthread_t w, s;
	int e;

	conf_create(&w, NULL, waiter, NULL);
	for (;;) { /* until it waits: it holds m until then */
		pthread_mutex_lock(&m);
		if (waiting)
			break;
		pthread_mutex_unlock(&m);
		conf_msleep(1);
	}
	pthread_mutex_unlock(&m);
	conf_create(&s, NULL, signaller, NULL);
	e = pthread_cond_destroy(&c);
	conf_err("cond_destroy with a waiter", e, 0);
	conf_ok("... returned once the waiter was signalled",
	    atomic_load(&signalled) == 1);
	conf_join(w);
	conf_join(s);
}

static pthread_barrier_t b;
static atomic_int arriving, second_in;

static void *
barrier_first(void *arg)
{
	(void)arg;
	atomic_store(&arriving, 1);
	pthread_barrier_wait(&b);
	return (NULL);
}

static void *
barrier_second(void *arg)
{
	(void)arg;
	conf_msleep(100);
	atomic_store(&second_in, 1);
	pthread_barrier_wait(&b);
	return (NULL);
}

static void
barrier_busy(void)
{
	pthread_t t1, t2;

	conf_must("barrier_init", pthread_barrier_init(&b, NULL, 2));
	conf_create(&t1, NULL, barrier_first, NULL);
	while (!atomic_load(&arriving))
		conf_msleep(1);
	conf_msleep(20); /* into its wait */
	conf_create(&t2, NULL, barrier_second, NULL);
	conf_err("barrier_destroy with a waiter", pthread_barrier_destroy(&b),
	    0);
	conf_ok("... returned once the round had ended",
	    atomic_load(&second_in) == 1);
	conf_join(t1);
	conf_join(t2);
}

int
main(void)
{
	conf_begin("destroy");
	cond_busy();
	barrier_busy();
	return (conf_end());
}
