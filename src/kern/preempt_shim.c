/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Locks held through libc (DESIGN.md section 6.1).  A uthread preempted
 * while it holds a lock that libc implements leaves the next uthread on
 * its worker to block the whole worker in the kernel, on a lock whose
 * holder waits in that worker's run queue; and the locks that are
 * recursive per kernel thread (stdio's FILE lock, recursive mutexes)
 * would let the next uthread walk into the holder's region.  So holding
 * one defers preemption, like a schedctl region without a bound: every
 * lock and unlock entry point of libc's public API is wrapped here to keep
 * a count per uthread (nopreempt), which the handler checks.  Covered:
 * pthread mutexes, rwlocks and spinlocks, C11 mtx_*, and
 * flockfile/ftrylockfile/funlockfile regions.  Not covered: locks taken
 * inside libc or other libraries (they do not call these entry points;
 * libc's text is not preempted anyway), and POSIX semaphores or anything
 * else used as a lock.
 *
 * The count goes up before an acquisition (libc may take the lock
 * anywhere in the call) and back down after a failed try or timed
 * attempt; an unlock takes it down but never below zero (a lock taken
 * before the thread was a uthread, or released by another thread).  The
 * last release takes a preemption owed meanwhile.  Plain loads and stores,
 * no system call: only the thread and its own worker's handler touch it.
 *
 * The wrappers are weak definitions, so a program's calls reach them
 * before libc's.  Each finds libc's function on first use: with
 * dlsym(RTLD_NEXT) in a dynamically linked program, through glibc's
 * internal strong name (preempt_shim.h) in a static one, where dlsym has
 * nothing next.  Only -Wl,-u,ult__static_libc makes sure that libc.a's
 * code is linked at all (preempt_static.c); a wrapper whose code is
 * missing says so and aborts.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preempt_shim.h"
#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "witness.h"

typedef void (*anyfn)(void);

struct libc_fn {
	const char *name;   /* the public name, for dlsym */
	anyfn internal;	    /* glibc's code by its internal name, or NULL */
	anyfn _Atomic real; /* resolved on first use */
};

/* Referenced weakly: a dynamic link has no use for them and cannot bind
 * them (glibc exports them under no default version, or not at all). */
#define DECLARE(pub, internal) extern void internal(void) __attribute__((weak));
ULT__LIBC_LOCKS(DECLARE)
#undef DECLARE

#define SLOT(pub, internal) \
	static struct libc_fn real_##pub = {#pub, internal, NULL};
ULT__LIBC_LOCKS(SLOT)
#undef SLOT

/* Defined by the linker when this object has a dynamic section; absent in
 * a static (non-PIE) executable, where dlsym is not even tried. */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak));

static void __attribute__((noreturn)) missing(const struct libc_fn *f)
{
	const char *part[] = {"ult: ", f->name,
	    ": libc's code is not linked into this static executable; link "
	    "it with " ULT__STATIC_LIBC_FLAG
	    " (pkg-config --static --libs ult has it)\n"};

	/* No stdio: it would come back here through flockfile. */
	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++)
		if (write(STDERR_FILENO, part[i], strlen(part[i])) < 0)
			break;
	abort();
}

static anyfn
resolve(struct libc_fn *f)
{
	anyfn p = NULL;

	if (_DYNAMIC != NULL) {
		void *sym = dlsym(RTLD_NEXT, f->name);

		memcpy(&p, &sym, sizeof(p));
	}
	if (p == NULL)
		p = f->internal;
	if (p == NULL)
		missing(f);
	/* Racing resolvers store the same value. */
	atomic_store_explicit(&f->real, p, memory_order_relaxed);
	return (p);
}

static inline anyfn
real(struct libc_fn *f)
{
	anyfn p = atomic_load_explicit(&f->real, memory_order_relaxed);

	return (p != NULL ? p : resolve(f));
}

#define REAL(pub, type) ((type)real(&real_##pub))

