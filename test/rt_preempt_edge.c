/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Preemption at its edges: uthreads on the smallest stack, and the
 * program's own SIGURG.  No timing thresholds: outcomes are counted.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "arch/cpu.h"
#include "kern/runtime.h"
#include "kern/worker.h"
#include "kern/uthread.h"
#include "rt_test.h"
#include "test.h"
#include "ult.h"

static void
start(int ncpu)
{
	struct ult_config cfg = {0};
	long slice = 1;

	cfg.ncpu = ncpu;
	cfg.preempt = 1;
	CHECK_EQ(ult_init(&cfg), 0);
	CHECK_EQ(ult_sysctl("kern.sched.slice", NULL, &slice), 0);
}

static atomic_int stop;
static atomic_long yields;

static void *
yielder(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&yields, 1, memory_order_relaxed);
		ult_yield();
	}
	return (NULL);
}

/*
 * The size of the signal frame the kernel pushes here, measured as the
 * handler does (AT_MINSIGSTKSZ is the largest the CPU could need, AMX
 * included, even where the process does not use it).
 */
static volatile size_t measured_frame;

static void
measure_handler(int sig, siginfo_t *si, void *ucv)
{
	uintptr_t sp = ult__uc_sp(ucv),
		  here = (uintptr_t)__builtin_frame_address(0);

	(void)sig;
	(void)si;
	measured_frame = sp > here ? sp - here : 0;
}

static size_t
sigframe_size(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = measure_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, &old), 0);
	measured_frame = 0;
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(sigaction(SIGUSR1, &old, NULL), 0);
	if (measured_frame != 0)
		return (measured_frame);
#ifdef AT_MINSIGSTKSZ
	return ((size_t)getauxval(AT_MINSIGSTKSZ));
#else
	return (0);
#endif
}

/*
 * A hog on a ULT_STACK_MIN stack is preempted: the thread beside it on
 * the one worker runs.  The hog gives up after a few seconds so that a
 * hog that is never preempted fails the test instead of hanging it.
 */
static struct ult_thread_info min_hog_info;
static long min_hog_seen;

static void *
min_hog(void *arg)
{
	uint64_t give_up = ult_now() + 5000000000ull;
	long y0 = atomic_load(&yields);

	(void)arg;
	while (atomic_load_explicit(&yields, memory_order_relaxed) < y0 + 100 &&
	    ult_now() < give_up)
		;
	min_hog_seen = atomic_load(&yields) - y0;
	CHECK_EQ(ult_thread_info(NULL, &min_hog_info), 0);
	return (NULL);
}

