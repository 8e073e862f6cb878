/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Destroying a busy condition variable, as glibc does it (POSIX allows
 * EBUSY, which ult's own API returns): pthread_cond_destroy with a thread
 * blocked on the condition waits until that thread has been woken, then
 * returns 0.  (The barrier's counterpart is not tested here: glibc's
 * destroy during an unfinished round can leave the round's threads
 * blocked for ever, so the native run would not be deterministic.)
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

int
main(void)
{
	conf_begin("destroy");
	cond_busy();
	return (conf_end());
}