/* Before an acquisition. */
static inline struct ult_thread *
hold(int kind, const void *lock)
{
	struct ult_thread *ut = ult__self_ut();

	if (ut != NULL) {
		ULT_ST(&ut->nopreempt, ULT_LD(&ut->nopreempt) + 1);
		if (ULT_UNLIKELY(ult__witness_on))
			ult__witness_libc_hold(ut, kind, lock);
	}
	return (ut);
}

/* After a release, or an acquisition that failed. */
static inline void
drop(struct ult_thread *ut, const void *lock)
{
	int n;

	if (ut == NULL || (n = ULT_LD(&ut->nopreempt)) <= 0)
		return;
	if (ULT_UNLIKELY(ult__witness_on))
		ult__witness_libc_drop(ut, lock);
	ULT_ST(&ut->nopreempt, n - 1);
	if (n == 1)
		ult__preempt_released(ut);
}

static inline int
held(struct ult_thread *ut, const void *lock, int r, int acquired)
{
	if (!acquired)
		drop(ut, lock);
	return (r);
}

/* A robust mutex whose owner died is acquired all the same. */
#define MUTEX_ACQUIRED(r) ((r) == 0 || (r) == EOWNERDEAD)

typedef int (*mutex_fn)(pthread_mutex_t *);
typedef int (*mutex_timed_fn)(pthread_mutex_t *, const struct timespec *);
typedef int (
    *mutex_clock_fn)(pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*rw_fn)(pthread_rwlock_t *);
typedef int (*rw_timed_fn)(pthread_rwlock_t *, const struct timespec *);
typedef int (
    *rw_clock_fn)(pthread_rwlock_t *, clockid_t, const struct timespec *);
typedef int (*spin_fn)(pthread_spinlock_t *);
typedef void (*file_fn)(FILE *);
typedef int (*file_try_fn)(FILE *);

/* Also behind C11 mtx_* (preempt_c11.c). */

int
ult__shim_mutex_lock(pthread_mutex_t *m)
{
	struct ult_thread *ut = hold(WIT_PTHREAD_MUTEX, m);
	int r = REAL(pthread_mutex_lock, mutex_fn)(m);

	return (held(ut, m, r, MUTEX_ACQUIRED(r)));
}

int
ult__shim_mutex_trylock(pthread_mutex_t *m)
{
	struct ult_thread *ut = hold(WIT_PTHREAD_MUTEX, m);
	int r = REAL(pthread_mutex_trylock, mutex_fn)(m);

	return (held(ut, m, r, MUTEX_ACQUIRED(r)));
}

int
ult__shim_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	struct ult_thread *ut = hold(WIT_PTHREAD_MUTEX, m);
	int r = REAL(pthread_mutex_timedlock, mutex_timed_fn)(m, ts);

	return (held(ut, m, r, MUTEX_ACQUIRED(r)));
}

int
ult__shim_mutex_unlock(pthread_mutex_t *m)
{
	int r = REAL(pthread_mutex_unlock, mutex_fn)(m);

	if (r == 0)
		drop(ult__self_ut(), m);
	return (r);
}

__attribute__((weak)) int
pthread_mutex_lock(pthread_mutex_t *m)
{
	return (ult__shim_mutex_lock(m));
}

__attribute__((weak)) int
pthread_mutex_trylock(pthread_mutex_t *m)
{
	return (ult__shim_mutex_trylock(m));
}

__attribute__((weak)) int
pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	return (ult__shim_mutex_timedlock(m, ts));
}

__attribute__((weak)) int
pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t c,
    const struct timespec *ts)
{
	struct ult_thread *ut = hold(WIT_PTHREAD_MUTEX, m);
	int r = REAL(pthread_mutex_clocklock, mutex_clock_fn)(m, c, ts);

	return (held(ut, m, r, MUTEX_ACQUIRED(r)));
}

__attribute__((weak)) int
pthread_mutex_unlock(pthread_mutex_t *m)
{
	return (ult__shim_mutex_unlock(m));
}

