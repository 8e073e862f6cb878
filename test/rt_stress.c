/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stress: thousands of uthreads yielding, sleeping, spawning, renicing
 * and rebinding at random, on every worker and on more workers than CPUs,
 * with the scheduler's invariants checked concurrently.  Plus fork-join
 * memory: a skynet-like tree must unfold depth first.
 *
 * ULT_STRESS_MS sets the duration of each stress run (default 3000).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "kern/runtime.h"
#include "test.h"
#include "ult.h"

static atomic_long ops, errors, live, max_live;
static uint64_t stress_end;

static void
live_inc(void)
{
	long n = atomic_fetch_add(&live, 1) + 1, m = atomic_load(&max_live);

	while (n > m && !atomic_compare_exchange_weak(&max_live, &m, n))
		;
}

static void *
child(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	live_inc();
	for (int i = test_rand(&seed) % 4; i > 0; i--) {
		if (test_rand(&seed) % 2)
			ult_yield();
		else
			ult_sleep_ns(test_rand(&seed) % 50000);
	}
	atomic_fetch_sub(&live, 1);
	return (arg);
}

static void *
stress_body(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	int ncpu = ult_ncpu(), myerr = (int)(uintptr_t)arg + 1;
	struct ult_attr det;

	live_inc();
	ult_attr_init(&det);
	det.detached = 1;
	/* At least one round each: under a sanitizer, spawning all of them
	 * can take longer than the whole run. */
	do {
		ult_thread_t *t;
		void *r;
		int cpu;

		errno_set(myerr);
		switch (test_rand(&seed) % 10) {
		case 0:
		case 1:
		case 2:
			ult_yield();
			break;
		case 3:
		case 4:
			ult_sleep_ns(test_rand(&seed) % 200000);
			break;
		case 5:
			if (ult_spawn(&t, NULL, child,
				(void *)(uintptr_t)test_rand(&seed)) != 0 ||
			    ult_join(t, &r) != 0)
				atomic_fetch_add(&errors, 1);
			break;
		case 6:
			if (ult_spawn(NULL, &det, child,
				(void *)(uintptr_t)test_rand(&seed)) != 0)
				atomic_fetch_add(&errors, 1);
			break;
		case 7:
			if (ult_setnice(NULL,
				(int)(test_rand(&seed) % 41) - 20))
				atomic_fetch_add(&errors, 1);
			break;
		case 8:
			cpu = (int)(test_rand(&seed) % (unsigned)ncpu);
			if (ult_bind(NULL, cpu) != 0 || ult_cpu() != cpu ||
			    ult_bind(NULL, -1) != 0)
				atomic_fetch_add(&errors, 1);
			break;
		default: {
			struct ult_thread_info in;

			if (ult_thread_info(NULL, &in) != 0 ||
			    in.state != ULT_STATE_RUNNING)
				atomic_fetch_add(&errors, 1);
		}
		}
		if (errno_get() != myerr)
			atomic_fetch_add(&errors, 1);
		atomic_fetch_add(&ops, 1);
	} while (ult_now() < stress_end);
	atomic_fetch_sub(&live, 1);
	return (NULL);
}

static atomic_int checker_stop;
static atomic_long check_failures, checks;

static void *
checker(void *arg)
{
	(void)arg;
	while (!atomic_load(&checker_stop)) {
		const char *err = ult__rt.sched->check();

		if (err != NULL) {
			fprintf(stderr, "invariant: %s\n", err);
			atomic_fetch_add(&check_failures, 1);
		}
		atomic_fetch_add(&checks, 1);
		usleep(500);
	}
	return (NULL);
}

