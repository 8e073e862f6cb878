/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pthread_create from a uthread.  A kernel thread inherits its creator's
 * affinity, and a uthread's creator is its worker, pinned to one CPU when
 * the workers are pinned: every pthread a uthread made (a library's pool,
 * a compressor's threads) would share that CPU with the worker.  So a
 * uthread's pthread_create runs with the worker's affinity widened to the
 * process's mask (the one ult_init saw) for the call, and the new thread
 * inherits that, as ult_blocking's helpers get it; a mask in the
 * attributes still wins.  Preemption is deferred meanwhile, so that no
 * other uthread runs on the widened worker.  Elsewhere it is libc's call.
 *
 * A weak definition, as the lock wrappers (preempt_shim.c): a program's
 * calls reach it; the drop-in has its own pthread_create and renames the
 * runtime's.  libc's code is found with dlsym(RTLD_NEXT) in a dynamic
 * link, by its internal name in a static one, where the reference to
 * thrd_create below makes the linker pull that code in (libc.a's
 * thrd_create calls it): the runtime's own threads are made here too.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../os/linux/os.h"
#include "preempt_shim.h"
#include "runtime.h"
#include "uthread.h"
#include "worker.h"

/* Not in sanitizer builds: the sanitizers intercept it themselves and
 * call it before instrumented code may run (ult_blocking's helpers keep
 * the process's CPUs there). */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
typedef int (
    *create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak));
extern int __pthread_create_2_1(pthread_t *, const pthread_attr_t *,
    void *(*)(void *), void *) __attribute__((weak));
/* Only its address matters: see above (<threads.h> would clash with
 * util/lock.h's mtx_*). */
extern void thrd_create(void);
__attribute__((used)) static void (*const keep_libc_create)(void) = thrd_create;

static create_fn _Atomic real_create;

static create_fn
real(void)
{
	create_fn f = ULT_LD_ACQ(&real_create);

	if (f != NULL)
		return (f);
	if (_DYNAMIC != NULL)
		*(void **)&f = dlsym(RTLD_NEXT, "pthread_create");
	if (f == NULL)
		f = __pthread_create_2_1;
	if (f == NULL) {
		static const char msg[] =
		    "ult: pthread_create: libc's code not found\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			abort();
		abort();
	}
	ULT_ST_REL(&real_create, f);
	return (f);
}

__attribute__((weak)) int
pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
    void *arg)
{
	struct ult_thread *ut = ult__self_ut();
	cpu_set_t old;
	int wide, n, err;

	if (ut == NULL)
		return (real()(t, attr, fn, arg));
	ULT_ST(&ut->nopreempt, ULT_LD(&ut->nopreempt) + 1);
	wide = ult__os_affinity_widen(&old);
	err = real()(t, attr, fn, arg);
	if (wide)
		ult__os_affinity_restore(&old);
	n = ULT_LD(&ut->nopreempt);
	ULT_ST(&ut->nopreempt, n - 1);
	if (n == 1)
		ult__preempt_released(ut);
	return (err);
}
#endif
