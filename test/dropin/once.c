/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pthread_once: many racing callers run the routine exactly once, and
 * none returns before it has finished; independent controls; a routine
 * that calls pthread_once on another control; later calls do nothing; a
 * routine cancelled part way leaves the control uninitialised.
 */
#include "conf.h"

#include <stdatomic.h>
#include <stdint.h>

#define NTHREADS 64
#define NCONTROLS 8

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int runs, done, early_return, start_line;
static struct conf_step go = CONF_STEP_INIT;

static void
slow_init(void)
{
	atomic_fetch_add(&runs, 1);
	/* Long enough for the other callers to arrive and have to wait. */
	conf_msleep(20);
	atomic_store(&done, 1);
}

static void *
racer(void *arg)
{
	(void)arg;
	atomic_fetch_add(&start_line, 1);
	conf_step_wait(&go, 1);
	if (pthread_once(&once, slow_init) != 0 || !atomic_load(&done))
		atomic_fetch_add(&early_return, 1);
	return (NULL);
}

static void
check_race(void)
{
	pthread_t t[NTHREADS];
	int i;

	for (i = 0; i < NTHREADS; i++)
		conf_create(&t[i], NULL, racer, NULL);
	while (atomic_load(&start_line) < NTHREADS)
		conf_msleep(1);
	conf_step_set(&go, 1);
	for (i = 0; i < NTHREADS; i++)
		conf_join(t[i]);
	conf_long("64 racing callers: routine runs", atomic_load(&runs), 1);
	conf_long("callers back before the routine finished",
	    atomic_load(&early_return), 0);
	conf_err("pthread_once again from main", pthread_once(&once, slow_init),
	    0);
	conf_long("routine runs after a later call", atomic_load(&runs), 1);
}

/* NCONTROLS controls, each hit by every thread: each routine once. */
static pthread_once_t controls[NCONTROLS];
static atomic_int per_control[NCONTROLS];

#define INIT_FN(n)                                    \
	static void init_##n(void)                    \
	{                                             \
		atomic_fetch_add(&per_control[n], 1); \
	}
INIT_FN(0)
INIT_FN(1)
INIT_FN(2)
INIT_FN(3)
INIT_FN(4)
INIT_FN(5)
INIT_FN(6)
INIT_FN(7)
static void (*const inits[NCONTROLS])(
    void) = {init_0, init_1, init_2, init_3, init_4, init_5, init_6, init_7};

static void *
many(void *arg)
{
	intptr_t me = (intptr_t)arg;
	int k;

	for (k = 0; k < NCONTROLS; k++) {
		int c = (int)((k + me) % NCONTROLS);

		pthread_once(&controls[c], inits[c]);
	}
	return (NULL);
}

static void
check_controls(void)
{
	pthread_t t[16];
	int i, wrong = 0;

	for (i = 0; i < NCONTROLS; i++)
		controls[i] = (pthread_once_t)PTHREAD_ONCE_INIT;
	for (i = 0; i < 16; i++)
		conf_create(&t[i], NULL, many, (void *)(intptr_t)i);
	for (i = 0; i < 16; i++)
		conf_join(t[i]);
	for (i = 0; i < NCONTROLS; i++)
		wrong += atomic_load(&per_control[i]) != 1;
	conf_long("8 controls x 16 threads: controls not run exactly once",
	    wrong, 0);
}

/* The routine of one control calls pthread_once on another. */
static pthread_once_t outer = PTHREAD_ONCE_INIT, inner = PTHREAD_ONCE_INIT;
static atomic_int inner_runs, outer_runs, order_ok;

static void
inner_init(void)
{
	atomic_fetch_add(&inner_runs, 1);
}

static void
outer_init(void)
{
	pthread_once(&inner, inner_init);
	if (atomic_load(&inner_runs) == 1)
		atomic_store(&order_ok, 1);
	atomic_fetch_add(&outer_runs, 1);
}

static void *
nested(void *arg)
{
	(void)arg;
	pthread_once(&outer, outer_init);
	return (NULL);
}

static void
check_nested(void)
{
	pthread_t t[8];
	int i;

	for (i = 0; i < 8; i++)
		conf_create(&t[i], NULL, nested, NULL);
	for (i = 0; i < 8; i++)
		conf_join(t[i]);
	conf_long("nested once: outer runs", atomic_load(&outer_runs), 1);
	conf_long("nested once: inner runs", atomic_load(&inner_runs), 1);
	conf_ok("inner finished before outer went on", atomic_load(&order_ok));
}

/*
 * A routine cancelled part way: the control is as if pthread_once had
 * never been called, so the next caller runs its routine.
 */
static pthread_once_t cancelled = PTHREAD_ONCE_INIT;
static struct conf_step in_routine = CONF_STEP_INIT;
static atomic_int second_runs;

static void
endless_init(void)
{
	conf_step_set(&in_routine, 1);
	for (;;)
		conf_msleep(1);
}

static void
second_init(void)
{
	atomic_fetch_add(&second_runs, 1);
}

static void *
call_endless(void *arg)
{
	(void)arg;
	pthread_once(&cancelled, endless_init);
	return (NULL);
}

static void
check_cancelled(void)
{
	pthread_t t;

	conf_create(&t, NULL, call_endless, NULL);
	conf_step_wait(&in_routine, 1);
	conf_err("cancel the thread inside the routine", pthread_cancel(t), 0);
	conf_ok("it ends cancelled", conf_join(t) == PTHREAD_CANCELED);
	conf_err("pthread_once on that control again",
	    pthread_once(&cancelled, second_init), 0);
	conf_long("the new routine runs", atomic_load(&second_runs), 1);
}

int
main(void)
{
	conf_begin("once");
	check_race();
	check_controls();
	check_nested();
	check_cancelled();
	return (conf_end());
}
