/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Between preempt.c and preempt_shim.c.
 *
 * The libc lock functions that preempt_shim.c wraps, each with the name
 * glibc (2.34 and later) gives the same code in libc.a as a strong
 * symbol.  In a static link the wrapper replaces libc's public name (both
 * are weak; the first definition, libult.a's, wins), so the internal name
 * is the only way to libc's code there; preempt_static.c makes sure that
 * the linker pulls that code in.  C11 mtx_* are not listed: glibc
 * implements them on pthread mutexes, and so does the shim.
 */
#ifndef ULT_CORE_PREEMPT_SHIM_H
#define ULT_CORE_PREEMPT_SHIM_H

#include <pthread.h>
#include <time.h>

/* The link flag that brings in every one of them (preempt_static.c). */
#define ULT__STATIC_LIBC_FLAG "-Wl,-u,ult__static_libc"

#define ULT__LIBC_LOCKS(X)                                           \
	X(pthread_mutex_lock, __pthread_mutex_lock)                  \
	X(pthread_mutex_trylock, __pthread_mutex_trylock)            \
	X(pthread_mutex_timedlock, __pthread_mutex_timedlock)        \
	X(pthread_mutex_clocklock, __pthread_mutex_clocklock)        \
	X(pthread_mutex_unlock, __pthread_mutex_unlock)              \
	X(pthread_rwlock_rdlock, __pthread_rwlock_rdlock)            \
	X(pthread_rwlock_wrlock, __pthread_rwlock_wrlock)            \
	X(pthread_rwlock_tryrdlock, ___pthread_rwlock_tryrdlock)     \
	X(pthread_rwlock_trywrlock, ___pthread_rwlock_trywrlock)     \
	X(pthread_rwlock_timedrdlock, ___pthread_rwlock_timedrdlock) \
	X(pthread_rwlock_timedwrlock, ___pthread_rwlock_timedwrlock) \
	X(pthread_rwlock_clockrdlock, ___pthread_rwlock_clockrdlock) \
	X(pthread_rwlock_clockwrlock, ___pthread_rwlock_clockwrlock) \
	X(pthread_rwlock_unlock, __pthread_rwlock_unlock)            \
	X(pthread_spin_lock, __pthread_spin_lock)                    \
	X(pthread_spin_trylock, __pthread_spin_trylock)              \
	X(pthread_spin_unlock, __pthread_spin_unlock)                \
	X(flockfile, __flockfile)                                    \
	X(ftrylockfile, __ftrylockfile)                              \
	X(funlockfile, __funlockfile)

struct ult_thread;

/* ut released the last lock it held through libc: take a preemption that
 * was owed meanwhile (preempt.c). */
void ult__preempt_released(struct ult_thread *ut);

/* The mutex wrappers' work, for C11 mtx_* (preempt_c11.c). */
int ult__shim_mutex_lock(pthread_mutex_t *m);
int ult__shim_mutex_trylock(pthread_mutex_t *m);
int ult__shim_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts);
int ult__shim_mutex_unlock(pthread_mutex_t *m);

/* Referenced from preempt.c so that every link pulls the wrappers in. */
void ult__preempt_shim_link(void);

#endif
