/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pthread_create and friends on uthreads (DESIGN.md section 14).
 *
 * A thread starts in start(), which sets up what glibc's start_thread
 * would for pthread_exit and cancellation: an unwind buffer registered
 * with __pthread_register_cancel.  glibc's own pthread_exit then unwinds
 * the uthread's stack (running C cleanup handlers and C++ destructors)
 * and jumps back there; the uthread's block gives glibc a descriptor of
 * its own, stack bounds included, for that.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/cpu.h"
#include "runtime.h"
#include "dropin.h"

static __thread struct dp_thread *self_dp;
static unsigned long _Atomic nthreads;
static int _Atomic nlive; /* threads of the program that have not ended */
static struct dp_thread *_Atomic main_dp;

struct dp_thread *
ult__dropin_self(void)
{
	return (self_dp);
}

unsigned long
ult__dropin_nthreads(void)
{
	return (ULT_PLD(&nthreads));
}

struct dp_thread *
ult__dropin_of(pthread_t t)
{
	struct dp_thread *dp = (struct dp_thread *)t;

	return (dp != NULL && dp->magic == DP_MAGIC ? dp : NULL);
}

pthread_t
pthread_self(void)
{
	return (
	    self_dp != NULL ? (pthread_t)self_dp : ult__libc_pthread_self());
}

int
pthread_equal(pthread_t a, pthread_t b)
{
	return (a == b);
}

int
ult__dropin_dead(pthread_t t)
{
	struct dp_thread *dp = (struct dp_thread *)t;

	return (dp != NULL && ULT_PLD(&dp->magic) == DP_DEAD);
}

/* Records of ended threads, never freed (DP_DEAD): a struct mtx over a
 * push or a pop (it spins a few microseconds, then sleeps on the lock
 * word).  Taken by any thread, foreign ones included, never in a signal
 * handler; drop-in code is not preempted, so a holder runs on. */
static struct {
	struct mtx lock;
	struct dp_thread *top; /* by next_live */
} pool = {.lock = MTX_INITIALIZER("dropin thread pool")};

static void
pool_lock(void)
{
	mtx_lock_spin(&pool.lock);
}

static void
dp_release(struct dp_thread *dp)
{
	ULT_PST_REL(&dp->magic, DP_DEAD);
	pool_lock();
	dp->next_live = pool.top;
	pool.top = dp;
	mtx_unlock_spin(&pool.lock);
}

static void
unref(struct dp_thread *dp)
{
	if (ULT_PSUB_FETCH_ACQREL(&dp->refs, 1) == 0)
		dp_release(dp);
}

static void
finish(struct dp_thread *dp)
{
	ult__dropin_owner_exit(dp);
	ult__dropin_sig_drain(dp);
	ult__dropin_sig_live(dp, ult__self_ut()->sigmask, 0);
	ult_mutex_lock(&dp->done_mx);
	dp->done = 1;
	ult_cond_broadcast(&dp->done_cv);
	ult_mutex_unlock(&dp->done_mx);
	ULT_PSUB_FETCH_REL(&nlive, 1);
}

/* Run dp's function as glibc's start_thread would; pthread_exit and a
 * cancellation come back through the setjmp. */
static void *
run(struct dp_thread *dp)
{
	__pthread_unwind_buf_t ub;

	self_dp = dp;
	ULT_PST_REL(&dp->ut, ult_self());
	dp->desc = (void *)ult__libc_pthread_self();
	memset(&ub, 0, sizeof(ub));
	/* As glibc's pthread_cleanup_push does: without the signal mask a
	 * jmp_buf needs only the part the unwind buffer has. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
	if (__sigsetjmp((struct __jmp_buf_tag *)(void *)ub.__cancel_jmp_buf,
		0) == 0) {
#pragma GCC diagnostic pop
		__pthread_register_cancel(&ub);
		dp->ret = dp->fn(dp->arg);
		__pthread_unregister_cancel(&ub);
	}
	return (dp->ret);
}

static void __attribute__((noreturn)) main_exited(struct dp_thread *dp);

static void *
start(void *arg)
{
	struct dp_thread *dp = arg;
	void *ret = run(dp);

	/* A fork child's main uthread was another thread in the parent;
	 * its thread before that is the process's only one. */
	if (dp->is_main || ult__dropin_forked)
		main_exited(dp);
	finish(dp);
	unref(dp);
	return (ret);
}

