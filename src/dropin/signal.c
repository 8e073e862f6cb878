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
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.h"
#include "dropin.h"

static int
real_kill(pthread_t t, int sig)
{
	static void *_Atomic slot;

	return (((int (*)(pthread_t, int))ult__dropin_next("pthread_kill",
	    &slot))(t, sig));
}

int ult__dropin_nqueued;

/*
 * Realtime signals (SIGRTMIN up) queue every instance, in order, as the
 * kernel does: the first in the lock-free slot (sig_pending's bit and
 * siginfo[]), the later ones in dp->rtq, moved into the slot one by one
 * by ult__dropin_rt_next after the taker has read it.  A producer may
 * run in a signal handler on any kernel thread, so the lock is held with
 * every signal blocked there.  Beyond DP_RTQ, instances are dropped (the
 * kernel's queue has a limit too).
 */
static struct mtx rt_lk = MTX_INITIALIZER("dropin rt signal queue");

static int
is_rt(int sig)
{
	return (sig >= SIGRTMIN);
}

static uint64_t
rt_lock(void)
{
	uint64_t old = ult__os_sigmask_get();

	ult__os_sigmask(~ULT_SIGMASK_KEEP | old);
	mtx_lock_spin(&rt_lk);
	return (old);
}

static void
rt_unlock(uint64_t old)
{
	mtx_unlock_spin(&rt_lk);
	ult__os_sigmask(old);
}

static void
set_pending(struct dp_thread *dp, uint64_t bit)
{
	if (!(ULT_PFETCH_OR_ACQREL(&dp->sig_pending, bit) & bit))
		ULT_PADD_FETCH(&ult__dropin_nqueued, 1);
}

/* An instance of realtime sig, with si or none. */
static void
rt_queue(struct dp_thread *dp, int sig, const struct dp_siginfo *si)
{
	uint64_t bit = 1ull << (sig - 1), old = rt_lock();
	int busy = ((ULT_PLD(&dp->sig_pending) | dp->rt_busy) & bit) != 0;

	for (unsigned i = 0; i < dp->rtq_n && !busy; i++)
		busy = dp->rtq[i].sig == sig;
	if (!busy) {
		if (si != NULL) {
			dp->siginfo[sig - 1] = *si;
			ULT_PFETCH_OR_REL(&dp->sig_hasinfo, bit);
		} else
			ULT_PFETCH_AND(&dp->sig_hasinfo, ~bit);
		set_pending(dp, bit);
	} else if (dp->rtq_n < DP_RTQ) {
		dp->rtq[dp->rtq_n].sig = sig;
		dp->rtq[dp->rtq_n].hasinfo = si != NULL;
		if (si != NULL)
			dp->rtq[dp->rtq_n].si = *si;
		dp->rtq_n++;
	}
	rt_unlock(old);
}

void
ult__dropin_rt_next(struct dp_thread *dp, int sig)
{
	uint64_t bit = 1ull << (sig - 1), old;

	if (!is_rt(sig))
		return;
	old = rt_lock();
	dp->rt_busy &= ~bit;
	if (!(ULT_PLD(&dp->sig_pending) & bit))
		for (unsigned i = 0; i < dp->rtq_n; i++) {
			if (dp->rtq[i].sig != sig)
				continue;
			if (dp->rtq[i].hasinfo) {
				dp->siginfo[sig - 1] = dp->rtq[i].si;
				ULT_PFETCH_OR_REL(&dp->sig_hasinfo, bit);
			} else
				ULT_PFETCH_AND(&dp->sig_hasinfo, ~bit);
			memmove(&dp->rtq[i], &dp->rtq[i + 1],
			    (dp->rtq_n - i - 1) * sizeof(dp->rtq[0]));
			dp->rtq_n--;
			set_pending(dp, bit);
			break;
		}
	rt_unlock(old);
}

void
ult__dropin_queue(struct dp_thread *dp, int sig)
{
	if (is_rt(sig)) {
		rt_queue(dp, sig, NULL);
		return;
	}
	set_pending(dp, 1ull << (sig - 1));
}

