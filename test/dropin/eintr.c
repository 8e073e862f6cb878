/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A wait interrupted by a caught signal (POSIX, signal(7)): a handler
 * installed without SA_RESTART ends nanosleep and clock_nanosleep (with
 * the time left in *rem), sleep (the seconds left), usleep, poll and
 * select (on one descriptor and on two), epoll_wait, read of a pipe, sem_wait
 * and sem_timedwait with EINTR; with SA_RESTART a read goes on and returns its
 * byte, and a sleep still ends (sleeps are never restarted).  The signal comes
 * from another thread with pthread_kill, again every few milliseconds until the
 * wait has ended, so that one of them finds the thread waiting.
 */
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include "conf.h"

static atomic_int got, done, want_byte;
static pthread_t target;
static int pfd[2];

static void
on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&got, 1);
}

/* Sends SIGUSR1 to target until done; with want_byte, writes one byte
 * to the pipe once three handlers have run. */
static void *
killer(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		pthread_kill(target, SIGUSR1);
		if (atomic_load(&want_byte) && atomic_load(&got) >= 3) {
			atomic_store(&want_byte, 0);
			if (write(pfd[1], "x", 1) != 1)
				break;
		}
		usleep(2000);
	}
	return (NULL);
}

static pthread_t kt;
static int qfd[2];

static void *
late_write(void *arg)
{
	(void)arg;
	usleep(20000);
	if (write(qfd[1], "y", 1) != 1)
		return (arg);
	return (NULL);
}

static void
start(int restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	conf_must("sigaction", sigaction(SIGUSR1, &sa, NULL));
	atomic_store(&got, 0);
	atomic_store(&done, 0);
	target = pthread_self();
	conf_create(&kt, NULL, killer, NULL);
}

static void
stop(void)
{
	atomic_store(&done, 1);
	conf_join(kt);
}

/* The kernel's remainder may exceed the request by its timer slack. */
static int
ts_between(const struct timespec *t, long lo_s, long hi_s)
{
	long long ns = (long long)t->tv_sec * 1000000000LL + t->tv_nsec;

	return (ns > lo_s * 1000000000LL && ns < hi_s * 1000000000LL);
}

static void
sleeps(int restart)
{
	struct timespec req = {100, 0}, rem = {0, 0};
	const char *tag = restart ? " (SA_RESTART)" : "";
	char what[80];
	int r, e;

	start(restart);
	r = nanosleep(&req, &rem);
	e = errno;
	stop();
	snprintf(what, sizeof(what), "nanosleep(100 s)%s", tag);
	conf_err(what, r == -1 ? e : r, EINTR);
	conf_ok("nanosleep: a handler ran", atomic_load(&got) > 0);
	conf_ok("nanosleep: 0 < rem <= about 100 s", ts_between(&rem, 0, 101));

	rem.tv_sec = rem.tv_nsec = 0;
	start(restart);
	r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
	stop();
	snprintf(what, sizeof(what), "clock_nanosleep(100 s)%s", tag);
	conf_err(what, r, EINTR);
	conf_ok("clock_nanosleep: 0 < rem <= about 100 s",
	    ts_between(&rem, 0, 101));

	start(restart);
	r = (int)sleep(100);
	stop();
	snprintf(what, sizeof(what), "sleep(100) left 1..100 s%s", tag);
	conf_ok(what, r >= 1 && r <= 100);

	start(restart);
	r = conf_rc_errno(usleep(50000000));
	stop();
	snprintf(what, sizeof(what), "usleep(50 s)%s", tag);
	conf_err(what, r, EINTR);
}

static void
fds(void)
{
	struct pollfd p = {.fd = pfd[0], .events = POLLIN};
	struct epoll_event ev = {.events = EPOLLIN}, out;
	struct timeval tv = {100, 0};
	fd_set rs;
	char c;
	int r, ep;

	start(0);
	r = poll(&p, 1, 100000);
	conf_err("poll(empty pipe, 100 s)", r == -1 ? errno : r, EINTR);
	stop();

	start(0);
	FD_ZERO(&rs);
	FD_SET(pfd[0], &rs);
	r = select(pfd[0] + 1, &rs, NULL, NULL, &tv);
	conf_err("select(empty pipe, 100 s)", r == -1 ? errno : r, EINTR);
	stop();

	/* Two descriptors: interrupted too, and ready when one is. */
	{
		struct pollfd two[2] = {{.fd = pfd[0], .events = POLLIN},
		    {.fd = qfd[0], .events = POLLIN}};
		pthread_t wt;

		start(0);
		r = poll(two, 2, 100000);
		conf_err("poll(two empty pipes, 100 s)", r == -1 ? errno : r,
		    EINTR);
		stop();

		start(0);
		FD_ZERO(&rs);
		FD_SET(pfd[0], &rs);
		FD_SET(qfd[0], &rs);
		r = select(qfd[0] + 1, &rs, NULL, NULL, &tv);
		conf_err("select(two empty pipes, 100 s)", r == -1 ? errno : r,
		    EINTR);
		stop();

		conf_create(&wt, NULL, late_write, NULL);
		r = poll(two, 2, 100000);
		conf_join(wt);
		conf_long("poll(two pipes), one written", r, 1);
		conf_long("... its revents", two[1].revents, POLLIN);
		conf_long("... the other's", two[0].revents, 0);
		if (read(qfd[0], &c, 1) != 1)
			conf_fail("read", "the byte written");
	}

	ep = epoll_create1(0);
	epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev);
	start(1);
	r = epoll_wait(ep, &out, 1, 100000);
	conf_err("epoll_wait(empty pipe, 100 s) (SA_RESTART)",
	    r == -1 ? errno : r, EINTR);
	stop();
	close(ep);

	start(0);
	r = (int)read(pfd[0], &c, 1);
	conf_err("read(empty pipe)", r == -1 ? errno : r, EINTR);
	stop();

	/* Restarted: the byte comes after three handlers have run. */
	atomic_store(&want_byte, 1);
	start(1);
	r = (int)read(pfd[0], &c, 1);
	stop();
	conf_long("read(empty pipe) (SA_RESTART)", r, 1);
	conf_ok("read: handlers ran meanwhile", atomic_load(&got) >= 3);
}

static void
sems(void)
{
	struct timespec ts;
	sem_t s;
	int r;

	conf_must("sem_init", sem_init(&s, 0, 0));
	start(0);
	r = conf_rc_errno(sem_wait(&s));
	stop();
	conf_err("sem_wait", r, EINTR);

	start(1);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 100;
	r = conf_rc_errno(sem_timedwait(&s, &ts));
	stop();
	conf_err("sem_timedwait(+100 s) (SA_RESTART)", r, EINTR);
	sem_destroy(&s);
}

int
main(void)
{
	conf_begin("eintr");
	conf_must("pipe", pipe(pfd));
	conf_must("pipe", pipe(qfd));
	sleeps(0);
	sleeps(1);
	fds();
	sems();
	return (conf_end());
}
