/*
 * pthread mutexes held by uthreads (runtime-hazards.md 3.1): a uthread
 * preempted while holding one leaves the next uthread on its worker to
 * block the whole worker in the kernel, on a lock whose holder waits in
 * that worker's run queue.  So holding a pthread mutex defers preemption,
 * like a schedctl region without a bound.  The wrappers interpose on the
 * program's calls (libc's internal uses do not come here, and run in libc
 * text, which is not preempted anyway).  They are weak so that a static
 * link against libc.a keeps libc's definitions.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include "runtime.h"

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_timedlock)(pthread_mutex_t *, const struct timespec *);
static int (*real_unlock)(pthread_mutex_t *);

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void
resolve(void)
{
	real_lock =
	    (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
	real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT,
	    "pthread_mutex_trylock");
	real_timedlock =
	    (int (*)(pthread_mutex_t *, const struct timespec *))dlsym(
		RTLD_NEXT, "pthread_mutex_timedlock");
	real_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT,
	    "pthread_mutex_unlock");
}

/* The calling uthread, or NULL; read fresh (a uthread may migrate). */
static struct ult_thread *
current(void)
{
	struct ult__worker *w = ult__worker_self();

	return (w != NULL && w->curthread != &w->idle ? w->curthread : NULL);
}

static int
held(struct ult_thread *ut, int r)
{
	if (ut != NULL && r != 0)
		ULT_ST(&ut->nopreempt, ULT_LD(&ut->nopreempt) - 1);
	return (r);
}

static struct ult_thread *
taking(void)
{
	struct ult_thread *ut = current();

	pthread_once(&resolve_once, resolve);
	/* Raised before the call: the lock may be taken at any point in it,
	 * and a uthread blocked in it cannot be switched out anyway. */
	if (ut != NULL)
		ULT_ST(&ut->nopreempt, ULT_LD(&ut->nopreempt) + 1);
	return (ut);
}

__attribute__((weak)) int
pthread_mutex_lock(pthread_mutex_t *m)
{
	struct ult_thread *ut = taking();

	return (held(ut, real_lock(m)));
}

__attribute__((weak)) int
pthread_mutex_trylock(pthread_mutex_t *m)
{
	struct ult_thread *ut = taking();

	return (held(ut, real_trylock(m)));
}

__attribute__((weak)) int
pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	struct ult_thread *ut = taking();

	return (held(ut, real_timedlock(m, ts)));
}

__attribute__((weak)) int
pthread_mutex_unlock(pthread_mutex_t *m)
{
	struct ult_thread *ut = current();
	int r;

	pthread_once(&resolve_once, resolve);
	r = real_unlock(m);
	if (r == 0 && ut != NULL && ULT_LD(&ut->nopreempt) > 0) {
		ULT_ST(&ut->nopreempt, ULT_LD(&ut->nopreempt) - 1);
		/* The last one released: take an owed preemption now. */
		if (ULT_LD(&ut->nopreempt) == 0)
			ult__userret();
	}
	return (r);
}

/* Referenced from preempt.c so that a static link always pulls this in. */
void
ult__preempt_shim_link(void)
{}