void
ult__dropin_queue_info(struct dp_thread *dp, int sig,
    const struct dp_siginfo *si)
{
	if (is_rt(sig)) {
		rt_queue(dp, sig, si);
		return;
	}
	/* A newer one of the same signal may overwrite it: they are one. */
	dp->siginfo[sig - 1] = *si;
	ULT_PFETCH_OR_REL(&dp->sig_hasinfo, 1ull << (sig - 1));
	set_pending(dp, 1ull << (sig - 1));
}

int
ult__dropin_unqueue(struct dp_thread *dp, uint64_t bit)
{
	uint64_t old;
	int sig = __builtin_ctzll(bit) + 1, took;

	if (!is_rt(sig)) {
		if (!(ULT_PFETCH_AND_ACQREL(&dp->sig_pending, ~bit) & bit))
			return (0);
		ULT_PSUB_FETCH(&ult__dropin_nqueued, 1);
		return (1);
	}
	/* The slot stays the taker's until its ult__dropin_rt_next. */
	old = rt_lock();
	took = (ULT_PFETCH_AND_ACQREL(&dp->sig_pending, ~bit) & bit) != 0;
	if (took) {
		ULT_PSUB_FETCH(&ult__dropin_nqueued, 1);
		dp->rt_busy |= bit;
	}
	rt_unlock(old);
	return (took);
}

/* Signals queued for dp (the caller) that its mask lets through, one at
 * a time: a handler's sa_mask or its own calls may change the mask. */
int
ult__dropin_signals_uc(struct dp_thread *dp, void *uc)
{
	int ran = 0;

	for (;;) {
		struct ult_thread *ut = ult__self_ut();
		uint64_t open =
		    ut != NULL ? ~ut->sigmask & ~dp->sig_urg : ~(uint64_t)0;
		uint64_t bits = ULT_PLD_ACQ(&dp->sig_pending) & open;
		uint64_t bit;

		if (bits == 0)
			return (ran);
		bit = bits & -bits;
		if (ult__dropin_unqueue(dp, bit)) {
			ran |= ult__dropin_deliver(dp, __builtin_ctzll(bit) + 1,
			    uc);
			ult__dropin_rt_next(dp, __builtin_ctzll(bit) + 1);
		}
	}
}

