/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Deferred cancellation: of threads looping on pthread_testcancel, in
 * sleeps, in timed waits and in read(); cleanup handlers run in reverse
 * order of push (on cancel, on pthread_exit, on pop(1), not on pop(0)),
 * the key destructors of a cancelled thread, cancel state DISABLE
 * deferring a cancel until re-enabled, cancelling oneself.  Only
 * cancellation points that return by themselves are used: a cancel is
 * not required here to interrupt a wait that would block forever.
 */
#include "conf.h"

#include <fcntl.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

enum loop {
	L_TESTCANCEL,
	L_NANOSLEEP,
	L_USLEEP,
	L_CLOCK_NANOSLEEP,
	L_COND_TIMEDWAIT,
	L_SEM_TIMEDWAIT,
	L_READ,
	L_N
};
static const char *const loop_names[L_N] = {"pthread_testcancel loop",
    "nanosleep loop", "usleep loop", "clock_nanosleep loop",
    "cond_timedwait loop", "sem_timedwait loop", "read loop on a pipe"};

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cc = PTHREAD_COND_INITIALIZER;
static sem_t zero_sem;
static int pipe_fd[2];

struct looper {
	enum loop loop;
	struct conf_step started;
	int after_loop; /* set if the loop ever ended by itself */
	int cleanup_ran;
};

static void
unlock_cm(void *arg)
{
	struct looper *l = arg;

	l->cleanup_ran++;
	pthread_mutex_unlock(&cm);
}

static void
mark_cleanup(void *arg)
{
	((struct looper *)arg)->cleanup_ran++;
}

/* In a frame of its own: the cleanup handler's setjmp must not meet the
 * loop's variables (-Wclobbered). */
static void
cond_timedwait_once(struct looper *l)
{
	struct timespec ts;

	pthread_mutex_lock(&cm);
	/* The cancel comes with the mutex held again. */
	pthread_cleanup_push(unlock_cm, l);
	ts = conf_deadline(CLOCK_REALTIME, 1);
	pthread_cond_timedwait(&cc, &cm, &ts);
	pthread_cleanup_pop(0);
	pthread_mutex_unlock(&cm);
}

/* Spins on one kind of cancellation point; returns only if never
 * cancelled (it would take minutes). */
static void
loop(struct looper *l)
{
	struct timespec ts = {0, 500000};
	char c;
	int i;

	for (i = 0; i < 1000000; i++) {
		switch (l->loop) {
		case L_TESTCANCEL:
			pthread_testcancel();
			sched_yield();
			break;
		case L_NANOSLEEP:
			nanosleep(&ts, NULL);
			break;
		case L_USLEEP:
			usleep(500);
			break;
		case L_CLOCK_NANOSLEEP:
			clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
			break;
		case L_COND_TIMEDWAIT:
			cond_timedwait_once(l);
			break;
		case L_SEM_TIMEDWAIT:
			ts = conf_deadline(CLOCK_REALTIME, 1);
			sem_timedwait(&zero_sem, &ts);
			break;
		case L_READ:
			if (read(pipe_fd[0], &c, 1) != 1)
				conf_msleep(1);
			break;
		default:
			break;
		}
	}
}

static void *
looper_body(void *arg)
{
	struct looper *l = arg;

	pthread_cleanup_push(mark_cleanup, l);
	conf_step_set(&l->started, 1);
	loop(l);
	l->after_loop = 1;
	pthread_cleanup_pop(0);
	return (NULL);
}

