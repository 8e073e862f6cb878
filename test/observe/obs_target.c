/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A ult program for the end-of-process tests (obs_edges.sh):
 *   run    uthreads that spin and sleep until a signal ends the process
 *          (prints "ready PID" once they run; gives up after 60 s)
 *   fork   a few uthreads, then a child started by fork and exec of this
 *          program with "child", which runs ult too
 *   child  many short sleeps on several uthreads (a longer trace)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ult.h"

static void *
sleeper(void *arg)
{
	long n = (long)arg;

	for (long i = 0; n < 0 || i < n; i++)
		ult_sleep_ns(500000);
	return (NULL);
}

static void *
spinner(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (;;)
		for (int i = 0; i < 100000; i++)
			x++;
	return (NULL);
}

static void
start(ult_thread_t **t, int n, void *(*fn)(void *), long arg)
{
	for (int i = 0; i < n; i++)
		if (ult_spawn(&t[i], NULL, fn, (void *)arg) != 0)
			exit(2);
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	ult_thread_t *t[8];
	struct ult_config cfg = {.ncpu = 2};

	if (ult_init(&cfg) != 0)
		return (2);
	if (strcmp(mode, "run") == 0) {
		start(t, 2, spinner, 0);
		start(t + 2, 2, sleeper, -1);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		/* A handled signal (ULT_DUMP_SIGNAL's) cuts a sleep short. */
		for (time_t end = time(NULL) + 60; time(NULL) < end;)
			sleep(1);
		return (3);
	}
	if (strcmp(mode, "child") == 0) {
		start(t, 8, sleeper, 200);
		for (int i = 0; i < 8; i++)
			ult_join(t[i], NULL);
		return (ult_shutdown() != 0);
	}
	if (strcmp(mode, "fork") == 0) {
		pid_t pid;
		int st;

		start(t, 2, sleeper, 2);
		if ((pid = fork()) == 0) {
			execl("/proc/self/exe", argv[0], "child", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return (4);
		for (int i = 0; i < 2; i++)
			ult_join(t[i], NULL);
		return (ult_shutdown() != 0);
	}
	return (2);
}
