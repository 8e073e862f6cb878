/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Robust mutexes of one process: a thread that ends holding one hands the
 * next locker EOWNERDEAD; made consistent, the mutex goes on; unlocked
 * without that, it is not recoverable.
 */
#include "conf.h"

static pthread_mutex_t rm, rm2, em;
static pthread_barrier_t bar;

static void *
die_holding(void *arg)
{
	pthread_mutex_lock(arg);
	return (NULL);
}

static void *
exit_holding(void *arg)
{
	pthread_mutex_lock(arg);
	pthread_exit(NULL);
}

/* Holds rm2 until the other thread waits for it, then ends. */
static void *
die_with_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&rm2);
	pthread_barrier_wait(&bar);
	/* The waiter is about to lock, or locking: either way it must
	 * get EOWNERDEAD. */
	return (NULL);
}

static void *
waiter(void *arg)
{
	int err;

	(void)arg;
	pthread_barrier_wait(&bar);
	err = pthread_mutex_lock(&rm2);
	if (err == EOWNERDEAD) {
		pthread_mutex_consistent(&rm2);
		pthread_mutex_unlock(&rm2);
	}
	return ((void *)(long)err);
}

static void
run(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	conf_create(&t, NULL, fn, arg);
	conf_join(t);
}

int
main(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
	pthread_t t1, t2;
	int v = -1;

	conf_begin("robust");
	pthread_mutexattr_init(&a);
	conf_err("mutexattr_setrobust",
	    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	conf_err("mutexattr_getrobust", pthread_mutexattr_getrobust(&a, &v), 0);
	conf_long("robustness", v, PTHREAD_MUTEX_ROBUST);
	conf_err("mutex_init robust", pthread_mutex_init(&rm, &a), 0);
	conf_err("mutex_init robust 2", pthread_mutex_init(&rm2, &a), 0);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	conf_err("mutex_init robust errorcheck", pthread_mutex_init(&em, &a),
	    0);
	pthread_mutexattr_destroy(&a);

	conf_err("consistent, not robust", pthread_mutex_consistent(&plain),
	    EINVAL);
	conf_err("lock", pthread_mutex_lock(&rm), 0);
	conf_err("consistent, consistent already",
	    pthread_mutex_consistent(&rm), EINVAL);
	conf_err("unlock", pthread_mutex_unlock(&rm), 0);

	run(die_holding, &rm);
	conf_err("lock after the owner ended", pthread_mutex_lock(&rm),
	    EOWNERDEAD);
	conf_err("consistent", pthread_mutex_consistent(&rm), 0);
	conf_err("unlock", pthread_mutex_unlock(&rm), 0);
	conf_err("lock again", pthread_mutex_lock(&rm), 0);
	conf_err("unlock again", pthread_mutex_unlock(&rm), 0);

	run(exit_holding, &rm);
	conf_err("trylock after the owner's pthread_exit",
	    pthread_mutex_trylock(&rm), EOWNERDEAD);
	conf_err("unlock, not made consistent", pthread_mutex_unlock(&rm), 0);
	conf_err("lock, not recoverable", pthread_mutex_lock(&rm),
	    ENOTRECOVERABLE);
	conf_err("trylock, not recoverable", pthread_mutex_trylock(&rm),
	    ENOTRECOVERABLE);

	pthread_barrier_init(&bar, NULL, 2);
	conf_create(&t1, NULL, die_with_waiter, NULL);
	conf_create(&t2, NULL, waiter, NULL);
	conf_join(t1);
	conf_err("a waiter when the owner ended", (int)(long)conf_join(t2),
	    EOWNERDEAD);
	conf_err("lock after it made it consistent", pthread_mutex_lock(&rm2),
	    0);
	conf_err("unlock", pthread_mutex_unlock(&rm2), 0);

	conf_err("errorcheck lock", pthread_mutex_lock(&em), 0);
	conf_err("errorcheck relock", pthread_mutex_lock(&em), EDEADLK);
	conf_err("errorcheck unlock", pthread_mutex_unlock(&em), 0);
	conf_err("errorcheck unlock, not held", pthread_mutex_unlock(&em),
	    EPERM);
	run(die_holding, &em);
	conf_err("errorcheck lock after the owner ended",
	    pthread_mutex_lock(&em), EOWNERDEAD);
	conf_err("consistent", pthread_mutex_consistent(&em), 0);
	conf_err("unlock", pthread_mutex_unlock(&em), 0);

	pthread_barrier_destroy(&bar);
	conf_err("destroy", pthread_mutex_destroy(&rm2), 0);
	return (conf_end());
}