static struct dp_thread *
dp_new(void)
{
	struct dp_thread *dp, *me = self_dp;

	pool_lock();
	if ((dp = pool.top) != NULL)
		pool.top = dp->next_live;
	mtx_unlock_spin(&pool.lock);
	if (dp != NULL) {
		int slot = dp->clock_slot;

		/* A stale handle may read the magic meanwhile: dead until
		 * the record is whole again. */
		memset((char *)dp + sizeof(dp->magic), 0,
		    sizeof(*dp) - sizeof(dp->magic));
		dp->clock_slot = slot;
	} else if ((dp = calloc(1, sizeof(*dp))) == NULL)
		return (NULL);
	dp->magic = DP_MAGIC;
	dp->refs = 2;
	dp->policy = SCHED_OTHER;
	ult_mutex_init(&dp->done_mx);
	ult_cond_init(&dp->done_cv);
	/* Linux gives a new thread its creator's name (and mask). */
	if (me != NULL) {
		memcpy(dp->name, me->name, sizeof(dp->name));
		dp->sig_urg = me->sig_urg;
		dp->bound = me->bound;
	} else
		snprintf(dp->name, sizeof(dp->name), "%s",
		    program_invocation_short_name);
	return (dp);
}

/* Map the attributes onto a uthread's: stack size, detach state, and,
 * with PTHREAD_EXPLICIT_SCHED, policy and priority (else inherited). */
static int
attrs(const pthread_attr_t *a, struct ult_attr *ua, struct dp_thread *dp,
    void **stack)
{
	size_t ss = 0;
	void *addr = NULL;
	int v = PTHREAD_CREATE_JOINABLE, inh = PTHREAD_INHERIT_SCHED;
	struct dp_thread *me = self_dp;

	ult_attr_init(ua);
	ua->stack_size = ult__dropin_default_stack();
	ua->cpu = dp->bound - 1;
	if (me != NULL) {
		ult_getnice(NULL, &ua->nice);
		ult_getclass(NULL, &ua->cls, &ua->rtprio);
		dp->policy = me->policy;
		dp->param = me->param;
	}
	if (a == NULL)
		return (0);
	if (pthread_attr_getstacksize(a, &ss) == 0 && ss != 0)
		ua->stack_size = ss;
	/* A stack of the program's own (pthread_attr_setstack): glibc gives
	 * back its lowest address; unset, that is 0 - size. */
	if (pthread_attr_getstack(a, &addr, &ss) == 0 &&
	    (uintptr_t)addr + ss != 0) {
		/* pthread_attr_setstackaddr alone gives no size to run
		 * within. */
		if (ss < ULT_STACK_MIN)
			return (EINVAL);
		*stack = addr;
		ua->stack_size = ss;
	}
	if (ua->stack_size < ULT_STACK_MIN)
		ua->stack_size = ULT_STACK_MIN;
	/* More than ult's largest: an attr never given a size reads back
	 * glibc's default, RLIMIT_STACK, which may be more.  A stack of
	 * the program's own cannot be made smaller. */
	if (ua->stack_size > ULT_STACK_MAX) {
		if (*stack != NULL)
			return (EINVAL);
		ua->stack_size = ULT_STACK_MAX;
	}
	if (pthread_attr_getdetachstate(a, &v) == 0 &&
	    v == PTHREAD_CREATE_DETACHED)
		ua->detached = 1;
	if (pthread_attr_getinheritsched(a, &inh) == 0 &&
	    inh == PTHREAD_EXPLICIT_SCHED) {
		struct sched_param sp;
		int pol;

		if (pthread_attr_getschedpolicy(a, &pol) != 0 ||
		    pthread_attr_getschedparam(a, &sp) != 0)
			return (EINVAL);
		return (ult__dropin_sched_map(pol, &sp, ua, dp));
	}
	return (0);
}

/*
 * A child forked without exec (DESIGN.md section 14, "fork"): its runtime
 * is down, its one kernel thread, even if it forked from a uthread, is
 * not one, and needs none while it is the only thread: the sync objects
 * work for it as for any thread that is not a uthread, the sleeps and I/O
 * are the kernel's.  Its first pthread_create brings the runtime up again
 * and makes the thread the child's main uthread, the forking uthread
 * itself (adopt).  Where that cannot be (the thread that forked was not a
 * uthread), the threads it creates are glibc's and calls on their handles
 * go to libc.
 */
