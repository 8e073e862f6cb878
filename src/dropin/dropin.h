/* SPDX-License-Identifier: BSD-2-Clause */
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
#include <signal.h>
#include <semaphore.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

#include "ult.h"
#include "util/atomic.h"

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
	if (__builtin_expect(!ULT_PLD_ACQ(&ult__dropin_ready), 0))
		ult__dropin_up_slow();
}
/* One step of a wait for a store nobody wakes the waiter for: 64
 * yields (pauses outside a uthread), then sleeps of 16 us doubling to
 * 1 ms (thread.c). */
void ult__dropin_backoff(unsigned *iter);
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
/* A record whose thread has ended and been joined (or was detached): it
 * stays allocated, for reuse, so that a handle that outlived it reads
 * this and is told ESRCH, as glibc's is, instead of crashing glibc. */
#define DP_DEAD 0x646165647474746cull /* "ltttdead" */
/* What a queued signal's sender said (its siginfo, in short). */
struct dp_siginfo {
	int code;
	pid_t pid;
	uid_t uid;
	union sigval value;
};
#define DP_RTQ 16 /* realtime signal instances queued beyond the first */
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
	int cancel_async;   /* PTHREAD_CANCEL_ASYNCHRONOUS (async.c) */
	int exiting;
	uint64_t sig_pending; /* (a) pthread_kill'ed signals, 1..64 */
	uint64_t sigwait_set; /* signals it waits for in sigwait or
				 sigsuspend (signal.c's lock) */
	uint64_t sig_urg;     /* SIGURG's bit if the program blocked it:
				 preemption keeps it open (signal.c) */
	uint64_t sig_counted; /* its mask less what a running handler
				 adds (signal.c's lock) */
	stack_t altstack;     /* what sigaltstack was told (sigact.c) */
	uint64_t sig_hasinfo; /* (a) sig_pending bits with siginfo[] */
	struct dp_siginfo siginfo[64];
	/* Realtime signals queue each instance, in order (signal.c's rt
	 * lock): the oldest is in siginfo[]; the later ones here. */
	uint64_t rt_busy; /* being taken: its siginfo[] is being read */
	unsigned rtq_n;
	struct {
		int sig, hasinfo;
		struct dp_siginfo si;
	} rtq[DP_RTQ];
	unsigned nintr; /* (a) interruptions sent: tells an EINTR of
			   ours from the kernel's */
	struct dp_thread *next_live, *prev_live; /* signal.c's list */
	int bound;  /* the one CPU of its affinity mask + 1, or 0: its
		       uthread is bound to that worker, and the threads it
		       creates inherit it as Linux's inherit the mask */
	int policy; /* what pthread_setschedparam was told */
	struct sched_param param;
	ult_mutex_t done_mx; /* done, for tryjoin and timedjoin */
	ult_cond_t done_cv;
	int done;
	int joined;	/* (a) a join took it */
	int clock_slot; /* (a) cpuclock.c's slot + 1, kept on reuse */
	char name[16];
	struct dp_held *held;	 /* pshared.c: glibc-layout locks held */
	void *robust;		 /* robust.c: robust mutexes held */
	pthread_cond_t *ps_cond; /* (a) pshared.c: the process-shared
				    condition it waits on in a helper */
};
/* The calling uthread's, or NULL in a thread that is not one. */
struct dp_thread *ult__dropin_self(void);
/* t's record, or NULL if t is not a uthread of the drop-in. */
struct dp_thread *ult__dropin_of(pthread_t t);
/* t was a uthread of the drop-in and is gone (DP_DEAD). */
int ult__dropin_dead(pthread_t t);
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
/* The ending caller takes the pending process signals it accepts. */
void ult__dropin_sig_drain(struct dp_thread *dp);
void ult__dropin_catch_signals(void) __attribute__((noreturn));
/*
 * Deliver the signals queued on dp (the caller) that its mask lets
 * through, each by calling the program's handler here, on the uthread's
 * stack, at a point where the runtime holds nothing (signal.c).  Says
 * whether a handler ran (DP_SIG_RAN) and whether one of those lacked
 * SA_RESTART (DP_SIG_NORESTART).  uc: the interrupted context, or NULL.
 */
