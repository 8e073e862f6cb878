/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Thread-specific data and thread-local storage: values per thread,
 * destructors run at thread exit (return and pthread_exit) with the
 * thread's value, repeated while they set a value again, not for NULL
 * values, not after pthread_key_delete; __thread variables and errno
 * per thread.
 */
#include "conf.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#define NTHREADS 32
#define NKEYS 64

static pthread_key_t key;
static atomic_int dtor_calls;
static atomic_long dtor_sum;
static atomic_int wrong_value;

static void
dtor(void *v)
{
	atomic_fetch_add(&dtor_calls, 1);
	atomic_fetch_add(&dtor_sum, (long)(intptr_t)v);
}

static __thread long tls_counter;
static __thread int tls_init = 42;

static void *
per_thread(void *arg)
{
	intptr_t me = (intptr_t)arg;
	int i;

	if (pthread_getspecific(key) != NULL)
		atomic_fetch_add(&wrong_value, 1);
	if (tls_init != 42 || tls_counter != 0)
		atomic_fetch_add(&wrong_value, 1);
	if (pthread_setspecific(key, (void *)(me + 1)) != 0)
		atomic_fetch_add(&wrong_value, 1);
	for (i = 0; i < 200; i++) {
		tls_counter++;
		if (i % 10 == 0)
			sched_yield();
		if (pthread_getspecific(key) != (void *)(me + 1))
			atomic_fetch_add(&wrong_value, 1);
	}
	if (tls_counter != 200)
		atomic_fetch_add(&wrong_value, 1);
	/* errno is per thread too: each sets its own, others yield between. */
	errno = (int)me + 1000;
	sched_yield();
	conf_msleep(1);
	if (errno != (int)me + 1000)
		atomic_fetch_add(&wrong_value, 1);
	tls_init = (int)me;
	if (me % 2)
		pthread_exit(NULL);
	return (NULL);
}

static void
check_values_and_destructors(void)
{
	pthread_t t[NTHREADS];
	long want = 0;
	intptr_t i;

	conf_err("key_create", pthread_key_create(&key, dtor), 0);
	/* main's own value is not seen by the threads. */
	conf_err("setspecific in main",
	    pthread_setspecific(key, (void *)(intptr_t)1000), 0);
	tls_counter = 1000;
	for (i = 0; i < NTHREADS; i++) {
		conf_create(&t[i], NULL, per_thread, (void *)i);
		want += i + 1;
	}
	for (i = 0; i < NTHREADS; i++)
		conf_join(t[i]);
	conf_long("32 threads: wrong values seen", atomic_load(&wrong_value),
	    0);
	conf_long("destructor calls (half return, half pthread_exit)",
	    atomic_load(&dtor_calls), NTHREADS);
	conf_long("destructor got each thread's value: sum",
	    atomic_load(&dtor_sum), want);
	conf_ok("main's value untouched",
	    pthread_getspecific(key) == (void *)(intptr_t)1000);
	conf_ok("main's __thread variables untouched",
	    tls_counter == 1000 && tls_init == 42);
	conf_err("key_delete", pthread_key_delete(key), 0);
}

/* Threads that never set the key, or set it back to NULL. */
static pthread_key_t key2;

static void *
null_value(void *arg)
{
	if (arg != NULL) {
		pthread_setspecific(key2, arg);
		pthread_setspecific(key2, NULL);
	}
	return (NULL);
}

static void
check_null_values(void)
{
	pthread_t t[8];
	int i;

	atomic_store(&dtor_calls, 0);
	conf_must("key_create", pthread_key_create(&key2, dtor));
	for (i = 0; i < 8; i++)
		conf_create(&t[i], NULL, null_value, i % 2 ? &t[i] : NULL);
	for (i = 0; i < 8; i++)
		conf_join(t[i]);
	conf_long("destructor calls for NULL values", atomic_load(&dtor_calls),
	    0);
	pthread_key_delete(key2);
}

/* A destructor that sets a value again is called again. */
static pthread_key_t key3;
static atomic_int again_calls;

static void
dtor_again(void *v)
{
	atomic_fetch_add(&again_calls, 1);
	if ((intptr_t)v == 1)
		pthread_setspecific(key3, (void *)2);
}

static void *
set_once(void *arg)
{
	(void)arg;
	pthread_setspecific(key3, (void *)1);
	return (NULL);
}

static void
check_destructor_again(void)
{
	pthread_t t[4];
	int i;

	conf_must("key_create", pthread_key_create(&key3, dtor_again));
	for (i = 0; i < 4; i++)
		conf_create(&t[i], NULL, set_once, NULL);
	for (i = 0; i < 4; i++)
		conf_join(t[i]);
	conf_long("destructor that sets the value again: calls (4 threads)",
	    atomic_load(&again_calls), 8);
	pthread_key_delete(key3);
}

/* No destructor after pthread_key_delete. */
static pthread_key_t key4;
static struct conf_step del_step = CONF_STEP_INIT;

static void *
outlives_key(void *arg)
{
	(void)arg;
	pthread_setspecific(key4, (void *)7);
	conf_step_set(&del_step, 1);
	conf_step_wait(&del_step, 2);
	return (NULL);
}

static void
check_delete(void)
{
	pthread_t t;

	atomic_store(&dtor_calls, 0);
	conf_must("key_create", pthread_key_create(&key4, dtor));
	conf_create(&t, NULL, outlives_key, NULL);
	conf_step_wait(&del_step, 1);
	conf_err("key_delete while a thread has a value",
	    pthread_key_delete(key4), 0);
	conf_step_set(&del_step, 2);
	conf_join(t);
	conf_long("destructor calls after key_delete", atomic_load(&dtor_calls),
	    0);
}

/* Many keys at once, each with its own value in each thread. */
static pthread_key_t keys[NKEYS];
static atomic_int many_wrong;

static void *
many(void *arg)
{
	intptr_t me = (intptr_t)arg;
	int k;

	for (k = 0; k < NKEYS; k++)
		pthread_setspecific(keys[k], (void *)(me * 1000 + k + 1));
	sched_yield();
	for (k = 0; k < NKEYS; k++)
		if (pthread_getspecific(keys[k]) != (void *)(me * 1000 + k + 1))
			atomic_fetch_add(&many_wrong, 1);
	return (NULL);
}

static void
check_many_keys(void)
{
	pthread_t t[8];
	int k, errs = 0;
	intptr_t i;

	for (k = 0; k < NKEYS; k++)
		errs += pthread_key_create(&keys[k], NULL) != 0;
	conf_long("64 keys created: errors", errs, 0);
	for (i = 0; i < 8; i++)
		conf_create(&t[i], NULL, many, (void *)i);
	for (i = 0; i < 8; i++)
		conf_join(t[i]);
	conf_long("8 threads x 64 keys: wrong values", atomic_load(&many_wrong),
	    0);
	for (errs = 0, k = 0; k < NKEYS; k++)
		errs += pthread_key_delete(keys[k]) != 0;
	conf_long("64 keys deleted: errors", errs, 0);
}

int
main(void)
{
	conf_begin("key");
	check_values_and_destructors();
	check_null_values();
	check_destructor_again();
	check_delete();
	check_many_keys();
	return (conf_end());
}