int ult__dropin_forked;
/* The forking thread's sync id in the parent, in the child's thread. */
static __thread uintptr_t fork_id;
/* Its record, until it is adopted. */
static struct dp_thread *fork_dp;

static void
fork_child(void)
{
	struct dp_thread *dp = self_dp;

	/* A child that forks before it was adopted: the same thread, the
	 * same record (a thread libc started there is not it). */
	if (dp == NULL && fork_dp != NULL &&
	    fork_dp->desc == (void *)ult__libc_pthread_self())
		dp = fork_dp;
	else if (dp != NULL)
		fork_id = (uintptr_t)ULT_PLD(&dp->ut);
	if (dp != NULL) {
		/* A child has no signal pending. */
		dp->sig_pending = 0;
		dp->sig_hasinfo = 0;
	}
	fork_dp = dp;
	self_dp = NULL;
	ult__dropin_forked = 1;
	/* The parent's threads' records are leaked with the pool. */
	mtx_init(&pool.lock, "dropin thread pool");
	pool.top = NULL;
	ULT_PST(&nlive, 0);
	ULT_PST(&main_dp, NULL);
	ult__dropin_sig_fork_child(dp);
	ult__dropin_futex_fork_child();
	ult__dropin_sigact_fork_child();
	ult__dropin_cpuclock_fork_child();
	ult__dropin_once_fork_child();
}

/* The kernel thread the child's main uthread leaves: it collects the
 * process's signals for the uthreads, as the first thread of the parent
 * does (ult__dropin_run_main). */
static void
adopted_host(void)
{
	ult__os_block_async_signals();
	ult__dropin_catch_signals();
}

/* The child's first pthread_create: its runtime again, with the forking
 * thread as its main uthread.  ENOTSUP when that cannot be. */
static int
adopt(void)
{
	struct dp_thread *dp = fork_dp;
	struct ult_thread *old;
	struct ult_attr ua;
	ult_thread_t *ut;
	int err;

	if (dp == NULL || (old = ULT_PLD(&dp->ut)) == NULL ||
	    old->stack == NULL || dp->desc != (void *)ult__libc_pthread_self())
		return (ENOTSUP);
	if ((err = ult__dropin_restart()) != 0)
		return (err == ENXIO ? ENOTSUP : err);
	ult_attr_init(&ua);
	ua.name = dp->name;
	/* Its policy and priority, as pthread_setschedparam left them. */
	if (dp->policy != SCHED_OTHER)
		(void)ult__dropin_sched_map(dp->policy, &dp->param, &ua, dp);
	dp->is_main = 1;
	dp->detached = 1;
	dp->refs = 1;
	dp->done = 0;
	dp->cancel_pending = 0;
	dp->sigwait_set = 0;
	ult_mutex_init(&dp->done_mx);
	ult_cond_init(&dp->done_cv);
	/* Counted live before its kernel thread starts to collect the
	 * process's signals for the live threads (adopted_host). */
	ULT_PST_REL(&main_dp, dp);
	ULT_PADD_FETCH(&nlive, 1);
	ult__dropin_sig_live(dp, ult__os_sigmask_get(), 1);
	if ((err = ult__thread_adopt(old, &ua, dp,
		 (char *)old->stack->base + old->stack->guard, old->stack->size,
		 adopted_host, &ut)) != 0) {
		ult__dropin_sig_live(dp, ult__os_sigmask_get(), 0);
		ULT_PSUB_FETCH(&nlive, 1);
		ULT_PST_REL(&main_dp, NULL);
		dp->is_main = 0;
		return (err);
	}
	/* A uthread on a worker now, on the same block. */
	ULT_PST_REL(&dp->ut, ut);
	fork_dp = NULL;
	fork_id = 0; /* its struct is the one it had: so is its id */
	self_dp = dp;
	ULT_PST_REL(&ult__dropin_forked, 0);
	return (0);
}

uintptr_t
ult__dropin_fork_id(void)
{
	return (fork_id);
}

void
ult__dropin_fork_hooks(void)
{
	(void)pthread_atfork(NULL, NULL, fork_child);
}

