/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program killed by SIGTERM, SIGINT or SIGQUIT still gets its trace
 * (ULT_TRACE), its report (ULT_STATS) and its segment removed (ULT_SHM),
 * as at exit; ULT_DUMP_SIGNAL names a signal that asks for the trace and
 * the report while the program goes on.  Only signals whose disposition
 * at ult_init is the default one are taken: a program with a handler of
 * its own decides what the signal means (and exit writes them), and one
 * that installs a handler later replaces this one.
 *
 * The handler itself does nothing that can block on the runtime: the work
 * takes locks (the thread slab's, stdio's, the trace's) that the thread
 * the signal interrupted may hold.  It hands the signal to a thread of
 * its own, "ult-dump", through a pipe, and waits for it on a futex, for
 * DUMP_WAIT_NS at most; then it puts the default action back and raises
 * the signal again, which ends the process when the handler returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kern/runtime.h"
#include "../os/linux/os.h"
#include "dump.h"
#include "shm.h"
#include "stats.h"
#include "trace.h"
#include "../kern/subsys.h"

#define DUMP_WAIT_NS 10000000000ull /* a large trace takes seconds */

static const int fatal[] = {SIGTERM, SIGINT, SIGQUIT};

static struct {
	int ondemand; /* ULT_DUMP_SIGNAL; 0: none */
	int fd[2];    /* the handler writes a signal number, the helper reads */
	pid_t pid;    /* a fork child's handler must not wait for nobody */
	pthread_t thread;
	int running;
	uint64_t installed; /* bit sig - 1: the handler is this file's */
	atomic_uint asked;  /* a fatal signal's dump was asked for */
	atomic_uint done;   /* ... and is done (futex word) */
} dp = {.fd = {-1, -1}};

static const struct {
	const char *name;
	int sig;
} names[] = {{"HUP", SIGHUP}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
    {"PWR", SIGPWR}, {"WINCH", SIGWINCH}, {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},
    {"XCPU", SIGXCPU}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}};

/* Signals the runtime uses or that a fault raises: never a dump's. */
static int
reserved(int sig)
{
	return (sig == SIGKILL || sig == SIGSTOP || sig == SIGURG ||
	    sig == SIGTERM || sig == SIGINT || sig == SIGQUIT || sig == 32 ||
	    sig == 33 || (sig <= 64 && (ULT_SIGMASK_KEEP >> (sig - 1)) & 1));
}

int
ult__dump_configure(void)
{
	const char *s = getenv("ULT_DUMP_SIGNAL");
	char *end;
	long v;

	dp.ondemand = 0;
	if (s == NULL || *s == '\0')
		return (0);
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			dp.ondemand = names[i].sig;
	if (dp.ondemand == 0) {
		errno = 0;
		v = strtol(s, &end, 10);
		if (errno != 0 || *end != '\0' || v < 1 || v > SIGRTMAX)
			return (EINVAL);
		dp.ondemand = (int)v;
	}
	return (reserved(dp.ondemand) ? EINVAL : 0);
}

static void
on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;
	uint64_t end;

	if (getpid() != dp.pid || !ult__running()) {
		/* A fork child's copy, or after shutdown began. */
		if (sig != dp.ondemand)
			goto dfl;
		errno = saved;
		return;
	}
	if (sig == dp.ondemand) {
		/* The program goes on: no need to wait. */
		(void)write(dp.fd[1], &c, 1);
		errno = saved;
		return;
	}
	if (!ULT_XCHG(&dp.asked, 1))
		(void)write(dp.fd[1], &c, 1);
	end = ult__now() + DUMP_WAIT_NS;
	while (!ULT_LD_ACQ(&dp.done) && ult__now() < end)
		(void)ult__futex_wait(&dp.done, 0, end);
dfl : {
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(sig, &sa, NULL);
	/* Blocked in this handler, so pending: the default action happens
	 * as it returns and the interrupted context's mask comes back. */
	(void)ult__os_raise_self(sig);
	errno = saved;
}
}

static void *
dumper(void *arg)
{
	unsigned char c;

	(void)arg;
	ult__os_block_async_signals();
	ult__os_set_name("ult-dump");
	for (;;) {
		ssize_t n = read(dp.fd[0], &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1 || c == 0)
			break;
		if (c != dp.ondemand)
			ult__shm_exit();
		ult__stats_report();
		ult__trace_finish(0);
		if (c != dp.ondemand) {
			ULT_ST_REL(&dp.done, 1);
			ult__futex_wake(&dp.done, INT32_MAX);
		}
	}
	return (NULL);
}

static int
take(int sig)
{
	struct sigaction sa, old;

	if (sigaction(sig, NULL, &old) != 0)
		return (errno);
	/* The program's own handler, or an ignored signal, stays; the
	 * signal ULT_DUMP_SIGNAL names is the runtime's. */
	if (sig != dp.ondemand &&
	    ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL))
		return (0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, NULL) != 0)
		return (errno);
	dp.installed |= 1ull << (sig - 1);
	return (0);
}

int
ult__dump_start(void)
{
	int err = 0;

	if (!ult__stats_on && !ULT_PLD(&ult__trace_on) && !ult__shm_active() &&
	    dp.ondemand == 0)
		return (0);
	ULT_ST(&dp.asked, 0);
	ULT_ST(&dp.done, 0);
	dp.pid = getpid();
	if (pipe2(dp.fd, O_CLOEXEC) != 0)
		return (errno);
	if ((err = ult__os_thread(&dp.thread, dumper, NULL)) != 0) {
		ult__dump_stop();
		return (err);
	}
	dp.running = 1;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]) && !err; i++)
		err = take(fatal[i]);
	if (err == 0 && dp.ondemand != 0)
		err = take(dp.ondemand);
	if (err != 0)
		ult__dump_stop();
	return (err);
}

void
ult__dump_stop(void)
{
	unsigned char stop = 0;

	for (int sig = 1; dp.installed != 0; sig++) {
		struct sigaction sa;

		if (!(dp.installed & (1ull << (sig - 1))))
			continue;
		dp.installed &= ~(1ull << (sig - 1));
		/* Unless the program has put a handler of its own there. */
		if (sigaction(sig, NULL, &sa) == 0 &&
		    !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == on_signal) {
			sa.sa_handler = SIG_DFL;
			sa.sa_flags = 0;
			sigemptyset(&sa.sa_mask);
			(void)sigaction(sig, &sa, NULL);
		}
	}
	if (dp.running) {
		while (write(dp.fd[1], &stop, 1) < 0 && errno == EINTR)
			continue;
		pthread_join(dp.thread, NULL);
		dp.running = 0;
	}
	for (int i = 0; i < 2; i++)
		if (dp.fd[i] >= 0) {
			close(dp.fd[i]);
			dp.fd[i] = -1;
		}
}

static int
dump_configure(const struct ult_config *cfg)
{
	(void)cfg;
	return (ult__dump_configure());
}

/* Last up, first down: the trace, the report and the segment it writes
 * are set up before it and taken down after it. */
/* Its thread is the parent's: nothing to stop or join. */
static void
dump_fork_child(void)
{
	dp.running = 0;
	ult__dump_stop();
}

const struct ult__subsys ult__dump_subsys = {.name = "dump",
    .configure = dump_configure,
    .init = ult__dump_start,
    .fini = ult__dump_stop,
    .fork_child = dump_fork_child};
