/*
 * libult-pthread.so, the pthread drop-in (DESIGN.md section 14): a
 * program started by ult-run has its threads run as uthreads.  Internal
 * to the drop-in; nothing here is exported.
 */
#ifndef ULT_DROPIN_H
#define ULT_DROPIN_H

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

#include "ult.h"

/* Says what cannot go on, on stderr, and exits with status 127. */
void ult__dropin_fatal(const char *what, const char *why)
    __attribute__((noreturn));
/* The next definition of `name' after this library (libc's), cached. */
void *ult__dropin_next(const char *name, void *_Atomic *slot);
/* Start the runtime if it is not up (any interposed entry may be first). */
extern int ult__dropin_ready; /* the runtime is up and per-uthread TLS on */
void ult__dropin_up_slow(void);
/* ult__dropin_up, then wait for a start under way in another thread:
 * 0, or EAGAIN in the thread that is starting it. */
int ult__dropin_up_wait(void);
static inline void
ult__dropin_up(void)
{
	if (__builtin_expect(
		!__atomic_load_n(&ult__dropin_ready, __ATOMIC_ACQUIRE), 0))
		ult__dropin_up_slow();
}
size_t ult__dropin_default_stack(void);
size_t ult__dropin_main_stack(void);
size_t ult__dropin_stack_guard(void); /* below each stack of ult's */

/*
 * A thread of the program (thread.c).  pthread_t is its address: glibc's
 * functions that take a pthread_t are all interposed, and tell it from a
 * glibc thread's descriptor (a thread that is not a uthread: a helper libc
 * starts itself) by `magic', which a descriptor's first word (its own
 * address) never equals.
 */
#define DP_MAGIC 0x7274687074746c75ull /* "ultpthr" */
struct dp_thread {
	uint64_t magic;
	ult_thread_t *_Atomic ut; /* set by the creator and the thread */
	void *(*fn)(void *);
	void *arg;
	void *ret;
	void *desc;	  /* glibc's descriptor: the thread's block */
	int _Atomic refs; /* the thread and its handle (until joined) */
	int detached;	  /* (a) */
	int is_main;
	int own_stack;	    /* pthread_attr_setstack's: no guard of ult's */
	int cancel_pending; /* (a) */
	int cancel_off;	    /* PTHREAD_CANCEL_DISABLE in force */
	int cancel_async;   /* recorded only: cancellation is deferred */
	int exiting;
	uint64_t sig_pending; /* (a) pthread_kill'ed signals, 1..64 */
	unsigned nintr;	      /* (a) interruptions sent: tells an EINTR of
				 ours from the kernel's */
	struct dp_thread *next_live, *prev_live; /* signal.c's list */
	int policy; /* what pthread_setschedparam was told */
	struct sched_param param;
	ult_mutex_t done_mx; /* done, for tryjoin and timedjoin */
	ult_cond_t done_cv;
	int done;
	char name[16];
};
/* The calling uthread's, or NULL in a thread that is not one. */
struct dp_thread *ult__dropin_self(void);
/* t's record, or NULL if t is not a uthread of the drop-in. */
struct dp_thread *ult__dropin_of(pthread_t t);
unsigned long ult__dropin_nthreads(void);
/* Run the program's main in a uthread; does not return. */
typedef int (*ult__main_fn)(int, char **, char **);
void ult__dropin_run_main(ult__main_fn main, int argc, char **argv, char **envp)
    __attribute__((noreturn));
/* A scheduling policy and parameter onto a uthread's class (sched.c):
 * 0 or EINVAL; records them in dp for pthread_getschedparam. */
int ult__dropin_sched_map(int policy, const struct sched_param *sp,
    struct ult_attr *ua, struct dp_thread *dp);
/* Signals (signal.c): dp starts (live 1) with signal mask `mask', or
 * ends (0) with it; and the kernel thread that started main collects
 * the process's signals for the uthreads, for ever. */
void ult__dropin_sig_live(struct dp_thread *dp, uint64_t mask, int live);
void ult__dropin_catch_signals(void) __attribute__((noreturn));
/* Deliver pthread_kill'ed signals now due (signal.c). */
void ult__dropin_signals(struct dp_thread *dp);

/* Absolute time on `clock' to an ult deadline (CLOCK_MONOTONIC ns):
 * 0, or EINVAL for a malformed timespec or an unsupported clock. */
int ult__dropin_deadline(clockid_t clock, const struct timespec *abs,
    uint64_t *deadline);
/* Relative time to an ult deadline; EINVAL malformed. */
int ult__dropin_after(const struct timespec *rel, uint64_t *deadline);

/* A cancellation point (thread.c): act on a pending cancel, if enabled,
 * and deliver signals queued by pthread_kill. */
void ult__dropin_point(void);
/* After a wait that succeeded (took a token, a wakeup): queued signals
 * only; a cancel waits for the next point, so that nothing is lost. */
void ult__dropin_after_wait(void);
void ult__dropin_idle_masks(void);
/*
 * Around a wait at a cancellation point: pthread_cancel and pthread_kill
 * end it early (ult__sleepq_interrupt), and the wait returns EINTR; the
 * caller then calls ult__dropin_point and, if that returns, waits again
 * for what is left.  No-ops in a thread that is not a uthread.
 */
void ult__dropin_intr_begin(void);
void ult__dropin_intr_end(void);
/* wait(obj, deadline) so, again after each interruption: 0 or its error. */
int ult__dropin_wait_until(int (*wait)(void *, uint64_t), void *obj,
    uint64_t deadline);
/* Wake dp if it waits at a cancellation point. */
void ult__dropin_interrupt(struct dp_thread *dp);

/* libc's functions for the runtime and the drop-in (real.c). */
int ult__rt_pthread_create(pthread_t *t, const pthread_attr_t *a,
    void *(*fn)(void *), void *arg);
void ult__rt_pthread_exit(void *ret) __attribute__((noreturn));
int ult__rt_epoll_wait(int ep, struct epoll_event *e, int n, int ms);
int ult__rt_poll(struct pollfd *p, nfds_t n, int ms);
int ult__rt_clock_nanosleep(clockid_t c, int fl, const struct timespec *r,
    struct timespec *rem);
int ult__rt_sched_yield(void);
pthread_t ult__rt_pthread_self(void);
int ult__rt_pthread_join(pthread_t t, void **ret);
int ult__rt_pthread_getattr_np(pthread_t t, pthread_attr_t *a);
/*
 * A child forked without exec (thread.c) has no runtime: its only thread,
 * and each it creates, are glibc's, and a handle that is not a uthread's
 * goes to libc's function, which ULT__DROPIN_LIBC names.
 */
extern int ult__dropin_forked;
void ult__dropin_fork_hooks(void);
/* In the child, the thread that forked still owns the mutexes it held as
 * a uthread (an atfork prepare handler's, say): their owner is its id
 * there, which this gives (0 in any other thread). */
uintptr_t ult__dropin_fork_id(void);
#define ULT__DROPIN_LIBC(name, type)                    \
	__extension__({                                 \
		static void *_Atomic slot_;             \
		(type) ult__dropin_next(#name, &slot_); \
	})

/* dp's uthread, once its creator or itself has stored it (thread.c). */
ult_thread_t *ult__dropin_ut(struct dp_thread *dp);

#endif
