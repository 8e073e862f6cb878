/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Scheduling behaviour of the real runtime: yield order, sleeps, binding,
 * migration by stealing, introspection, errno across switches, an idle
 * runtime's CPU use.
 */
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "test.h"
#include "ult.h"

static void
init_n(int ncpu)
{
	struct ult_config cfg = {0};

	cfg.ncpu = ncpu;
	CHECK_EQ(ult_init(&cfg), 0);
}

/* ---- yield order ---- */

#define RR_N 4
#define RR_ROUNDS 100

static atomic_int rr_started;
static int rr_log[RR_N * RR_ROUNDS];
static int rr_len;
static int rr_pri[RR_N][2];
static long rr_invol[RR_N];

static void *
rr_body(void *arg)
{
	int id = (int)(intptr_t)arg;
	struct ult_thread_info in;

	atomic_fetch_add(&rr_started, 1);
	while (atomic_load(&rr_started) < RR_N)
		ult_yield();
	CHECK_EQ(ult_thread_info(NULL, &in), 0);
	rr_pri[id][0] = in.priority;
	rr_invol[id] = (long)in.nivcsw;
	for (int i = 0; i < RR_ROUNDS; i++) {
		rr_log[rr_len++] = id; /* one worker: no data race */
		ult_yield();
	}
	CHECK_EQ(ult_thread_info(NULL, &in), 0);
	rr_pri[id][1] = in.priority;
	rr_invol[id] = (long)in.nivcsw - rr_invol[id];
	return (NULL);
}

/*
 * Equal threads on one worker take turns in a fixed order: a yield puts
 * the caller at the tail of its queue.  A stat tick that lands in the
 * middle may change a priority (and so the order), and a preemption or
 * an AST (the slice ran out: a slow host, a sanitizer) puts a thread at
 * the head of the queue; such attempts are recognised and repeated.
 * So is one out of order with no sign of either: a priority can move
 * and come back within an attempt, and the timeshare calendar turns
 * under a stat tick.  A yield that queued at the head, or in any order
 * but FIFO, never gives one attempt in fifty in strict rotation.
 */
void
test_yield_round_robin(void)
{
	int clean = 0;

	init_n(1);
	for (int attempt = 0; attempt < 50 && !clean; attempt++) {
		ult_thread_t *t[RR_N];
		int same = 1;

		atomic_store(&rr_started, 0);
		rr_len = 0;
		for (intptr_t i = 0; i < RR_N; i++)
			CHECK_EQ(ult_spawn(&t[i], NULL, rr_body, (void *)i), 0);
		for (int i = 0; i < RR_N; i++)
			CHECK_EQ(ult_join(t[i], NULL), 0);
		CHECK_EQ(rr_len, RR_N * RR_ROUNDS);
		for (int i = 0; i < RR_N; i++)
			same &= rr_pri[i][0] == rr_pri[0][0] &&
			    rr_pri[i][1] == rr_pri[0][0] && rr_invol[i] == 0;
		if (!same)
			continue;
		clean = 1;
		for (int i = 0; i < RR_N; i++)
			for (int j = 0; j < i; j++)
				clean &= rr_log[i] != rr_log[j];
		for (int i = RR_N; i < RR_N * RR_ROUNDS; i++)
			clean &= rr_log[i] == rr_log[i - RR_N];
	}
	CHECK(clean);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- sleeping ---- */

static atomic_int early;

static void *
sleeper(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < 20; i++) {
		uint64_t d = ult_now() + test_rand(&seed) % 3000000;

		CHECK_EQ(ult_sleep_until(d), 0);
		if (ult_now() < d)
			atomic_fetch_add(&early, 1);
	}
	CHECK_EQ(ult_sleep_until(ult_now() - 1000), 0); /* already past */
	return (NULL);
}

