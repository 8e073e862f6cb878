/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The uthread structure and its life (thread.c: the slab, spawn, exit,
 * join, detach).
 */
#ifndef ULT_KERN_UTHREAD_H
#define ULT_KERN_UTHREAD_H

#include <stdint.h>

#include "ult.h"

#include "../arch/context.h"
#include "../arch/sanitizer.h"
#include "../obs/stats.h"
#include "../obs/trace.h"
#include "../sched/thread.h"
#include "../util/atomic.h"
#include "preempt.h"
#include "signals.h"
#include "sleepq.h"
#include "stack.h"
#include "tls.h"
#include "turnstile.h"
#include "witness.h"

#if defined(__GNUC__) && !defined(__clang__)
#define ULT_NOIPA __attribute__((noipa))
#else
#define ULT_NOIPA __attribute__((noinline))
#endif

/* Lifecycle of a uthread handle (ut_lstate). */
enum {
	UT_ALIVE = 1, /* created, not yet exited */
	UT_ZOMBIE,    /* exited, waiting to be joined */
	UT_FREE	      /* joined or detached-and-exited: handle is dead */
};

struct ult__worker;

/*
 * A uthread: the policy's view first, then the mechanism's, then one
 * part per subsystem, each declared in its subsystem's header and
 * embedded anonymously (-fms-extensions), so that ut->wchan names the
 * sleep part's field.  Locking key (who may write a field, and who reads
 * it):
 *   c  set by ult_spawn before the thread is visible; constant after
 *   t  the thread lock (td.td_lock, whichever lock it names now)
 *   j  the join channel's sleep-queue chain (ult__sleepq_lock(ut))
 *   q  the ts_lock of the turnstile the thread blocks on
 *   x  contested_lock
 *   s  the thread itself, or its own worker's switch path or signal
 *      handler while it is current there (one kernel thread at a time)
 *   z  the thread slab's lock
 *   a  atomic: read without a lock by other threads (said why)
 */
struct ult_thread {
	struct thread td;	  /* (t) policy view; first member */
	struct ult__ctx ctx;	  /* (s) saved and loaded by switches */
	struct ult__san san;	  /* (s) */
	struct ult__stack *stack; /* (c) NULL for a worker's idle thread;
				     given back by the next thread on the
				     worker once this one has exited */
	void *(*fn)(void *);	  /* (c) */
	void *arg;		  /* (c) */
	void *ret;		  /* (s) at exit; the joiner reads it after
				     seeing UT_ZOMBIE under j */
	int saved_errno;	  /* (s) across switches */
	atomic_int lstate; /* (t+j, a) UT_*: handle checks read it first */
	int detached;	   /* (j) */
	int joining;	   /* (j) a joiner is waiting */
	int last_cpu;	   /* (s) worker it last ran on, for nmigrations */
	int last_swt;	   /* (s) SWT_* reason of its last switch (reports) */
	uint64_t id;	   /* (c) */
	char name[32];	   /* (c) */
	int bind_pending;  /* (t) a binding (cpu + 1) for the next switch
			      that leaves the thread free to move */
	int chaos_bound;   /* (t) bound by ult.chaos_migrate, not the
			      program (sched_calls.c) */
	struct ult__stats_part;	      /* obs/stats.h */
	struct ult__trace_part;	      /* obs/trace.h */
	struct ult__sleep_part;	      /* sleepq.h */
	struct ult__lock_part;	      /* turnstile.h */
	struct ult__preempt_part;     /* preempt.h */
	struct ult__tls_part;	      /* tls.h */
	struct ult__sig_part;	      /* signals.h */
	struct ult__witness_part;     /* witness.h */
	struct ult_thread *free_next; /* (z) thread slab free list */
};

static inline struct ult_thread *
ult__td2ut(struct thread *td)
{
	return ((struct ult_thread *)(void *)td);
}

/* thread.c: uthreads not yet exited, and ult_shutdown's wait for none. */
uint64_t ult__live_threads(void);
void ult__wait_no_threads(void);
void ult__thread_dead(struct ult__worker *w, struct ult_thread *ut);
void ult__thread_slab_fini(void);
/* Call fn for every uthread not yet joined, under the slab's lock; with
 * hang 1 (hang reports) without it if it is taken, reading the slab as it
 * is, half-made structs included. */
void ult__thread_foreach(void (*fn)(struct ult_thread *, void *), void *arg,
    int hang);

/* ult_spawn on the caller's stack [stack, stack + size) (the pthread
 * drop-in's pthread_attr_setstack): EINVAL NULL or below ULT_STACK_MIN;
 * the memory must outlive the thread, as with pthreads. */
int ult__spawn_on(ult_thread_t **t, const struct ult_attr *a,
    void *(*fn)(void *), void *arg, void *stack, size_t size);

/* fork.c's halves of an adoption (thread.c). */
struct ult_thread *ult__thread_adopt_make(struct ult_thread *reuse,
    const struct ult_attr *a, void *arg, void *stack, size_t size, void *tls);
void ult__thread_adopt_add(struct ult_thread *ut, const struct ult_attr *a);

/*
 * A fork child of a process whose runtime was up, its runtime started
 * again (DESIGN.md section 10.1): the calling thread, the child's only
 * one, which runs on the forking uthread's stack [stack, stack + size)
 * and block, goes on as a uthread, `reuse' (the forking uthread's struct
 * in the parent, or NULL for a new one), and this function returns on a
 * worker.  arg is its ut->arg, as if spawned with it (the drop-in finds
 * its record there).  Its kernel thread moves to a stack and a block of
 * its own and runs host() there, which must not return.  0, ENXIO (the
 * runtime is not up, or a uthread calls), ENOTSUP (no per-uthread TLS)
 * or EAGAIN.
 */
int ult__thread_adopt(struct ult_thread *reuse, const struct ult_attr *a,
    void *arg, void *stack, size_t size, void (*host)(void),
    ult_thread_t **out);

#endif
