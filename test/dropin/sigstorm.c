/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two process signals in a storm, sent with kill() and accepted only by a
 * thread that waits on a condition with a timeout of a microsecond while
 * another thread signals that condition, as LTP's pthread_cond_timedwait
 * 4-3 does: each handler posts a semaphore its sender waits on before it
 * sends again, so a signal lost, or a handler that never returns, hangs
 * the run.  Short
 * threads come and go meanwhile, so that the runtime starts threads of
 * its own with the storm under way.  Two ways ult-run hung here: a
 * worker that a signal reached on its way to idle sent it back to the
 * process and got it straight back, for ever; a runtime thread that
 * took one in its first instant ran the program's handler holding a
 * runtime lock.
 */
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "conf.h"

#define SENDS 10000

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem1, sem2;
static atomic_int stop, handled1, handled2;
static pthread_t waiter_t;

static void
on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled1, 1);
	sem_post(&sem1);
}

static void
on_usr2(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled2, 1);
	sem_post(&sem2);
}

static sigset_t usersigs;

static void *
waiter(void *arg)
{
	long eintr = 0;

	(void)arg;
	pthread_sigmask(SIG_UNBLOCK, &usersigs, NULL);
	while (!atomic_load(&stop)) {
		struct timespec ts;
		int e;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&mx);
		e = pthread_cond_timedwait(&cv, &mx, &ts);
		pthread_mutex_unlock(&mx);
		eintr += e == EINTR;
	}
	return ((void *)eintr);
}

static void *
signaller(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&mx);
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mx);
		usleep(1);
	}
	return (NULL);
}

static void *
nothing(void *arg)
{
	return (arg);
}

static void *
sender(void *arg)
{
	int sig = (int)(intptr_t)arg;
	sem_t *s = sig == SIGUSR1 ? &sem1 : &sem2;
	long sent = 0;

	for (int i = 0; i < SENDS; i++) {
		if (kill(getpid(), sig) != 0)
			break;
		sent++;
		while (sem_wait(s) != 0)
			;
	}
	return ((void *)sent);
}

int
main(void)
{
	struct sigaction sa = {0};
	pthread_t sg, s1, s2, t;
	void *r1, *r2, *eintr;
	long churn = 0;

	conf_begin("sigstorm");
	sem_init(&sem1, 0, 0);
	sem_init(&sem2, 0, 0);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	/* Every thread but the waiter blocks them. */
	sigemptyset(&usersigs);
	sigaddset(&usersigs, SIGUSR1);
	sigaddset(&usersigs, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usersigs, NULL);
	pthread_create(&waiter_t, NULL, waiter, NULL);
	pthread_create(&sg, NULL, signaller, NULL);
	pthread_create(&s1, NULL, sender, (void *)(intptr_t)SIGUSR1);
	pthread_create(&s2, NULL, sender, (void *)(intptr_t)SIGUSR2);
	/* Threads coming and going while the storm lasts. */
	while (atomic_load(&handled1) + atomic_load(&handled2) < 2 * SENDS &&
	    churn < 100000) {
		if (pthread_create(&t, NULL, nothing, NULL) == 0 &&
		    pthread_join(t, NULL) == 0)
			churn++;
	}
	pthread_join(s1, &r1);
	pthread_join(s2, &r2);
	atomic_store(&stop, 1);
	pthread_join(sg, NULL);
	pthread_join(waiter_t, &eintr);
	conf_long("SIGUSR1 sent", (long)r1, SENDS);
	conf_long("SIGUSR2 sent", (long)r2, SENDS);
	conf_long("SIGUSR1 handled", atomic_load(&handled1), SENDS);
	conf_long("SIGUSR2 handled", atomic_load(&handled2), SENDS);
	conf_long("cond_timedwait returned EINTR", (long)eintr, 0);
	conf_long("threads came and went", churn > 0, 1);
	return (conf_end());
}
