/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fault injection: every allocation the runtime makes is failed in turn
 * (ULT_FAULT=kind:N, debug builds), each in a fresh child process running
 * a program that starts the runtime, spawns, locks, waits, sleeps and
 * joins, twice.  Every call must return 0 or one of its documented
 * errors, nothing may crash or hang, and the runtime must work again
 * after the failure.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kern/runtime.h"
#include "util/fault.h"
#include "test.h"
#include "ult.h"

/* Exit codes of the child: 0 ok, FAULT_UNUSED ok but nothing failed. */
#define FAULT_UNUSED 3

static ult_mutex_t fm = ULT_MUTEX_INITIALIZER;
static ult_cond_t fc = ULT_COND_INITIALIZER;
static ult_sem_t fs;
static atomic_int bad, spawned_ok, spawn_failed;
static long counter;

/* Note an error that is not one the call documents. */
static void
expect(int r, int ok1, int ok2, int line)
{
	if (r != 0 && r != ok1 && r != ok2) {
		fprintf(stderr, "fault: undocumented result %d at line %d\n", r,
		    line);
		atomic_fetch_add(&bad, 1);
	}
}
#define EXPECT(r, a, b) expect((r), (a), (b), __LINE__)

static void *
leaf(void *arg)
{
	EXPECT(ult_mutex_lock(&fm), -1, -1);
	counter++;
	EXPECT(ult_mutex_unlock(&fm), -1, -1);
	return (arg);
}

static void *
worker(void *arg)
{
	ult_thread_t *t;
	int r;

	for (int i = 0; i < 20; i++) {
		EXPECT(ult_mutex_lock(&fm), -1, -1);
		counter++;
		EXPECT(ult_cond_timedwait(&fc, &fm, ult_now() + 100000),
		    ETIMEDOUT, -1);
		EXPECT(ult_cond_signal(&fc), -1, -1);
		EXPECT(ult_mutex_unlock(&fm), -1, -1);
		EXPECT(ult_sem_post(&fs), -1, -1);
		EXPECT(ult_sem_timedwait(&fs, ult_now() + 100000), ETIMEDOUT,
		    -1);
		EXPECT(ult_sleep_ns(10000), -1, -1);
		r = ult_spawn(&t, NULL, leaf, arg);
		EXPECT(r, EAGAIN, ENOMEM);
		if (r == 0)
			EXPECT(ult_join(t, NULL), -1, -1);
	}
	return (arg);
}

/* One life of the runtime; 1 if it ran at all. */
static int
round_trip(void)
{
	struct ult_config cfg = {0};
	ult_thread_t *t[8];
	struct ult_attr det;
	int r, n = 0, ok[8];

	cfg.ncpu = 2;
	for (int tries = 0; (r = ult_init(&cfg)) != 0; tries++) {
		EXPECT(r, ENOMEM, EAGAIN);
		if (tries == 3)
			return (0); /* a single fault cannot do this */
	}
	ult_attr_init(&det);
	det.detached = 1;
	for (int i = 0; i < 8; i++) {
		r = ult_spawn(&t[i], i == 7 ? &det : NULL, worker, NULL);
		EXPECT(r, EAGAIN, ENOMEM);
		ok[i] = r == 0 && i != 7;
		if (r == 0)
			atomic_fetch_add(&spawned_ok, 1);
		else
			atomic_fetch_add(&spawn_failed, 1);
	}
	/* A foreign thread on the same contended lock. */
	for (int i = 0; i < 50; i++) {
		EXPECT(ult_mutex_lock(&fm), -1, -1);
		counter++;
		EXPECT(ult_mutex_unlock(&fm), -1, -1);
	}
	for (int i = 0; i < 8; i++)
		if (ok[i]) {
			EXPECT(ult_join(t[i], NULL), -1, -1);
			n++;
		}
	EXPECT(ult_shutdown(), -1, -1);
	return (1);
}

static int
child(const char *spec)
{
	ult_thread_t *t;
	void *r;

	alarm(60);
	setenv("ULT_FAULT", spec, 1);
	CHECK_EQ(ult_sem_init(&fs, 0), 0);
	if (!round_trip() + !round_trip() > 1)
		return (20); /* one fault stopped both lives */
	if (atomic_load(&bad) != 0)
		return (21);
	if (ult__fault_injected() == 0)
		return (FAULT_UNUSED);
	/* The failure is behind us: a whole life must succeed now. */
	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(ult_spawn(&t, NULL, worker, (void *)1), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ((intptr_t)r, 1);
	CHECK_EQ(ult_shutdown(), 0);
	return (atomic_load(&bad) != 0 ? 22 : 0);
}

static int
run_child(const char *kind, int n)
{
	char spec[64];
	int st;
	pid_t p;

	snprintf(spec, sizeof(spec), "%s:%d", kind, n);
	fflush(NULL);
	if ((p = fork()) == 0)
		_exit(child(spec));
	CHECK(p > 0);
	CHECK_EQ(waitpid(p, &st, 0), p);
	if (!WIFEXITED(st)) {
		fprintf(stderr, "ULT_FAULT=%s: killed by signal %d%s\n", spec,
		    WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (a hang)" : "");
		CHECK(!"the child crashed or hung");
	}
	if (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != FAULT_UNUSED) {
		fprintf(stderr, "ULT_FAULT=%s: child exit %d\n", spec,
		    WEXITSTATUS(st));
		CHECK(!"a call returned an undocumented error");
	}
	return (WEXITSTATUS(st) == 0);
}

void
test_fault_sweep(void)
{
	static const char *const kinds[] = {"mmap", "malloc", "thread"};

#ifndef ULT_INVARIANTS
	SKIP("fault injection is compiled into debug builds only");
#endif
	for (int k = 0; k < 3; k++) {
		int n = 1;

		while (run_child(kinds[k], n))
			CHECK(++n < 1000);
		printf("%s: failed each of the first %d, then none was left\n",
		    kinds[k], n - 1);
		CHECK(n > 1); /* the program allocates something of each */
	}
}

/* ULT_FAULT itself is checked: a malformed value stops ult_init. */
void
test_fault_bad_spec(void)
{
	int st;
	pid_t p;

#ifndef ULT_INVARIANTS
	SKIP("fault injection is compiled into debug builds only");
#endif
	if ((p = fork()) == 0) {
		setenv("ULT_FAULT", "mmap:0,bogus:3", 1);
		_exit(ult_init(NULL) == EINVAL ? 0 : 1);
	}
	CHECK_EQ(waitpid(p, &st, 0), p);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
