/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A ult program to look at from outside (ult-top, gdb): named uthreads
 * in known states, until SIGTERM or 60 s; but for "quick", two of them,
 * top-left and top-right, deadlocked on two mutexes (so the program ends
 * with exit, not ult_shutdown).  With "abort" it aborts once
 * they are all in place, leaving a core dump (the gdb test); with
 * "quick" it stops at once (the USDT test).
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ult.h"

static ult_sem_t never;
static ult_mutex_t held = ULT_MUTEX_INITIALIZER;
static atomic_int stop, placed;

static void *
sem_sleeper(void *arg)
{
	(void)arg;
	atomic_fetch_add(&placed, 1);
	ult_sem_wait(&never);
	return (NULL);
}

static void *
lock_waiter(void *arg)
{
	(void)arg;
	atomic_fetch_add(&placed, 1);
	ult_mutex_lock(&held);
	ult_mutex_unlock(&held);
	return (NULL);
}

static void *
spinner(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	atomic_fetch_add(&placed, 1);
	while (!atomic_load(&stop))
		for (int i = 0; i < 100000; i++)
			x++;
	return (NULL);
}

static ult_mutex_t dl_a = ULT_MUTEX_INITIALIZER, dl_b = ULT_MUTEX_INITIALIZER;
static ult_barrier_t dl_both;

static void *
dl_left(void *arg)
{
	(void)arg;
	ult_mutex_lock(&dl_a);
	ult_barrier_wait(&dl_both);
	atomic_fetch_add(&placed, 1);
	ult_mutex_lock(&dl_b);
	return (NULL);
}

static void *
dl_right(void *arg)
{
	(void)arg;
	ult_mutex_lock(&dl_b);
	ult_barrier_wait(&dl_both);
	atomic_fetch_add(&placed, 1);
	ult_mutex_lock(&dl_a);
	return (NULL);
}

static void
on_term(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static void
spawn(ult_thread_t **t, const char *name, void *(*fn)(void *))
{
	struct ult_attr a;

	ult_attr_init(&a);
	a.name = name;
	if (ult_spawn(t, &a, fn, NULL) != 0) {
		fprintf(stderr, "top_target: spawn failed\n");
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	struct ult_config cfg = {0};
	ult_thread_t *t[5];
	int do_abort = argc > 1 && strcmp(argv[1], "abort") == 0;
	int quick = argc > 1 && strcmp(argv[1], "quick") == 0;

	cfg.ncpu = 2;
	signal(SIGTERM, on_term);
	if (ult_init(&cfg) != 0 || ult_sem_init(&never, 0) != 0)
		return (1);
	ult_mutex_lock(&held);
	spawn(&t[0], "top-sleeper", sem_sleeper);
	spawn(&t[1], "top-waiter", lock_waiter);
	spawn(&t[2], "top-spinner", spinner);
	if (!quick) {
		ult_barrier_init(&dl_both, 2);
		spawn(&t[3], "top-left", dl_left);
		spawn(&t[4], "top-right", dl_right);
	}
	while (atomic_load(&placed) < (quick ? 3 : 5))
		usleep(1000);
	usleep(100000); /* the two sleepers reach their sleep */
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (do_abort)
		abort();
	for (int i = 0; i < 600 && !quick && !atomic_load(&stop); i++)
		usleep(100000);
	atomic_store(&stop, 1);
	ult_sem_post(&never);
	ult_mutex_unlock(&held);
	for (int i = 0; i < 3; i++)
		ult_join(t[i], NULL);
	if (!quick)
		exit(0); /* the pair never ends */
	return (ult_shutdown());
}
