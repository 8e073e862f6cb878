/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * System V's signal calls.  glibc builds them on its internal
 * sigprocmask and sigaction, which the drop-in does not see: sighold
 * blocked the signal in the worker alone, so the uthread's mask (which
 * raise, sigwait and delivery go by) still let it through, and a
 * sigwaitinfo after sighold and raise waited for ever.  Here they go
 * through the interposed calls.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "dropin.h"

static int
one(int sig, sigset_t *s)
{
	sigemptyset(s);
	return (sigaddset(s, sig));
}

int
sighold(int sig)
{
	sigset_t s;

	if (one(sig, &s) != 0)
		return (-1);
	return (sigprocmask(SIG_BLOCK, &s, NULL));
}

int
sigrelse(int sig)
{
	sigset_t s;

	if (one(sig, &s) != 0)
		return (-1);
	return (sigprocmask(SIG_UNBLOCK, &s, NULL));
}

int
sigignore(int sig)
{
	struct sigaction a;

	memset(&a, 0, sizeof(a));
	a.sa_handler = SIG_IGN;
	sigemptyset(&a.sa_mask);
	return (sigaction(sig, &a, NULL));
}

/* SIG_HOLD blocks sig; any other disposition is installed and unblocks
 * it.  The answer: SIG_HOLD if sig was blocked, else its disposition. */
__sighandler_t
sigset(int sig, __sighandler_t disp)
{
	struct sigaction a, o;
	sigset_t s, old;

	if (one(sig, &s) != 0)
		return (SIG_ERR);
	if (disp == SIG_HOLD) {
		if (sigaction(sig, NULL, &o) != 0 ||
		    sigprocmask(SIG_BLOCK, &s, &old) != 0)
			return (SIG_ERR);
	} else {
		memset(&a, 0, sizeof(a));
		a.sa_handler = disp;
		sigemptyset(&a.sa_mask);
		if (sigaction(sig, &a, &o) != 0 ||
		    sigprocmask(SIG_UNBLOCK, &s, &old) != 0)
			return (SIG_ERR);
	}
	return (sigismember(&old, sig) == 1 ? SIG_HOLD : o.sa_handler);
}