int
ult__dropin_signals(struct dp_thread *dp)
{
	return (ult__dropin_signals_uc(dp, NULL));
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
/* sc.lock is taken in a signal handler only where the interrupted code
 * cannot hold it: by the trampoline on a worker running its idle loop or
 * a uthread of the runtime's own, or at a preemption safe point (the
 * program's text); the catcher blocks every signal.  So it is held with
 * signals open, which keeps pthread_sigmask free of two more system
 * calls. */
static struct {
	struct mtx lock; /* a few stores under it */
	int nlive;
	int blocked[64]; /* live uthreads blocking signal i + 1 */
	int waiting[64]; /* uthreads in sigwait or sigsuspend for it */
	uint64_t accepted;
	uint64_t waited; /* some uthread waits for it: the catcher takes it */
	int nwaiters;	 /* (a) */
	struct dp_thread *main; /* main's thread, while live */
	struct dp_thread *list; /* live threads, by next_live */
	int efd;		/* tells the catcher `accepted' moved */
	int reading;		/* (a) the catcher has a signal in hand */
} sc = {.lock = MTX_INITIALIZER("dropin signal counts"), .efd = -1};

/* A fork child: the parent's threads and catcher are not there (its
 * eventfd is the parent's catcher's).  Their handles are dead there
 * (ESRCH), unless the list was mid-update at the fork. */
void
ult__dropin_sig_fork_child(struct dp_thread *keep)
{
	if (ULT_LD(&sc.lock.mtx_locked) == 0)
		for (struct dp_thread *dp = sc.list; dp != NULL;
		     dp = dp->next_live)
			if (dp != keep)
				dp->magic = DP_DEAD;
	if (sc.efd >= 0)
		(void)ult__libc_syscall(SYS_close, sc.efd);
	memset(&sc, 0, sizeof(sc));
	mtx_init(&sc.lock, "dropin signal counts");
	mtx_init(&rt_lk, "dropin rt signal queue");
	sc.efd = -1;
	ult__dropin_nqueued = 0;
}

static void
sc_lock(void)
{
	mtx_lock_spin(&sc.lock);
}

static void
sc_unlock(void)
{
	uint64_t acc = 0, wt = 0, one = 1;
	int moved;

	for (int i = 0; i < 64; i++) {
		if (sc.blocked[i] < sc.nlive)
			acc |= 1ull << i;
		if (sc.waiting[i] > 0)
			wt |= 1ull << i;
	}
	moved = acc != sc.accepted || wt != sc.waited;
	sc.accepted = acc;
	ULT_PST_REL(&sc.waited, wt);
	mtx_unlock_spin(&sc.lock);
	if (moved && sc.efd >= 0 && write(sc.efd, &one, sizeof(one)) < 0)
		(void)0; /* saturated: the catcher looks anyway */
}

static void
count(int *n, uint64_t mask, int d)
{
	for (int i = 0; i < 64; i++)
		if (mask & (1ull << i))
			n[i] += d;
}

void
ult__dropin_sig_wait(struct dp_thread *dp, uint64_t set)
{
	sc_lock();
	count(sc.waiting, dp->sigwait_set, -1);
	ULT_PADD_FETCH(&sc.nwaiters, (set != 0) - (dp->sigwait_set != 0));
	dp->sigwait_set = set;
	count(sc.waiting, set, 1);
	sc_unlock();
}

/* dp accepts the signal; with now, it can also run the handler soon:
 * it runs, or waits where a signal interrupts the wait (intr). */
static int
accepts(struct dp_thread *dp, uint64_t bit, int now)
{
	ult_thread_t *u = ULT_PLD_ACQ(&dp->ut);

	return (u != NULL && !(u->sigmask & bit) &&
	    (!now || ULT_LD(&u->oncpu) || ULT_LD(&u->intr))); /* hints */
}

/*
 * Who takes a process signal (sc locked), as Linux chooses: the main
 * thread if it accepts it or waits for it (the kernel tries the thread
 * group's leader first), else a thread waiting for it in sigwait or
 * sigsuspend; else, if any, a thread that accepts it.
 */
static struct dp_thread *
taker(int sig, int any)
{
	uint64_t bit = 1ull << (sig - 1);

	if (sc.main != NULL &&
	    (accepts(sc.main, bit, 1) || (sc.main->sigwait_set & bit)))
		return (sc.main);
	for (struct dp_thread *dp = sc.list; dp != NULL; dp = dp->next_live)
		if (dp->sigwait_set & bit)
			return (dp);
	for (int now = 1; any && now >= 0; now--)
		for (struct dp_thread *dp = sc.list; dp != NULL;
		     dp = dp->next_live)
			if (accepts(dp, bit, now))
				return (dp);
	/* Blocked only while a handler runs (its mask, or its own
	 * signal): natively pending until the handler returns, so queued
	 * on that thread, which takes it then. */
	for (struct dp_thread *dp = sc.list; any && dp != NULL;
	     dp = dp->next_live)
		if (!(dp->sig_counted & bit) && ULT_PLD_ACQ(&dp->ut) != NULL)
			return (dp);
	return (NULL);
}

void
ult__dropin_sig_kick(struct dp_thread *dp)
{
	ult_thread_t *ut = ULT_PLD_ACQ(&dp->ut);

	/* dp stays allocated while it is live: interrupting a thread that
	 * has just ended is harmless (its record lives until joined). */
	ult__dropin_interrupt(dp);
	if (ut != NULL && dp != ult__dropin_self())
		ult__preempt_kick_thread(ut);
}

int
ult__dropin_route(int sig, const struct dp_siginfo *si)
{
	struct dp_thread *self = ult__dropin_self(), *to;

	sc_lock();
	to = taker(sig, 0);
	if (to != NULL && to != self)
		ult__dropin_queue_info(to, sig, si);
	sc_unlock();
	if (to == NULL || to == self)
		return (0);
	ult__dropin_sig_kick(to);
	return (1);
}

/*
 * An ending thread (the caller) first takes the process signals pending
 * that it accepts, as it would have had the kernel interrupted it: one
 * sent while it ran is still on its way here (in the kernel's queue, for
 * the catcher), and once it has gone, with no other thread accepting the
 * signal, the sender's next wait for the handler (a sem_post) would last
 * for ever.
 */
void
ult__dropin_sig_drain(struct dp_thread *dp)
{
	struct ult_thread *ut = ult__self_ut();
	uint64_t open;
	struct timespec zero = {0, 0};
	sigset_t set;
	siginfo_t si;
	long sig;

	if (ut == NULL)
		return;
	open = ~ut->sigmask & ~dp->sig_urg & ~ULT_SIGMASK_KEEP &
	    ~(1ull << (SIGURG - 1)) & ~(1ull << (SIGKILL - 1)) &
	    ~(1ull << (SIGSTOP - 1));
	sigemptyset(&set);
	for (int i = 0; i < 64; i++)
		if (open & (1ull << i))
			sigaddset(&set, i + 1);
	while ((sig = syscall(SYS_rt_sigtimedwait, &set, &si, &zero,
		    (size_t)8)) > 0) {
		struct dp_siginfo info = {.code = si.si_code,
		    .pid = si.si_pid,
		    .uid = si.si_uid,
		    .value = si.si_value};

		ult__dropin_queue_info(dp, (int)sig, &info);
		ult__dropin_signals(dp);
	}
	ult__dropin_signals(dp);
}

void
ult__dropin_sig_live(struct dp_thread *dp, uint64_t mask, int live)
{
	uint64_t left = 0;
	int nleft[64] = {0};

	if (live) { /* a reused record: nothing queued yet */
		dp->rtq_n = 0;
		dp->rt_busy = 0;
	}
	sc_lock();
	count(sc.blocked, mask, live ? 1 : -1);
	sc.nlive += live ? 1 : -1;
	if (live) {
		dp->sig_counted = mask;
		dp->next_live = sc.list;
		dp->prev_live = NULL;
		if (sc.list != NULL)
			sc.list->prev_live = dp;
		sc.list = dp;
		if (dp->is_main)
			sc.main = dp;
	} else {
		if (dp->prev_live != NULL)
			dp->prev_live->next_live = dp->next_live;
		else
			sc.list = dp->next_live;
		if (dp->next_live != NULL)
			dp->next_live->prev_live = dp->prev_live;
		if (sc.main == dp)
			sc.main = NULL;
		/* Cancelled in sigwait or sigsuspend. */
		count(sc.waiting, dp->sigwait_set, -1);
		if (dp->sigwait_set != 0)
			ULT_PSUB_FETCH(&sc.nwaiters, 1);
		dp->sigwait_set = 0;
	}
	sc_unlock();
	if (live)
		return;
	if (dp == ult__dropin_self()) {
		uint64_t all = ~(uint64_t)0;
		unsigned i = 0;

		/* Off the list, it is chosen for no more process signals.
		 * One the catcher read before the thread's drain is now
		 * queued on it or, with no other taker, back in the kernel:
		 * once the catcher has placed it, the thread takes it as the
		 * kernel would have before the thread ended. */
		ULT_FENCE(); /* the set's change before the look */
		while (ULT_PLD_SC(&sc.reading))
			ult__dropin_backoff(&i);
		ult__dropin_sig_drain(dp);
		/* An ending thread takes no more signals: one its worker
		 * took now would be queued on it and lost. */
		ult__sigmask_set(SIG_SETMASK, &all, NULL);
	}
	/* Queued on it and not taken (blocked): the process gets them
	 * back, for another thread, each instance of a realtime one. */
	left = ULT_PLD_ACQ(&dp->sig_pending);
	for (int i = 0; i < 64; i++) {
		if (!(left & (1ull << i)))
			continue;
		while (ult__dropin_unqueue(dp, 1ull << i)) {
			nleft[i]++;
			ult__dropin_rt_next(dp, i + 1);
		}
	}
	for (int i = 0; i < 64; i++)
		while (nleft[i]-- > 0)
			kill(getpid(), i + 1);
}

/* The caller's counted mask moves from old to new. */
static void
sig_mask_moved(uint64_t old, uint64_t new)
{
	struct dp_thread *dp = ult__dropin_self();

	if (old == new)
		return;
	sc_lock();
	count(sc.blocked, old, -1);
	count(sc.blocked, new, 1);
	if (dp != NULL)
		dp->sig_counted = (dp->sig_counted & ~old) | new;
	sc_unlock();
}

void
ult__dropin_mask_counted(uint64_t old, uint64_t new)
{
	sig_mask_moved(old, new);
}

/* A default action that ends or stops the process (not one that
 * ignores, nor continues). */
static int
dfl_acts(int sig)
{
	return (sig != SIGCHLD && sig != SIGURG && sig != SIGWINCH &&
	    sig != SIGCONT);
}

static int
handled(const struct sigaction *sa)
{
	return ((sa->sa_flags & SA_SIGINFO) ||
	    (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN));
}

/* 1 if the signal went back to pending. */
static int
catch_one(const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	uint64_t bit = 1ull << (sig - 1);
	struct dp_thread *to = NULL;
	struct dp_siginfo info;
	struct sigaction sa;

	if (sig < 1 || sig > 64)
		return (0);
	info.code = si->ssi_code;
	info.pid = (pid_t)si->ssi_pid;
	info.uid = (uid_t)si->ssi_uid;
	info.value.sival_ptr = (void *)(uintptr_t)si->ssi_ptr;
	ult__dropin_action(sig, &sa);
	sc_lock();
	to = taker(sig, 1);
	/* Queued for a waiter or a handler; a default action or an ignored
	 * signal is the process's business, below. */
	if (to != NULL && ((to->sigwait_set & bit) || handled(&sa)))
		ult__dropin_queue_info(to, sig, &info);
	else
		to = NULL;
	sc_unlock();
	if (to != NULL) {
		ult__dropin_sig_kick(to);
		return (0);
	}
	/* Taken for a waiter that has gone, and blocked by every thread:
	 * pending again, for the next sigwait or unblocking. */
	if (!(ULT_PLD(&sc.accepted) & bit)) {
		siginfo_t k;

		/* With its siginfo (this is the leader, which the kernel
		 * lets requeue any), behind instances sent since. */
		memset(&k, 0, sizeof(k));
		k.si_signo = sig;
		k.si_code = info.code;
		k.si_pid = info.pid;
		k.si_uid = info.uid;
		k.si_value = info.value;
		if (syscall(SYS_rt_sigqueueinfo, getpid(), sig, &k) != 0)
			kill(getpid(), sig);
		return (1);
	}
	if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL &&
	    dfl_acts(sig)) {
		/* This thread takes it: the process ends or stops. */
		uint64_t m = ult__os_sigmask_get() & ~bit;

		ult__os_sigmask(m);
		raise(sig);
		ult__os_block_async_signals();
	}
	return (0);
}

