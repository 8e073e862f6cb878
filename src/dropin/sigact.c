/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program's signal handlers under the drop-in (DESIGN.md section 14).
 * sigaction and signal are interposed: the program's action is kept
 * here, and the kernel is given a trampoline with the program's mask and
 * flags.  A handler of the program then runs only where the uthread could
 * be preempted (its own code, outside the runtime and libc, holding no
 * lock taken through libc, on its own stack), so that it may call sem_post
 * or anything else async-signal-safe; a signal that arrives anywhere else
 * is queued on the uthread, which runs the handler at its next call into
 * the drop-in or at its next preemption safe point, whichever is first.
 * Faults and the signals the runtime or glibc keep for themselves are
 * left alone.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "runtime.h"
#include "dropin.h"

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31) /* Linux's, named under _GNU_SOURCE */
#endif

static int
real_sigaction(int sig, const struct sigaction *a, struct sigaction *o)
{
	static void *_Atomic slot;

	return (((int (*)(int, const struct sigaction *, struct sigaction *))
		ult__dropin_next("sigaction", &slot))(sig, a, o));
}

/* The program's actions: each word read on its own by the trampoline,
 * which cannot take a lock; `known' once read from the kernel. */
static struct act {
	void *fn; /* sa_handler or sa_sigaction */
	int flags;
	int known;
	uint64_t mask;
} acts[65];
/* Writers and first readers of acts.  A program's handler may call
 * sigaction (it is async-signal-safe), and on a thread that is not a
 * worker the trampoline runs the handler wherever the signal lands,
 * sigaction's own locked region included: the lock is held with the
 * asynchronous signals blocked, so that no handler on this kernel thread
 * waits for the code it interrupted. */
static struct mtx acts_lock = MTX_INITIALIZER("dropin sigaction table");

/* A fork child: the lock's holder may be the parent's. */
void
ult__dropin_sigact_fork_child(void)
{
	mtx_init(&acts_lock, "dropin sigaction table");
}

static int
wrapped(int sig)
{
	switch (sig) {
	case SIGKILL:
	case SIGSTOP:
	case SIGURG: /* preemption's */
	case SIGSEGV:
	case SIGBUS:
	case SIGILL:
	case SIGFPE:
	case SIGTRAP:
	case SIGSYS:
	case 32:
	case 33: /* glibc's own */
		return (0);
	}
	return (sig >= 1 && sig <= 64);
}

static uint64_t
lock(void)
{
	uint64_t old = ult__os_sigmask_get();

	ult__os_sigmask(~ULT_SIGMASK_KEEP | old);
	mtx_lock_spin(&acts_lock);
	return (old);
}

static void
unlock(uint64_t old)
{
	mtx_unlock_spin(&acts_lock);
	ult__os_sigmask(old);
}

/* acts[sig] from the kernel, the first time (locked). */
static void
learn(int sig)
{
	struct sigaction k;

	if (acts[sig].known || real_sigaction(sig, NULL, &k) != 0)
		return;
	ULT_PST(&acts[sig].fn, (void *)k.sa_handler);
	ULT_PST(&acts[sig].flags, k.sa_flags);
	memcpy(&acts[sig].mask, &k.sa_mask, sizeof(uint64_t));
	ULT_PST_REL(&acts[sig].known, 1);
}

static void tramp(int sig, siginfo_t *si, void *uc);

/* Locked: acts[sig] to a, and the kernel to the trampoline or to a's
 * SIG_DFL or SIG_IGN. */
static int
install(int sig, const struct sigaction *a)
{
	struct sigaction k = *a;
	void *fn = (a->sa_flags & SA_SIGINFO) ? (void *)a->sa_sigaction
					      : (void *)a->sa_handler;

	if (fn != (void *)SIG_DFL && fn != (void *)SIG_IGN) {
		k.sa_sigaction = tramp;
		/* The trampoline resets it when the handler runs; the
		 * handler runs on the uthread's own stack. */
		k.sa_flags =
		    (a->sa_flags | SA_SIGINFO) & ~(SA_RESETHAND | SA_ONSTACK);
	}
	if (real_sigaction(sig, &k, NULL) != 0)
		return (-1);
	ULT_PST(&acts[sig].fn, fn);
	ULT_PST(&acts[sig].flags, a->sa_flags);
	memcpy(&acts[sig].mask, &a->sa_mask, sizeof(uint64_t));
	ULT_PST_REL(&acts[sig].known, 1);
	return (0);
}

