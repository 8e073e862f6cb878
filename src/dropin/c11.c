/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * C11 threads (DESIGN.md section 14): glibc's mtx_t and cnd_t are its
 * pthread objects and its thrd_* calls its pthread code by internal
 * names, which the drop-in cannot interpose; so each goes to the drop-in's
 * pthread function of the same meaning.
 */
#include <errno.h>
#include <stdint.h>
#include <threads.h>

#include "dropin.h"

/* C11: glibc's mtx_t and cnd_t are its pthread objects. */
_Static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t), "mtx_t");
_Static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t), "cnd_t");

static int
thrd(int err)
{
	return (err == 0	   ? thrd_success
		: err == EBUSY	   ? thrd_busy
		: err == ETIMEDOUT ? thrd_timedout
		: err == ENOMEM	   ? thrd_nomem
				   : thrd_error);
}

int
mtx_init(mtx_t *m, int type)
{
	pthread_mutexattr_t a;
	int err;

	if (type != mtx_plain && type != mtx_timed &&
	    type != (mtx_plain | mtx_recursive) &&
	    type != (mtx_timed | mtx_recursive))
		return (thrd_error);
	pthread_mutexattr_init(&a);
	if (type & mtx_recursive)
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	err = pthread_mutex_init((pthread_mutex_t *)(void *)m, &a);
	pthread_mutexattr_destroy(&a);
	return (thrd(err));
}

void
mtx_destroy(mtx_t *m)
{
	pthread_mutex_destroy((pthread_mutex_t *)(void *)m);
}

int
mtx_lock(mtx_t *m)
{
	return (thrd(pthread_mutex_lock((pthread_mutex_t *)(void *)m)));
}

int
mtx_trylock(mtx_t *m)
{
	return (thrd(pthread_mutex_trylock((pthread_mutex_t *)(void *)m)));
}

int
mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abs)
{
	return (
	    thrd(pthread_mutex_timedlock((pthread_mutex_t *)(void *)m, abs)));
}

int
mtx_unlock(mtx_t *m)
{
	return (thrd(pthread_mutex_unlock((pthread_mutex_t *)(void *)m)));
}

int
cnd_init(cnd_t *c)
{
	return (thrd(pthread_cond_init((pthread_cond_t *)(void *)c, NULL)));
}

void
cnd_destroy(cnd_t *c)
{
	pthread_cond_destroy((pthread_cond_t *)(void *)c);
}

int
cnd_wait(cnd_t *c, mtx_t *m)
{
	return (thrd(pthread_cond_wait((pthread_cond_t *)(void *)c,
	    (pthread_mutex_t *)(void *)m)));
}

int
cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m,
    const struct timespec *restrict abs)
{
	return (thrd(pthread_cond_timedwait((pthread_cond_t *)(void *)c,
	    (pthread_mutex_t *)(void *)m, abs)));
}

int
cnd_signal(cnd_t *c)
{
	return (thrd(pthread_cond_signal((pthread_cond_t *)(void *)c)));
}

int
cnd_broadcast(cnd_t *c)
{
	return (thrd(pthread_cond_broadcast((pthread_cond_t *)(void *)c)));
}

/* C11 threads: glibc's call its pthread code by internal names. */

static int
thrd_err(int err)
{
	return (err == 0	? thrd_success
		: err == EAGAIN ? thrd_nomem
				: thrd_error);
}

int
thrd_create(thrd_t *t, thrd_start_t fn, void *arg)
{
	/* As glibc does: the int result travels as a pointer. */
	return (thrd_err(pthread_create((pthread_t *)t, NULL,
	    (void *(*)(void *))(void (*)(void))fn, arg)));
}

int
thrd_join(thrd_t t, int *res)
{
	void *v;
	int err = pthread_join((pthread_t)t, &v);

	if (err == 0 && res != NULL)
		*res = (int)(intptr_t)v;
	return (thrd_err(err));
}

int
thrd_detach(thrd_t t)
{
	return (thrd_err(pthread_detach((pthread_t)t)));
}

void
thrd_exit(int res)
{
	pthread_exit((void *)(intptr_t)res);
}

thrd_t
thrd_current(void)
{
	return ((thrd_t)pthread_self());
}

int
thrd_equal(thrd_t a, thrd_t b)
{
	return (a == b);
}

int
thrd_sleep(const struct timespec *t, struct timespec *rem)
{
	return (nanosleep(t, rem) == 0 ? 0 : errno == EINTR ? -1 : -2);
}