/* What the catcher takes: every signal some live uthread accepts or
 * waits for.  Checked again before each read, so that one sent after a
 * thread blocked it (and now belongs to the process, in order) is left
 * in the kernel. */
static uint64_t
catch_set(void)
{
	return ((ULT_PLD_ACQ(&sc.accepted) | ULT_PLD_ACQ(&sc.waited)) &
	    ~ULT_SIGMASK_KEEP & ~(1ull << (SIGURG - 1)));
}

void
ult__dropin_catch_signals(void)
{
	uint64_t acc = ~(uint64_t)0, v;
	int sfd = -1;

	sc.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	for (;;) {
		struct pollfd p[2];
		uint64_t want = catch_set();

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
		if (ult__libc_poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents & POLLIN)
			while (read(sc.efd, &v, sizeof(v)) > 0)
				;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			/* One sent back to pending would be read again at
			 * once: the set is brought up to date first. */
			/* reading, then the set: an ending thread changes the
			 * set, then waits while reading (sig_live). */
			for (;;) {
				int stop;

				ULT_PST_SC(&sc.reading, 1);
				stop = catch_set() != acc ||
				    read(sfd, &si, sizeof(si)) != sizeof(si) ||
				    catch_one(&si);
				ULT_PST_REL(&sc.reading, 0);
				if (stop)
					break;
			}
		}
	}
}