int
sigaction(int sig, const struct sigaction *a, struct sigaction *o)
{
	uint64_t old;

	if (!wrapped(sig))
		return (real_sigaction(sig, a, o));
	old = lock();
	learn(sig);
	if (o != NULL) {
		memset(o, 0, sizeof(*o));
		o->sa_flags = acts[sig].flags;
		if (o->sa_flags & SA_SIGINFO)
			o->sa_sigaction =
			    (void (*)(int, siginfo_t *, void *))acts[sig].fn;
		else
			o->sa_handler = (void (*)(int))acts[sig].fn;
		memcpy(&o->sa_mask, &acts[sig].mask, sizeof(uint64_t));
	}
	if (a != NULL && install(sig, a) != 0) {
		unlock(old);
		return (-1);
	}
	unlock(old);
	return (0);
}

/* glibc's signal(): BSD semantics, the handler's own signal blocked
 * while it runs, calls restarted. */
void (*signal(int sig, void (*h)(int)))(int)
{
	struct sigaction a, o;

	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	a.sa_flags = SA_RESTART;
	sigemptyset(&a.sa_mask);
	if (sig >= 1 && sig <= 64)
		sigaddset(&a.sa_mask, sig);
	if (sigaction(sig, &a, &o) != 0)
		return (SIG_ERR);
	return (o.sa_handler);
}

/* glibc's, no longer in its headers. */
void (*bsd_signal(int sig, void (*h)(int)))(int);

void (*bsd_signal(int sig, void (*h)(int)))(int)
{
	return (signal(sig, h));
}

/* System V's: reset when it runs, not blocked while it runs. */
void (*sysv_signal(int sig, void (*h)(int)))(int)
{
	struct sigaction a, o;

	memset(&a, 0, sizeof(a));
	a.sa_handler = h;
	a.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&a.sa_mask);
	if (sigaction(sig, &a, &o) != 0)
		return (SIG_ERR);
	return (o.sa_handler);
}

void
ult__dropin_action(int sig, struct sigaction *sa)
{
	if (sigaction(sig, NULL, sa) != 0)
		memset(sa, 0, sizeof(*sa));
}

/* The program's handler for sig, now: DP_SIG_*. */
static int
run(int sig, siginfo_t *si, void *uc)
{
	void *fn = ULT_PLD(&acts[sig].fn);
	int flags = ULT_PLD(&acts[sig].flags);

	if (fn == (void *)SIG_DFL || fn == (void *)SIG_IGN)
		return (0); /* changed since the signal came */
	if (flags & SA_RESETHAND) {
		struct sigaction d;

		memset(&d, 0, sizeof(d));
		d.sa_handler = SIG_DFL;
		sigaction(sig, &d, NULL);
	}
	if (flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))fn)(sig, si, uc);
	else
		((void (*)(int))fn)(sig);
	return (DP_SIG_RAN | ((flags & SA_RESTART) ? 0 : DP_SIG_NORESTART));
}

static struct dp_thread *
dp_of(struct ult_thread *ut)
{
	return (ult__dropin_of((pthread_t)ut->arg));
}

/* A process signal back to the process.  The kernel lets a thread other
 * than the leader requeue only a sigqueue's or a timer's siginfo (a
 * negative code); kill's sender is then the process itself. */
static void
requeue(int sig, siginfo_t *si)
{
	if (si->si_code >= 0 ||
	    syscall(SYS_rt_sigqueueinfo, getpid(), sig, si) != 0)
		syscall(SYS_kill, getpid(), sig);
}

