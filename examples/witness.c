/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lock checker's reports (DESIGN.md, "The lock checker"), made on
 * purpose: a uthread that yields while it holds a pthread mutex (the
 * newcomer's hang, here harmless: nobody else wants the mutex), and two
 * uthreads that take two ult mutexes in opposite orders and deadlock.
 * The checker reports the reversal before the second one blocks; the
 * deadlock itself is reported by ULT_STATS's report when main gives up
 * and exits (ult-top and gdb's `info ult-deadlock' show it too).
 *
 *   ./witness            (sets ULT_WITNESS=1 and ULT_STATS=1 unless set)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ult.h>

static pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
static ult_mutex_t a = ULT_MUTEX_INITIALIZER, b = ULT_MUTEX_INITIALIZER;
static ult_barrier_t both;

static void *
holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&plain);
	ult_yield(); /* reported: a wait with a libc lock held */
	pthread_mutex_unlock(&plain);
	return (NULL);
}

static void *
left(void *arg)
{
	(void)arg;
	ult_mutex_lock(&a);
	ult_barrier_wait(&both);
	ult_mutex_lock(&b); /* a, then b */
	return (NULL);
}

static void *
right(void *arg)
{
	(void)arg;
	ult_mutex_lock(&b);
	ult_barrier_wait(&both);
	ult_sleep_ns(10000000); /* so that left has waited on b first */
	ult_mutex_lock(&a);	/* b, then a: reported, then deadlocks */
	return (NULL);
}

/* Until both wait for a lock the other owns. */
static void
wait_stuck(ult_thread_t *t1, ult_thread_t *t2)
{
	for (;;) {
		struct ult_thread_info i1, i2;

		if (ult_thread_info(t1, &i1) == 0 &&
		    ult_thread_info(t2, &i2) == 0 &&
		    i1.wait_owner_id == i2.id && i2.wait_owner_id == i1.id)
			return;
		ult_sleep_ns(1000000);
	}
}

int
main(void)
{
	struct ult_attr at;
	ult_thread_t *t, *t1, *t2;
	int err;

	setenv("ULT_WITNESS", "1", 0);
	setenv("ULT_STATS", "1", 0);
	if ((err = ult_init(NULL)) != 0) {
		fprintf(stderr, "ult_init: %d\n", err);
		return (1);
	}
	ult_attr_init(&at);
	at.name = "holder";
	ult_spawn(&t, &at, holder, NULL);
	ult_join(t, NULL);

	ult_barrier_init(&both, 2);
	at.name = "left";
	ult_spawn(&t1, &at, left, NULL);
	at.name = "right";
	ult_spawn(&t2, &at, right, NULL);
	wait_stuck(t1, t2);
	fprintf(stderr,
	    "witness example: left and right are deadlocked; "
	    "exiting\n");
	exit(0); /* ULT_STATS's report at exit names the cycle */
}