int
pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *),
    void *arg)
{
	struct ult_attr ua;
	struct dp_thread *dp;
	ult_thread_t *ut;
	void *stack = NULL;
	uint64_t mask;
	int err;

	if (ult__dropin_forked && (err = adopt()) != 0) {
		if (err == ENOTSUP)
			return (ult__libc_pthread_create(t, a, fn, arg));
		return (err == ENOMEM ? EAGAIN : err);
	}
	if ((err = ult__dropin_up_wait()) != 0)
		return (err);
	if ((dp = dp_new()) == NULL)
		return (EAGAIN);
	if ((err = attrs(a, &ua, dp, &stack)) != 0) {
		dp_release(dp);
		return (err);
	}
	dp->fn = fn;
	dp->arg = arg;
	dp->own_stack = stack != NULL;
	ua.name = dp->name;
	if (ua.detached) {
		dp->detached = 1;
		dp->refs = 1;
	}
	ULT_PADD_FETCH(&nlive, 1);
	/* The runtime gives the child the creator's mask. */
	mask =
	    ult__self_ut() != NULL ? ult__self_ut()->sigmask : ult__rt.sigmask0;
	ult__dropin_sig_live(dp, mask, 1);
	/* The handle is out before the thread may run: it may read it
	 * back with pthread_self and hand it to another thread. */
	*t = (pthread_t)dp;
	err = stack != NULL
	    ? ult__spawn_on(&ut, &ua, start, dp, stack, ua.stack_size)
	    : ult_spawn(&ut, &ua, start, dp);
	if (err != 0) {
		ULT_PSUB_FETCH(&nlive, 1);
		ult__dropin_sig_live(dp, mask, 0);
		dp_release(dp);
		return (err == ENOMEM || err == ENXIO ? EAGAIN : err);
	}
	if (!ua.detached)
		ULT_PST_REL(&dp->ut, ut);
	ULT_PADD_FETCH(&nthreads, 1);
	return (0);
}

size_t
ult__dropin_stack_guard(void)
{
	return (ult__rt.stack_guard);
}

/* The peer that ends such a wait may be another uthread of this worker
 * (yielding lets it run) or a kernel thread the host has descheduled
 * (only a sleep gives it the CPU back); a thread that is not a uthread
 * pauses instead of yielding, which would be sched_yield. */
void
ult__dropin_backoff(unsigned *iter)
{
	unsigned n = (*iter)++;

	if (n < 64) {
		if (ult__self_ut() != NULL)
			ult_yield();
		else
			ult__cpu_relax();
		return;
	}
	n -= 64;
	(void)ult_sleep_ns(16000ull << (n < 6 ? n : 6));
}

ult_thread_t *
ult__dropin_ut(struct dp_thread *dp)
{
	ult_thread_t *ut;
	unsigned i = 0;

	/* The creator stores it right after the spawn; the thread at its
	 * start.  A handle read in between waits for one of them. */
	while ((ut = ULT_PLD_ACQ(&dp->ut)) == NULL)
		ult__dropin_backoff(&i);
	return (ut);
}

static int
join(struct dp_thread *dp, void **ret, uint64_t deadline)
{
	void *v;
	int err;

	if (dp == self_dp)
		return (EDEADLK);
	if (ULT_PLD_ACQ(&dp->detached))
		return (EINVAL);
	/* The wait for the thread's end is a cancellation point; the join
	 * after it is short. */
	ult_mutex_lock(&dp->done_mx);
	err = 0;
	ult__dropin_intr_begin();
	while (!dp->done && (err == 0 || err == EINTR)) {
		if (err == EINTR) {
			/* The handlers run without the mutex, so the thread
			 * may end meanwhile: look at done again before
			 * waiting, or its broadcast is lost. */
			ult_mutex_unlock(&dp->done_mx);
			ult__dropin_intr_end();
			ult__dropin_point();
			ult__dropin_intr_begin();
			ult_mutex_lock(&dp->done_mx);
			err = 0;
			continue;
		}
		err = deadline == UINT64_MAX
		    ? ult_cond_wait(&dp->done_cv, &dp->done_mx)
		    : ult_cond_timedwait(&dp->done_cv, &dp->done_mx, deadline);
	}
	ult__dropin_intr_end();
	if (dp->done)
		err = 0;
	ult_mutex_unlock(&dp->done_mx);
	if (err != 0)
		return (err);
	/* main's uthread goes on after its pthread_exit, until the others
	 * have ended: the join ends at its pthread_exit. */
	if (dp->is_main) {
		if (ret != NULL)
			*ret = dp->ret;
		return (0);
	}
	/* Of two joins, one joins; the other finds it gone, as glibc's
	 * second join of a thread finds it. */
	if (ULT_PXCHG_ACQREL(&dp->joined, 1))
		return (ESRCH);
	if ((err = ult_join(ult__dropin_ut(dp), &v)) != 0)
		return (err == ESRCH ? ESRCH : EINVAL);
	if (ret != NULL)
		*ret = v;
	unref(dp);
	return (0);
}