/* rwlocks: read and write locks alike (a preempted reader holds up a
 * writer on its worker just as well). */
#define RW_LOCK(pub)                                                  \
	__attribute__((weak)) int pub(pthread_rwlock_t *rw)           \
	{                                                             \
		struct ult_thread *ut = hold(WIT_PTHREAD_RWLOCK, rw); \
		int r = REAL(pub, rw_fn)(rw);                         \
                                                                      \
		return (held(ut, rw, r, r == 0));                     \
	}
#define RW_TIMED(pub)                                                 \
	__attribute__((weak)) int pub(pthread_rwlock_t *rw,           \
	    const struct timespec *ts)                                \
	{                                                             \
		struct ult_thread *ut = hold(WIT_PTHREAD_RWLOCK, rw); \
		int r = REAL(pub, rw_timed_fn)(rw, ts);               \
                                                                      \
		return (held(ut, rw, r, r == 0));                     \
	}
#define RW_CLOCK(pub)                                                    \
	__attribute__((weak)) int pub(pthread_rwlock_t *rw, clockid_t c, \
	    const struct timespec *ts)                                   \
	{                                                                \
		struct ult_thread *ut = hold(WIT_PTHREAD_RWLOCK, rw);    \
		int r = REAL(pub, rw_clock_fn)(rw, c, ts);               \
                                                                         \
		return (held(ut, rw, r, r == 0));                        \
	}

RW_LOCK(pthread_rwlock_rdlock)
RW_LOCK(pthread_rwlock_wrlock)
RW_LOCK(pthread_rwlock_tryrdlock)
RW_LOCK(pthread_rwlock_trywrlock)
RW_TIMED(pthread_rwlock_timedrdlock)
RW_TIMED(pthread_rwlock_timedwrlock)
RW_CLOCK(pthread_rwlock_clockrdlock)
RW_CLOCK(pthread_rwlock_clockwrlock)

__attribute__((weak)) int
pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	int r = REAL(pthread_rwlock_unlock, rw_fn)(rw);

	if (r == 0)
		drop(ult__self_ut(), rw);
	return (r);
}

__attribute__((weak)) int
pthread_spin_lock(pthread_spinlock_t *s)
{
	struct ult_thread *ut =
	    hold(WIT_PTHREAD_SPIN, (const void *)(uintptr_t)s);
	int r = REAL(pthread_spin_lock, spin_fn)(s);

	return (held(ut, (const void *)(uintptr_t)s, r, r == 0));
}

__attribute__((weak)) int
pthread_spin_trylock(pthread_spinlock_t *s)
{
	struct ult_thread *ut =
	    hold(WIT_PTHREAD_SPIN, (const void *)(uintptr_t)s);
	int r = REAL(pthread_spin_trylock, spin_fn)(s);

	return (held(ut, (const void *)(uintptr_t)s, r, r == 0));
}

__attribute__((weak)) int
pthread_spin_unlock(pthread_spinlock_t *s)
{
	int r = REAL(pthread_spin_unlock, spin_fn)(s);

	if (r == 0)
		drop(ult__self_ut(), (const void *)(uintptr_t)s);
	return (r);
}

/* stdio's FILE lock is recursive per kernel thread: without the count, a
 * second uthread on the holder's worker would walk straight in. */
__attribute__((weak)) void
flockfile(FILE *f)
{
	(void)hold(WIT_FILE, f);
	REAL(flockfile, file_fn)(f);
}

__attribute__((weak)) int
ftrylockfile(FILE *f)
{
	struct ult_thread *ut = hold(WIT_FILE, f);
	int r = REAL(ftrylockfile, file_try_fn)(f);

	return (held(ut, f, r, r == 0));
}

__attribute__((weak)) void
funlockfile(FILE *f)
{
	REAL(funlockfile, file_fn)(f);
	drop(ult__self_ut(), f);
}

void
ult__preempt_shim_link(void)
{}