#define DP_SIG_RAN 1
#define DP_SIG_NORESTART 2
int ult__dropin_signals(struct dp_thread *dp);
int ult__dropin_signals_uc(struct dp_thread *dp, void *uc);
/* sig queued on dp, and taken off (1 if it was there): every change of
 * sig_pending goes through these, which count the signals queued in the
 * process, so that the calls that return from the runtime test one word
 * (ult__dropin_after_call). */
extern int ult__dropin_nqueued;
void ult__dropin_queue(struct dp_thread *dp, int sig);
/* The same with the sender's siginfo, which the handler then gets. */
void ult__dropin_queue_info(struct dp_thread *dp, int sig,
    const struct dp_siginfo *si);
int ult__dropin_unqueue(struct dp_thread *dp, uint64_t bit);
/* After the taker of a realtime signal read its siginfo[]: the next
 * instance queued, if any, takes its place (pending again). */
void ult__dropin_rt_next(struct dp_thread *dp, int sig);
/* Call the program's action for sig (sigact.c): DP_SIG_* as above. */
int ult__dropin_deliver(struct dp_thread *dp, int sig, void *uc);
/* The program's action for sig, as sigaction would report it. */
void ult__dropin_action(int sig, struct sigaction *sa);
/* dp waits for the signals of set in sigwait or sigsuspend (0: no
 * more); process signals in it go to dp first (signal.c). */
void ult__dropin_sig_wait(struct dp_thread *dp, uint64_t set);
/* A process signal the caller took at a safe point: queued on a thread
 * that waits for it, if one does (1), else 0. */
int ult__dropin_route(int sig, const struct dp_siginfo *si);
/* For a wait with a mask of its own (ppoll, pselect, epoll_pwait): the
 * caller's mask becomes set (*old, the one before), what it opens runs,
 * and process signals it opens go to the caller first; 1 if a handler
 * ran, and the mask is then back.  mask_out puts old back. */
int ult__dropin_mask_in(const sigset_t *set, uint64_t *old);
void ult__dropin_mask_out(uint64_t old);
/* The counts of live threads blocking each signal (signal.c) follow a
 * move of a mask from old to new. */
void ult__dropin_mask_counted(uint64_t old, uint64_t new);
/* The caller's mask set to m without delivering anything; the old one. */
uint64_t ult__dropin_setmask(uint64_t m);
/* dp's signals are due: wake it at its wait, or at its next safe point
 * if it runs. */
void ult__dropin_sig_kick(struct dp_thread *dp);

/* Absolute time on `clock' to an ult deadline (CLOCK_MONOTONIC ns):
 * 0, or EINVAL for a malformed timespec or an unsupported clock. */
int ult__dropin_deadline(clockid_t clock, const struct timespec *abs,
    uint64_t *deadline);
/* Relative time to an ult deadline; EINVAL malformed. */
int ult__dropin_after(const struct timespec *rel, uint64_t *deadline);

/* A cancellation point (thread.c): act on a pending cancel, if enabled,
 * and deliver signals queued by pthread_kill. */
int ult__dropin_point(void); /* DP_SIG_* of the signals it delivered */
/* After a wait that succeeded (took a token, a wakeup): queued signals
 * only; a cancel waits for the next point, so that nothing is lost. */
void ult__dropin_after_wait(void);
void ult__dropin_idle_masks(void);
/* At the end of a call that may have been in the runtime a while (a
 * mutex, a condition signal, sem_post, a yield): run the caller's queued
 * signals, if the process has any. */
