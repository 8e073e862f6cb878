/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Handlers reach threads that never call into the library again, and may
 * call async-signal-safe functions wherever they interrupt: a timer's
 * SIGALRM ends a `while (!stop)' loop in a thread while main joins it;
 * pthread_kill reaches a thread computing in such a loop, and its handler
 * runs in that thread; a storm of process signals whose handler calls
 * sem_post, while other threads switch on a condition variable, loses no
 * signal (each post lets the sender send the next), nor does one while the
 * only thread that accepts it switches with threads that block it (a
 * worker switching between them still has the outgoing thread's mask); a
 * signal sent to the process just before the only thread that accepts
 * it ends runs its handler in that thread; a thread waiting in
 * pthread_barrier_wait runs its handler and waits on; an alternate signal
 * stack is the thread's own.
 */
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>
#include <unistd.h>

#include "conf.h"

#define STORM 3000

static volatile sig_atomic_t stop_alarm, stop_kill;
static pthread_t spinner_t;
static atomic_int ran_in_target, ran_elsewhere;

static void
on_alarm(int sig)
{
	(void)sig;
	stop_alarm = 1;
}

static void
on_usr2(int sig)
{
	(void)sig;
	if (pthread_equal(pthread_self(), spinner_t))
		atomic_fetch_add(&ran_in_target, 1);
	else
		atomic_fetch_add(&ran_elsewhere, 1);
	stop_kill = 1;
}

static void *
alarm_loop(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!stop_alarm)
		n++;
	return ((void *)n);
}

static void *
kill_loop(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!stop_kill)
		n++;
	return ((void *)n);
}

/* The storm. */
static sem_t go;
static atomic_int posted;
static atomic_int storm_done;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int flag;

static void
on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&posted, 1);
	sem_post(&go);
}

static void *
sender(void *arg)
{
	sigset_t s;
	long sent = 0;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	for (int i = 0; i < STORM; i++) {
		while (sem_wait(&go) != 0)
			;
		kill(getpid(), SIGUSR1);
		sent++;
	}
	while (sem_wait(&go) != 0)
		;
	atomic_store(&storm_done, 1);
	return ((void *)sent);
}

static void *
switcher(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	while (!atomic_load(&storm_done)) {
		while (!flag && !atomic_load(&storm_done))
			pthread_cond_wait(&c, &m);
		flag = 0;
	}
	pthread_mutex_unlock(&m);
	return (NULL);
}

/* The storm among threads that block it. */
static sem_t got;
static atomic_int mixed_done;
static pthread_t acceptor_t;
static atomic_int mixed_in_acceptor, mixed_elsewhere;

static void
on_usr1_mixed(int sig)
{
	(void)sig;
	if (pthread_equal(pthread_self(), acceptor_t))
		atomic_fetch_add(&mixed_in_acceptor, 1);
	else
		atomic_fetch_add(&mixed_elsewhere, 1);
	sem_post(&got);
}

/* With arg, the thread accepts SIGUSR1; it was created with it blocked. */
static void *
mixed_yielder(void *arg)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	if (arg != NULL)
		pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	while (!atomic_load(&mixed_done))
		sched_yield();
	return (NULL);
}

/* The last acceptor ends. */
#define ENDINGS 200
static atomic_int ending_go, ending_ran;

static void
on_usr1_ending(int sig)
{
	(void)sig;
	atomic_fetch_add(&ending_ran, 1);
}

static void *
ending_acceptor(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	while (!atomic_load(&ending_go))
		sched_yield();
	return (NULL);
}

static void
check_ending(struct sigaction *sa)
{
	sigset_t s;
	pthread_t t;
	int missed = 0;

	sa->sa_handler = on_usr1_ending;
	conf_must("sigaction", sigaction(SIGUSR1, sa, NULL));
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	conf_must("pthread_sigmask", pthread_sigmask(SIG_BLOCK, &s, NULL));
	for (int i = 1; i <= ENDINGS; i++) {
		atomic_store(&ending_go, 0);
		conf_create(&t, NULL, ending_acceptor, NULL);
		kill(getpid(), SIGUSR1);
		atomic_store(&ending_go, 1);
		conf_join(t);
		if (atomic_load(&ending_ran) != i) {
			missed++;
			atomic_store(&ending_ran, i);
		}
	}
	conf_long("signals sent as their only taker ended, not handled", missed,
	    0);
	conf_must("pthread_sigmask", pthread_sigmask(SIG_UNBLOCK, &s, NULL));
}

static pthread_barrier_t bar;
static pthread_t bar_t;
static atomic_int bar_handled, bar_ret = -1;

static void
on_usr2_bar(int sig)
{
	(void)sig;
	atomic_store(&bar_handled,
	    pthread_equal(pthread_self(), bar_t) ? 1 : 2);
}

static void *
bar_waiter(void *arg)
{
	int r = pthread_barrier_wait(&bar);

	(void)arg;
	atomic_store(&bar_ret, r == PTHREAD_BARRIER_SERIAL_THREAD ? 1 : r);
	return (NULL);
}

static char alt[1 << 16];

static void *
alt_setter(void *arg)
{
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt)}, o;

	(void)arg;
	if (sigaltstack(&ss, NULL) != 0 || sigaltstack(NULL, &o) != 0)
		return ((void *)0);
	return ((void *)(long)(o.ss_sp == alt && o.ss_size == sizeof(alt) &&
	    !(o.ss_flags & SS_DISABLE)));
}

int
main(void)
{
	stack_t o;
	struct sigaction sa;
	struct itimerval it;
	pthread_t t, ts, tw[2];

	conf_begin("sigdeliver");
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);

	sa.sa_handler = on_alarm;
	conf_must("sigaction", sigaction(SIGALRM, &sa, NULL));
	conf_create(&t, NULL, alarm_loop, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 50000;
	conf_must("setitimer", setitimer(ITIMER_REAL, &it, NULL));
	conf_join(t);
	conf_ok("SIGALRM ended the loop in a thread", stop_alarm == 1);

	sa.sa_handler = on_usr2;
	conf_must("sigaction", sigaction(SIGUSR2, &sa, NULL));
	conf_create(&spinner_t, NULL, kill_loop, NULL);
	usleep(20000);
	conf_must("pthread_kill", pthread_kill(spinner_t, SIGUSR2));
	conf_join(spinner_t);
	conf_long("pthread_kill'ed handler ran in the computing thread",
	    atomic_load(&ran_in_target), 1);
	conf_long("... and nowhere else", atomic_load(&ran_elsewhere), 0);

	sa.sa_handler = on_usr1;
	conf_must("sigaction", sigaction(SIGUSR1, &sa, NULL));
	conf_must("sem_init", sem_init(&go, 0, 1));
	conf_create(&ts, NULL, sender, NULL);
	for (int i = 0; i < 2; i++)
		conf_create(&tw[i], NULL, switcher, NULL);
	while (!atomic_load(&storm_done)) {
		pthread_mutex_lock(&m);
		flag = 1;
		pthread_cond_signal(&c);
		pthread_mutex_unlock(&m);
		sched_yield();
	}
	pthread_mutex_lock(&m);
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < 2; i++)
		conf_join(tw[i]);
	conf_long("storm: signals sent", (long)conf_join(ts), STORM);
	conf_long("storm: handlers that posted", atomic_load(&posted), STORM);

	/* main blocks it too while it sends: one thread of five accepts. */
	{
		sigset_t s;
		pthread_t ty[4];

		sa.sa_handler = on_usr1_mixed;
		conf_must("sigaction", sigaction(SIGUSR1, &sa, NULL));
		conf_must("sem_init", sem_init(&got, 0, 0));
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		conf_must("pthread_sigmask",
		    pthread_sigmask(SIG_BLOCK, &s, NULL));
		conf_create(&acceptor_t, NULL, mixed_yielder, &s);
		for (int i = 0; i < 4; i++)
			conf_create(&ty[i], NULL, mixed_yielder, NULL);
		for (int i = 0; i < STORM; i++) {
			kill(getpid(), SIGUSR1);
			while (sem_wait(&got) != 0)
				;
		}
		atomic_store(&mixed_done, 1);
		conf_join(acceptor_t);
		for (int i = 0; i < 4; i++)
			conf_join(ty[i]);
		conf_must("pthread_sigmask",
		    pthread_sigmask(SIG_UNBLOCK, &s, NULL));
		conf_long("mixed masks: handlers in the thread that accepts",
		    atomic_load(&mixed_in_acceptor), STORM);
		conf_long("mixed masks: handlers elsewhere",
		    atomic_load(&mixed_elsewhere), 0);
	}

	check_ending(&sa);

	/* Waiting in a barrier: the handler runs there, the wait goes on
	 * until main arrives (a 10 s bound on the wait for the handler). */
	sa.sa_handler = on_usr2_bar;
	conf_must("sigaction", sigaction(SIGUSR2, &sa, NULL));
	conf_must("pthread_barrier_init", pthread_barrier_init(&bar, NULL, 2));
	conf_create(&bar_t, NULL, bar_waiter, NULL);
	conf_must("pthread_kill", pthread_kill(bar_t, SIGUSR2));
	for (int i = 0; i < 5000 && atomic_load(&bar_handled) == 0; i++)
		usleep(2000);
	conf_long("barrier: handler ran in the waiting thread",
	    atomic_load(&bar_handled), 1);
	conf_long("barrier: still waiting after it", atomic_load(&bar_ret), -1);
	{
		int r = pthread_barrier_wait(&bar);

		conf_join(bar_t);
		conf_long("barrier: one serial thread of the two",
		    (r == PTHREAD_BARRIER_SERIAL_THREAD) +
			(atomic_load(&bar_ret) == 1),
		    1);
	}
	pthread_barrier_destroy(&bar);

	conf_create(&t, NULL, alt_setter, NULL);
	conf_long("sigaltstack set and read back in a thread",
	    (long)conf_join(t), 1);
	conf_must("sigaltstack", sigaltstack(NULL, &o));
	conf_long("main's is still disabled", (o.ss_flags & SS_DISABLE) != 0,
	    1);
	return (conf_end());
}