static void
tramp_on(int sig, siginfo_t *si, void *uc)
{
	struct ult__worker *w = ult__tls_worker;
	struct dp_siginfo info = {.code = si->si_code,
	    .pid = si->si_pid,
	    .uid = si->si_uid,
	    .value = si->si_value};
	struct ult_thread *ut;
	struct dp_thread *dp;

	if (w == NULL) { /* a thread that is not a worker */
		run(sig, si, uc);
		return;
	}
	ut = w->curthread;
	if (ut == &w->idle || (dp = dp_of(ut)) == NULL) {
		/* For another thread: one that waits for it or main takes
		 * it, with its siginfo; else back to the process.  If the
		 * worker is switching to its idle thread, which blocks it,
		 * the worker blocks it now, as the switch is about to: else
		 * the kernel, finding it unblocked here alone, handed it
		 * straight back, for ever (a hang of LTP's
		 * pthread_cond_timedwait 4-3 under 4BSD, one run in 30). */
		if (si->si_code != SI_TKILL && ult__dropin_route(sig, &info))
			return;
		if (ult__sigmask_of(w, ut) & (1ull << (sig - 1)))
			sigaddset(&((ucontext_t *)uc)->uc_sigmask, sig);
		requeue(sig, si);
		return;
	}
	if (sig == SIGABRT && si->si_code == SI_TKILL &&
	    si->si_pid == getpid()) {
		/* abort()'s own raise, on this worker: the handler runs now,
		 * as the kernel would run it, since abort goes on to the
		 * default action as soon as raise returns.  A SIGABRT sent
		 * by kill is wrapped like any other, so that it interrupts
		 * the uthread that takes it, not the worker under it. */
		run(sig, si, uc);
		return;
	}
	if (si->si_code != SI_TKILL &&
	    (ULT_PLD(&ut->sigmask) & (1ull << (sig - 1)))) {
		/* A switch to a thread that blocks it, before the worker
		 * took that thread's mask: queued on it, a process signal
		 * would wait there while another thread accepts it.  The
		 * process gets it back, and the worker blocks it now, as the
		 * switch is about to (else the kernel would hand it straight
		 * back). */
		sigaddset(&((ucontext_t *)uc)->uc_sigmask, sig);
		requeue(sig, si);
		return;
	}
	if (ult__preempt_safe_point(uc)) {
		/* main, or a thread in sigsuspend or sigwait for it, takes a
		 * process signal first, as the kernel would. */
		if (si->si_code != SI_TKILL && ult__dropin_route(sig, &info))
			return;
		run(sig, si, uc);
		ult__preempt_frame_fix(uc);
		return;
	}
	/* In the runtime or libc: later, at a safe point.  If the thread is
	 * about to sleep at a cancellation point, that sleep ends at once. */
	ult__dropin_queue_info(dp, sig, &info);
	/* seq_cst: as ult__sleepq_interrupt's side of its Dekker pair with
	 * ult__sleepq_wait (kern/sleepq.c). */
	if (ULT_LD_SC(&ut->intr))
		ULT_ST_SC(&ut->intr_pending, 1);
	ult__preempt_owe();
}

static void
tramp(int sig, siginfo_t *si, void *uc)
{
	int e = errno;

	tramp_on(sig, si, uc);
	errno = e;
}

int
ult__dropin_deliver(struct dp_thread *dp, int sig, void *uc)
{
	struct ult_thread *ut = ult__self_ut();
	uint64_t add, old;
	siginfo_t si;
	ucontext_t here;
	void *fn;
	int flags, ran, e;

	if (!wrapped(sig) || ut == NULL) {
		/* On the worker, as before: the kernel runs it. */
		syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
		return (0);
	}
	if (!ULT_PLD_ACQ(&acts[sig].known)) {
		old = lock();
		learn(sig);
		unlock(old);
	}
	fn = ULT_PLD(&acts[sig].fn);
	flags = ULT_PLD(&acts[sig].flags);
	if (fn == (void *)SIG_IGN)
		return (0);
	if (fn == (void *)SIG_DFL) {
		/* The default action, by the kernel: the signal is open. */
		syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
		return (0);
	}
	memset(&si, 0, sizeof(si));
	si.si_signo = sig;
	si.si_code = SI_TKILL;
	si.si_pid = getpid();
	si.si_uid = getuid();
	if (ULT_PFETCH_AND_ACQ(&dp->sig_hasinfo, ~(1ull << (sig - 1))) &
	    (1ull << (sig - 1))) {
		const struct dp_siginfo *d = &dp->siginfo[sig - 1];

		si.si_code = d->code;
		si.si_pid = d->pid;
		si.si_uid = d->uid;
		si.si_value = d->value;
	}
	if (uc == NULL) {
		getcontext(&here);
		uc = &here;
	}
	/* As the kernel would: the handler's mask, and its own signal. */
	add = ULT_PLD(&acts[sig].mask);
	if (!(flags & SA_NODEFER))
		add |= 1ull << (sig - 1);
	ult__sigmask_set(SIG_BLOCK, &add, &old);
	add = ult__self_ut()->sigmask; /* uncounted (signal.c), as brief */
	e = errno;
	ran = run(sig, &si, uc);
	errno = e;
	/* What the handler changed in the mask was counted from the one it
	 * ran with: uncounted as well, as the mask goes back. */
	ult__dropin_mask_counted(ult__self_ut()->sigmask, add);
	ult__sigmask_set(SIG_SETMASK, &old, NULL);
	return (ran);
}

