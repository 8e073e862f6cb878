/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * micro: experiment `micro` of the benchmark contract.  Each case runs the
 * same code on uthreads (runtime `ult`, policy ULE) and on kernel threads
 * (runtime `pthread`, the 1:1 baseline); only the thread and sync calls
 * differ.  stdout carries only result lines
 *
 *	R<TAB>micro<TAB>case<TAB>runtime<TAB>metric<TAB>value
 *
 * and stderr says what was measured.  Cases (full sizes; --quick is much
 * smaller):
 *
 *   bare_switch        ult only: a switch between two register sets, the
 *                      floor under every uthread switch; ns per switch
 *   yield              2 threads on one worker / one pinned CPU yield 1e6
 *                      times each; ns per yield
 *   create_join        create + run + join of an empty thread, 1e5 times
 *                      (pthread 1e4) in sequence
 *   create_join_foreign the same from the main thread, which for ult is a
 *                      foreign thread
 *   mutex_handoff      two threads pass a turn through a mutex and a
 *                      condvar, 1e5 handoffs; ns per handoff
 *   condvar_prodcons   producer and consumer, 64-slot queue, one mutex,
 *                      two condvars, 1e6 items; ns per item
 *   mutex_uncontended  lock + unlock of a private mutex, one thread
 *   mutex_contended4   4 threads increment one counter under one mutex
 *   skynet             10-ary tree of 1e6 leaves (ult only: 1.1M kernel
 *                      threads are out of reach); ms and peak RSS
 *   skynet_10k         the same with 1e4 leaves, both runtimes
 *   thread_ring        503 threads pass a token 1e6 times; ns per pass and
 *                      the id that gets it at 0
 *   tls_cost           yield and create_join on ult with per-uthread TLS
 *                      (the default) and with per-worker TLS
 *                      (ult-tlsworker), rounds interleaved: rows
 *                      yield_tls, create_join_tls and, on one worker,
 *                      create_join_tls_w1
 *   trace_cost         yield, mutex_handoff and create_join on ult with
 *                      ULT_TRACE off and on (a file under $TMPDIR, made
 *                      and removed each round), rounds interleaved: rows
 *                      yield_trace, mutex_handoff_trace, create_join_trace
 *                      with runtimes ult and ult+trace
 *
 * --loaded runs the cases beside one spinning process per CPU and names
 * the experiment micro_loaded; --load-only only spins those processes
 * until it is killed, as load for a peer (bench/run.sh).
 *
 * "All workers" means ult_init's default (one per CPU) for ult and
 * unpinned threads for pthread; kernel threads get 256 KiB stacks, a
 * uthread's default.  For the all-worker cases stderr also gives the ult
 * figure on one worker, where no handoff has to wake a worker in the
 * kernel.
 *
 * Each figure is the median of 5 rounds (3 with --quick, and 3 when the
 * first round took over a second); every ult round runs between its own
 * ult_init and ult_shutdown, every skynet round in a fresh process.  The
 * results are checked (counts, sums, the ring's answer); a wrong one exits
 * 1.  --div D divides the full sizes of the counted cases by D (not
 * skynet's), for bench/busy.sh, which runs them many times on a loaded
 * host.  Usage: micro [--quick] [--rounds K] [--div D] [--data DIR]
 * [case ...]
 *
 * thread_ring and skynet are in micro_tree.c.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/context.h"
#include "load.h"
#include "micro.h"
#include "ult.h"
#include "work.h"

/*
 * Sanitizer builds run the CTest smoke entry (--quick) at a tenth of its
 * size and one round: under ThreadSanitizer a uthread takes milliseconds
 * to create, and 10,000 kernel threads take gigabytes of shadow memory.
 */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define QCAP 64
#define MAXTHR 8

const char *const rtname[RT_N] = {"ult", "pthread"};
const char *ult_rt = "ult"; /* what RT_ULT starts (tls_cost) */
int rounds;		    /* 0 until main has read the command line */
int all_ncpu;		    /* workers for the "all workers" cases; 0: all */
static int size_div = 1;    /* --div: the full sizes divided by this */

/* ---- what every case runs on ---- */

/* Runtime r for a round: ncpu workers for ult, 0: the "all" number. */
void
rt_start(int r, int ncpu)
{
	bw_rt_start(r == RT_ULT ? ult_rt : rtname[r],
	    ncpu != 0 ? ncpu : all_ncpu, 0);
}

/* One mutex and two condvars; a round that uses them starts and stops
 * with xs_start and xs_stop, which make them after the runtime's start
 * and destroy them before its stop. */
static struct {
	bw_mutex_t m;
	bw_cond_t c[2];
} xs;

static void
xs_start(int r, int ncpu)
{
	rt_start(r, ncpu);
	bw_mutex_init(&xs.m);
	for (int i = 0; i < 2; i++)
		bw_cond_init(&xs.c[i]);
}

static void
xs_stop(void)
{
	for (int i = 0; i < 2; i++)
		bw_cond_destroy(&xs.c[i]);
	bw_mutex_destroy(&xs.m);
	bw_rt_stop();
}

/*
 * Threads of a case wait at a gate until all exist, so that none runs
 * alone meanwhile, and each notes when it finished: a round lasts from
 * opening the gate to the last finish, which keeps thread creation and the
 * main thread's own wakeup from the joins out of it.
 */
static atomic_int gate;
_Atomic uint64_t t_end;

static void
gate_wait(void)
{
	while (!atomic_load_explicit(&gate, memory_order_acquire))
		bw_yield();
}

void
mark_end(void)
{
	uint64_t now = ult_now(), old = atomic_load(&t_end);

	while (old < now && !atomic_compare_exchange_weak(&t_end, &old, now))
		;
}

/* Run fn(arg[i]) on n threads; returns the gated wall time in ns. */
static uint64_t
run_threads(int n, void *(*fn)(void *), void **arg)
{
	bw_thread_t t[MAXTHR];
	uint64_t t0;

	atomic_store(&gate, 0);
	atomic_store(&t_end, 0);
	for (int i = 0; i < n; i++)
		bw_must(bw_spawn(&t[i], fn, arg != NULL ? arg[i] : NULL),
		    "spawn");
	t0 = ult_now();
	atomic_store_explicit(&gate, 1, memory_order_release);
	for (int i = 0; i < n; i++)
		bw_join(&t[i]);
	return (atomic_load(&t_end) - t0);
}

/* ---- bare_switch: two register sets, no scheduler ---- */

static struct ult__ctx bare_main, bare_co;

static void
bare_body(void *arg)
{
	(void)arg;
	for (;;)
		ult__ctx_switch(&bare_co, &bare_main);
}

/* ns per switch (a round trip is two) */
static double
bare_switch_ns(long n)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	uint64_t t0;

	ult__ctx_init(&bare_co, stack, sizeof(stack), bare_body, NULL);
	t0 = ult_now();
	for (long i = 0; i < n; i++)
		ult__ctx_switch(&bare_main, &bare_co);
	return ((double)(ult_now() - t0) / (2.0 * (double)n));
}

/* ---- yield ---- */

static long yield_n;
static int pin_cpu; /* the first CPU this process may run on */

static void *
yielder(void *arg)
{
	(void)arg;
	if (!bw_ult)
		bw_must(bw_pin(pin_cpu), "pthread_setaffinity_np");
	gate_wait();
	for (long i = 0; i < yield_n; i++)
		bw_yield();
	mark_end();
	return (NULL);
}

double
yield_ns(int r, long n)
{
	long slice = 1000000;
	uint64_t ns;

	rt_start(r, 1);
	/* Keep slice ends out of the measurement. */
	if (r == RT_ULT)
		bw_must(ult_sysctl("kern.sched.slice", NULL, &slice), "sysctl");
	yield_n = n;
	ns = run_threads(2, yielder, NULL);
	bw_rt_stop();
	return ((double)ns / (2.0 * (double)n));
}

/* ---- create_join ---- */

static void *
empty(void *arg)
{
	return (arg);
}

/* The create_join cases' warm-up: a tenth of the run, at most 1000. */
static long
warm_n(long n)
{
	return (n / 10 < 1000 ? n / 10 : 1000);
}

static void *
spawn_loop(void *arg)
{
	long n = *(long *)arg;
	uint64_t t0 = ult_now();

	for (long i = 0; i < n; i++) {
		bw_thread_t t;

		bw_must(bw_spawn(&t, empty, NULL), "spawn");
		bw_join(&t);
	}
	return ((void *)(uintptr_t)(ult_now() - t0));
}

double
create_join_ns(int r, long n)
{
	long warm = warm_n(n);
	bw_thread_t t;
	void *ns;

	rt_start(r, 0);
	/* Warm the stack pool (ult) or glibc's stack cache (pthread). */
	bw_must(bw_spawn(&t, spawn_loop, &warm), "spawn");
	bw_join(&t);
	bw_must(bw_spawn(&t, spawn_loop, &n), "spawn");
	ns = bw_join(&t);
	bw_rt_stop();
	return ((double)(uintptr_t)ns / (double)n);
}

/* The same from the main thread: for ult a foreign thread, the README's
 * own pattern; for pthread the same calls as above. */
static double
create_join_foreign_ns(int r, long n)
{
	long warm = warm_n(n);
	uint64_t t0 = 0;
	bw_thread_t t;

	rt_start(r, 0);
	for (long i = 0; i < warm + n; i++) {
		if (i == warm)
			t0 = ult_now();
		bw_must(bw_spawn(&t, empty, NULL), "spawn");
		bw_join(&t);
	}
	t0 = ult_now() - t0;
	bw_rt_stop();
	return ((double)t0 / (double)n);
}

/* ---- mutex_handoff ---- */

static long handoff_n, turn, handoffs;

static void *
handoff(void *arg)
{
	long me = (long)(intptr_t)arg;

	gate_wait();
	for (long i = 0; i < handoff_n / 2; i++) {
		bw_mutex_lock(&xs.m);
		while (turn != me)
			bw_cond_wait(&xs.c[0], &xs.m);
		turn = 1 - me;
		handoffs++;
		bw_cond_signal(&xs.c[0]);
		bw_mutex_unlock(&xs.m);
	}
	mark_end();
	return (NULL);
}

/* System calls ult made to hand work over: parks and futex wakes. */
static uint64_t
futex_calls(void)
{
	struct ult_cpu_info ci;
	uint64_t n = 0;

	for (int c = 0; ult_cpu_info(c, &ci) == 0; c++)
		n += ci.parks + ci.futex_wakes;
	return (n);
}

/* futex calls per handoff in the last ult round (all workers) */
static double handoff_futex = -1;

double
mutex_handoff_ns(int r, long n)
{
	void *arg[2] = {(void *)0, (void *)1};
	uint64_t ns, f0 = 0;

	xs_start(r, 0);
	handoff_n = n;
	turn = handoffs = 0;
	if (r == RT_ULT)
		f0 = futex_calls();
	ns = run_threads(2, handoff, arg);
	if (r == RT_ULT && all_ncpu == 0)
		handoff_futex = (double)(futex_calls() - f0) / (double)handoffs;
	xs_stop();
	if (handoffs != n / 2 * 2)
		bw_die("mutex_handoff %s: %ld handoffs, want %ld", rtname[r],
		    handoffs, n / 2 * 2);
	return ((double)ns / (double)handoffs);
}

/* ---- condvar_prodcons ---- */

static long pc_n, qbuf[QCAP], qhead, qlen, qsum;

static void *
producer(void *arg)
{
	(void)arg;
	gate_wait();
	for (long i = 0; i < pc_n; i++) {
		bw_mutex_lock(&xs.m);
		while (qlen == QCAP)
			bw_cond_wait(&xs.c[0], &xs.m); /* not_full */
		qbuf[(qhead + qlen++) % QCAP] = i;
		bw_cond_signal(&xs.c[1]);
		bw_mutex_unlock(&xs.m);
	}
	return (NULL);
}

static void *
consumer(void *arg)
{
	long sum = 0;

	(void)arg;
	gate_wait();
	for (long i = 0; i < pc_n; i++) {
		bw_mutex_lock(&xs.m);
		while (qlen == 0)
			bw_cond_wait(&xs.c[1], &xs.m); /* not_empty */
		sum += qbuf[qhead];
		qhead = (qhead + 1) % QCAP;
		qlen--;
		bw_cond_signal(&xs.c[0]);
		bw_mutex_unlock(&xs.m);
	}
	mark_end();
	qsum = sum;
	return (NULL);
}

static void *
prodcons(void *arg)
{
	return (arg != NULL ? producer(NULL) : consumer(NULL));
}

static double
condvar_prodcons_ns(int r, long n)
{
	void *arg[2] = {(void *)1, NULL};
	uint64_t ns;

	xs_start(r, 0);
	pc_n = n;
	qhead = qlen = qsum = 0;
	ns = run_threads(2, prodcons, arg);
	xs_stop();
	if (qsum != n * (n - 1) / 2)
		bw_die("condvar_prodcons %s: sum %ld, want %ld", rtname[r],
		    qsum, n * (n - 1) / 2);
	return ((double)ns / (double)n);
}

/* ---- mutex_uncontended, mutex_contended4 ---- */

static long lock_n, counter;

static void *
locker(void *arg)
{
	(void)arg;
	gate_wait();
	for (long i = 0; i < lock_n; i++) {
		bw_mutex_lock(&xs.m);
		counter++;
		bw_mutex_unlock(&xs.m);
	}
	mark_end();
	return (NULL);
}

static double
mutex_ns(int r, int nthr, long n)
{
	uint64_t ns;

	/* One thread needs one worker; the contended case gets them all. */
	xs_start(r, nthr == 1 ? 1 : 0);
	lock_n = n;
	counter = 0;
	ns = run_threads(nthr, locker, NULL);
	xs_stop();
	if (counter != nthr * n)
		bw_die("mutex %d threads %s: counter %ld, want %ld", nthr,
		    rtname[r], counter, nthr * n);
	return ((double)ns / (double)(nthr * n));
}
/* ---- the cases ---- */

/*
 * Median of f(r, n) over `rounds' rounds, or over 3 once the first round
 * has taken more than a second: that keeps the full run short, and the
 * median of 3 still drops one outlier.
 */
static double
median_of(double (*f)(int, long), int r, long n)
{
	double v[MAXROUNDS];
	uint64_t t0 = ult_now();
	int k = rounds;

	for (int i = 0; i < k; i++) {
		v[i] = f(r, n);
		if (i == 0 && k > 3 && ult_now() - t0 > LONG_ROUND_NS)
			k = 3;
	}
	return (bw_median(v, k));
}

/* The case on both runtimes, and the ratio for the reader. */
static void
pair(const char *c, const char *metric, double (*f)(int, long), long n_ult,
    long n_pt)
{
	double u, p;

	u = median_of(f, RT_ULT, n_ult);
	bw_emit(c, rtname[RT_ULT], metric, 1, u);
	p = median_of(f, RT_PTHREAD, n_pt);
	bw_emit(c, rtname[RT_PTHREAD], metric, 1, p);
	fprintf(stderr, "  %s: ult %.1f, pthread %.1f %s (pthread/ult %.2fx)\n",
	    c, u, p, metric, p / u);
}

/*
 * The ult case again on one worker, reported as case <c>_w1.  On two
 * workers a woken or new thread may be placed on the idle worker, and
 * every such handoff then wakes a worker in the kernel; the one-worker
 * figure shows what that costs.
 */
static void
one_worker(const char *c, const char *metric, double (*f)(int, long), long n)
{
	char name[64];
	double v;

	all_ncpu = 1;
	v = median_of(f, RT_ULT, n);
	all_ncpu = 0;
	snprintf(name, sizeof(name), "%s_w1", c);
	bw_emit(name, rtname[RT_ULT], metric, 1, v);
	fprintf(stderr, "  %s: ult on 1 worker %.1f %s\n", c, v, metric);
}

/* The size of a case: full, or quick (smaller still under a sanitizer). */
long
case_size(long full, long q)
{
	if (!bw_quick)
		return (full / size_div > 0 ? full / size_div : 1);
	return (SANITIZED && q >= 20 ? q / 10 : q);
}

static double
bare_ns(int r, long n)
{
	(void)r;
	return (bare_switch_ns(n));
}

static void
case_bare_switch(void)
{
	bw_emit("bare_switch", rtname[RT_ULT], "ns/op", 2,
	    median_of(bare_ns, RT_ULT, case_size(1000000, 100000)));
}

static double
mutex1_ns(int r, long n)
{
	return (mutex_ns(r, 1, n));
}

static double
mutex4_ns(int r, long n)
{
	return (mutex_ns(r, 4, n));
}

static void
case_skynet(void)
{
	bench_skynet("skynet", RT_ULT, bw_quick ? (SANITIZED ? 3 : 5) : 6);
	fprintf(stderr,
	    "skip: pthread skynet: 1.1M kernel threads are too "
	    "heavy; see skynet_10k\n");
}

static void
case_skynet_10k(void)
{
	bench_skynet("skynet_10k", RT_ULT, 4);
	if (bw_quick && SANITIZED)
		fprintf(stderr, "skip: pthread skynet_10k: sanitizer build\n");
	else
		bench_skynet("skynet_10k", RT_PTHREAD, 4);
}

static void
case_mutex_handoff(void)
{
	long n = case_size(100000, 2000);

	pair("mutex_handoff", "ns/op", mutex_handoff_ns, n, n);
	bw_emit("mutex_handoff", rtname[RT_ULT], "futex/op", 3, handoff_futex);
	fprintf(stderr, "  mutex_handoff: %.3f futex calls per handoff\n",
	    handoff_futex);
	one_worker("mutex_handoff", "ns/op", mutex_handoff_ns, n);
}

static void
case_thread_ring(void)
{
	long n = bw_quick ? 1000 : case_size(1000000, 1000);

	pair("thread_ring", "ns/op", thread_ring_ns, n, n);
	/* thread_ring_ns has checked every round's answer. */
	for (int r = 0; r < RT_N; r++)
		bw_emit("thread_ring", rtname[r], "result", 0,
		    (double)(n % RING + 1));
	one_worker("thread_ring", "ns/op", thread_ring_ns, n);
}

/*
 * The cases.  Most are one figure, f(runtime, size) on both runtimes and,
 * with w1, on one ult worker too; sizes are full and quick, pthread's
 * where they are smaller (pt_full 0: the same).  The others run a function
 * of their own.  FIGURE gives a figure's fields on one line, in this order.
 */
#define FIGURE(fn, met, full_, quick_, pt_full_, pt_quick_, w1_)        \
	.f = (fn), .metric = (met), .full = (full_), .quick = (quick_), \
	.pt_full = (pt_full_), .pt_quick = (pt_quick_), .w1 = (w1_)
static const struct mcase {
	const char *name;
	void (*own)(void);
	double (*f)(int, long);
	const char *metric;
	long full, quick, pt_full, pt_quick;
	int w1;
	const char *what;
} cases[] = {
    {.name = "bare_switch",
	.own = case_bare_switch,
	.what = "ult__ctx_switch between two stacks, no scheduler: ns per "
		"switch"},
    {.name = "yield",
	FIGURE(yield_ns, "ns/op", 1000000, 20000, 0, 0, 0),
	.what = "2 threads yield in turn; ult 1 worker, pthread both pinned "
		"to one CPU; ns per yield"},
    {.name = "create_join",
	FIGURE(create_join_ns, "ns/op", 100000, 5000, 10000, 500, 1),
	.what = "create + run + join of an empty thread from a thread, in "
		"sequence; all workers"},
    {.name = "create_join_foreign",
	FIGURE(create_join_foreign_ns, "ns/op", 100000, 5000, 10000, 500, 1),
	.what = "create + run + join of an empty thread from the main thread "
		"(for ult a foreign thread), in sequence; all workers"},
    {.name = "mutex_handoff",
	.own = case_mutex_handoff,
	.what = "2 threads pass a turn (lock; wait until mine; flip; signal; "
		"unlock); all workers; ns per handoff, and for ult the futex "
		"calls (parks + wakes) per handoff"},
    {.name = "condvar_prodcons",
	FIGURE(condvar_prodcons_ns, "ns/item", 1000000, 20000, 0, 0, 1),
	.what = "1 producer, 1 consumer, 64-slot queue, mutex + "
		"not_full/not_empty; all workers; ns per item"},
    {.name = "mutex_uncontended",
	FIGURE(mutex1_ns, "ns/op", 10000000, 200000, 0, 0, 0),
	.what = "lock + unlock of a private mutex, 1 thread (ult on 1 "
		"worker)"},
    {.name = "mutex_contended4",
	FIGURE(mutex4_ns, "ns/op", 500000, 10000, 0, 0, 1),
	.what = "4 threads lock; counter++; unlock; all workers; ns per "
		"lock+unlock"},
    {.name = "skynet",
	.own = case_skynet,
	.what = "10-ary tree, 1e6 leaves (quick 1e5), all workers; "
		"peak_rss_MiB = VmHWM of a freshly exec'd child, the largest "
		"of the rounds"},
    {.name = "skynet_10k",
	.own = case_skynet_10k,
	.what = "the same tree with 1e4 leaves; pthread stacks 256 KiB like "
		"ult's"},
    {.name = "thread_ring",
	.own = case_thread_ring,
	.what = "503 threads, one semaphore each, all workers; ns per pass"},
    {.name = "tls_cost",
	.own = case_tls_cost,
	.what = "yield and create_join as above on ult, per-uthread TLS "
		"against per-worker TLS (ult-tlsworker), rounds "
		"interleaved"},
    {.name = "trace_cost",
	.own = case_trace_cost,
	.what = "yield, mutex_handoff and create_join as above on ult, "
		"ULT_TRACE off against on, rounds interleaved"},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void
run_case(const struct mcase *c)
{
	long n, n_pt;

	if (c->own != NULL) {
		c->own();
		return;
	}
	n = case_size(c->full, c->quick);
	n_pt = c->pt_full != 0 ? case_size(c->pt_full, c->pt_quick) : n;
	pair(c->name, c->metric, c->f, n, n_pt);
	if (c->w1)
		one_worker(c->name, c->metric, c->f, n);
}

int
main(int argc, char **argv)
{
	static int loaded, load_only;
	static const struct bw_opt opts[] = {
	    {"--rounds", BW_INT, &rounds, 1, MAXROUNDS, "K"},
	    {"--loaded", BW_FLAG, &loaded, 0, 0, NULL},
	    {"--load-only", BW_FLAG, &load_only, 0, 0, NULL},
	    {"--div", BW_INT, &size_div, 1, 1000000, "D"},
	    {0},
	};
	const char *names[NCASES + 1] = {NULL};
	const char *const *const groups[] = {names, NULL};

	/* The same stack size as a uthread's default, so that thousands of
	 * kernel threads (skynet_10k) fit. */
	bw_pthread_stack(ULT_STACK_DEFAULT);
	pin_cpu = bw_first_cpu();
	bw_prog = "micro";
	if (argc == 4 && strcmp(argv[1], "--skynet-child") == 0)
		return (skynet_child(argv[2], atoi(argv[3])));
	for (size_t k = 0; k < NCASES; k++)
		names[k] = cases[k].name;
	bw_args("micro", argc, argv, opts, groups);
	if (load_only)
		return (bw_load_only(bw_ncpus()));
	/* The same cases beside one spinning process per CPU, reported as
	 * experiment micro_loaded. */
	if (loaded) {
		bw_prog = "micro_loaded";
		if (bw_load_start(bw_ncpus()) != 0)
			bw_die("cannot start the host load");
		fprintf(stderr, "micro: loaded: %d spinning processes\n",
		    bw_ncpus());
	}
	if (rounds == 0)
		rounds = !bw_quick ? MAXROUNDS : SANITIZED ? 1 : 3;
	fprintf(stderr,
	    "micro: median of %d rounds%s; ult: policy ULE, preemption as "
	    "the library default (ULT_PREEMPT) has it\n",
	    rounds, bw_quick ? " (quick sizes)" : "");
	for (size_t k = 0; k < NCASES; k++) {
		if (!bw_selected(cases[k].name))
			continue;
		fprintf(stderr, "%s: %s\n", cases[k].name, cases[k].what);
		run_case(&cases[k]);
	}
	bw_load_stop();
	return (0);
}
