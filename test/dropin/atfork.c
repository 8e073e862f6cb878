/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pthread_atfork handlers in POSIX's order when some were registered
 * early, by a constructor, before main and before ult-run's runtime
 * starts: prepare handlers in reverse order of registration, parent and
 * child handlers in order; the early child handler, which runs first in
 * the child, can already create and join a thread; so can the later
 * ones, and the child's main afterwards.  Forked from main and from a
 * thread.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"

static char log_[64];
static int nlog;
static int early_thread_ran, late_thread_ran, prep_before_main;
static int in_main;

static void
note(char c)
{
	if (nlog < (int)sizeof(log_) - 1)
		log_[nlog++] = c;
	log_[nlog] = '\0';
}

static void *
set_flag(void *arg)
{
	*(int *)arg = 1;
	return (NULL);
}

/* A thread created and joined in a child handler: 1 if it ran. */
static int
thread_in_handler(void)
{
	pthread_t t;
	int ran = 0;

	if (pthread_create(&t, NULL, set_flag, &ran) != 0 ||
	    pthread_join(t, NULL) != 0)
		return (0);
	return (ran);
}

static void
prep_e(void)
{
	note('e');
}
static void
par_e(void)
{
	note('E');
}
static void
chl_e(void)
{
	note('E');
	early_thread_ran = thread_in_handler();
}
static void
prep_1(void)
{
	note('1');
}
static void
par_1(void)
{
	note('a');
}
static void
chl_1(void)
{
	note('A');
}
static void
prep_2(void)
{
	note('2');
}
static void
par_2(void)
{
	note('b');
}
static void
chl_2(void)
{
	note('B');
	late_thread_ran = thread_in_handler();
}

__attribute__((constructor)) static void
early(void)
{
	prep_before_main = !in_main;
	if (pthread_atfork(prep_e, par_e, chl_e) != 0)
		prep_before_main = -1;
}

/* Forks; the child checks its side and exits 0 if all held. */
static void
fork_once(const char *from)
{
	char what[128];
	int st = 0;
	pid_t pid;

	nlog = 0;
	log_[0] = '\0';
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int ok = strcmp(log_, "21eEAB") == 0 && early_thread_ran &&
		    late_thread_ran && thread_in_handler();

		_exit(ok ? 0 : 1);
	}
	conf_must("fork", pid < 0 ? errno : 0);
	snprintf(what, sizeof(what), "fork from %s: prepare, then parent",
	    from);
	conf_str(what, log_, "21eEab");
	conf_must("waitpid", waitpid(pid, &st, 0) == pid ? 0 : errno);
	snprintf(what, sizeof(what), "fork from %s: child: 21eEAB, threads",
	    from);
	conf_ok(what, WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void *
forker(void *arg)
{
	(void)arg;
	fork_once("a thread");
	return (NULL);
}

int
main(void)
{
	pthread_t t;

	in_main = 1;
	conf_begin("atfork");
	conf_long("early handlers registered by a constructor",
	    prep_before_main, 1);
	conf_must("pthread_atfork", pthread_atfork(prep_1, par_1, chl_1));
	conf_must("pthread_atfork", pthread_atfork(prep_2, par_2, chl_2));
	fork_once("main");
	conf_create(&t, NULL, forker, NULL);
	conf_join(t);
	return (conf_end());
}
