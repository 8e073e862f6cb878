/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stack overflow reporting.  A uthread that runs into its guard faults;
 * the kernel cannot push a signal frame on the exhausted stack, so every
 * worker has an alternate signal stack and the SIGSEGV/SIGBUS handler runs
 * there.  If the fault address is in the running uthread's guard it names
 * the uthread and aborts; any other fault goes to the handler that was
 * installed before ult_init (or the default action).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "stack.h"
#include "signals.h"
#include "sigmask.h"
#include "subsys.h"
#include "../os/linux/os.h"

#define ALTSTACK_SIZE ULT__ALTSTACK_SIZE
#define SCRATCH_SIZE (32u * 1024)
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1u << 31) /* Linux's; glibc names it for _GNU_SOURCE */
#endif

static struct sigaction old_segv, old_bus;
static int installed;

static size_t
fmt_u64(char *p, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		p[i++] = tmp[--n];
	return (i);
}

static void
report(struct ult_thread *ut)
{
	char msg[128];
	size_t n = 0, l;
	const char *name = ut->name[0] ? ut->name : "(unnamed)";

	l = strlen("ult: stack overflow in uthread ");
	memcpy(msg, "ult: stack overflow in uthread ", l);
	n += l;
	l = strnlen(name, sizeof(ut->name));
	memcpy(msg + n, name, l);
	n += l;
	msg[n++] = ' ';
	msg[n++] = '(';
	n += fmt_u64(msg + n, ut->id);
	msg[n++] = ')';
	msg[n++] = '\n';
	if (write(STDERR_FILENO, msg, n) < 0)
		_exit(134);
}

static void
fault(int sig, siginfo_t *si, void *uc)
{
	struct ult__worker *w = ult__tls_worker;
	struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;

	if (w != NULL && w->curthread != &w->idle &&
	    w->curthread->stack != NULL) {
		struct ult__stack *s = w->curthread->stack;
		char *a = si->si_addr, *lo = s->base;

		if (a >= lo && a < lo + s->guard) {
			report(w->curthread);
			signal(SIGABRT, SIG_DFL);
			abort();
		}
	}
	/* Not ours: let the previous disposition have it. */
	if (!ult__sig_chain(old, sig, si, uc))
		signal(sig, SIG_DFL);
}

int
ult__sig_chain(const struct sigaction *old, int sig, siginfo_t *si, void *uc)
{
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction == NULL)
			return (0);
		old->sa_sigaction(sig, si, uc);
		return (1);
	}
	if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN)
		return (0);
	old->sa_handler(sig);
	return (1);
}

int
ult__signals_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old_segv) != 0 ||
	    sigaction(SIGBUS, &sa, &old_bus) != 0)
		return (errno);
	installed = 1;
	return (0);
}

void
ult__signals_fini(void)
{
	if (!installed)
		return;
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	installed = 0;
}

/*
 * One mapping per worker holds its alternate signal stack and, above it,
 * the scratch stack the switch path runs on between two contexts.
 */
int
ult__altstack_setup(struct ult__worker *w)
{
	w->altstack = ult__os_map(ALTSTACK_SIZE + SCRATCH_SIZE, 0);
	if (w->altstack == NULL)
		return (ENOMEM);
	w->scratch_top = (char *)w->altstack + ALTSTACK_SIZE + SCRATCH_SIZE;
	return (0);
}

/* On the worker itself: use the alternate stack for fault signals. */
int
ult__altstack_install(struct ult__worker *w)
{
	stack_t ss;

	ss.ss_sp = w->altstack;
	ss.ss_size = ALTSTACK_SIZE;
	ss.ss_flags = 0;
	return (ult__os_sigaltstack(&ss, NULL) == 0 ? 0 : errno);
}

void
ult__altstack_uninstall(void)
{
	stack_t ss;

	memset(&ss, 0, sizeof(ss));
	ss.ss_flags = SS_DISABLE;
	ult__os_sigaltstack(&ss, NULL);
}

/*
 * The alternate signal stack is per kernel thread: a uthread's would
 * replace its worker's, which the overflow report above runs on (a
 * library that sets one up and disables it again would leave the worker
 * with none, and the next overflow on that worker a silent SIGSEGV), and
 * one a uthread frees at its end would be left to its worker.  So in a
 * uthread sigaltstack keeps what it was told for that uthread and gives
 * it back; the kernel keeps the worker's, where the program's SA_ONSTACK
 * handlers run too.  Weak, as the lock wrappers (preempt_shim.c), so that
 * a program's calls reach it; the drop-in has its own (sigact.c).  Not in
 * sanitizer builds: the sanitizers call it as they start, before
 * instrumented code may run, and keep their own per thread.
 */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
__attribute__((weak)) int
sigaltstack(const stack_t *ss, stack_t *old)
{
	struct ult_thread *ut = ult__self_ut();

	if (ut == NULL)
		return (ult__os_sigaltstack(ss, old));
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
		*old = ut->altstack;
		if (old->ss_sp == NULL && old->ss_size == 0)
			old->ss_flags = SS_DISABLE;
	}
	if (ss != NULL) {
		if (ss->ss_flags & SS_DISABLE)
			memset(&ut->altstack, 0, sizeof(ut->altstack));
		else
			ut->altstack = *ss;
	}
	return (0);
}
#endif

void
ult__altstack_teardown(struct ult__worker *w)
{
	if (w->altstack == NULL)
		return;
	munmap(w->altstack, ALTSTACK_SIZE + SCRATCH_SIZE);
	w->altstack = NULL;
}

void
ult__sigmask_set(int how, const uint64_t *set, uint64_t *old)
{
	/* Never blocked: preemption's signal, glibc's SIGCANCEL and SIGSETXID
	 * (32 and 33, which its own pthread_sigmask refuses too), and the two
	 * the kernel refuses anyway. */
	const uint64_t keep = 1ull << (SIGURG - 1) | 1ull << 31 | 1ull << 32 |
	    1ull << (SIGKILL - 1) | 1ull << (SIGSTOP - 1);
	struct ult_thread *ut = ult__self_ut();
	struct ult__worker *w = ult__worker_self();
	uint64_t m;

	if (ut == NULL || w == NULL)
		return;
	m = ut->sigmask;
	if (old != NULL)
		*old = m;
	if (set == NULL)
		return;
	if (how == SIG_BLOCK)
		m |= *set;
	else if (how == SIG_UNBLOCK)
		m &= ~*set;
	else
		m = *set;
	ut->sigmask = m & ~keep;
	w->sigmask = ut->sigmask;
	ult__os_sigmask(ut->sigmask);
}

const struct ult__subsys ult__signals_subsys = {.name = "signals",
    .init = ult__signals_init,
    .fini = ult__signals_fini,
    .fork_child = ult__signals_fini};