/*
 * A signal for the caller runs its handler before pthread_kill returns;
 * one whose action is the default acts at once (on the process); one
 * for another uthread is queued on it, which runs the handler at its next
 * call into the drop-in, or, blocked in one, is woken for it, or, running,
 * takes it at its next preemption safe point.
 */
static int
thread_send(pthread_t t, int sig, const union sigval *value)
{
	struct dp_thread *dp;
	struct sigaction sa;

	ult__dropin_up();
	dp = ult__dropin_of(t);

	if (sig < 0 || sig > 64)
		return (EINVAL);
	if (dp == NULL && value != NULL)
		return (ult__dropin_dead(t)
			? ESRCH
			: ULT__DROPIN_LIBC(pthread_sigqueue,
			      int (*)(pthread_t, int, union sigval))(t, sig,
			      *value));
	if (dp == NULL)
		return (ult__dropin_dead(t) ? ESRCH : real_kill(t, sig));
	if (sig == 0)
		return (0);
	ult__dropin_action(sig, &sa);
	if (!(sa.sa_flags & SA_SIGINFO)) {
		ult_thread_t *u = ULT_PLD_ACQ(&dp->ut);
		int blocked = u != NULL && (u->sigmask & (1ull << (sig - 1)));

		/* Blocked, it stays pending for sigwait, as in the kernel. */
		if (sa.sa_handler == SIG_IGN && !blocked)
			return (0);
		/* A default action acts on the process: sent to it, the
		 * catcher or a worker takes the action. */
		if (sa.sa_handler == SIG_DFL && !blocked)
			return (dfl_acts(sig) ? kill(getpid(), sig) : 0);
	}
	if (value != NULL) {
		struct dp_siginfo si = {SI_QUEUE, getpid(), getuid(), *value};

		ult__dropin_queue_info(dp, sig, &si);
	} else {
		/* A realtime one's earlier instances keep theirs. */
		if (!is_rt(sig))
			ULT_PFETCH_AND(&dp->sig_hasinfo, ~(1ull << (sig - 1)));
		ult__dropin_queue(dp, sig);
	}
	if (dp == ult__dropin_self())
		ult__dropin_signals(dp);
	else
		ult__dropin_sig_kick(dp);
	return (0);
}

