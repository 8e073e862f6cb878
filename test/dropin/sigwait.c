/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Waiting for signals: sigwait takes a signal pthread_kill'ed to the
 * waiting thread, sigwaitinfo one sent to the process (every thread
 * blocks both), sigtimedwait one pending for the process and EAGAIN when
 * none comes in time; sigpending shows what is pending for the thread
 * and for the process; sigsuspend returns -1/EINTR once the handler of the
 * signal it opens has run, and so do ppoll and pselect given a mask that
 * opens it; pause returns -1/EINTR after a handler.  Threads waiting in
 * sigwait, more of them than ult-run's workers, leave the others room to
 * run.  The handler and sigwaitinfo see the sender's siginfo (si_code,
 * si_pid, sigqueue's value).  Each
 * waiter is a thread other than main while main and others go on.
 * System V's sighold, sigrelse and sigset(SIG_HOLD) move the thread's
 * mask as sigprocmask does: a raise after sighold waits for sigwaitinfo.
 */
#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <stdatomic.h>
#include <unistd.h>

#include "conf.h"

static atomic_int got_usr2, got_usr1, done;
static int waited_sig, waited_info;
static pthread_t target;

static void
on_usr2(int sig)
{
	(void)sig;
	atomic_fetch_add(&got_usr2, 1);
}

static void
on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&got_usr1, 1);
}

static void *
sigwaiter(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	if (sigwait(&s, &waited_sig) != 0)
		waited_sig = -1;
	return (NULL);
}

#define NWAITERS 5
static atomic_int many_got, pingpong;

static void *
many_waiter(void *arg)
{
	sigset_t s;
	int sig;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	if (sigwait(&s, &sig) == 0 && sig == SIGUSR1)
		atomic_fetch_add(&many_got, 1);
	return (NULL);
}

/* Needs a worker while the sigwaits wait: yields until main has seen
 * a thousand of its turns. */
static void *
ponger(void *arg)
{
	(void)arg;
	while (atomic_load(&pingpong) < 1000) {
		if (atomic_load(&pingpong) % 2 == 1)
			atomic_fetch_add(&pingpong, 1);
		sched_yield();
	}
	return (NULL);
}

static void *
infowaiter(void *arg)
{
	sigset_t s;
	siginfo_t si;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	waited_info = sigwaitinfo(&s, &si) == SIGUSR2 &&
	    si.si_signo == SIGUSR2 && si.si_code == SI_USER &&
	    si.si_pid == getpid();
	return (NULL);
}

/* Something else runs meanwhile. */
static void *
spinner(void *arg)
{
	(void)arg;
	while (!atomic_load(&done))
		sched_yield();
	return (NULL);
}

static void *
sender(void *arg)
{
	(void)arg;
	usleep(20000);
	kill(getpid(), SIGUSR2);
	return (NULL);
}

static atomic_int info_ok;

static void
on_usr2_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	atomic_store(&info_ok,
	    sig == SIGUSR2 && si->si_code == SI_QUEUE &&
		si->si_pid == getpid() && si->si_value.sival_int == 42);
}

static void *
queuer(void *arg)
{
	union sigval v = {.sival_int = 42};

	(void)arg;
	usleep(20000);
	sigqueue(getpid(), SIGUSR2, v);
	return (NULL);
}

static void *
pauser_killer(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		pthread_kill(target, SIGUSR1);
		usleep(2000);
	}
	return (NULL);
}