void
test_sleep_not_early(void)
{
	ult_thread_t *t[64];
	uint64_t d;

	init_n(0);
	atomic_store(&early, 0);
	for (uintptr_t i = 0; i < 64; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, sleeper, (void *)(i + 1)), 0);
	d = ult_now() + 2000000;
	CHECK_EQ(ult_sleep_until(d), 0); /* a foreign thread sleeps too */
	CHECK(ult_now() >= d);
	for (int i = 0; i < 64; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(atomic_load(&early), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- binding and migration ---- */

static atomic_int bind_bad;

static void *
bound_child(void *arg)
{
	(void)arg;
	return ((void *)(intptr_t)ult_cpu());
}

static void *
bound_body(void *arg)
{
	int cpu = (int)(intptr_t)arg;

	for (int i = 0; i < 200; i++) {
		if (ult_cpu() != cpu)
			atomic_fetch_add(&bind_bad, 1);
		if (i % 3 == 0)
			ult_sleep_ns(50000);
		else
			ult_yield();
	}
	return (NULL);
}

static void *
self_binder(void *arg)
{
	int n = ult_ncpu();

	(void)arg;
	for (int i = 0; i < 50; i++) {
		int cpu = i % n;

		CHECK_EQ(ult_bind(NULL, cpu), 0);
		CHECK_EQ(ult_cpu(), cpu);
		ult_yield();
		CHECK_EQ(ult_cpu(), cpu);
	}
	CHECK_EQ(ult_bind(NULL, -1), 0);
	return (NULL);
}

void
test_bind_stays(void)
{
	struct ult_attr a;
	ult_thread_t *t[16], *s, *c;
	void *r;

	init_n(4);
	atomic_store(&bind_bad, 0);
	ult_attr_init(&a);
	for (intptr_t i = 0; i < 16; i++) {
		a.cpu = (int)(i % 4);
		CHECK_EQ(ult_spawn(&t[i], &a, bound_body, (void *)(i % 4)), 0);
	}
	CHECK_EQ(ult_spawn(&s, NULL, self_binder, NULL), 0);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(ult_join(s, NULL), 0);
	CHECK_EQ(atomic_load(&bind_bad), 0);
	a.cpu = 3;
	CHECK_EQ(ult_spawn(&c, &a, bound_child, NULL), 0);
	CHECK_EQ(ult_join(c, &r), 0);
	CHECK_EQ((intptr_t)r, 3);
	CHECK_EQ(ult_shutdown(), 0);
}

static atomic_int on_cpu1, stop_hogs;

static void *
spinner(void *arg)
{
	atomic_int *seen = arg; /* bit per cpu this thread ran on */

	while (!atomic_load(&stop_hogs)) {
		atomic_fetch_or(seen, 1 << ult_cpu());
		if (ult_cpu() == 1)
			atomic_fetch_add(&on_cpu1, 1);
		for (volatile int i = 0; i < 20000; i++)
			;
		ult_yield();
	}
	return (NULL);
}

static void *
napper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_hogs))
		ult_sleep_ns(200000);
	return (NULL);
}

/*
 * Threads queued on worker 0 move to worker 1 when worker 1 runs out of
 * work: its thread going to sleep leaves it idle and it steals.  The
 * balancer is off, so only stealing can do it.
 */
