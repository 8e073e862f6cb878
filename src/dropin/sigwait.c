/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Waiting for signals in a uthread (DESIGN.md section 14): sigwait,
 * sigwaitinfo, sigtimedwait, sigsuspend and pause sleep as uthreads do,
 * so the worker runs others meanwhile.  The waiter registers what it
 * waits for (ult__dropin_sig_wait): a process signal in that set goes to
 * it first, from the catcher or from a worker that took it at a safe
 * point, queued on it as pthread_kill queues, and wakes it.  A thread
 * that is not a uthread makes the plain call.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "dropin.h"

#define UNWAITABLE ((1ull << (SIGKILL - 1)) | (1ull << (SIGSTOP - 1)))

static int
real_timedwait(const sigset_t *set, siginfo_t *si, const struct timespec *ts)
{
	static void *_Atomic slot;

	return (((int (*)(const sigset_t *, siginfo_t *,
	    const struct timespec *))ult__dropin_next("sigtimedwait", &slot))(
	    set, si, ts));
}

static uint64_t
bits(const sigset_t *set)
{
	uint64_t b;

	memcpy(&b, set, sizeof(b));
	return (b);
}

/* One of want queued on dp, taken; 0 if none. */
static int
take(struct dp_thread *dp, uint64_t want)
{
	uint64_t p = ULT_PLD_ACQ(&dp->sig_pending) & want;

	while (p != 0) {
		uint64_t bit = p & -p;

		if (ult__dropin_unqueue(dp, bit))
			return (__builtin_ctzll(bit) + 1);
		p &= ~bit;
	}
	return (0);
}

/*
 * A signal of set, or -EAGAIN at the deadline, or -EINTR when a handler
 * ran and intr says that ends the wait (sigwait goes on waiting).
 */
static int
wait_sig(struct dp_thread *dp, const sigset_t *set, siginfo_t *si,
    uint64_t deadline, int intr)
{
	static const struct timespec zero = {0, 0};
	uint64_t want = bits(set) & ~UNWAITABLE;
	siginfo_t local;
	sigset_t kset;
	int sig, err;

	if (si == NULL)
		si = &local;
	/* Realtime signals come only through the catcher (which takes what
	 * a waiter waits for), in the order sent: one taken here from the
	 * kernel could overtake an earlier one the catcher holds. */
	sigemptyset(&kset);
	for (int i = 0; i < SIGRTMIN - 1; i++)
		if (want & ~ULT_SIGMASK_KEEP & ~(1ull << (SIGURG - 1)) &
		    (1ull << i))
			sigaddset(&kset, i + 1);
	ult__dropin_sig_wait(dp, want);
	for (;;) {
		ult__dropin_intr_begin();
		if ((sig = take(dp, want)) != 0) {
			uint64_t bit = 1ull << (sig - 1);

			memset(si, 0, sizeof(*si));
			si->si_signo = sig;
			/* glibc's sigtimedwait reports the kernel's SI_TKILL
			 * (raise, pthread_kill) as POSIX's SI_USER. */
			si->si_code = SI_USER;
			si->si_pid = getpid();
			si->si_uid = getuid();
			if (ULT_PFETCH_AND_ACQ(&dp->sig_hasinfo, ~bit) & bit) {
				si->si_code = dp->siginfo[sig - 1].code;
				if (si->si_code == SI_TKILL)
					si->si_code = SI_USER;
				si->si_pid = dp->siginfo[sig - 1].pid;
				si->si_uid = dp->siginfo[sig - 1].uid;
				si->si_value = dp->siginfo[sig - 1].value;
			}
			ult__dropin_rt_next(dp, sig);
			break;
		}
		/* Pending for the process: the kernel's (never the
		 * runtime's own signals). */
		if ((sig = real_timedwait(&kset, si, &zero)) > 0)
			break;
		if (deadline != UINT64_MAX && ult__now() >= deadline) {
			sig = -EAGAIN;
			break;
		}
		err = ult_sleep_until(deadline);
		ult__dropin_intr_end();
		if (err == EINTR && (ult__dropin_point() & DP_SIG_RAN) &&
		    intr) {
			ult__dropin_sig_wait(dp, 0);
			return (-EINTR);
		}
	}
	ult__dropin_intr_end();
	ult__dropin_sig_wait(dp, 0);
	return (sig);
}

static int
posix_sig(int r)
{
	if (r < 0) {
		errno = -r;
		return (-1);
	}
	return (r);
}