/* A join or detach of a thread that has gone: glibc's record of a
 * detached one still says detached (EINVAL); a joined one, ESRCH. */
static int
gone(pthread_t t)
{
	return (ULT_PLD(&((struct dp_thread *)t)->detached) ? EINVAL : ESRCH);
}

int
pthread_join(pthread_t t, void **ret)
{
	struct dp_thread *dp = ult__dropin_of(t);

	ult__dropin_point();
	if (dp == NULL && ult__dropin_dead(t))
		return (gone(t));
	if (dp == NULL)
		return (t == 0 ? ESRCH : ult__libc_pthread_join(t, ret));
	return (join(dp, ret, UINT64_MAX));
}

int
pthread_tryjoin_np(pthread_t t, void **ret)
{
	struct dp_thread *dp = ult__dropin_of(t);

	if (dp == NULL)
		return (!ult__dropin_dead(t) && ult__dropin_forked
			? ULT__DROPIN_LIBC(pthread_tryjoin_np,
			      int (*)(pthread_t, void **))(t, ret)
			: ESRCH);
	if (dp == self_dp)
		return (EDEADLK);
	if (!ULT_PLD_ACQ(&dp->done))
		return (EBUSY);
	return (join(dp, ret, UINT64_MAX));
}

int
pthread_clockjoin_np(pthread_t t, void **ret, clockid_t clock,
    const struct timespec *abs)
{
	struct dp_thread *dp = ult__dropin_of(t);
	uint64_t deadline = UINT64_MAX;
	int err;

	ult__dropin_point();
	if (dp == NULL)
		return (!ult__dropin_dead(t) && ult__dropin_forked
			? ULT__DROPIN_LIBC(pthread_clockjoin_np,
			      int (*)(pthread_t, void **, clockid_t,
				  const struct timespec *))(t, ret, clock, abs)
			: ESRCH);
	if (abs != NULL &&
	    (err = ult__dropin_deadline(clock, abs, &deadline)) != 0)
		return (err);
	return (join(dp, ret, deadline));
}

int
pthread_timedjoin_np(pthread_t t, void **ret, const struct timespec *abs)
{
	return (pthread_clockjoin_np(t, ret, CLOCK_REALTIME, abs));
}

int
pthread_detach(pthread_t t)
{
	struct dp_thread *dp = ult__dropin_of(t);
	int err;

	if (dp == NULL && ult__dropin_dead(t))
		return (gone(t));
	if (dp == NULL)
		return (ult__dropin_forked ? ULT__DROPIN_LIBC(pthread_detach,
						 int (*)(pthread_t))(t)
					   : ESRCH);
	if (ULT_PXCHG_ACQREL(&dp->detached, 1))
		return (EINVAL);
	if (dp->is_main)
		return (0);
	if ((err = ult_detach(ult__dropin_ut(dp))) != 0)
		return (err);
	unref(dp);
	return (0);
}

/* The main thread's pthread_exit: the process goes on until the other
 * threads have ended, then exits with status 0 (POSIX). */
static void __attribute__((noreturn)) main_exited(struct dp_thread *dp)
{
	if (ult__self_ut() == NULL)
		exit(0); /* a fork child's only thread */
	finish(dp);
	while (ULT_PLD_ACQ(&nlive) > 0)
		ult_sleep_ns(1000000);
	exit(0);
}

static void __attribute__((noreturn)) leave(struct dp_thread *dp, void *ret)
{
	dp->exiting = 1;
	dp->ret = ret;
	ult__libc_pthread_exit(ret);
}

void
pthread_exit(void *ret)
{
	struct dp_thread *dp = self_dp;

	if (dp == NULL)
		ult__libc_pthread_exit(ret);
	leave(dp, ret);
}

/* Cancellation: deferred, at the points the drop-in implements. */

