/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nice and the kern.sched.* tunables through the public API.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "ult.h"

static atomic_int hogs_stop;

static void *
hog(void *arg)
{
	(void)arg;
	while (!atomic_load(&hogs_stop)) {
		for (volatile int i = 0; i < 50000; i++)
			;
		ult_yield();
	}
	return (NULL);
}

/* Every ULE tunable that makes sense in user space, by FreeBSD name,
 * with its default (DESIGN.md section 14). */
static const struct {
	const char *name;
	long value;
} defaults[] = {
    {"kern.sched.quantum", 94488},
    {"kern.sched.slice", 12},
    {"kern.sched.interact", 30},
    {"kern.sched.preempt_thresh", 48},
    {"kern.sched.static_boost", 136},
    {"kern.sched.idlespins", 10000},
    {"kern.sched.idlespinthresh", 157},
    {"kern.sched.affinity", 1},
    {"kern.sched.balance", 1},
    {"kern.sched.balance_interval", 127},
    {"kern.sched.steal_idle", 1},
    {"kern.sched.steal_thresh", 2},
    {"kern.sched.trysteal_limit", 2},
    {"kern.sched.always_steal", 0},
    {"kern.sched.batch_guard", 0},
    {"kern.sched.nice_weight", 0},
    {"kern.sched.preemption", 1},
    {"kern.ccpu", 0},
    {"ult.child_runs_first", 1},
};

void
test_nice_and_sysctl(void)
{
	struct ult_config cfg = {0};
	struct ult_thread_info a, b;
	ult_thread_t *t[2];
	long v, nv;
	int nice;

	cfg.ncpu = 1;
	CHECK_EQ(ult_init(&cfg), 0);

	/* FreeBSD's defaults at hz 1000, stathz 127. */
	for (unsigned i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		CHECK_EQ(ult_sysctl(defaults[i].name, &v, NULL), 0);
		if (v != defaults[i].value) {
			fprintf(stderr, "%s = %ld\n", defaults[i].name, v);
			CHECK(0);
		}
	}

	/* Set and read back; quantum recomputes the slice. */
	nv = 6;
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, &nv), 0);
	CHECK_EQ(v, 12);
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, NULL), 0);
	CHECK_EQ(v, 6);
	nv = 50000;
	CHECK_EQ(ult_sysctl("kern.sched.quantum", NULL, &nv), 0);
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, NULL), 0);
	CHECK_EQ(v, 6); /* 50000 us / 7874 us per tick, rounded */
	nv = 94488;
	CHECK_EQ(ult_sysctl("kern.sched.quantum", NULL, &nv), 0);
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, NULL), 0);
	CHECK_EQ(v, 12);

	/* Errors. */
	CHECK_EQ(ult_sysctl("kern.sched.nonesuch", &v, NULL), ENOENT);
	CHECK_EQ(ult_sysctl(NULL, &v, NULL), EINVAL);
	nv = -1;
	CHECK_EQ(ult_sysctl("kern.sched.slice", NULL, &nv), EINVAL);
	CHECK_EQ(ult_sysctl("kern.sched.quantum", NULL, &nv), EINVAL);
	nv = 101;
	CHECK_EQ(ult_sysctl("kern.sched.interact", NULL, &nv), EINVAL);
	nv = 2;
	CHECK_EQ(ult_sysctl("kern.sched.balance", NULL, &nv), EINVAL);
	nv = 0;
	CHECK_EQ(ult_sysctl("kern.sched.preemption", NULL, &nv), EPERM);
	CHECK_EQ(ult_sysctl("kern.sched.interact", &v, NULL), 0);
	CHECK_EQ(v, 30); /* failed writes change nothing */

	/*
	 * nice: two yielding hogs on one worker.  Both are batch threads,
	 * and nice adds to the batch priority, so the +20 one sits at least
	 * 20 levels above the best batch priority.  (How the CPU splits
	 * between yielding hogs varies from run to run, as yielders reinsert
	 * ahead in the calendar while their priority climbs; the shares of
	 * CPU hogs are checked exactly in the simulator.)
	 */
	atomic_store(&hogs_stop, 0);
	CHECK_EQ(ult_spawn(&t[0], NULL, hog, NULL), 0);
	CHECK_EQ(ult_spawn(&t[1], NULL, hog, NULL), 0);
	CHECK_EQ(ult_setnice(t[1], 20), 0);
	CHECK_EQ(ult_getnice(t[1], &nice), 0);
	CHECK_EQ(nice, 20);
	CHECK_EQ(ult_getnice(t[0], &nice), 0);
	CHECK_EQ(nice, 0);
	ult_sleep_ns(1000000000);
	CHECK_EQ(ult_thread_info(t[0], &a), 0);
	CHECK_EQ(ult_thread_info(t[1], &b), 0);
	CHECK_EQ(b.nice, 20);
	CHECK(a.priority >= 156 && b.priority >= 156 + 20);
	CHECK_EQ(ult_setnice(t[1], -20), 0);
	CHECK_EQ(ult_getnice(t[1], &nice), 0);
	CHECK_EQ(nice, -20);
	atomic_store(&hogs_stop, 1);
	CHECK_EQ(ult_join(t[0], NULL), 0);
	CHECK_EQ(ult_join(t[1], NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- ult's policy fixes: kern.sched.batch_guard, nice_weight ---- */

/*
 * Shares are counted in work done (loop iterations), not in run time: on
 * a loaded host a worker is descheduled at random, and the uthread that
 * was current then is charged the whole gap in wall-clock run time.
 * work[0] is the others', work[1] the thread under test's.
 */
static atomic_int share_stop;
static atomic_ullong work[2];
static unsigned long burst; /* iterations in about 2 ms */

static unsigned long
spin(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x += i;
	return (n);
}

/* A burst of about 2 ms, then 6 ms of sleep: interactive to ULE. */
static void *
share_sleeper(void *arg)
{
	(void)arg;
	while (!atomic_load(&share_stop)) {
		atomic_fetch_add(&work[0], spin(burst));
		ult_sleep_ns(6000000);
	}
	return (NULL);
}

/* A CPU hog counting into work[arg]. */
static void *
share_hog(void *arg)
{
	atomic_ullong *w = &work[(intptr_t)arg];

	while (!atomic_load(&share_stop))
		atomic_fetch_add(w, spin(10000));
	return (NULL);
}

static double
clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

/* work[1]'s share of the work done in the next second, in %; in *cpu,
 * the CPU the process got meanwhile, per second. */
static double
share_of_1(double *cpu)
{
	unsigned long long s0 = atomic_load(&work[0]),
			   h0 = atomic_load(&work[1]), s1, h1;
	double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID),
	       w0 = clock_s(CLOCK_MONOTONIC);

	usleep(1000000);
	s1 = atomic_load(&work[0]);
	h1 = atomic_load(&work[1]);
	*cpu = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) /
	    (clock_s(CLOCK_MONOTONIC) - w0);
	return (100.0 * (double)(h1 - h0) / (double)(h1 - h0 + s1 - s0 + 1));
}

