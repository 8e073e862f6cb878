/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Signals in the drop-in (DESIGN.md section 14): masks per uthread, and
 * pthread_kill to a uthread.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "arch/cpu.h"

#include "kern/runtime.h"
#include "kern/worker.h"
#include "kern/uthread.h"
#include "kern/signals.h"
#include "kern/sigmask.h"
#include "dropin.h"

static int
real_kill(pthread_t t, int sig)
{
	static void *_Atomic slot;

	return (((int (*)(pthread_t, int))ult__dropin_next("pthread_kill",
	    &slot))(t, sig));
}

/* Signals queued for dp, raised on its current worker, where the handler
 * runs on the uthread's own block; those it blocks stay queued until it
 * unblocks them (its pthread_sigmask calls this again). */
void
ult__dropin_signals(struct dp_thread *dp)
{
	struct ult_thread *ut = ult__self_ut();
	uint64_t open = ut != NULL ? ~ut->sigmask : ~(uint64_t)0;
	uint64_t bits =
	    __atomic_fetch_and(&dp->sig_pending, ~open, __ATOMIC_ACQ_REL) &
	    open;

	for (int sig = 1; bits != 0; sig++, bits >>= 1)
		if (bits & 1)
			real_kill(ult__rt_pthread_self(), sig);
}

/*
 * Process signals (the catcher).  Every kernel thread of the process
 * blocks a signal except a worker running a uthread that accepts it, so
 * a signal sent to the process while no such uthread runs stays pending,
 * where the kernel thread that started main, once main runs, collects it
 * with a signalfd: for a signal some live uthread accepts (the signalfd's
 * set, kept up to date from the counts below), it queues it on one of
 * them as pthread_kill does, or, for a default action that ends or stops
 * the process, lets it take that action.  A signal every uthread blocks
 * stays pending for sigwait, as natively.
 */
static struct {
	int lock; /* a spin lock: a few stores under it */
	int nlive;
	int blocked[64]; /* live uthreads blocking signal i + 1 */
	uint64_t accepted;
	struct dp_thread *list; /* live threads, by next_live */
	int efd;		/* tells the catcher `accepted' moved */
} sc = {.efd = -1};

static void
sc_lock(void)
{
	while (__atomic_exchange_n(&sc.lock, 1, __ATOMIC_ACQUIRE))
		ult__cpu_relax();
}

static void
sc_unlock(void)
{
	uint64_t acc = 0, one = 1;
	int moved;

	for (int i = 0; i < 64; i++)
		if (sc.blocked[i] < sc.nlive)
			acc |= 1ull << i;
	moved = acc != sc.accepted;
	sc.accepted = acc;
	__atomic_store_n(&sc.lock, 0, __ATOMIC_RELEASE);
	if (moved && sc.efd >= 0 && write(sc.efd, &one, sizeof(one)) < 0)
		(void)0; /* saturated: the catcher looks anyway */
}

static void
count(uint64_t mask, int d)
{
	for (int i = 0; i < 64; i++)
		if (mask & (1ull << i))
			sc.blocked[i] += d;
}

void
ult__dropin_sig_live(struct dp_thread *dp, uint64_t mask, int live)
{
	uint64_t left = 0;

	sc_lock();
	count(mask, live ? 1 : -1);
	sc.nlive += live ? 1 : -1;
	if (live) {
		dp->next_live = sc.list;
		dp->prev_live = NULL;
		if (sc.list != NULL)
			sc.list->prev_live = dp;
		sc.list = dp;
	} else {
		if (dp->prev_live != NULL)
			dp->prev_live->next_live = dp->next_live;
		else
			sc.list = dp->next_live;
		if (dp->next_live != NULL)
			dp->next_live->prev_live = dp->prev_live;
		/* Queued on it by the catcher and not taken: the process
		 * gets them back, for another thread. */
		left =
		    __atomic_exchange_n(&dp->sig_pending, 0, __ATOMIC_ACQ_REL);
	}
	sc_unlock();
	for (int sig = 1; left != 0; sig++, left >>= 1)
		if (left & 1)
			kill(getpid(), sig);
}

static void
sig_mask_moved(uint64_t old, uint64_t new)
{
	if (old == new)
		return;
	sc_lock();
	count(old, -1);
	count(new, 1);
	sc_unlock();
}

/* A default action that ends or stops the process (not one that
 * ignores, nor continues). */
static int
dfl_acts(int sig)
{
	return (sig != SIGCHLD && sig != SIGURG && sig != SIGWINCH &&
	    sig != SIGCONT);
}

