/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Thread lifecycle: create, join (and its try/timed forms), detach,
 * pthread_exit, self/equal, threads creating threads, the sleeps and
 * sched_yield, a second join of a joined thread (ESRCH, glibc's answer,
 * not a crash), and main leaving with pthread_exit while others run.
 */
#include "conf.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#define NTHREADS 64
#define TREE_DEPTH 5

static void *
twice(void *arg)
{
	return ((void *)((uintptr_t)arg * 2));
}

/* Records its own id, then waits to be let go. */
struct selfie {
	pthread_t self;
	struct conf_step *step;
};

static void *
record_self(void *arg)
{
	struct selfie *s = arg;

	s->self = pthread_self();
	conf_step_set(s->step, 1);
	conf_step_wait(s->step, 2);
	return (NULL);
}

static void
check_self(void)
{
	struct conf_step step = CONF_STEP_INIT;
	struct selfie s = {.step = &step};
	pthread_t t;

	conf_ok("pthread_equal(self, self)",
	    pthread_equal(pthread_self(), pthread_self()) != 0);
	conf_create(&t, NULL, record_self, &s);
	conf_step_wait(&step, 1);
	conf_ok("pthread_self in thread equals created id",
	    pthread_equal(s.self, t) != 0);
	conf_ok("pthread_equal(main, thread) is 0",
	    pthread_equal(pthread_self(), t) == 0);
	conf_err("pthread_join(self)", pthread_join(pthread_self(), NULL),
	    EDEADLK);
	conf_step_set(&step, 2);
	conf_join(t);
}

static void
check_create_join(void)
{
	pthread_t t[NTHREADS];
	uintptr_t sum = 0, want = 0;
	int i;

	for (i = 0; i < NTHREADS; i++)
		conf_create(&t[i], NULL, twice, (void *)(uintptr_t)(i + 1));
	/* Join in reverse order: most have exited, some may not have. */
	for (i = NTHREADS - 1; i >= 0; i--) {
		sum += (uintptr_t)conf_join(t[i]);
		want += (uintptr_t)(i + 1) * 2;
	}
	conf_long("64 threads: sum of return values", (long)sum, (long)want);
}

/* Many threads alive at the same time, all blocked, then released. */
#define NALIVE 256

static struct conf_step alive_step = CONF_STEP_INIT;
static atomic_int alive;

static void *
stay_alive(void *arg)
{
	if (atomic_fetch_add(&alive, 1) + 1 == NALIVE)
		conf_step_set(&alive_step, 1);
	conf_step_wait(&alive_step, 2);
	return (arg);
}

static void
check_many_alive(void)
{
	static pthread_t t[NALIVE];
	int i, ok = 0;

	for (i = 0; i < NALIVE; i++)
		conf_create(&t[i], NULL, stay_alive, &t[i]);
	conf_step_wait(&alive_step, 1);
	conf_long("256 threads alive at once", atomic_load(&alive), NALIVE);
	conf_step_set(&alive_step, 2);
	for (i = 0; i < NALIVE; i++)
		ok += conf_join(t[i]) == &t[i];
	conf_long("256 threads joined with their values", ok, NALIVE);
}

/* A thread that stays alive until step 1. */
static void *
held(void *arg)
{
	conf_step_wait(arg, 1);
	return ((void *)(uintptr_t)7);
}

static void
check_tryjoin_timedjoin(void)
{
	struct conf_step step = CONF_STEP_INIT;
	struct timespec ts;
	pthread_t t;
	void *ret = NULL;
	int rc;

	conf_create(&t, NULL, held, &step);
	conf_err("pthread_tryjoin_np on a running thread",
	    pthread_tryjoin_np(t, &ret), EBUSY);
	ts = conf_deadline(CLOCK_REALTIME, -1000);
	conf_err("pthread_timedjoin_np past deadline",
	    pthread_timedjoin_np(t, &ret, &ts), ETIMEDOUT);
	ts = conf_deadline(CLOCK_REALTIME, 20);
	rc = pthread_timedjoin_np(t, &ret, &ts);
	conf_err("pthread_timedjoin_np 20ms deadline", rc, ETIMEDOUT);
	conf_ok("timedjoin returned at or after its deadline",
	    conf_ts_ge(conf_now(CLOCK_REALTIME), ts));
	conf_step_set(&step, 1);
	/* It has been let go: tryjoin succeeds once it has finished. */
	while ((rc = pthread_tryjoin_np(t, &ret)) == EBUSY)
		conf_msleep(1);
	conf_err("pthread_tryjoin_np after it finished", rc, 0);
	conf_long("tryjoin value", (long)(uintptr_t)ret, 7);

	conf_step_reset(&step);
	conf_create(&t, NULL, held, &step);
	conf_step_set(&step, 1);
	ts = conf_deadline(CLOCK_REALTIME, 30000);
	conf_err("pthread_timedjoin_np of a finishing thread",
	    pthread_timedjoin_np(t, &ret, &ts), 0);
	conf_long("timedjoin value", (long)(uintptr_t)ret, 7);
}