/*
 * Measure work[1]'s share with tunable `name' at 0 and then at `value',
 * one worker, threads t[0..n-1] already spawned; stop and join them.
 * The runtime charges time by the clock: a worker that the host
 * deschedules charges the gap to whoever was current.  Only a worker
 * that had its CPU can show the policy's effect: otherwise skip.
 */
static void
share_with(const char *name, long value, ult_thread_t **t, int n, double out[2])
{
	long zero = 0;
	double cpu[2];

	usleep(1000000); /* scores and %CPU settle */
	out[0] = share_of_1(&cpu[0]);
	CHECK_EQ(ult_sysctl(name, NULL, &value), 0);
	out[1] = share_of_1(&cpu[1]);
	CHECK_EQ(ult_sysctl(name, NULL, &zero), 0);
	fprintf(stderr,
	    "%s: %.1f%% of the work at 0, %.1f%% at %ld; the worker had "
	    "%.0f%% and %.0f%% of a CPU\n",
	    name, out[0], out[1], value, 100 * cpu[0], 100 * cpu[1]);
	atomic_store(&share_stop, 1);
	for (int i = 0; i < n; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
	if (cpu[0] < 0.8 || cpu[1] < 0.8)
		SKIP("the host kept the worker off its CPU");
}

static void
share_init(void)
{
	struct ult_config cfg = {0};
	long preempt = 0;
	uint64_t t0;

	cfg.ncpu = 1;
	cfg.preempt = 1;
	CHECK_EQ(ult_init(&cfg), 0);
	/* The hogs never yield: without preemption (the sanitizer builds)
	 * no policy can share the worker. */
	CHECK_EQ(ult_sysctl("ult.preempt", &preempt, NULL), 0);
	if (preempt == 0) {
		CHECK_EQ(ult_shutdown(), 0);
		SKIP("no asynchronous preemption in this build");
	}
	atomic_store(&share_stop, 0);
	atomic_store(&work[0], 0);
	atomic_store(&work[1], 0);
	t0 = ult_now();
	burst = spin(1000000);
	burst = (unsigned long)(2e6 * 1e6 / (double)(ult_now() - t0 + 1));
}

/*
 * Eight interactive threads want 200% of one worker: under FreeBSD's rule
 * they keep the interactive queue full and a batch hog beside them gets
 * (almost) nothing.  kern.sched.batch_guard = 20 runs a batch thread
 * about once every 20 ms: the hog must then get more than before, and a
 * share of at least 1%.  (The simulator has the exact figures:
 * sim/scenarios/starvation_guard.scn.)
 */
void
test_batch_guard(void)
{
	ult_thread_t *t[9];
	double share[2];

	share_init();
	for (int i = 0; i < 8; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, share_sleeper, NULL), 0);
	CHECK_EQ(ult_spawn(&t[8], NULL, share_hog, (void *)(intptr_t)1), 0);
	share_with("kern.sched.batch_guard", 20, t, 9, share);
	CHECK(share[1] > share[0]);
	CHECK(share[1] >= 1.0);
}

/*
 * Two CPU hogs at nice 0 and +10 on one worker: FreeBSD's rule shares
 * them about evenly (the simulator: 50/50); with kern.sched.nice_weight
 * the +10 one gets about a tenth (the simulator: 9%,
 * sim/scenarios/nice_weight.scn).  Asserted: it gets less than before,
 * and under 25%.
 */
void
test_nice_weight(void)
{
	ult_thread_t *t[2];
	double share[2];

	share_init();
	CHECK_EQ(ult_spawn(&t[0], NULL, share_hog, (void *)(intptr_t)0), 0);
	CHECK_EQ(ult_spawn(&t[1], NULL, share_hog, (void *)(intptr_t)1), 0);
	CHECK_EQ(ult_setnice(t[1], 10), 0);
	share_with("kern.sched.nice_weight", 1, t, 2, share);
	CHECK(share[1] < share[0]);
	CHECK(share[1] < 25.0);
}