static inline void
ult__dropin_after_call(void)
{
	if (__builtin_expect(ULT_PLD(&ult__dropin_nqueued) != 0, 0))
		ult__dropin_after_wait();
}
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
/* The same, but a handler that ran ends the wait with EINTR (unless
 * restart is set and every handler that ran had SA_RESTART). */
int ult__dropin_wait_intr(int (*wait)(void *, uint64_t), void *obj,
    uint64_t deadline, int restart);
/* A lock or barrier wait, which is no cancellation point: lock(obj,
 * deadline), and after a signal or a cancel interrupts it, the queued
 * handlers run (an asynchronous cancel acts) and it waits again. */
int ult__dropin_lock_wait(int (*lock)(void *, uint64_t), void *obj,
    uint64_t deadline);
/* Asynchronous cancellation (async.c): act on a cancel now if the
 * caller's type and state say so; have dp act on one soon. */
void ult__dropin_async_now(void);
void ult__dropin_async_cancel(struct dp_thread *dp);
/* Wake dp if it waits at a cancellation point. */
void ult__dropin_interrupt(struct dp_thread *dp);

/*
 * glibc's mutex kind bits (its __kind word, where struct dp_mutex keeps
 * its kind too): a process-shared mutex is glibc's (pshared.c); a
 * process-private robust one is the drop-in's (robust.c), and so is one
 * with a priority ceiling (the ceiling in glibc's bits of the kind).
 */
#define DP_GL_ROBUST 16
#define DP_GL_PP 64
#define DP_GL_PSHARED 128
#define DP_GL_CEILING_SHIFT 19
#define DP_GL_CEILING_MASK 0xfff80000u
struct dp_mutex {
	ult_mutex_t m;
	int kind;	/* glibc's __kind: PTHREAD_MUTEX_* and the bits above */
	int rstate;	/* robust: DP_ROBUST_* */
	unsigned depth; /* recursive: locks beyond the first */
	unsigned spare2;
	struct dp_mutex *rnext; /* robust: on its owner's list */
#if defined(__aarch64__)
	void *spare3; /* glibc's AArch64 pthread_mutex_t is 48 bytes */
#endif
};
#define DP_MUTEX_SPECIAL (DP_GL_PSHARED | DP_GL_ROBUST)

/* Process-shared objects in glibc's layout (pshared.c): is it one, and
 * the calls on one.  Mutex and rwlock calls: try, or abs (NULL: none). */
int ult__dropin_ps_is_mutex(const pthread_mutex_t *m);
int ult__dropin_ps_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int ult__dropin_ps_mutex_lock(pthread_mutex_t *m, int try, clockid_t clock,
    const struct timespec *abs);
int ult__dropin_ps_mutex_unlock(pthread_mutex_t *m);
int ult__dropin_ps_mutex_consistent(pthread_mutex_t *m);
int ult__dropin_ps_mutex_destroy(pthread_mutex_t *m);
int ult__dropin_ps_is_cond(const pthread_cond_t *c);
int ult__dropin_ps_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int ult__dropin_ps_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, int clock,
    const struct timespec *abs);
int ult__dropin_ps_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
    const struct timespec *abs);
int ult__dropin_ps_cond_wake(pthread_cond_t *c, int all);
int ult__dropin_ps_cond_destroy(pthread_cond_t *c);
void ult__dropin_ps_cond_kick(pthread_cond_t *c);
int ult__dropin_ps_is_rwlock(const pthread_rwlock_t *rw);
int ult__dropin_ps_rwlock_init(pthread_rwlock_t *rw,
    const pthread_rwlockattr_t *a);
int ult__dropin_ps_rwlock_destroy(pthread_rwlock_t *rw);
int ult__dropin_ps_rwlock_lock(pthread_rwlock_t *rw, int write, int try,
    clockid_t clock, const struct timespec *abs);
int ult__dropin_ps_rwlock_unlock(pthread_rwlock_t *rw);
int ult__dropin_ps_is_barrier(const pthread_barrier_t *b);
int ult__dropin_ps_barrier_init(pthread_barrier_t *b,
    const pthread_barrierattr_t *a, unsigned count);
