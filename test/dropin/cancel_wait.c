/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A cancel, or a signal sent with pthread_kill, reaches a thread blocked
 * indefinitely at a cancellation point: a condition wait (whose cleanup
 * handler finds the mutex held again), a semaphore, a sleep, a read on an
 * empty pipe, a poll, a join and an epoll_wait.  A thread that never gets
 * there would leave main's join hanging, and compare.sh's timeout fails
 * the run.  With cancellation disabled the same wait is not ended; a
 * handled signal runs its handler in the target, whose wait then goes on.
 */
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "conf.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static int pipefd[2], ep;
static pthread_t sleeper;
static atomic_int started, held_in_cleanup, handled, after_wait;
static _Thread_local int in_target;

static void
unlock_in_cleanup(void *arg)
{
	(void)arg;
	/* The cancelled waiter owns the mutex again: an error-free unlock
	 * says so. */
	if (pthread_mutex_trylock(&m) == EBUSY && pthread_mutex_unlock(&m) == 0)
		atomic_fetch_add(&held_in_cleanup, 1);
}

static void *
cond_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_cleanup_push(unlock_in_cleanup, NULL);
	atomic_fetch_add(&started, 1);
	for (;;)
		pthread_cond_wait(&c, &m);
	pthread_cleanup_pop(1);
	return (NULL);
}

static void *
sem_waiter(void *arg)
{
	(void)arg;
	atomic_fetch_add(&started, 1);
	sem_wait(&sem);
	return (NULL);
}

static void *
long_sleeper(void *arg)
{
	(void)arg;
	atomic_fetch_add(&started, 1);
	sleep(1000);
	return (NULL);
}

static void *
reader(void *arg)
{
	char b;

	(void)arg;
	atomic_fetch_add(&started, 1);
	if (read(pipefd[0], &b, 1) >= 0)
		return ((void *)1);
	return (NULL);
}

static void *
poller(void *arg)
{
	struct pollfd p = {.fd = pipefd[0], .events = POLLIN};

	(void)arg;
	atomic_fetch_add(&started, 1);
	poll(&p, 1, -1);
	return (NULL);
}

static void *
joiner(void *arg)
{
	(void)arg;
	atomic_fetch_add(&started, 1);
	pthread_join(sleeper, NULL);
	return (NULL);
}

static void *
epoller(void *arg)
{
	struct epoll_event ev;

	(void)arg;
	atomic_fetch_add(&started, 1);
	epoll_wait(ep, &ev, 1, -1);
	return (NULL);
}

/* Started and given time to block; then cancelled. */
static void
cancel_blocked(const char *what, void *(*fn)(void *))
{
	pthread_t t;
	void *ret = NULL;
	char line[96];

	atomic_store(&started, 0);
	conf_create(&t, NULL, fn, NULL);
	while (atomic_load(&started) == 0)
		conf_msleep(1);
	conf_msleep(30);
	conf_err("pthread_cancel", pthread_cancel(t), 0);
	conf_err("pthread_join", pthread_join(t, &ret), 0);
	snprintf(line, sizeof(line), "blocked in %s: cancelled", what);
	conf_ok(line, ret == PTHREAD_CANCELED);
}

static void
on_usr1(int sig)
{
	(void)sig;
	if (in_target)
		atomic_fetch_add(&handled, 1);
}

/* Cancellation disabled: blocked in a semaphore, the thread gets a
 * handled signal, goes on waiting, and takes the cancel only once it has
 * re-enabled it. */
static void *
guarded(void *arg)
{
	int old;

	(void)arg;
	in_target = 1;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	atomic_fetch_add(&started, 1);
	while (sem_wait(&sem) != 0 && errno == EINTR)
		;
	atomic_fetch_add(&after_wait, 1);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
	pthread_testcancel();
	return (NULL);
}

int
main(void)
{
	pthread_t t;
	struct epoll_event ev = {.events = EPOLLIN};
	void *ret = NULL;

	conf_begin("cancel_wait");
	sem_init(&sem, 0, 0);
	if (pipe(pipefd) != 0 || (ep = epoll_create1(0)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, pipefd[0], &ev) != 0)
		conf_fail("setup", strerror(errno));
	cancel_blocked("pthread_cond_wait", cond_waiter);
	conf_long("cleanup handler found the mutex held",
	    atomic_load(&held_in_cleanup), 1);
	cancel_blocked("sem_wait", sem_waiter);
	cancel_blocked("sleep", long_sleeper);
	cancel_blocked("read on an empty pipe", reader);
	cancel_blocked("poll", poller);
	cancel_blocked("epoll_wait", epoller);
	atomic_store(&started, 0);
	conf_create(&sleeper, NULL, long_sleeper, NULL);
	cancel_blocked("pthread_join", joiner);
	conf_err("pthread_cancel the sleeper", pthread_cancel(sleeper), 0);
	conf_err("join the sleeper", pthread_join(sleeper, &ret), 0);
	conf_ok("the sleeper: cancelled", ret == PTHREAD_CANCELED);

	signal(SIGUSR1, on_usr1);
	atomic_store(&started, 0);
	conf_create(&t, NULL, guarded, NULL);
	while (atomic_load(&started) == 0)
		conf_msleep(1);
	conf_msleep(30);
	conf_err("pthread_cancel with cancellation disabled", pthread_cancel(t),
	    0);
	conf_err("pthread_kill SIGUSR1", pthread_kill(t, SIGUSR1), 0);
	for (int i = 0; i < 5000 && atomic_load(&handled) == 0; i++)
		conf_msleep(1);
	conf_long("handler ran in the blocked thread", atomic_load(&handled),
	    1);
	conf_msleep(30);
	conf_long("still waiting (cancel held back)", atomic_load(&after_wait),
	    0);
	sem_post(&sem);
	conf_err("join", pthread_join(t, &ret), 0);
	conf_long("woke from its wait", atomic_load(&after_wait), 1);
	conf_ok("then cancelled at pthread_testcancel",
	    ret == PTHREAD_CANCELED);
	return (conf_end());
}
