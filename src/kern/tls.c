/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-uthread TLS: the mode, the pool of thread blocks and a block's life
 * beside its uthread's (tls.h; glibc's side is os/linux/glibc_tls.c).
 *
 * Blocks are pooled like stacks: each worker keeps a LIFO cache of dead
 * blocks, made like new when they come back (ult__thread_dead, on the
 * next thread of the worker), and the rest go to a global list.  A block
 * that comes from the pool costs a few stores at spawn; only a new one
 * goes through glibc's allocator.  Everything is freed at shutdown.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../os/linux/glibc_tls.h"
#include "../util/fault.h"
#include "runtime.h"
#include "tls.h"
#include "uthread.h"
#include "worker.h"
#include "subsys.h"

#ifdef ULT_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

#define WORKER_CACHE 64

struct ult__tls_off ult__tls_off;

/* The pool's link, kept in each free block's own instance. */
#ifdef ULT_TLS_SWITCH
static __thread void *pool_next __attribute__((tls_model("initial-exec")));
#endif
static long off_next;

static struct mtx pool_lock = MTX_INITIALIZER("tls pool");
static void *pool;

/* Decided once per process: the layout does not change. */
static int probed;
static const char *why_not;

#define NEXT(tp) (*(void **)((char *)(tp) + off_next))

static const char *
unavailable(void)
{
#if !defined(ULT_TLS_SWITCH)
	return ("the ucontext backend does not move the thread pointer");
#elif defined(ULT_HAVE_ASAN) || defined(ULT_HAVE_TSAN)
	/* TSan keeps its thread state in static TLS, which a fresh block
	 * lacks; ASan would lose each uthread's thread identity. */
	return ("sanitizer build");
#else
	static const char *const sanitizers[] = {"__asan_init", "__tsan_init",
	    "__msan_init", "__hwasan_init"};
	const char *arch = ult__tp_unwritable();

	if (arch != NULL)
		return (arch);
	if (ult__os_static_binary())
		return ("static executable (glibc's TLS allocator is private "
			"there)");
	for (size_t i = 0; i < sizeof(sanitizers) / sizeof(sanitizers[0]); i++)
		if (dlsym(RTLD_DEFAULT, sanitizers[i]) != NULL)
			return ("the program runs under a sanitizer");
#ifdef ULT_HAVE_VALGRIND_H
	if (RUNNING_ON_VALGRIND)
		return ("running under Valgrind");
#endif
	return (ult__glibc_tls_probe());
#endif
}

static void
say_why_not(void)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg),
	    "ult: per-uthread TLS off: %s; using per-worker TLS\n", why_not);

	if (n > 0 &&
	    write(STDERR_FILENO, msg,
		(size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1) < 0)
		(void)0;
}

int
ult__tls_configure(const struct ult_config *cfg)
{
	const char *s = getenv("ULT_TLS");
	int v = cfg != NULL ? cfg->tls : 0;

	if (v == 0 && s != NULL && *s != '\0') {
		if (strcmp(s, "uthread") == 0)
			v = 1;
		else if (strcmp(s, "worker") == 0)
			v = -1;
		else
			return (EINVAL);
	}
	ult__rt.tls_want = v >= 0;
	return (0);
}

void
ult__tls_start(void)
{
	ult__rt.tls = 0;
	if (!ult__rt.tls_want)
		return;
	if (!probed) {
		probed = 1;
		if ((why_not = unavailable()) != NULL)
			say_why_not();
	}
	if (why_not != NULL)
		return;
	if (ult__glibc_setxid_wrap() != 0) {
		why_not = "glibc's SIGSETXID handler was not found";
		say_why_not();
		return;
	}
#ifdef ULT_TLS_SWITCH
	{
		char *tp = ult__tp();

		ult__tls_off.tid = ult__glibc_tls.tid;
		ult__tls_off.worker = (char *)&ult__tls_worker - tp;
		ult__tls_off.tcache = ult__glibc_tls.tcache;
		ult__tls_off.arena = ult__glibc_tls.arena;
		off_next = (char *)&pool_next - tp;
	}
	ult__rt.tls = 1;
#endif
}

static void
free_list(void *tp)
{
	while (tp != NULL) {
		void *next = NEXT(tp);

		ult__glibc_tls_free(tp);
		tp = next;
	}
}

void
ult__tls_fini(void)
{
	if (!ult__rt.tls)
		return;
	for (int i = 0; ult__rt.workers != NULL && i < ult__rt.nworkers; i++) {
		free_list(ult__rt.workers[i].tls_cache);
		ult__rt.workers[i].tls_cache = NULL;
		ult__rt.workers[i].ntls_cache = 0;
	}
	free_list(pool);
	pool = NULL;
	ult__glibc_setxid_unwrap();
	ult__rt.tls = 0;
}