int
sigwait(const sigset_t *set, int *sig)
{
	static void *_Atomic slot;
	struct dp_thread *dp;
	int r;

	ult__dropin_up();
	if ((dp = ult__dropin_self()) == NULL)
		return (((int (*)(const sigset_t *, int *))ult__dropin_next(
		    "sigwait", &slot))(set, sig));
	ult__dropin_point();
	r = wait_sig(dp, set, NULL, UINT64_MAX, 0);
	if (r < 0)
		return (-r);
	*sig = r;
	return (0);
}

int
sigwaitinfo(const sigset_t *set, siginfo_t *si)
{
	static void *_Atomic slot;
	struct dp_thread *dp;

	ult__dropin_up();
	if ((dp = ult__dropin_self()) == NULL)
		return (
		    ((int (*)(const sigset_t *, siginfo_t *))ult__dropin_next(
			"sigwaitinfo", &slot))(set, si));
	ult__dropin_point();
	return (posix_sig(wait_sig(dp, set, si, UINT64_MAX, 1)));
}

int
sigtimedwait(const sigset_t *set, siginfo_t *si, const struct timespec *ts)
{
	struct dp_thread *dp;
	uint64_t deadline = UINT64_MAX;
	int err;

	ult__dropin_up();
	if ((dp = ult__dropin_self()) == NULL)
		return (real_timedwait(set, si, ts));
	ult__dropin_point();
	if (ts != NULL && (err = ult__dropin_after(ts, &deadline)) != 0) {
		errno = err;
		return (-1);
	}
	/* A deadline that far is still a deadline. */
	if (ts != NULL && deadline == UINT64_MAX)
		deadline--;
	return (posix_sig(wait_sig(dp, set, si, deadline, 1)));
}

/* What is pending for the caller: its own queue, and the process's
 * (the kernel's answer on its worker), as far as its mask blocks them. */
int
sigpending(sigset_t *set)
{
	static void *_Atomic slot;
	struct dp_thread *dp;
	uint64_t mine, k;

	if (((int (*)(sigset_t *))ult__dropin_next("sigpending", &slot))(set) !=
	    0)
		return (-1);
	if ((dp = ult__dropin_self()) == NULL)
		return (0);
	mine = ULT_PLD_ACQ(&dp->sig_pending) & ult__self_ut()->sigmask;
	memcpy(&k, set, sizeof(k));
	k |= mine;
	memcpy(set, &k, sizeof(k));
	return (0);
}

/*
 * sigsuspend: the mask replaced until a handler has run; returns -1 with
 * EINTR, the old mask back.  A signal queued on the thread and open in
 * the new mask runs at once.
 */
int
sigsuspend(const sigset_t *set)
{
	static void *_Atomic slot;
	struct dp_thread *dp;
	uint64_t old, m;
	int ran = 0;

	ult__dropin_up();
	if ((dp = ult__dropin_self()) == NULL)
		return (((int (*)(const sigset_t *))ult__dropin_next(
		    "sigsuspend", &slot))(set));
	ult__dropin_point();
	m = bits(set);
	old = ult__dropin_setmask(m);
	m = ult__self_ut()->sigmask; /* less what cannot be blocked */
	ult__dropin_sig_wait(dp, ~m & ~UNWAITABLE);
	while (!(ran & DP_SIG_RAN)) {
		ult__dropin_intr_begin();
		if ((ULT_PLD_ACQ(&dp->sig_pending) & ~m) == 0)
			ult_sleep_until(UINT64_MAX);
		ult__dropin_intr_end();
		ran = ult__dropin_point();
	}
	ult__dropin_sig_wait(dp, 0);
	ult__dropin_setmask(old);
	/* Open again: what the wait's mask held back. */
	ult__dropin_signals(dp);
	errno = EINTR;
	return (-1);
}

int
pause(void)
{
	sigset_t set;
	uint64_t m;

	ult__dropin_up();
	if (ult__dropin_self() == NULL) {
		static void *_Atomic slot;

		return (((int (*)(void))ult__dropin_next("pause", &slot))());
	}
	m = ult__self_ut()->sigmask;
	sigemptyset(&set);
	memcpy(&set, &m, sizeof(m));
	return (sigsuspend(&set));
}

int
ult__dropin_mask_in(const sigset_t *set, uint64_t *old)
{
	struct dp_thread *dp = ult__dropin_self();
	uint64_t m;

	*old = ult__dropin_setmask(bits(set));
	m = ult__self_ut()->sigmask;
	ult__dropin_sig_wait(dp, ~m & ~UNWAITABLE);
	if (ult__dropin_signals(dp) & DP_SIG_RAN) {
		ult__dropin_mask_out(*old);
		return (1);
	}
	return (0);
}

void
ult__dropin_mask_out(uint64_t old)
{
	struct dp_thread *dp = ult__dropin_self();

	ult__dropin_sig_wait(dp, 0);
	ult__dropin_setmask(old);
	ult__dropin_signals(dp);
}
