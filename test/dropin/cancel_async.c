/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Asynchronous cancellation: threads in pure computation, which never
 * call into the library, are cancelled; their cleanup handlers run and
 * join returns PTHREAD_CANCELED.  Also: a cancel that was pending when
 * the type becomes asynchronous, or when cancellation is enabled again
 * under the asynchronous type, acts at once.
 */
#include <sched.h>
#include <unistd.h>

#include "conf.h"

#define NT 6

static int _Atomic started, cleaned, after, go;

static void
cleanup(void *arg)
{
	(void)arg;
	cleaned++;
}

static void *
spin_fn(void *arg)
{
	volatile unsigned v = 1;

	(void)arg;
	pthread_cleanup_push(cleanup, NULL);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	started++;
	for (;;)
		v = v * 1103515245u + 12345u;
	pthread_cleanup_pop(0);
	return (NULL);
}

/* Deferred until the cancel is pending, then asynchronous. */
static void *
late_async_fn(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, NULL);
	started++;
	while (!go)
		;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	after++;
	pthread_cleanup_pop(0);
	return (NULL);
}

/* Asynchronous but disabled until the cancel is pending. */
static void *
disabled_fn(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, NULL);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	started++;
	while (!go)
		;
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	after++;
	pthread_cleanup_pop(0);
	return (NULL);
}

static void
wait_started(int n)
{
	while (started < n)
		usleep(1000);
}

static void
one(const char *what, void *(*fn)(void *))
{
	pthread_t t;
	char buf[96];

	started = cleaned = after = go = 0;
	conf_create(&t, NULL, fn, NULL);
	wait_started(1);
	conf_err(what, pthread_cancel(t), 0);
	go = 1;
	snprintf(buf, sizeof(buf), "%s: joined PTHREAD_CANCELED", what);
	conf_ok(buf, conf_join(t) == PTHREAD_CANCELED);
	snprintf(buf, sizeof(buf), "%s: cleanup ran", what);
	conf_long(buf, cleaned, 1);
	snprintf(buf, sizeof(buf), "%s: went on after", what);
	conf_long(buf, after, 0);
}

int
main(void)
{
	pthread_t t[NT];
	int old = -1, canceled = 0;

	conf_begin("cancel_async");
	conf_err("setcanceltype asynchronous",
	    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old), 0);
	conf_long("old type deferred", old, PTHREAD_CANCEL_DEFERRED);
	conf_err("setcanceltype deferred",
	    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old), 0);
	conf_long("old type asynchronous", old, PTHREAD_CANCEL_ASYNCHRONOUS);

	started = cleaned = 0;
	for (int i = 0; i < NT; i++)
		conf_create(&t[i], NULL, spin_fn, NULL);
	wait_started(NT);
	for (int i = 0; i < NT; i++)
		pthread_cancel(t[i]);
	for (int i = 0; i < NT; i++)
		canceled += conf_join(t[i]) == PTHREAD_CANCELED;
	conf_long("computing threads cancelled", canceled, NT);
	conf_long("their cleanup handlers run", cleaned, NT);

	one("pending, then asynchronous", late_async_fn);
	one("asynchronous, pending, then enabled", disabled_fn);
	return (conf_end());
}