int
ult__dropin_point(void)
{
	struct dp_thread *dp = self_dp;
	int ran = 0;

	if (dp == NULL)
		return (0);
	if (__builtin_expect(ULT_PLD(&dp->sig_pending) != 0, 0))
		ran = ult__dropin_signals(dp);
	if (__builtin_expect(ULT_PLD_ACQ(&dp->cancel_pending) != 0, 0) &&
	    !dp->cancel_off && !dp->exiting)
		leave(dp, PTHREAD_CANCELED);
	return (ran);
}

void
ult__dropin_intr_begin(void)
{
	struct ult_thread *ut = ult__self_ut();

	if (ut != NULL)
		ULT_ST(&ut->intr, 1);
}

void
ult__dropin_intr_end(void)
{
	struct ult_thread *ut = ult__self_ut();

	if (ut != NULL) {
		ULT_ST(&ut->intr, 0);
		/* A full fence before the caller reads cancel_pending and
		 * sig_pending (see ult__sleepq_interrupt). */
		(void)ULT_XCHG_SC(&ut->intr_pending, 0);
	}
}

int
ult__dropin_wait_until(int (*wait)(void *, uint64_t), void *obj,
    uint64_t deadline)
{
	int err;

	ult__dropin_intr_begin();
	while ((err = wait(obj, deadline)) == EINTR) {
		ult__dropin_intr_end();
		ult__dropin_point();
		ult__dropin_intr_begin();
	}
	ult__dropin_intr_end();
	return (err);
}

int
ult__dropin_wait_intr(int (*wait)(void *, uint64_t), void *obj,
    uint64_t deadline, int restart)
{
	int err, ran;

	if (ult__self_ut() == NULL) {
		/* Not a uthread (a fork child's before its first thread):
		 * the handler has run, in the kernel's wait, and the kernel
		 * has restarted that wait or ended it, as it would natively. */
		ult__foreign_intr = 1;
		err = wait(obj, deadline);
		ult__foreign_intr = 0;
		return (err);
	}
	ult__dropin_intr_begin();
	while ((err = wait(obj, deadline)) == EINTR) {
		ult__dropin_intr_end();
		ran = ult__dropin_point();
		if ((ran & DP_SIG_RAN) &&
		    (!restart || (ran & DP_SIG_NORESTART)))
			return (EINTR);
		ult__dropin_intr_begin();
	}
	ult__dropin_intr_end();
	return (err);
}

int
ult__dropin_lock_wait(int (*lock)(void *, uint64_t), void *obj,
    uint64_t deadline)
{
	struct ult_thread *ut = ult__self_ut();
	int err;

	if (ut == NULL || self_dp == NULL)
		return (lock(obj, deadline));
	for (;;) {
		ULT_ST(&ut->intr, ULT__INTR_SLEEP | ULT__INTR_LOCK);
		err = lock(obj, deadline);
		ult__dropin_intr_end();
		if (err != EINTR)
			return (err);
		(void)ult__dropin_signals(self_dp);
		ult__dropin_async_now();
	}
}

void
ult__dropin_interrupt(struct dp_thread *dp)
{
	ult_thread_t *ut = ULT_PLD_ACQ(&dp->ut);
	pthread_cond_t *c;

	/* seq_cst: before the interrupt is posted; pairs with the waiter's
	 * read of nintr after its wait ends with EINTR. */
	ULT_PADD_FETCH_SC(&dp->nintr, 1);
	/* Not started yet: it acts at its first cancellation point. */
	if (ut != NULL && dp != self_dp)
		ult__sleepq_interrupt(ut);
	/* A process-shared condition wait runs in a helper, in glibc: a
	 * broadcast ends it (a spurious wakeup for the others). */
	if (dp != self_dp && (c = ULT_PLD_ACQ(&dp->ps_cond)) != NULL)
		ult__dropin_ps_cond_kick(c);
}

/* Before ult_init: every worker blocks the program's signals from its
 * start, whenever it is idle (ult__sigmask_load). */
void
ult__dropin_idle_masks(void)
{
	ult__rt.sigmask_idle = 1;
}

void
ult__dropin_after_wait(void)
{
	struct dp_thread *dp = self_dp;

	if (dp != NULL && ULT_PLD(&dp->sig_pending) != 0)
		ult__dropin_signals(dp);
}

void
pthread_testcancel(void)
{
	if (ult__dropin_forked && self_dp == NULL)
		ULT__DROPIN_LIBC(pthread_testcancel, void (*)(void))();
	ult__dropin_point();
}

