/*
 * Preemption at its edges: uthreads on the smallest stack.  No timing
 * thresholds: outcomes are counted.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "core/runtime.h"
#include "test.h"
#include "ult.h"

static int
preempt_available(void)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	return (0);
#else
	return (1);
#endif
}

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

/* The size of the signal frame the kernel pushes here; 0 if unknown. */
static size_t
sigframe_size(void)
{
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

	if (!preempt_available())
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

	if (!preempt_available())
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
