/*
 * Signals in the drop-in (DESIGN.md section 14): masks per uthread, and
 * pthread_kill to a uthread.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "core/runtime.h"
#include "dropin.h"

static int
real_kill(pthread_t t, int sig)
{
	static void *_Atomic slot;

	return (((int (*)(pthread_t, int))ult__dropin_next("pthread_kill",
	    &slot))(t, sig));
}

static pthread_t
worker_self(void)
{
	static void *_Atomic slot;

	return (
	    ((pthread_t(*)(void))ult__dropin_next("pthread_self", &slot))());
}

/* Signals queued by pthread_kill for dp, raised on its current worker,
 * where the handler runs on the uthread's own block. */
void
ult__dropin_signals(struct dp_thread *dp)
{
	uint64_t bits =
	    __atomic_exchange_n(&dp->sig_pending, 0, __ATOMIC_ACQ_REL);

	for (int sig = 1; bits != 0; sig++, bits >>= 1)
		if (bits & 1)
			real_kill(worker_self(), sig);
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
	if (dp == ult__dropin_self())
		return (real_kill(worker_self(), sig));
	if (sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
	    sa.sa_handler == SIG_IGN)
		return (0);
	if (sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
	    sa.sa_handler == SIG_DFL)
		return (real_kill(worker_self(), sig));
	__atomic_fetch_or(&dp->sig_pending, 1ull << (sig - 1),
	    __ATOMIC_RELEASE);
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
	if (old != NULL) {
		sigemptyset(old);
		memcpy(old, &o, sizeof(o));
	}
	/* Unblocked now: what pthread_kill queued for this thread. */
	ult__dropin_point();
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