static void
check_loops(void)
{
	struct looper l[L_N];
	pthread_t t[L_N];
	char what[96];
	int i, r;

	conf_must("sem_init", sem_init(&zero_sem, 0, 0));
	conf_must("pipe", pipe(pipe_fd));
	for (i = 0; i < L_N; i++) {
		memset(&l[i], 0, sizeof(l[i]));
		l[i].loop = (enum loop)i;
		l[i].started = (struct conf_step)CONF_STEP_INIT;
		conf_create(&t[i], NULL, looper_body, &l[i]);
	}
	for (i = 0; i < L_N; i++) {
		conf_step_wait(&l[i].started, 1);
		conf_msleep(2);
		snprintf(what, sizeof(what), "%s: pthread_cancel",
		    loop_names[i]);
		conf_err(what, pthread_cancel(t[i]), 0);
	}
	/* The reader's read returns when a byte comes, if nothing else. */
	r = (int)write(pipe_fd[1], "x", 1);
	conf_long("write a byte for the reader", r, 1);
	for (i = 0; i < L_N; i++) {
		void *ret = conf_join(t[i]);

		snprintf(what, sizeof(what), "%s: join value PTHREAD_CANCELED",
		    loop_names[i]);
		conf_ok(what, ret == PTHREAD_CANCELED && !l[i].after_loop);
		snprintf(what, sizeof(what), "%s: cleanup handlers run",
		    loop_names[i]);
		conf_long(what, l[i].cleanup_ran,
		    i == L_COND_TIMEDWAIT ? 2 : 1);
	}
	r = pthread_mutex_trylock(&cm);
	conf_err("cond waiter's mutex released by its cleanup handler", r, 0);
	if (r == 0)
		pthread_mutex_unlock(&cm);
	close(pipe_fd[0]);
	close(pipe_fd[1]);
	sem_destroy(&zero_sem);
}

/* Many sleepers cancelled at once. */
#define NMANY 32

static void *
sleeps_forever(void *arg)
{
	(void)arg;
	for (;;)
		usleep(1000);
	return (NULL);
}

static void
check_many(void)
{
	pthread_t t[NMANY];
	int i, errs = 0, cancelled = 0;

	for (i = 0; i < NMANY; i++)
		conf_create(&t[i], NULL, sleeps_forever, NULL);
	conf_msleep(5);
	for (i = 0; i < NMANY; i++)
		errs += pthread_cancel(t[i]) != 0;
	for (i = 0; i < NMANY; i++)
		cancelled += conf_join(t[i]) == PTHREAD_CANCELED;
	conf_long("32 sleepers: pthread_cancel errors", errs, 0);
	conf_long("32 sleepers: joined as PTHREAD_CANCELED", cancelled, NMANY);
}

/* Cleanup handlers record their order. */
static char order[16];
static int norder;

static void
record(void *arg)
{
	order[norder++] = *(const char *)arg;
	order[norder] = '\0';
}

static struct conf_step ord_step = CONF_STEP_INIT;

static void *
pushes_three(void *arg)
{
	int exit_instead = arg != NULL;

	pthread_cleanup_push(record, "A");
	pthread_cleanup_push(record, "B");
	pthread_cleanup_push(record, "C");
	if (exit_instead)
		pthread_exit((void *)(intptr_t)42);
	conf_step_set(&ord_step, 1);
	for (;;)
		pthread_testcancel();
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return (NULL);
}

static void *
pops(void *arg)
{
	(void)arg;
	pthread_cleanup_push(record, "A");
	pthread_cleanup_push(record, "B");
	pthread_cleanup_push(record, "C");
	pthread_cleanup_pop(1);
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(1);
	return ((void *)(intptr_t)5);
}

static void
check_cleanup_order(void)
{
	pthread_t t;
	void *ret;

	norder = 0;
	conf_create(&t, NULL, pushes_three, NULL);
	conf_step_wait(&ord_step, 1);
	pthread_cancel(t);
	ret = conf_join(t);
	conf_ok("cancelled with 3 handlers: PTHREAD_CANCELED",
	    ret == PTHREAD_CANCELED);
	conf_str("cleanup order on cancel", order, "CBA");

	norder = 0;
	conf_create(&t, NULL, pushes_three, (void *)1);
	ret = conf_join(t);
	conf_long("pthread_exit(42) with 3 handlers: join value",
	    (long)(intptr_t)ret, 42);
	conf_str("cleanup order on pthread_exit", order, "CBA");

	norder = 0;
	conf_create(&t, NULL, pops, NULL);
	ret = conf_join(t);
	conf_long("pop(1), pop(0), pop(1): join value", (long)(intptr_t)ret, 5);
	conf_str("handlers run by pop(1) only", order, "CA");
}

