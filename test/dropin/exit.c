/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How a program ends under ult-run, as natively: main's return value and
 * exit() from another thread are the exit status, atexit handlers run,
 * and stdio buffers are flushed.  exit.sh runs it both ways.
 *   exit return N | exit thread N | exit atexit | exit term | exit deep MIB
 * (deep: main recurses through MIB MiB of stack, which RLIMIT_STACK
 * allows or not, as natively).
 */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int status;

static void *
exiter(void *arg)
{
	(void)arg;
	/* Left in stdout's buffer: exit must flush it. */
	printf("thread exits with %d", status);
	exit(status);
}

static void *
terminator(void *arg)
{
	struct timespec ts = {0, 50000000};

	(void)arg;
	nanosleep(&ts, NULL);
	kill(getpid(), SIGTERM);
	return (NULL);
}

static __attribute__((noinline)) long
deep(long n)
{
	volatile char b[1024];

	memset((char *)b, (int)n, sizeof(b));
	return (n ? deep(n - 1) + b[1] : 0);
}

static void
handler(void)
{
	printf("atexit handler ran\n");
}

int
main(int argc, char **argv)
{
	pthread_t t;

	if (argc < 2)
		return (2);
	status = argc > 2 ? atoi(argv[2]) : 0;
	if (strcmp(argv[1], "return") == 0) {
		printf("main returns %d", status);
		return (status);
	}
	if (strcmp(argv[1], "thread") == 0) {
		pthread_create(&t, NULL, exiter, NULL);
		for (;;)
			pause();
	}
	if (strcmp(argv[1], "term") == 0) {
		sem_t s;

		/* SIGTERM, default action, while the only thread sleeps. */
		sem_init(&s, 0, 0);
		pthread_create(&t, NULL, terminator, NULL);
		sem_wait(&s);
		return (0);
	}
	if (strcmp(argv[1], "deep") == 0) {
		long r = deep((long)status * 1024 * 1024 / 1100);

		printf("recursed through %d MiB%s\n", status, r == 1 ? "" : "");
		return (0);
	}
	if (strcmp(argv[1], "atexit") == 0) {
		atexit(handler);
		printf("main returns 0\n");
		return (0);
	}
	return (2);
}