static atomic_int detached_done;
static struct conf_step detached_step = CONF_STEP_INIT;

static void *
detached_body(void *arg)
{
	(void)arg;
	if (atomic_fetch_add(&detached_done, 1) + 1 == 2 * NTHREADS / 4)
		conf_step_set(&detached_step, 1);
	return (NULL);
}

static void
check_detach(void)
{
	pthread_attr_t attr;
	pthread_t t;
	int i;

	conf_must("pthread_attr_init", pthread_attr_init(&attr));
	conf_must("setdetachstate",
	    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED));
	for (i = 0; i < NTHREADS / 4; i++) {
		conf_create(&t, &attr, detached_body, NULL);
		conf_create(&t, NULL, detached_body, NULL);
		if (pthread_detach(t) != 0)
			conf_fail("pthread_detach", "not 0");
	}
	pthread_attr_destroy(&attr);
	conf_step_wait(&detached_step, 1);
	conf_long("detached threads that ran", atomic_load(&detached_done),
	    2 * NTHREADS / 4);
}

/* pthread_exit from below the start routine: no return path is taken. */
static __attribute__((noinline)) void
leave_inner(uintptr_t v)
{
	pthread_exit((void *)(v + 3));
}

static __attribute__((noinline)) void
leave_outer(uintptr_t v)
{
	leave_inner(v * 10);
}

static void *
exits_deep(void *arg)
{
	(void)arg;
	leave_outer(3);
	return (NULL);
}

static void
check_exit(void)
{
	pthread_t t;

	conf_create(&t, NULL, exits_deep, NULL);
	conf_long("pthread_exit from a nested call: join value",
	    (long)(uintptr_t)conf_join(t), 33);
}

/* Each node creates two children and returns the number of leaves. */
static void *
tree(void *arg)
{
	uintptr_t depth = (uintptr_t)arg;
	pthread_t l, r;

	if (depth == TREE_DEPTH)
		return ((void *)1);
	conf_create(&l, NULL, tree, (void *)(depth + 1));
	conf_create(&r, NULL, tree, (void *)(depth + 1));
	return ((void *)((uintptr_t)conf_join(l) + (uintptr_t)conf_join(r)));
}

static void
check_tree(void)
{
	pthread_t t;

	conf_create(&t, NULL, tree, (void *)0);
	conf_long("thread tree depth 5: leaves", (long)(uintptr_t)conf_join(t),
	    1 << TREE_DEPTH);
}

static atomic_int sleep_errors;

static void *
sleeper(void *arg)
{
	struct timespec ts = {0, 200000};
	int i;

	for (i = 0; i < 20; i++) {
		switch ((i + (int)(uintptr_t)arg) % 4) {
		case 0:
			if (nanosleep(&ts, NULL) != 0)
				atomic_fetch_add(&sleep_errors, 1);
			break;
		case 1:
			if (usleep(200) != 0)
				atomic_fetch_add(&sleep_errors, 1);
			break;
		case 2:
			if (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) != 0)
				atomic_fetch_add(&sleep_errors, 1);
			break;
		default:
			if (sched_yield() != 0)
				atomic_fetch_add(&sleep_errors, 1);
			break;
		}
	}
	return (NULL);
}