/* The preemption handler asks, at a safe point (preempt.c). */
static int
hook(struct ult_thread *ut, void *uc)
{
	struct dp_thread *dp;

	if (ULT_PLD(&ult__dropin_nqueued) == 0 || (dp = dp_of(ut)) == NULL)
		return (0);
	if (uc == NULL)
		return ((ULT_PLD_ACQ(&dp->sig_pending) & ~ut->sigmask) != 0);
	ult__dropin_signals_uc(dp, uc);
	return (0);
}

__attribute__((constructor)) static void
hook_on(void)
{
	ULT_PST_REL(&ult__preempt_sig_hook, hook);
}

/* raise is pthread_kill to oneself: the handler has run when it
 * returns. */
int
raise(int sig)
{
	static void *_Atomic slot;
	int err;

	if (ult__dropin_self() == NULL)
		return (((int (*)(int))ult__dropin_next("raise", &slot))(sig));
	if ((err = pthread_kill(pthread_self(), sig)) != 0) {
		errno = err;
		return (-1);
	}
	return (0);
}

/* A signal the caller sent the process and took itself was queued by
 * the trampoline (kill is in libc): its handler runs before kill
 * returns, as natively. */
int
kill(pid_t pid, int sig)
{
	static void *_Atomic slot;
	struct dp_thread *dp;
	int r =
	    ((int (*)(pid_t, int))ult__dropin_next("kill", &slot))(pid, sig);

	if (r == 0 && sig != 0 && (dp = ult__dropin_self()) != NULL &&
	    ULT_PLD(&dp->sig_pending) != 0)
		ult__dropin_signals(dp);
	return (r);
}

/*
 * The alternate signal stack is per kernel thread: a uthread's would
 * replace its worker's, which the runtime's overflow report runs on, and
 * a thread that unmaps its own at its end would leave the worker with
 * none.  So each uthread keeps what it was told, and gets it back; the
 * program's handlers run on the uthread's stack, faults' on the worker's
 * alternate stack.
 */
int
sigaltstack(const stack_t *ss, stack_t *old)
{
	static void *_Atomic slot;
	struct dp_thread *dp = ult__dropin_self();

	if (dp == NULL)
		return (((int (*)(const stack_t *, stack_t *))ult__dropin_next(
		    "sigaltstack", &slot))(ss, old));
	if (ss != NULL && !(ss->ss_flags & SS_DISABLE)) {
		if (ss->ss_flags & ~SS_AUTODISARM) {
			errno = EINVAL;
			return (-1);
		}
		if (ss->ss_size < (size_t)MINSIGSTKSZ) {
			errno = ENOMEM;
			return (-1);
		}
	}
	if (old != NULL) {
		*old = dp->altstack;
		if (old->ss_sp == NULL && old->ss_size == 0)
			old->ss_flags = SS_DISABLE;
	}
	if (ss != NULL) {
		if (ss->ss_flags & SS_DISABLE)
			memset(&dp->altstack, 0, sizeof(dp->altstack));
		else
			dp->altstack = *ss;
	}
	return (0);
}
