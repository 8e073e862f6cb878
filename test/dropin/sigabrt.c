/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SIGABRT's handler is the program's like any other's: a SIGABRT sent by
 * kill interrupts the wait of the thread that takes it (sem_timedwait and
 * sem_wait end with EINTR), and abort() still runs the handler at once,
 * in the thread that called it, before the default action ends the
 * process.  A fork child that has started no thread (it runs without the
 * runtime, its waits are the kernel's) has its sem_timedwait ended too.
 */
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"

static pthread_t main_t;
static atomic_int ran_in_main, ran_elsewhere, waited;
static int abort_pipe[2];
static pthread_t aborter_t;

static void
on_abrt(int sig)
{
	(void)sig;
	if (pthread_equal(pthread_self(), main_t))
		atomic_fetch_add(&ran_in_main, 1);
	else
		atomic_fetch_add(&ran_elsewhere, 1);
}

/* Sends SIGABRT to the process, with it blocked here, until main's wait
 * has ended (one sent before main waits only runs the handler). */
static void *
killer(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGABRT);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	while (!atomic_load(&waited)) {
		kill(getpid(), SIGABRT);
		conf_msleep(20);
	}
	return (NULL);
}

static int
wait_kind(sem_t *s, int timed)
{
	struct timespec ts;

	if (!timed)
		return (conf_rc_errno(sem_wait(s)));
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 30;
	return (conf_rc_errno(sem_timedwait(s, &ts)));
}

static void
in_process(const char *what, int timed)
{
	sem_t s;
	pthread_t t;
	int e;

	atomic_store(&waited, 0);
	atomic_store(&ran_in_main, 0);
	atomic_store(&ran_elsewhere, 0);
	conf_must("sem_init", sem_init(&s, 0, 0) != 0 ? errno : 0);
	conf_create(&t, NULL, killer, NULL);
	e = wait_kind(&s, timed);
	atomic_store(&waited, 1);
	conf_join(t);
	conf_err(what, e, EINTR);
	conf_ok("... the handler ran in the waiting thread",
	    atomic_load(&ran_in_main) >= 1);
	conf_long("... and nowhere else", atomic_load(&ran_elsewhere), 0);
	sem_destroy(&s);
}

/* The LTP case: a fork child that has started no thread waits, its
 * parent sends SIGABRT. */
static void
in_child(void)
{
	int p[2], st = 0;
	char c;
	pid_t pid;

	conf_must("pipe", pipe(p));
	pid = fork();
	if (pid == 0) {
		sem_t s;
		struct timespec ts;
		int e;

		close(p[0]);
		sem_init(&s, 0, 0);
		c = 'r';
		if (write(p[1], &c, 1) != 1)
			_exit(3);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 30;
		e = conf_rc_errno(sem_timedwait(&s, &ts));
		_exit(e == EINTR ? 0 : e == ETIMEDOUT ? 1 : 2);
	}
	conf_must("fork", pid < 0 ? errno : 0);
	close(p[1]);
	conf_must("child ready", read(p[0], &c, 1) == 1 ? 0 : EINVAL);
	close(p[0]);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		kill(pid, SIGABRT);
		conf_msleep(20);
	}
	conf_ok("fork child's sem_timedwait ended by its parent's SIGABRT "
		"with EINTR",
	    WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void
on_abrt_write(int sig)
{
	char c = pthread_equal(pthread_self(), aborter_t) ? 't' : 'o';

	(void)sig;
	if (write(abort_pipe[1], &c, 1) != 1)
		_exit(4);
}

static void *
aborter(void *arg)
{
	(void)arg;
	abort();
	return (NULL);
}

/* abort() in a thread of a fork child: its handler runs at once in that
 * thread, then the default action ends the child. */
static void
abort_handler(void)
{
	char c = 0;
	int st = 0;
	pid_t pid;

	conf_must("pipe", pipe(abort_pipe));
	pid = fork();
	if (pid == 0) {
		struct sigaction sa;
		struct rlimit rl = {0, 0};

		setrlimit(RLIMIT_CORE, &rl);
		close(abort_pipe[0]);
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		sa.sa_handler = on_abrt_write;
		sigaction(SIGABRT, &sa, NULL);
		if (pthread_create(&aborter_t, NULL, aborter, NULL) != 0)
			_exit(5);
		pthread_join(aborter_t, NULL);
		_exit(6);
	}
	conf_must("fork", pid < 0 ? errno : 0);
	close(abort_pipe[1]);
	if (read(abort_pipe[0], &c, 1) != 1)
		c = '-';
	close(abort_pipe[0]);
	waitpid(pid, &st, 0);
	conf_str("abort()'s handler ran in",
	    c == 't'	   ? "the aborting thread"
		: c == 'o' ? "another thread"
			   : "no thread",
	    "the aborting thread");
	conf_ok("... then abort() ended the process with SIGABRT",
	    WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

int
main(void)
{
	struct sigaction sa;

	conf_begin("sigabrt");
	main_t = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_abrt;
	conf_must("sigaction", sigaction(SIGABRT, &sa, NULL));
	in_process("sem_timedwait interrupted by a process SIGABRT", 1);
	in_process("sem_wait interrupted by a process SIGABRT", 0);
	in_child();
	abort_handler();
	return (conf_end());
}
