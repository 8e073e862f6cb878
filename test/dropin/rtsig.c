/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Realtime signals queue every instance with its value, delivered in the
 * order sent: to the process with sigqueue, to a thread with pthread_kill
 * and pthread_sigqueue; taken by sigwaitinfo or by a handler once
 * unblocked.  sigwaitinfo reports a
 * raise's or a pthread_kill's as SI_USER, as glibc's does.
 */
#include "conf.h"

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

static sigset_t
one(int sig)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, sig);
	return (s);
}

static int
pending(int sig)
{
	sigset_t p;

	sigpending(&p);
	return (sigismember(&p, sig));
}

static void
check_pthread_kill_self(void)
{
	sigset_t s = one(SIGRTMIN);
	siginfo_t si;
	char what[64];

	printf("pthread_kill to itself, three times, blocked:\n");
	conf_must("block", pthread_sigmask(SIG_BLOCK, &s, NULL));
	for (int i = 0; i < 3; i++)
		conf_must("pthread_kill",
		    pthread_kill(pthread_self(), SIGRTMIN));
	for (int i = 0; i < 3; i++) {
		snprintf(what, sizeof(what), "pending before take %d", i + 1);
		conf_long(what, pending(SIGRTMIN), 1);
		conf_long("sigwaitinfo", sigwaitinfo(&s, &si) - SIGRTMIN, 0);
		/* glibc's sigwaitinfo says SI_USER for the kernel's
		 * SI_TKILL. */
		conf_ok("si_code SI_USER", si.si_code == SI_USER);
	}
	conf_long("pending after the third", pending(SIGRTMIN), 0);
	conf_must("unblock", pthread_sigmask(SIG_UNBLOCK, &s, NULL));
}

static void
check_sigqueue_process(void)
{
	sigset_t s = one(SIGRTMIN + 1);
	siginfo_t si;
	int order = 1;

	printf("sigqueue to the process, five values, blocked:\n");
	conf_must("block", pthread_sigmask(SIG_BLOCK, &s, NULL));
	for (int i = 1; i <= 5; i++)
		conf_err("sigqueue",
		    conf_rc_errno(sigqueue(getpid(), SIGRTMIN + 1,
			(union sigval){.sival_int = i})),
		    0);
	for (int i = 1; i <= 5; i++) {
		if (sigwaitinfo(&s, &si) != SIGRTMIN + 1 ||
		    si.si_value.sival_int != i || si.si_code != SI_QUEUE)
			order = 0;
	}
	conf_ok("taken in order, each with its value, SI_QUEUE", order);
	conf_long("none left", pending(SIGRTMIN + 1), 0);
	conf_must("unblock", pthread_sigmask(SIG_UNBLOCK, &s, NULL));
}

/* pthread_sigqueue to a thread that blocks the signal, then waits. */
static atomic_int blocked_ready, sent;
static int got[5], got_code_ok = 1;

static void *
waiter(void *arg)
{
	sigset_t s = one(SIGRTMIN + 2);
	siginfo_t si;

	(void)arg;
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	atomic_store(&blocked_ready, 1);
	while (!atomic_load(&sent))
		conf_msleep(1);
	for (int i = 0; i < 5; i++) {
		if (sigwaitinfo(&s, &si) != SIGRTMIN + 2)
			return (NULL);
		got[i] = si.si_value.sival_int;
		if (si.si_code != SI_QUEUE)
			got_code_ok = 0;
	}
	return (NULL);
}

static void
check_pthread_sigqueue(void)
{
	pthread_t t;
	int order = 1;

	printf("pthread_sigqueue to a thread, five values, blocked:\n");
	conf_create(&t, NULL, waiter, NULL);
	while (!atomic_load(&blocked_ready))
		conf_msleep(1);
	for (int i = 0; i < 5; i++)
		conf_err("pthread_sigqueue",
		    pthread_sigqueue(t, SIGRTMIN + 2,
			(union sigval){.sival_int = 10 + i}),
		    0);
	atomic_store(&sent, 1);
	conf_join(t);
	for (int i = 0; i < 5; i++)
		if (got[i] != 10 + i)
			order = 0;
	conf_ok("taken in order, each with its value", order);
	conf_ok("si_code SI_QUEUE", got_code_ok);
}

/* Handlers, once unblocked: the lower signal's instances first. */
static int log_sig[16], log_val[16];
static atomic_int nlog;

static void
on_rt(int sig, siginfo_t *si, void *uc)
{
	int n = atomic_fetch_add(&nlog, 1);

	(void)uc;
	if (n < 16) {
		log_sig[n] = sig - SIGRTMIN;
		log_val[n] = si->si_value.sival_int;
	}
}

static void
check_handlers(void)
{
	struct sigaction sa;
	sigset_t s;
	char line[160];

	printf("handlers, two signals queued twice each, then unblocked:\n");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	conf_must("sigaction", sigaction(SIGRTMIN + 4, &sa, NULL));
	conf_must("sigaction", sigaction(SIGRTMIN + 5, &sa, NULL));
	sigemptyset(&s);
	sigaddset(&s, SIGRTMIN + 4);
	sigaddset(&s, SIGRTMIN + 5);
	conf_must("block", pthread_sigmask(SIG_BLOCK, &s, NULL));
	pthread_sigqueue(pthread_self(), SIGRTMIN + 5,
	    (union sigval){.sival_int = 1});
	pthread_sigqueue(pthread_self(), SIGRTMIN + 4,
	    (union sigval){.sival_int = 2});
	pthread_sigqueue(pthread_self(), SIGRTMIN + 5,
	    (union sigval){.sival_int = 3});
	pthread_sigqueue(pthread_self(), SIGRTMIN + 4,
	    (union sigval){.sival_int = 4});
	conf_long("no handler yet", atomic_load(&nlog), 0);
	conf_must("unblock", pthread_sigmask(SIG_UNBLOCK, &s, NULL));
	conf_long("handlers run", atomic_load(&nlog), 4);
	/* Each signal's instances in the order sent.  (Which of the two
	 * signals runs first is the kernel's frame stacking: not asked.) */
	for (int sig = 4; sig <= 5; sig++) {
		int len = 0;

		for (int i = 0; i < atomic_load(&nlog) && i < 16; i++)
			if (log_sig[i] == sig)
				len += snprintf(line + len, sizeof(line) - len,
				    " %d", log_val[i]);
		printf("SIGRTMIN+%d values:%s\n", sig, line);
	}
}

int
main(void)
{
	conf_begin("rtsig");
	check_pthread_kill_self();
	check_sigqueue_process();
	check_pthread_sigqueue();
	check_handlers();
	return (conf_end());
}