int ult__dropin_ps_barrier_destroy(pthread_barrier_t *b);
int ult__dropin_ps_barrier_wait(pthread_barrier_t *b);
/* Semaphores: POSIX's -1 and errno. */
int ult__dropin_ps_sem_init(sem_t *s, unsigned value);
int ult__dropin_ps_sem_wait(sem_t *s, int try, clockid_t clock,
    const struct timespec *abs);
int ult__dropin_ps_sem_post(sem_t *s);
void ult__dropin_held_free(struct dp_thread *dp);

/* Robust and priority-ceiling mutexes of the process (robust.c). */
enum {
	DP_ROBUST_OK,
	DP_ROBUST_DEAD,	   /* its owner ended holding it */
	DP_ROBUST_INCONS,  /* taken with EOWNERDEAD, not made consistent */
	DP_ROBUST_NOTRECOV /* unlocked inconsistent: unusable */
};
int ult__dropin_mutex_attrs(const pthread_mutexattr_t *a, int *kind);
/* m was just taken (not relocked): 0, EOWNERDEAD or ENOTRECOVERABLE. */
int ult__dropin_robust_taken(struct dp_mutex *m);
/* Before m's final unlock by its owner. */
void ult__dropin_robust_release(struct dp_mutex *m);
int ult__dropin_robust_consistent(struct dp_mutex *m);
/* The calling thread ends (thread.c). */
void ult__dropin_owner_exit(struct dp_thread *dp);

/* syscall(SYS_futex, ...) (futex.c): the result, or -1 with errno. */
long ult__dropin_futex(uint32_t *uaddr, int op, uint32_t val,
    const struct timespec *ts, uint32_t *uaddr2, uint32_t val3);
/* Inline futex system calls of libgomp (trap.c): set up before the
 * workers start; each worker arms itself as it starts. */
void ult__dropin_trap_setup(void);

/* ult_poll, but several descriptors wait interruptibly (pollset.c). */
int ult__dropin_poll(struct pollfd *fds, nfds_t n, int ms);

/* libc's functions for the runtime and the drop-in (real.c). */
int ult__libc_pthread_create(pthread_t *t, const pthread_attr_t *a,
    void *(*fn)(void *), void *arg);
void ult__libc_pthread_exit(void *ret) __attribute__((noreturn));
int ult__libc_epoll_wait(int ep, struct epoll_event *e, int n, int ms);
int ult__libc_poll(struct pollfd *p, nfds_t n, int ms);
int ult__libc_clock_nanosleep(clockid_t c, int fl, const struct timespec *r,
    struct timespec *rem);
int ult__libc_sched_yield(void);
int ult__libc_sched_setaffinity(pid_t pid, size_t n, const cpu_set_t *s);
int ult__libc_sched_getaffinity(pid_t pid, size_t n, cpu_set_t *s);
long ult__libc_syscall(long nr, ...);
pthread_t ult__libc_pthread_self(void);
int ult__libc_pthread_join(pthread_t t, void **ret);
int ult__libc_pthread_getattr_np(pthread_t t, pthread_attr_t *a);
/*
 * A child forked without exec (thread.c) has no runtime: its only thread,
 * and each it creates, are glibc's, and a handle that is not a uthread's
 * goes to libc's function, which ULT__DROPIN_LIBC names.
 */
extern int ult__dropin_forked;
void ult__dropin_fork_hooks(void);
/* Each file's part of a fork child's reset (thread.c's fork_child): its
 * locks and the parent's threads' records. */
void ult__dropin_sig_fork_child(struct dp_thread *keep);
void ult__dropin_futex_fork_child(void);
void ult__dropin_sigact_fork_child(void);
void ult__dropin_cpuclock_fork_child(void);
void ult__dropin_once_fork_child(void);
/* ult_init again in a fork child (start.c): 0 or an errno. */
int ult__dropin_restart(void);
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