static void
stress(int ncpu, int nthreads, int with_checker)
{
	struct ult_config cfg = {0};
	const char *ms = getenv("ULT_STRESS_MS");
	ult_thread_t **t = calloc((size_t)nthreads, sizeof(*t));
	pthread_t chk;

	CHECK(t != NULL);
	cfg.ncpu = ncpu;
	CHECK_EQ(ult_init(&cfg), 0);
	atomic_store(&ops, 0);
	atomic_store(&errors, 0);
	atomic_store(&checker_stop, 0);
	atomic_store(&check_failures, 0);
	atomic_store(&checks, 0);
	stress_end = ult_now() + (uint64_t)(ms ? atoi(ms) : 3000) * 1000000;
	if (with_checker)
		CHECK_EQ(pthread_create(&chk, NULL, checker, NULL), 0);
	for (int i = 0; i < nthreads; i++)
		CHECK_EQ(
		    ult_spawn(&t[i], NULL, stress_body, (void *)(uintptr_t)i),
		    0);
	for (int i = 0; i < nthreads; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	if (with_checker) {
		atomic_store(&checker_stop, 1);
		pthread_join(chk, NULL);
		CHECK(atomic_load(&checks) > 0);
		CHECK_EQ(atomic_load(&check_failures), 0);
	}
	ncpu = ult_ncpu();
	CHECK_EQ(ult_shutdown(), 0);
	CHECK_EQ(atomic_load(&errors), 0);
	CHECK_EQ(atomic_load(&live), 0);
	CHECK(atomic_load(&ops) >= nthreads);
	printf("%ld operations by %d uthreads on %d workers\n",
	    atomic_load(&ops), nthreads, ncpu);
	free(t);
}

void
test_stress_all_workers(void)
{
	stress(0, 2000, 0);
}

void
test_stress_oversubscribed(void)
{
	stress(8, 2000, 0);
}

void
test_stress_invariants(void)
{
	stress(4, 1000, 1);
}

/* ---- fork-join ---- */

/*
 * 10^4 leaves (11,111 threads per tree), 10^3 under ThreadSanitizer: it
 * gives every fiber a thread slot, reuses the slots of destroyed ones
 * only lazily, and dies past 8128 ("Thread limit exceeded"), which three
 * trees of 11,111 reached in about half the runs.
 */
#if defined(__SANITIZE_THREAD__)
#define FJ_LEVELS 3
#define FJ_LEAVES 1000ul
#else
#define FJ_LEVELS 4
#define FJ_LEAVES 10000ul
#endif

static void *
fj_node(void *arg)
{
	uintptr_t v = (uintptr_t)arg, level = v & 0xff, base = v >> 8;
	ult_thread_t *c[10];
	uintptr_t sum = 0;

	live_inc();
	if (level == 0) {
		atomic_fetch_sub(&live, 1);
		return ((void *)base);
	}
	for (uintptr_t i = 0; i < 10; i++) {
		uintptr_t sub = base * 10 + i;

		CHECK_EQ(ult_spawn(&c[i], NULL, fj_node,
			     (void *)((sub << 8) | (level - 1))),
		    0);
	}
	for (int i = 0; i < 10; i++) {
		void *r;

		CHECK_EQ(ult_join(c[i], &r), 0);
		sum += (uintptr_t)r;
	}
	atomic_fetch_sub(&live, 1);
	return ((void *)sum);
}

static long
fork_join(int ncpu, long child_first)
{
	struct ult_config cfg = {0};
	ult_thread_t *root;
	void *r;

	cfg.ncpu = ncpu;
	CHECK_EQ(ult_init(&cfg), 0);
	CHECK_EQ(ult_sysctl("ult.child_runs_first", NULL, &child_first), 0);
	/* A slice end lets a waiting parent go on and widens the tree; under
	 * a sanitizer, ten or more times slower, that made the depth-first
	 * tree look as wide as the breadth-first one.  The order of the tree
	 * is the point here, not slices. */
	CHECK_EQ(ult_sysctl("kern.sched.quantum", NULL, &(long){1000000}), 0);
	atomic_store(&live, 0);
	atomic_store(&max_live, 0);
	CHECK_EQ(ult_spawn(&root, NULL, fj_node, (void *)FJ_LEVELS), 0);
	CHECK_EQ(ult_join(root, &r), 0);
	/* FJ_LEAVES leaves numbered 0..FJ_LEAVES-1 */
	CHECK_EQ((uintptr_t)r, (FJ_LEAVES - 1) * FJ_LEAVES / 2);
	CHECK_EQ(ult_shutdown(), 0);
	return (atomic_load(&max_live));
}

/*
 * A 10-ary tree of 11,111 threads.  With children running first it
 * unfolds depth first: on one worker one path (5 threads, the root and
 * one per level) is alive at a time, against most of the tree breadth first; a
 * slice end can let a waiting parent go on a little (more so on a slow, e.g.
 * sanitized, build).  On several workers idle ones take work and start subtrees
 * of their own, so more are alive, but still a small part of the tree.
 */
void
test_fork_join_depth_first(void)
{
	long dfs1 = fork_join(1, 1), bfs1 = fork_join(1, 0), dfs2;

	dfs2 = fork_join(2, 1);
	printf("max live threads: 1 worker %ld child-first, %ld without; "
	       "2 workers %ld child-first\n",
	    dfs1, bfs1, dfs2);
	/* Slice ends interleave the tree a little; under a sanitizer, which
	 * slows the code 10-50x, more of them fall inside it. */
	CHECK(dfs1 >= FJ_LEVELS + 1 && dfs1 <= 100 * TEST_SCALE);
	/* Without child-first the tree unfolds breadth first: nearly every
	 * thread is alive at once (fewer under a sanitizer, where leaves
	 * may finish before the spawner is done). */
	CHECK(bfs1 > (TEST_SCALE > 1 ? 2 * dfs1 : 1000));
	CHECK(dfs2 < (long)(FJ_LEAVES / 9));
}
