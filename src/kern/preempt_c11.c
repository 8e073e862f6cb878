/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * C11 mutexes hold off preemption like pthread mutexes (preempt_shim.c).
 * glibc's mtx_t is a pthread_mutex_t and its mtx_* call its pthread mutex
 * code internally, past the wrappers; these do what glibc's do, through
 * the wrappers' counting, with glibc's mapping of the error codes.  A
 * file of its own: the runtime's spin lock (util/lock.h) has the same
 * names.
 */
#include <errno.h>
#include <pthread.h>
#include <threads.h>

#include "preempt_shim.h"

_Static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t),
    "mtx_t is a pthread_mutex_t");

static int
thrd_result(int err)
{
	switch (err) {
	case 0:
		return (thrd_success);
	case ENOMEM:
		return (thrd_nomem);
	case ETIMEDOUT:
		return (thrd_timedout);
	case EBUSY:
		return (thrd_busy);
	default:
		return (thrd_error);
	}
}

__attribute__((weak)) int
mtx_lock(mtx_t *m)
{
	return (
	    thrd_result(ult__shim_mutex_lock((pthread_mutex_t *)(void *)m)));
}

__attribute__((weak)) int
mtx_trylock(mtx_t *m)
{
	return (
	    thrd_result(ult__shim_mutex_trylock((pthread_mutex_t *)(void *)m)));
}

__attribute__((weak)) int
mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict ts)
{
	return (thrd_result(
	    ult__shim_mutex_timedlock((pthread_mutex_t *)(void *)m, ts)));
}

__attribute__((weak)) int
mtx_unlock(mtx_t *m)
{
	return (
	    thrd_result(ult__shim_mutex_unlock((pthread_mutex_t *)(void *)m)));
}