void
test_migrate_when_idle(void)
{
	struct ult_attr a;
	struct ult_cpu_info ci;
	struct ult_thread_info in;
	ult_thread_t *t[4], *n;
	atomic_int seen[4];
	long off = 0, on = 1;
	uint64_t until;

	init_n(2);
	CHECK_EQ(ult_sysctl("kern.sched.balance", NULL, &off), 0);
	atomic_store(&on_cpu1, 0);
	atomic_store(&stop_hogs, 0);
	ult_attr_init(&a);
	a.cpu = 0;
	for (int i = 0; i < 4; i++) {
		atomic_init(&seen[i], 0);
		CHECK_EQ(ult_spawn(&t[i], &a, spinner, &seen[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ult_bind(t[i], -1), 0);
	a.cpu = 1;
	CHECK_EQ(ult_spawn(&n, &a, napper, NULL), 0);
	until = ult_now() + 10000000000ull;
	while (atomic_load(&on_cpu1) == 0 && ult_now() < until)
		ult_sleep_ns(1000000);
	atomic_store(&stop_hogs, 1);
	CHECK(atomic_load(&on_cpu1) > 0);
	CHECK_EQ(ult_cpu_info(1, &ci), 0);
	CHECK(ci.steals > 0);
	/* A thread seen on both workers counted its migration.  (One that
	 * was stolen before it ever ran did not migrate.) */
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(ult_thread_info(t[i], &in), 0);
		if (atomic_load(&seen[i]) == 3)
			CHECK(in.nmigrations > 0);
	}
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(ult_join(n, NULL), 0);
	CHECK_EQ(ult_sysctl("kern.sched.balance", NULL, &on), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- a burst of spawns reaches the parked workers ---- */

#define BURST_N 8

static atomic_int burst_ran[BURST_N];

static void *
burst_spin(void *arg)
{
	struct ult_thread_info in;
	uint64_t until = ult_now() + 200000000ull;

	(void)arg;
	CHECK_EQ(ult_thread_info(NULL, &in), 0);
	CHECK(in.cpu >= 0 && in.cpu < BURST_N); /* never the spare */
	atomic_store(&burst_ran[in.cpu], 1);
	while (ult_now() < until)
		;
	CHECK_EQ(ult_thread_info(NULL, &in), 0);
	CHECK(in.cpu >= 0 && in.cpu < BURST_N);
	atomic_store(&burst_ran[in.cpu], 1);
	return (NULL);
}

/*
 * The main thread spawns one spinner per worker while every worker is
 * parked: the spawns must wake enough of them.  4BSD woke the first idle
 * CPU on every spawn, the same one until it left its idle loop, and left
 * most workers parked beside a full queue (found by ultsim; the scenario
 * is sim/scenarios/spawn_burst.scn).  Each spinner notes its worker at
 * its start and its end; at least half the workers must have run one.
 */
void
test_spawn_burst_wakes(void)
{
	ult_thread_t *t[BURST_N];
	int workers = 0;

	init_n(BURST_N);
	for (int i = 0; i < BURST_N; i++)
		atomic_store(&burst_ran[i], 0);
	usleep(50000); /* every worker parks */
	for (int i = 0; i < BURST_N; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, burst_spin, NULL), 0);
	for (int i = 0; i < BURST_N; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	for (int i = 0; i < BURST_N; i++)
		workers += atomic_load(&burst_ran[i]);
	if (workers < BURST_N / 2)
		fprintf(stderr, "spinners ran on %d of %d workers\n", workers,
		    BURST_N);
	CHECK(workers >= BURST_N / 2);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- introspection ---- */

static atomic_int info_go;

static void *
info_busy(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++) {
		for (volatile int k = 0; k < 100000; k++)
			;
		ult_yield();
	}
	while (!atomic_load(&info_go))
		ult_sleep_ns(1000000);
	return (NULL);
}

void
test_info_sane(void)
{
	struct ult_attr a;
	struct ult_thread_info in, in2;
	struct ult_cpu_info ci;
	ult_thread_t *t, *u;
	uint64_t t0 = ult_now(), busy = 0, idle = 0;

	init_n(2);
	atomic_store(&info_go, 0);
	ult_attr_init(&a);
	a.name = "a-rather-long-thread-name-that-gets-cut";
	a.nice = 7;
	CHECK_EQ(ult_spawn(&t, &a, info_busy, NULL), 0);
	a.name = NULL;
	a.nice = 0;
	CHECK_EQ(ult_spawn(&u, &a, info_busy, NULL), 0);
	/* Wait (however long a loaded machine takes) until both sleep. */
	do {
		ult_sleep_ns(10000000);
		CHECK_EQ(ult_thread_info(t, &in), 0);
		CHECK_EQ(ult_thread_info(u, &in2), 0);
	} while (
	    in.state != ULT_STATE_SLEEPING || in2.state != ULT_STATE_SLEEPING);
	CHECK_EQ(strlen(in.name), 31);
	CHECK(strncmp(in.name, "a-rather-long", 13) == 0);
	CHECK_EQ(in2.name[0], '\0');
	CHECK(in.id > 0 && in2.id > in.id);
	CHECK_EQ(in.nice, 7);
	CHECK(in.cpu >= 0 && in.cpu < 2);
	if (strcmp(ult_sched_name(), "ULE") == 0) {
		CHECK(in.priority >= 88 && in.priority <= 223);
		CHECK(in.interact_score >= 0 && in.interact_score <= 100);
	} else {
		/* 4BSD: no interactivity score; a sleeper holds its
		 * kernel sleep priority (PWAIT) until it runs again. */
		CHECK(in.priority >= 48 && in.priority <= 223);
		CHECK_EQ(in.interact_score, -1);
	}
	CHECK_EQ(in.state, ULT_STATE_SLEEPING);
	CHECK(in.runtime_ns > 1000000);
	/* 50 yields and a sleep; a yield that finds its slice over (a slow
	 * host, a sanitizer) switches through the AST, involuntarily. */
	CHECK(in.nvcsw + in.nivcsw >= 50);
	CHECK(in.nvcsw >= 1);
	CHECK(in.pctcpu >= 0.0 && in.pctcpu <= 100.0);
	atomic_store(&info_go, 1);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_join(u, NULL), 0);
	for (int c = 0; c < 2; c++) {
		CHECK_EQ(ult_cpu_info(c, &ci), 0);
		CHECK_EQ(ci.cpu, c);
		CHECK(ci.load >= 0);
		busy += ci.busy_ns;
		idle += ci.idle_ns;
	}
	CHECK(busy > 1000000);
	CHECK(busy + idle <= 2 * (ult_now() - t0) + 10000000);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- errno ---- */

static atomic_int errno_bad;

static void *
errno_child(void *arg)
{
	errno_set((int)(intptr_t)arg);
	ult_yield();
	return ((void *)(intptr_t)errno_get());
}

static void *
errno_body(void *arg)
{
	int id = 1000 + (int)(intptr_t)arg;

	for (int i = 0; i < 100; i++) {
		ult_thread_t *c;
		void *r;

		errno_set(id);
		switch (i % 4) {
		case 0:
			ult_yield();
			break;
		case 1:
			ult_sleep_ns(20000);
			break;
		case 2:
			CHECK_EQ(ult_spawn(&c, NULL, errno_child,
				     (void *)(intptr_t)(id + 1)),
			    0);
			CHECK_EQ(errno_get(), id); /* the child ran meanwhile */
			CHECK_EQ(ult_join(c, &r), 0);
			CHECK_EQ((intptr_t)r, id + 1);
			break;
		default:
			CHECK(write(-1, "", 0) < 0);  /* the runtime does not */
			CHECK_EQ(errno_get(), EBADF); /* hide real errors */
			errno_set(id);
			ult_yield();
		}
		if (errno_get() != id)
			atomic_fetch_add(&errno_bad, 1);
	}
	return (NULL);
}

/* Plain errno, as most code uses it, on threads that cannot migrate. */
static void *
errno_plain(void *arg)
{
	int id = 5000 + (int)(intptr_t)arg;

	for (int i = 0; i < 100; i++) {
		errno = id;
		if (i % 2)
			ult_yield();
		else
			ult_sleep_ns(10000);
		if (errno != id)
			atomic_fetch_add(&errno_bad, 1);
	}
	return (NULL);
}

/*
 * errno is per uthread: it survives yields, sleeps and spawns with
 * several workers, whatever other uthreads do to it meanwhile.
 */
void
test_errno_survives(void)
{
	struct ult_attr a;
	ult_thread_t *t[48];

	init_n(2);
	atomic_store(&errno_bad, 0);
	ult_attr_init(&a);
	for (intptr_t i = 0; i < 32; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, errno_body, (void *)i), 0);
	for (intptr_t i = 32; i < 48; i++) {
		a.cpu = (int)(i % 2);
		CHECK_EQ(ult_spawn(&t[i], &a, errno_plain, (void *)i), 0);
	}
	for (int i = 0; i < 48; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(atomic_load(&errno_bad), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static const int fp_modes[4] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD,
    FE_TOWARDZERO};
static atomic_int fp_bad;

/* Holds its own rounding mode across switches: fegetround reads the x87
 * control word, and the double division rounds by MXCSR. */
static void *
fp_keeper(void *arg)
{
	int mode = fp_modes[(intptr_t)arg % 4];
	volatile double one = 1.0, three = 3.0;
	double want;

#ifdef ULT_CONTEXT_ASM
	/* The ucontext backend starts a thread with what getcontext saw in
	 * its creator; the assembly one with the defaults. */
	if (fegetround() != FE_TONEAREST)
		atomic_fetch_add(&fp_bad, 1);
#endif
	CHECK_EQ(fesetround(mode), 0);
	want = one / three;
	for (int i = 0; i < 2000; i++) {
		if (i % 3)
			ult_yield();
		else
			ult_sleep_ns(1000);
		if (fegetround() != mode || one / three != want)
			atomic_fetch_add(&fp_bad, 1);
	}
	return (NULL);
}

/*
 * The floating-point control state (MXCSR and the x87 control word) is
 * per uthread: a new one starts at the defaults whatever its creator set
 * (assembly backend), and each keeps its rounding mode while others on its
 * worker change theirs.  The switch loads it only when it differs.
 */
void
test_fpenv_per_thread(void)
{
	ult_thread_t *t[16];

	init_n(2);
	atomic_store(&fp_bad, 0);
	CHECK_EQ(fesetround(FE_UPWARD), 0);
	for (intptr_t i = 0; i < 16; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, fp_keeper, (void *)i), 0);
	CHECK_EQ(fesetround(FE_TONEAREST), 0);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(atomic_load(&fp_bad), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- idle ---- */

static void *
noop(void *arg)
{
	return (arg);
}

static double
cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

/*
 * With nothing to run, workers park and the clock thread stops ticking:
 * over half a second of idleness the process uses a small fraction of
 * the 1 s of CPU that two spinning workers would burn.
 */
void
test_idle_uses_no_cpu(void)
{
	ult_thread_t *t;
	double c0;

	init_n(2);
	CHECK_EQ(ult_spawn(&t, NULL, noop, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	usleep(50000);
	c0 = cpu_seconds();
	usleep(500000);
	CHECK(cpu_seconds() - c0 < 0.05);
	CHECK_EQ(ult_shutdown(), 0);
}