int
pthread_kill(pthread_t t, int sig)
{
	return (thread_send(t, sig, NULL));
}

/* glibc's sends to a kernel thread id, a worker's: a uthread's queue. */
int
pthread_sigqueue(pthread_t t, int sig, const union sigval value)
{
	return (thread_send(t, sig, &value));
}

uint64_t
ult__dropin_setmask(uint64_t m)
{
	uint64_t o;

	ult__sigmask_set(SIG_SETMASK, &m, &o);
	sig_mask_moved(o, ult__self_ut()->sigmask);
	return (o);
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

	struct dp_thread *dp;

	ult__dropin_up();
	if ((dp = ult__dropin_self()) == NULL)
		return (((int (*)(int, const sigset_t *,
		    sigset_t *))ult__dropin_next(name, slot))(how, set, old));
	if (set != NULL && how != SIG_BLOCK && how != SIG_UNBLOCK &&
	    how != SIG_SETMASK)
		return (EINVAL);
	if (set != NULL)
		memcpy(&s, set, sizeof(s));
	ult__sigmask_set(how, set != NULL ? &s : NULL, &o);
	sig_mask_moved(o, ult__self_ut()->sigmask);
	/* The runtime never blocks SIGURG, its preemption's signal; the
	 * program may, and sees it blocked (its own SIGURG waits). */
	o |= dp->sig_urg;
	if (set != NULL) {
		uint64_t urg = 1ull << (SIGURG - 1);

		if (how == SIG_BLOCK)
			dp->sig_urg |= s & urg;
		else if (how == SIG_UNBLOCK)
			dp->sig_urg &= ~(s & urg);
		else
			dp->sig_urg = s & urg;
	}
	if (old != NULL) {
		sigemptyset(old);
		memcpy(old, &o, sizeof(o));
	}
	/* Unblocked now: what was queued for this thread. */
	ult__dropin_signals(dp);
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