void
ult__tls_worker_init(struct ult__worker *w)
{
#ifdef ULT_TLS_SWITCH
	void *(*volatile m)(size_t) = malloc;

	if (!ult__rt.tls)
		return;
	/* Its malloc cache must exist before a uthread borrows it. */
	free(m(1));
	w->tls_tp = ult__tp();
	ult__glibc_tls_malloc_words(w->tls_tp, &w->tls_tcache, &w->tls_arena);
	w->idle.tls = w->tls_tp;
#else
	(void)w;
#endif
}

/*
 * fork's child keeps its kernel thread's rseq registration: the worker's
 * area, in the worker's descriptor, which glibc there takes for a free
 * stack and hands to a new thread.  On a uthread's block the kernel must
 * stop writing to it (the block's area says "not registered").
 */
void
ult__tls_fork_child(void)
{
#ifdef ULT_TLS_SWITCH
	struct ult__worker *w = ult__tls_worker;

	if (w != NULL && w->tls_tp != NULL && ult__tp() != w->tls_tp)
		ult__glibc_rseq_forget(w->tls_tp);
#endif
}

void *
ult__tls_host_tp(void)
{
	struct ult__worker *w = ult__tls_worker;

	return (w != NULL ? w->tls_tp : NULL);
}

int
ult__tls_get(struct ult__worker *w, struct ult_thread *ut, void *(*fn)(void *),
    void *arg)
{
	void *tp = NULL;

	ut->tls = NULL;
	if (!ult__rt.tls)
		return (0);
	if (w != NULL && (tp = w->tls_cache) != NULL) {
		w->tls_cache = NEXT(tp);
		w->ntls_cache--;
	} else {
		mtx_lock_spin(&pool_lock);
		if ((tp = pool) != NULL)
			pool = NEXT(tp);
		mtx_unlock_spin(&pool_lock);
		if (tp == NULL &&
		    (ult__fault(ULT__FAULT_MALLOC) ||
			(tp = ult__glibc_tls_alloc()) == NULL))
			return (EAGAIN);
	}
	ult__glibc_tls_start(tp, (char *)ut->stack->base + ut->stack->guard,
	    ut->stack->size, fn, arg);
	ut->tls = tp;
	ut->tls_w = NULL;
	return (0);
}

void
ult__tls_put(struct ult__worker *w, struct ult_thread *ut)
{
	void *tp = ut->tls;

	if (tp == NULL)
		return;
	ut->tls = NULL;
	ult__glibc_tls_reset(tp);
	if (w->ntls_cache >= WORKER_CACHE) {
		/* Half back to the global list, so blocks flow between
		 * workers. */
		mtx_lock_spin(&pool_lock);
		while (w->ntls_cache > WORKER_CACHE / 2) {
			void *o = w->tls_cache;

			w->tls_cache = NEXT(o);
			w->ntls_cache--;
			NEXT(o) = pool;
			pool = o;
		}
		mtx_unlock_spin(&pool_lock);
	}
	NEXT(tp) = w->tls_cache;
	w->tls_cache = tp;
	w->ntls_cache++;
}

void
ult__tls_enter(struct ult_thread *ut)
{
	if (ut->tls != NULL)
		ult__glibc_tls_enter();
}

void
ult__tls_exit(struct ult_thread *ut)
{
	/* Destructors may end the thread themselves: run them once. */
	if (ut->tls == NULL || ut->tls_exiting)
		return;
	ut->tls_exiting = 1;
	ult__glibc_tls_exit();
}

static int
tls_configure(const struct ult_config *cfg)
{
	return (ult__tls_configure(cfg));
}

static int
tls_init(void)
{
	ult__tls_start();
	return (0);
}

/* Whether every uthread has its own TLS (it may have been refused:
 * ULT_TLS=worker, sanitizers, static executables, an unknown glibc). */
static long
tls_get(void)
{
	return (ult__rt.tls > 0);
}

static const struct sched_tunable tls_tunables[] = {
    {"ult.tls", NULL, 0, 0, tls_get, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

/* The pooled blocks are leaked: the list may be mid-update. */
static void
tls_fork_child(void)
{
	mtx_init(&pool_lock, "tls pool");
	pool = NULL;
	ult__glibc_tls_fork_child();
	ult__rt.tls = 0;
}

const struct ult__subsys ult__tls_subsys = {.name = "tls",
    .configure = tls_configure,
    .init = tls_init,
    .fini = ult__tls_fini,
    .fork_child = tls_fork_child,
    .tunables = tls_tunables};