static void
check_sleeps(void)
{
	struct timespec start, ts, bad = {0, 1000000000L};
	pthread_t t[32];
	int i;

	start = conf_now(CLOCK_MONOTONIC);
	ts.tv_sec = 0;
	ts.tv_nsec = 5000000;
	conf_err("nanosleep 5ms", conf_rc_errno(nanosleep(&ts, NULL)), 0);
	conf_ok("nanosleep slept at least 5ms",
	    conf_ts_ge(conf_now(CLOCK_MONOTONIC), conf_ts_add(start, 5)));
	ts = conf_deadline(CLOCK_MONOTONIC, 5);
	conf_err("clock_nanosleep MONOTONIC absolute",
	    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL), 0);
	conf_ok("clock_nanosleep absolute: deadline passed",
	    conf_ts_ge(conf_now(CLOCK_MONOTONIC), ts));
	ts = conf_deadline(CLOCK_REALTIME, -1000);
	conf_err("clock_nanosleep REALTIME absolute in the past",
	    clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL), 0);
	conf_err("nanosleep tv_nsec 1e9", conf_rc_errno(nanosleep(&bad, NULL)),
	    EINVAL);
	conf_err("clock_nanosleep tv_nsec 1e9",
	    clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL), EINVAL);
	ts.tv_sec = 0;
	ts.tv_nsec = 1000;
	conf_err("clock_nanosleep on the thread's CPU-time clock",
	    clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &ts, NULL), EINVAL);
	conf_long("usleep(1000)", usleep(1000), 0);
	conf_long("sleep(0)", (long)sleep(0), 0);
	conf_long("sched_yield", sched_yield(), 0);

	for (i = 0; i < 32; i++)
		conf_create(&t[i], NULL, sleeper, (void *)(uintptr_t)i);
	for (i = 0; i < 32; i++)
		conf_join(t[i]);
	conf_long("32 threads sleeping and yielding: errors",
	    atomic_load(&sleep_errors), 0);
}

/*
 * The last check: main leaves with pthread_exit while a thread still
 * runs; the process lives on until that thread ends, then exits 0.
 */
/* Joined once, the handle names no thread: a second join says so, even
 * after other threads have come and gone (their records may be the
 * joined one's, reused, natively too: none is created in between). */
static void *
exits_twice(void *arg)
{
	pthread_exit((void *)((uintptr_t)arg * 2));
}

static void
check_join_twice(void)
{
	pthread_t t, u;
	void *ret;

	conf_create(&t, NULL, exits_twice, (void *)21);
	conf_long("first join's value", (long)(uintptr_t)conf_join(t), 42);
	conf_err("second join of the joined thread", pthread_join(t, &ret),
	    ESRCH);
	conf_create(&u, NULL, twice, (void *)1);
	conf_join(u);
	conf_create(&t, NULL, exits_twice, (void *)2);
	conf_join(t);
	conf_err("... and after a thread between", pthread_join(t, NULL),
	    ESRCH);
}

/* A detached thread that has ended: a join or a detach says EINVAL, as
 * glibc's, whose record of it still says detached. */
static atomic_int detached_done;

static void *
marks_done(void *arg)
{
	(void)arg;
	atomic_store(&detached_done, 1);
	return (NULL);
}

static void
check_join_detached_gone(void)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	conf_create(&t, &a, marks_done, NULL);
	pthread_attr_destroy(&a);
	while (!atomic_load(&detached_done))
		conf_msleep(1);
	conf_msleep(20);
	conf_err("join of an ended detached thread", pthread_join(t, NULL),
	    EINVAL);
	conf_err("detach of an ended detached thread", pthread_detach(t),
	    EINVAL);
}

static pthread_t main_id;

static void *
outlives_main(void *arg)
{
	struct conf_step *step = arg;
	int rc;

	conf_step_wait(step, 1);
	/* main is on its way out; joining it must work once it has gone. */
	rc = pthread_join(main_id, NULL);
	conf_err("thread joins main after main's pthread_exit", rc, 0);
	exit(conf_end());
}

int
main(void)
{
	static struct conf_step step = CONF_STEP_INIT;
	pthread_t t;

	conf_begin("threads");
	check_self();
	check_create_join();
	check_many_alive();
	check_tryjoin_timedjoin();
	check_detach();
	check_exit();
	check_tree();
	check_sleeps();
	check_join_twice();
	check_join_detached_gone();

	main_id = pthread_self();
	conf_create(&t, NULL, outlives_main, &step);
	conf_step_set(&step, 1);
	pthread_exit(NULL);
}