int
pthread_cancel(pthread_t t)
{
	struct dp_thread *dp = ult__dropin_of(t);

	if (dp == NULL)
		return (ult__dropin_forked ? ULT__DROPIN_LIBC(pthread_cancel,
						 int (*)(pthread_t))(t)
					   : ESRCH);
	ULT_PST_REL(&dp->cancel_pending, 1);
	ult__dropin_interrupt(dp);
	if (dp != self_dp)
		ult__dropin_async_cancel(dp);
	else
		ult__dropin_async_now();
	return (0);
}

int
pthread_setcancelstate(int state, int *old)
{
	struct dp_thread *dp = self_dp;

	if (state != PTHREAD_CANCEL_ENABLE && state != PTHREAD_CANCEL_DISABLE)
		return (EINVAL);
	if (dp == NULL && ult__dropin_forked)
		return (ULT__DROPIN_LIBC(pthread_setcancelstate,
		    int (*)(int, int *))(state, old));
	if (dp == NULL) {
		if (old != NULL)
			*old = PTHREAD_CANCEL_ENABLE;
		return (0);
	}
	if (old != NULL)
		*old = dp->cancel_off ? PTHREAD_CANCEL_DISABLE
				      : PTHREAD_CANCEL_ENABLE;
	dp->cancel_off = state == PTHREAD_CANCEL_DISABLE;
	ult__dropin_async_now();
	return (0);
}

int
pthread_setcanceltype(int type, int *old)
{
	struct dp_thread *dp = self_dp;

	if (type != PTHREAD_CANCEL_DEFERRED &&
	    type != PTHREAD_CANCEL_ASYNCHRONOUS)
		return (EINVAL);
	if (dp == NULL && ult__dropin_forked)
		return (ULT__DROPIN_LIBC(pthread_setcanceltype,
		    int (*)(int, int *))(type, old));
	if (dp == NULL) {
		if (old != NULL)
			*old = PTHREAD_CANCEL_DEFERRED;
		return (0);
	}
	if (old != NULL)
		*old = dp->cancel_async ? PTHREAD_CANCEL_ASYNCHRONOUS
					: PTHREAD_CANCEL_DEFERRED;
	dp->cancel_async = type == PTHREAD_CANCEL_ASYNCHRONOUS;
	ult__dropin_async_now();
	return (0);
}

/* main, as a uthread. */

struct main_args {
	ult__main_fn main;
	int argc;
	char **argv, **envp;
};
static struct main_args margs;

static void *
call_main(void *arg)
{
	(void)arg;
	exit(margs.main(margs.argc, margs.argv, margs.envp));
}

static void *
start_main(void *arg)
{
	struct dp_thread *dp = arg;

	run(dp);
	/* Only pthread_exit comes back here. */
	main_exited(dp);
}

void
ult__dropin_run_main(ult__main_fn main, int argc, char **argv, char **envp)
{
	struct dp_thread *dp = dp_new();
	struct ult_attr ua;
	ult_thread_t *ut;
	int err;

	if (dp == NULL)
		ult__dropin_fatal("main", "out of memory");
	margs = (struct main_args){main, argc, argv, envp};
	dp->fn = call_main;
	dp->is_main = 1;
	ult_attr_init(&ua);
	ua.stack_size = ult__dropin_main_stack();
	ua.name = "main";
	ULT_PST_REL(&main_dp, dp);
	ULT_PADD_FETCH(&nlive, 1);
	/* main starts with this thread's mask now (a constructor may have
	 * changed it since the runtime started). */
	ult__rt.sigmask0 = ult__os_sigmask_get();
	ult__dropin_sig_live(dp, ult__rt.sigmask0, 1);
	/* The program's signals are blocked here before main runs: once
	 * main blocks one, a process signal must not find this thread
	 * open (its default action would end the process). */
	ult__os_block_async_signals();
	err = ult_spawn(&ut, &ua, start_main, dp);
	/* A large RLIMIT_STACK's reservation may not fit (ulimit -v). */
	if (err == EAGAIN && ua.stack_size > (8u << 20)) {
		ua.stack_size = 8u << 20;
		err = ult_spawn(&ut, &ua, start_main, dp);
	}
	if (err != 0)
		ult__dropin_fatal("cannot start main as a uthread",
		    strerror(err));
	ULT_PADD_FETCH(&nthreads, 1);
	/* The process ends in the main uthread (exit); this kernel thread
	 * collects the signals sent to the process for the uthreads. */
	ult__dropin_catch_signals();
}