/* Cancel while disabled: pending until enabled, then acted upon. */
static struct conf_step dis_step = CONF_STEP_INIT;
static int dis_survived, dis_old_state, dis_reached, dis_old_type;

static void *
disabled(void *arg)
{
	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &dis_old_type);
	conf_step_set(&dis_step, 1);
	conf_step_wait(&dis_step, 2);
	/* Cancellation points, with a cancel pending: none acts on it. */
	pthread_testcancel();
	usleep(100);
	conf_msleep(1);
	sched_yield();
	dis_survived = 1;
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &dis_old_state);
	pthread_testcancel();
	dis_reached = 1;
	return (NULL);
}

/* Disabled for the whole life: the thread ends normally. */
static void *
never_enabled(void *arg)
{
	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	conf_step_set(&dis_step, 1);
	conf_step_wait(&dis_step, 2);
	pthread_testcancel();
	usleep(100);
	return ((void *)(intptr_t)9);
}

static void
check_disable(void)
{
	pthread_t t;
	void *ret;

	conf_create(&t, NULL, disabled, NULL);
	conf_step_wait(&dis_step, 1);
	conf_err("cancel a thread with cancel disabled", pthread_cancel(t), 0);
	conf_step_set(&dis_step, 2);
	ret = conf_join(t);
	conf_ok("survived cancellation points while disabled", dis_survived);
	conf_ok("old state returned by enable is DISABLE",
	    dis_old_state == PTHREAD_CANCEL_DISABLE);
	conf_ok("default type DEFERRED",
	    dis_old_type == PTHREAD_CANCEL_DEFERRED);
	conf_ok("acted upon at the first point after enable",
	    ret == PTHREAD_CANCELED && !dis_reached);

	conf_step_reset(&dis_step);
	conf_create(&t, NULL, never_enabled, NULL);
	conf_step_wait(&dis_step, 1);
	pthread_cancel(t);
	conf_step_set(&dis_step, 2);
	conf_long("cancel never enabled: thread returns its value",
	    (long)(intptr_t)conf_join(t), 9);
}

/* A cancelled thread's key destructors run. */
static pthread_key_t key;
static atomic_int dtor_calls;

static void
dtor(void *v)
{
	(void)v;
	atomic_fetch_add(&dtor_calls, 1);
}

static void *
self_cancel(void *arg)
{
	(void)arg;
	pthread_setspecific(key, &key);
	if (pthread_cancel(pthread_self()) != 0)
		return (NULL);
	pthread_testcancel();
	return ((void *)1);
}

static void
check_self_and_keys(void)
{
	pthread_t t[4];
	int i, cancelled = 0;

	conf_must("key_create", pthread_key_create(&key, dtor));
	for (i = 0; i < 4; i++)
		conf_create(&t[i], NULL, self_cancel, NULL);
	for (i = 0; i < 4; i++)
		cancelled += conf_join(t[i]) == PTHREAD_CANCELED;
	conf_long("threads cancelling themselves: cancelled", cancelled, 4);
	conf_long("their key destructors", atomic_load(&dtor_calls), 4);
	pthread_key_delete(key);
}

int
main(void)
{
	int old = -1;

	conf_begin("cancel");
	conf_err("setcancelstate ENABLE in main",
	    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old), 0);
	conf_ok("main's default state ENABLE", old == PTHREAD_CANCEL_ENABLE);
	conf_err("setcancelstate bad value",
	    pthread_setcancelstate(12345, &old), EINVAL);
	conf_err("setcanceltype bad value", pthread_setcanceltype(12345, &old),
	    EINVAL);
	check_loops();
	check_many();
	check_cleanup_order();
	check_disable();
	check_self_and_keys();
	return (conf_end());
}