void
test_preempt_min_stack(void)
{
	struct ult_attr a;
	ult_thread_t *h, *y;

	if (!rt_preempt_available())
		SKIP("no asynchronous preemption in this build");
	start(1);
	atomic_store(&stop, 0);
	atomic_store(&yields, 0);
	ult_attr_init(&a);
	a.stack_size = ULT_STACK_MIN;
	CHECK_EQ(ult_spawn(&h, &a, min_hog, NULL), 0);
	CHECK_EQ(ult_spawn(&y, NULL, yielder, NULL), 0);
	CHECK_EQ(ult_join(h, NULL), 0);
	atomic_store(&stop, 1);
	CHECK_EQ(ult_join(y, NULL), 0);
	fprintf(stderr,
	    "yielder ran %ld times beside the hog; %lu preemptions\n",
	    min_hog_seen, (unsigned long)min_hog_info.nivcsw);
	CHECK(min_hog_seen >= 100);
	CHECK(min_hog_info.nivcsw > 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * A ULT_STACK_MIN thread digs down its stack and, at each depth, waits for
 * one outcome of a preemption signal: switched out, or owed.  Left with
 * less than two signal frames, a switch could not take one more nested
 * signal: it must be owed.  A switch with too little room would run into
 * the guard, and the fault (or a signal the kernel cannot deliver) would
 * kill the test.
 */
enum {
	NDEPTH = 9,
	OUTCOMES = 4
};
static size_t deep_leave[NDEPTH];
static long deep_switched[NDEPTH], deep_owed[NDEPTH];
static char *deep_lo;

static void __attribute__((noinline))
deep_wait(struct ult_thread *ut, struct ult__worker *w, int level)
{
	for (int k = 0; k < OUTCOMES; k++) {
		uint64_t n = ULT_LD(&ut->nivcsw), o = ULT_LD(&w->nowed);

		while (ULT_LD(&ut->nivcsw) == n && ULT_LD(&w->nowed) == o)
			;
		if (ULT_LD(&ut->nivcsw) != n)
			deep_switched[level]++;
		else
			deep_owed[level]++;
	}
}

static void __attribute__((noinline))
dig(struct ult_thread *ut, struct ult__worker *w, int level)
{
	volatile char pad[192];

	pad[0] = (char)level;
	if ((size_t)((char *)pad - deep_lo) > deep_leave[level] + 256)
		dig(ut, w, level);
	else
		deep_wait(ut, w, level);
	pad[1] = pad[0]; /* no tail call: the frame stays */
}

static void *
deep_thread(void *arg)
{
	struct ult_thread *ut = ult__self_ut();
	struct ult__worker *w = &ult__rt.workers[0];

	(void)arg;
	deep_lo = (char *)ut->stack->base + ut->stack->guard;
	for (int level = 0; level < NDEPTH; level++)
		dig(ut, w, level);
	atomic_store(&stop, 1);
	return (NULL);
}

void
test_preempt_min_stack_deep(void)
{
	static const size_t kib[] = {12, 11, 10, 9, 8};
	struct ult_attr a;
	ult_thread_t *d, *y;
	size_t frame = sigframe_size();
	long switched = 0, deep_sw = 0;
	int i;

	if (!rt_preempt_available())
		SKIP("no asynchronous preemption in this build");
	if (frame == 0)
		frame = 2048; /* MINSIGSTKSZ */
	if (frame > 4096)
		SKIP(
		    "signal frames too large for two on a ULT_STACK_MIN stack");
	/* Shallow depths, then ones below two frames, down to one frame
	 * and a little (less and the kernel could not deliver a signal). */
	for (i = 0; i < 5; i++)
		deep_leave[i] = kib[i] * 1024;
	deep_leave[5] = 2 * frame - 256;
	deep_leave[6] = frame + 2048;
	deep_leave[7] = frame + 1536;
	deep_leave[8] = frame + 1024;
	start(1);
	atomic_store(&stop, 0);
	ult_attr_init(&a);
	a.stack_size = ULT_STACK_MIN;
	CHECK_EQ(ult_spawn(&d, &a, deep_thread, NULL), 0);
	CHECK_EQ(ult_spawn(&y, NULL, yielder, NULL), 0);
	CHECK_EQ(ult_join(d, NULL), 0);
	CHECK_EQ(ult_join(y, NULL), 0);
	for (i = 0; i < NDEPTH; i++) {
		fprintf(stderr, "%5zu bytes left: %ld switched, %ld owed\n",
		    deep_leave[i], deep_switched[i], deep_owed[i]);
		switched += deep_switched[i];
		if (deep_leave[i] < 2 * frame)
			deep_sw += deep_switched[i];
	}
	CHECK(switched > 0);
	CHECK_EQ(deep_sw, 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * SIGURG that the program raises itself reaches the handler it installed
 * before ult_init, from a foreign thread and from a uthread, by raise(),
 * pthread_kill() and sigqueue(); and preemption keeps working while and
 * after a uthread raises it in a loop (a kick that coincides with a
 * pending SIGURG of the program's is dropped by the kernel and must be
 * sent again).
 */
static atomic_long own_urg;

static void
own_handler(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (sig == SIGURG)
		atomic_fetch_add(&own_urg, 1);
}

static void *
raiser(void *arg)
{
	(void)arg;
	CHECK_EQ(raise(SIGURG), 0);
	CHECK_EQ(pthread_kill(pthread_self(), SIGURG), 0);
	return (NULL);
}

static atomic_long other_runs;
static atomic_int raise_done;

/* Raises its own SIGURG in a loop beside a hog, then waits for the hog
 * to run again: it has to be preempted for that. */
static void *
raising_hog(void *arg)
{
	uint64_t give_up;
	long seen;

	(void)arg;
	for (int i = 0; i < 20000; i++)
		raise(SIGURG);
	seen = atomic_load(&other_runs);
	give_up = ult_now() + 10000000000ull;
	while (
	    atomic_load_explicit(&other_runs, memory_order_relaxed) == seen &&
	    ult_now() < give_up)
		;
	CHECK(atomic_load(&other_runs) != seen); /* preempted again */
	atomic_store(&raise_done, 1);
	return (NULL);
}

static void *
other_hog(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&raise_done, memory_order_relaxed))
		atomic_fetch_add_explicit(&other_runs, 1, memory_order_relaxed);
	return (NULL);
}

void
test_preempt_own_sigurg(void)
{
	struct sigaction sa, old;
	ult_thread_t *t, *h[2];
	union sigval v;

	if (!rt_preempt_available())
		SKIP("no asynchronous preemption in this build");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = own_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGURG, &sa, &old), 0);
	atomic_store(&own_urg, 0);
	start(1);
	CHECK_EQ(raise(SIGURG), 0);
	CHECK_EQ(atomic_load(&own_urg), 1);
	CHECK_EQ(ult_spawn(&t, NULL, raiser, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(atomic_load(&own_urg), 3);
	v.sival_int = 7;
	CHECK_EQ(sigqueue(getpid(), SIGURG, v), 0);
	while (atomic_load(&own_urg) < 4) /* any thread may take it */
		usleep(1000);

	atomic_store(&raise_done, 0);
	CHECK_EQ(ult_spawn(&h[0], NULL, raising_hog, NULL), 0);
	CHECK_EQ(ult_spawn(&h[1], NULL, other_hog, NULL), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_join(h[i], NULL), 0);
	/* A SIGURG raised while a kick is pending merges with it. */
	fprintf(stderr, "own SIGURG handled %ld times of %d\n",
	    atomic_load(&own_urg), 4 + 20000);
	CHECK(atomic_load(&own_urg) > 4 && atomic_load(&own_urg) <= 4 + 20000);
	CHECK_EQ(ult_shutdown(), 0);
	CHECK_EQ(sigaction(SIGURG, &old, NULL), 0);
}
