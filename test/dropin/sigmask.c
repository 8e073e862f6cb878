/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Signal masks are per thread: a new thread starts with its creator's
 * mask; a signal sent to the process runs its handler only in a thread
 * that does not block it, never in one that does (main blocks it here,
 * one thread unblocks it); sigwait takes a signal every thread blocks;
 * pthread_kill reaches the thread named; bad arguments give EINVAL;
 * every signal a thread blocks one by one is in the old set the next
 * block reports, SIGURG too (a thread that blocks it sees it blocked,
 * and pthread_kill's SIGURG waits until it unblocks it).
 */
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "conf.h"

static _Thread_local int accepting;
static atomic_int in_acceptor, elsewhere, stop;
static atomic_int inherited_blocked = -1;

static void
on_usr1(int sig)
{
	(void)sig;
	if (accepting)
		atomic_fetch_add(&in_acceptor, 1);
	else
		atomic_fetch_add(&elsewhere, 1);
}

static void *
acceptor(void *arg)
{
	sigset_t s, cur;

	(void)arg;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	atomic_store(&inherited_blocked, sigismember(&cur, SIGUSR1));
	accepting = 1;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	while (!atomic_load(&stop)) {
		usleep(200);
		sched_yield();
	}
	return (NULL);
}

static void *
bystander(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		usleep(300);
		sched_yield();
	}
	return (NULL);
}

static sem_t term_sem;

static void
on_term(int sig)
{
	(void)sig;
	sem_post(&term_sem);
}

/* Sends SIGTERM to the process once main sleeps in sem_wait: then no
 * thread runs that accepts it. */
static void *
terminator(void *arg)
{
	(void)arg;
	conf_msleep(50);
	kill(getpid(), SIGTERM);
	return (NULL);
}

static void *
waiter(void *arg)
{
	sigset_t *s = arg;
	int sig = 0;

	if (sigwait(s, &sig) != 0)
		return (NULL);
	return ((void *)(intptr_t)sig);
}

/* Until the count moves (or 10 s): signals are not queued, so one at a
 * time. */
static int
await_count(atomic_int *c, int want)
{
	for (int i = 0; i < 10000 && atomic_load(c) < want; i++)
		conf_msleep(1);
	return (atomic_load(c));
}

static const int blockable[] = {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM,
    SIGTERM, SIGCHLD, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGURG, SIGXCPU,
    SIGXFSZ, SIGVTALRM, SIGPROF, SIGWINCH, SIGUSR1, SIGUSR2};
#define NBLOCKABLE (int)(sizeof(blockable) / sizeof(blockable[0]))
static atomic_int urg_ran;

static void
on_urg(int sig)
{
	(void)sig;
	atomic_fetch_add(&urg_ran, 1);
}

/* Blocks them one at a time; the number of old sets that were wrong. */
static void *
one_by_one(void *arg)
{
	sigset_t one, old;
	long wrong = 0;

	(void)arg;
	sigemptyset(&one);
	pthread_sigmask(SIG_SETMASK, &one, NULL);
	for (int i = 0; i < NBLOCKABLE; i++) {
		sigemptyset(&one);
		sigaddset(&one, blockable[i]);
		pthread_sigmask(SIG_BLOCK, &one, &old);
		for (int j = 0; j < NBLOCKABLE; j++)
			if (sigismember(&old, blockable[j]) != (j < i))
				wrong++;
	}
	return ((void *)wrong);
}

static void
check_old_sets(void)
{
	sigset_t s, old;
	pthread_t t;
	int before;

	conf_create(&t, NULL, one_by_one, NULL);
	conf_long("old sets that missed a signal blocked before",
	    (long)conf_join(t), 0);

	signal(SIGURG, on_urg);
	sigemptyset(&s);
	sigaddset(&s, SIGURG);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &old);
	conf_ok("SIGURG blocked, as the mask says",
	    sigismember(&old, SIGURG) == 1);
	before = atomic_load(&urg_ran);
	conf_err("pthread_kill(self, SIGURG)",
	    pthread_kill(pthread_self(), SIGURG), 0);
	conf_long("its handler waits while SIGURG is blocked",
	    atomic_load(&urg_ran) - before, 0);
	pthread_sigmask(SIG_UNBLOCK, &s, &old);
	conf_ok("the old set had SIGURG", sigismember(&old, SIGURG) == 1);
	conf_long("unblocked, the handler ran", atomic_load(&urg_ran) - before,
	    1);
	signal(SIGURG, SIG_DFL);
}

int
main(void)
{
	sigset_t s, cur;
	pthread_t a, b[4], w;
	void *ret = NULL;
	int n;

	conf_begin("sigmask");
	signal(SIGUSR1, on_usr1);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGUSR2);
	conf_err("main blocks USR1 and USR2",
	    pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	conf_ok("main's mask has USR1", sigismember(&cur, SIGUSR1) == 1);
	conf_create(&a, NULL, acceptor, NULL);
	for (int i = 0; i < 4; i++)
		conf_create(&b[i], NULL, bystander, NULL);
	while (atomic_load(&inherited_blocked) < 0)
		conf_msleep(1);
	conf_long("the new thread inherited USR1 blocked",
	    atomic_load(&inherited_blocked), 1);
	conf_msleep(20);
	n = 0;
	for (int i = 1; i <= 20; i++) {
		kill(getpid(), SIGUSR1);
		n = await_count(&in_acceptor, i);
	}
	conf_long("process signals handled by the thread that accepts them", n,
	    20);
	for (int i = 1; i <= 10; i++) {
		pthread_kill(a, SIGUSR1);
		n = await_count(&in_acceptor, 20 + i);
	}
	conf_long("pthread_kill'ed signals handled by it", n, 30);
	conf_long("handled in a thread that blocks USR1",
	    atomic_load(&elsewhere), 0);
	atomic_store(&stop, 1);
	conf_join(a);
	for (int i = 0; i < 4; i++)
		conf_join(b[i]);

	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	conf_create(&w, NULL, waiter, &s);
	conf_msleep(20);
	kill(getpid(), SIGUSR2);
	conf_err("join the sigwait thread", pthread_join(w, &ret), 0);
	conf_long("sigwait took USR2", (long)(intptr_t)ret, SIGUSR2);

	/* Every thread asleep when the signal comes: it waits, pending, for
	 * the one that accepts it (main), whose wait it interrupts. */
	sem_init(&term_sem, 0, 0);
	signal(SIGTERM, on_term);
	conf_create(&w, NULL, terminator, NULL);
	while (sem_wait(&term_sem) != 0 && errno == EINTR)
		;
	conf_ok("SIGTERM to a process whose threads all sleep: handled", 1);
	conf_join(w);

	check_old_sets();
	conf_err("pthread_sigmask bad how", pthread_sigmask(12345, &s, NULL),
	    EINVAL);
	conf_err("sigprocmask bad how",
	    conf_rc_errno(sigprocmask(12345, &s, NULL)), EINVAL);
	return (conf_end());
}