/* System V's calls, which glibc marks deprecated. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void
check_sysv(void)
{
	sigset_t s, cur;
	siginfo_t si;
	int before;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	conf_err("sighold", sighold(SIGUSR2) == 0 ? 0 : errno, 0);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	conf_ok("sighold: blocked in the mask", sigismember(&cur, SIGUSR2));
	conf_err("raise while held", raise(SIGUSR2), 0);
	conf_long("sigwaitinfo after sighold and raise", sigwaitinfo(&s, &si),
	    SIGUSR2);
	conf_err("sigrelse", sigrelse(SIGUSR2) == 0 ? 0 : errno, 0);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	conf_ok("sigrelse: open again", !sigismember(&cur, SIGUSR2));
	conf_ok("sigset(SIG_HOLD) of an open signal: its handler",
	    sigset(SIGUSR1, SIG_HOLD) == on_usr1);
	before = atomic_load(&got_usr1);
	raise(SIGUSR1);
	conf_long("held: the handler waits", atomic_load(&got_usr1) - before,
	    0);
	conf_ok("sigset again: SIG_HOLD, as it was held",
	    sigset(SIGUSR1, on_usr1) == SIG_HOLD);
	conf_long("released: the handler ran", atomic_load(&got_usr1) - before,
	    1);
}
#pragma GCC diagnostic pop

int
main(void)
{
	sigset_t both, s, none;
	struct sigaction sa;
	struct timespec ts = {0, 20000000};
	siginfo_t si;
	pthread_t t, sp;
	int r;

	conf_begin("sigwait");
	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGUSR2);
	conf_must("pthread_sigmask", pthread_sigmask(SIG_BLOCK, &both, NULL));
	conf_create(&sp, NULL, spinner, NULL);

	conf_create(&t, NULL, sigwaiter, NULL);
	usleep(10000);
	conf_must("pthread_kill", pthread_kill(t, SIGUSR1));
	conf_join(t);
	conf_long("sigwait got the pthread_kill'ed SIGUSR1",
	    waited_sig == SIGUSR1, 1);

	{
		pthread_t mw[NWAITERS], pt;

		for (int i = 0; i < NWAITERS; i++)
			conf_create(&mw[i], NULL, many_waiter, NULL);
		conf_create(&pt, NULL, ponger, NULL);
		while (atomic_load(&pingpong) < 1000) {
			if (atomic_load(&pingpong) % 2 == 0)
				atomic_fetch_add(&pingpong, 1);
			sched_yield();
		}
		conf_join(pt);
		for (int i = 0; i < NWAITERS; i++)
			conf_must("pthread_kill", pthread_kill(mw[i], SIGUSR1));
		for (int i = 0; i < NWAITERS; i++)
			conf_join(mw[i]);
		conf_long("five sigwaits, each got its signal",
		    atomic_load(&many_got), NWAITERS);
	}

	conf_create(&t, NULL, infowaiter, NULL);
	usleep(10000);
	conf_must("kill", kill(getpid(), SIGUSR2));
	conf_join(t);
	conf_long("sigwaitinfo got the process's SIGUSR2", waited_info, 1);

	/* Pending: one for this thread, one for the process. */
	conf_must("pthread_kill", pthread_kill(pthread_self(), SIGUSR1));
	conf_must("kill", kill(getpid(), SIGUSR2));
	conf_must("sigpending", sigpending(&s));
	conf_long("sigpending: SIGUSR1 and SIGUSR2",
	    sigismember(&s, SIGUSR1) && sigismember(&s, SIGUSR2), 1);
	conf_must("sigwait", sigwait(&both, &r));
	conf_must("sigwait", sigwait(&both, &r));
	conf_must("sigpending", sigpending(&s));
	conf_long("sigpending after two sigwaits: neither",
	    sigismember(&s, SIGUSR1) || sigismember(&s, SIGUSR2), 0);

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	r = sigtimedwait(&s, &si, &ts);
	conf_err("sigtimedwait(20 ms), none sent", r == -1 ? errno : r, EAGAIN);
	conf_must("kill", kill(getpid(), SIGUSR1));
	r = sigtimedwait(&s, &si, &ts);
	conf_long("sigtimedwait, one pending", r, SIGUSR1);

	/* sigsuspend with SIGUSR2 open; every thread blocks it, so the
	 * sender's signal waits for the suspend, whenever it comes. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigemptyset(&sa.sa_mask);
	conf_must("sigaction", sigaction(SIGUSR2, &sa, NULL));
	conf_create(&t, NULL, sender, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &none);
	sigdelset(&none, SIGUSR2);
	r = sigsuspend(&none);
	conf_err("sigsuspend", r == -1 ? errno : r, EINTR);
	conf_long("sigsuspend: the handler ran once", atomic_load(&got_usr2),
	    1);
	pthread_sigmask(SIG_BLOCK, NULL, &s);
	conf_long("sigsuspend: the mask is back", sigismember(&s, SIGUSR2), 1);
	conf_join(t);

	/* ppoll and pselect with a mask that opens SIGUSR2, which every
	 * thread blocks until then. */
	for (int i = 0; i < 2; i++) {
		struct timespec far = {100, 0};
		struct pollfd p;
		fd_set rs;
		int fds[2];

		conf_must("pipe", pipe(fds));
		atomic_store(&got_usr2, 0);
		conf_create(&t, NULL, sender, NULL);
		if (i == 0) {
			p.fd = fds[0];
			p.events = POLLIN;
			r = ppoll(&p, 1, &far, &none);
		} else {
			FD_ZERO(&rs);
			FD_SET(fds[0], &rs);
			r = pselect(fds[0] + 1, &rs, NULL, NULL, &far, &none);
		}
		conf_err(i == 0 ? "ppoll with a mask" : "pselect with a mask",
		    r == -1 ? errno : r, EINTR);
		conf_long("... the handler ran once", atomic_load(&got_usr2),
		    1);
		pthread_sigmask(SIG_BLOCK, NULL, &s);
		conf_long("... the mask is back", sigismember(&s, SIGUSR2), 1);
		conf_join(t);
		close(fds[0]);
		close(fds[1]);
	}

	/* A SA_SIGINFO handler gets sigqueue's siginfo. */
	sa.sa_handler = NULL;
	sa.sa_sigaction = on_usr2_info;
	sa.sa_flags = SA_SIGINFO;
	conf_must("sigaction", sigaction(SIGUSR2, &sa, NULL));
	conf_create(&t, NULL, queuer, NULL);
	r = sigsuspend(&none);
	conf_err("sigsuspend for a sigqueue", r == -1 ? errno : r, EINTR);
	conf_long("... the handler saw SI_QUEUE, the pid and the value",
	    atomic_load(&info_ok), 1);
	conf_join(t);
	sa.sa_flags = 0;

	/* pause with SIGUSR1 open in main alone. */
	sa.sa_handler = on_usr1;
	conf_must("sigaction", sigaction(SIGUSR1, &sa, NULL));
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	target = pthread_self();
	conf_create(&t, NULL, pauser_killer, NULL);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	r = pause();
	conf_err("pause", r == -1 ? errno : r, EINTR);
	conf_long("pause: a handler ran", atomic_load(&got_usr1) > 0, 1);
	atomic_store(&done, 1);
	conf_join(t);
	conf_join(sp);
	check_sysv();
	return (conf_end());
}