static void
catch_one(const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	struct dp_thread *to = NULL;
	struct sigaction sa;

	if (sig < 1 || sig > 64 || sigaction(sig, NULL, &sa) != 0)
		return;
	if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN)
		return;
	if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL) {
		if (dfl_acts(sig)) {
			/* This thread takes it: the process ends or stops. */
			uint64_t m =
			    ult__os_sigmask_get() & ~(1ull << (sig - 1));

			ult__os_sigmask(m);
			raise(sig);
			ult__os_block_async_signals();
		}
		return;
	}
	sc_lock();
	for (struct dp_thread *dp = sc.list; dp != NULL; dp = dp->next_live) {
		ult_thread_t *u = __atomic_load_n(&dp->ut, __ATOMIC_ACQUIRE);

		if (u != NULL && !(u->sigmask & (1ull << (sig - 1)))) {
			to = dp;
			break;
		}
	}
	if (to != NULL)
		__atomic_fetch_or(&to->sig_pending, 1ull << (sig - 1),
		    __ATOMIC_RELEASE);
	sc_unlock();
	/* dp stays allocated while it is live: interrupting a thread that
	 * has just ended is harmless (its record lives until joined). */
	if (to != NULL)
		ult__dropin_interrupt(to);
}

void
ult__dropin_catch_signals(void)
{
	uint64_t acc = ~(uint64_t)0, v;
	int sfd = -1;

	sc.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	for (;;) {
		struct pollfd p[2];
		uint64_t want =
		    __atomic_load_n(&sc.accepted, __ATOMIC_ACQUIRE) &
		    ~ULT_SIGMASK_KEEP & ~(1ull << (SIGURG - 1));

		if (want != acc) {
			sigset_t set;

			sigemptyset(&set);
			for (int i = 0; i < 64; i++)
				if (want & (1ull << i))
					sigaddset(&set, i + 1);
			sfd = signalfd(sfd, &set, SFD_CLOEXEC | SFD_NONBLOCK);
			acc = want;
		}
		p[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
		p[1] = (struct pollfd){.fd = sc.efd, .events = POLLIN};
		if (ult__rt_poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents & POLLIN)
			while (read(sc.efd, &v, sizeof(v)) > 0)
				;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				catch_one(&si);
		}
	}
}

/*
 * The signal is raised at once on the caller's worker when it is for the
 * caller, or when its action is the default (which acts on the process);
 * for another uthread with a handler, it waits for that uthread's next
 * call into the drop-in (any pthread, sleep or I/O call), and a uthread
 * blocked in one sees it when that call returns.
 */
int
pthread_kill(pthread_t t, int sig)
{
	struct dp_thread *dp;
	struct sigaction sa;

	ult__dropin_up();
	dp = ult__dropin_of(t);

	if (sig < 0 || sig > 64)
		return (EINVAL);
	if (dp == NULL)
		return (real_kill(t, sig));
	if (sig == 0)
		return (0);
	if (sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO)) {
		ult_thread_t *u = __atomic_load_n(&dp->ut, __ATOMIC_ACQUIRE);
		int blocked = u != NULL && (u->sigmask & (1ull << (sig - 1)));

		if (sa.sa_handler == SIG_IGN)
			return (0);
		/* A default action acts on the process: sent to it, the
		 * catcher or a worker takes the action. */
		if (sa.sa_handler == SIG_DFL && !blocked)
			return (dfl_acts(sig) ? kill(getpid(), sig) : 0);
	}
	/* Queued on the thread; raised on its worker when it runs with the
	 * signal open (at once if it is the caller). */
	__atomic_fetch_or(&dp->sig_pending, 1ull << (sig - 1),
	    __ATOMIC_RELEASE);
	if (dp == ult__dropin_self())
		ult__dropin_signals(dp);
	else
		ult__dropin_interrupt(dp);
	return (0);
}

/*
 * Signal masks are per uthread (ult__sigmask_set): the worker running a
 * uthread has its mask, so a signal it blocks is not delivered to it,
 * and a new thread starts with its creator's.  A thread that is not a
 * uthread has its own, the kernel's.
 */
static int
mask(const char *name, void *_Atomic *slot, int how, const sigset_t *set,
    sigset_t *old)
{
	uint64_t s, o;

	ult__dropin_up();
	if (ult__dropin_self() == NULL)
		return (((int (*)(int, const sigset_t *,
		    sigset_t *))ult__dropin_next(name, slot))(how, set, old));
	if (set != NULL && how != SIG_BLOCK && how != SIG_UNBLOCK &&
	    how != SIG_SETMASK)
		return (EINVAL);
	if (set != NULL)
		memcpy(&s, set, sizeof(s));
	ult__sigmask_set(how, set != NULL ? &s : NULL, &o);
	sig_mask_moved(o, ult__self_ut()->sigmask);
	if (old != NULL) {
		sigemptyset(old);
		memcpy(old, &o, sizeof(o));
	}
	/* Unblocked now: what was queued for this thread. */
	ult__dropin_signals(ult__dropin_self());
	return (0);
}

int
pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	static void *_Atomic slot;

	return (mask("pthread_sigmask", &slot, how, set, old));
}

int
sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	static void *_Atomic slot;
	int err = mask("sigprocmask", &slot, how, set, old);

	if (err > 0) {
		errno = err;
		return (-1);
	}
	return (err);
}
