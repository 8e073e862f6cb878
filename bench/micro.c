/*
 * micro: the cost of ult's basic operations, each next to a baseline
 * measured in the same run, reported as ratios.
 *
 *   yield       round trip of two uthreads yielding on one worker, against
 *               a bare switch between two register sets (the asm floor)
 *               and two pthreads calling sched_yield() pinned to one CPU
 *   create      spawn + run + join of an empty uthread from a uthread,
 *               against pthread_create + pthread_join
 *   skynet      10-ary tree of 1,000,000 leaves returning their ordinals;
 *               time and peak RSS (measured in a child process)
 *
 * Usage: micro [--quick] [yield|create|skynet ...]
 * Each benchmark runs in its own process; the median of 5 rounds is
 * reported (3 with --quick).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/context.h"
#include "ult.h"

static int quick;
static int rounds = 5;

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return (v[n / 2]);
}

/* ---- the floor: a bare switch between two register sets ---- */

static struct ult__ctx bare_main, bare_co;
static long bare_iters;

static void
bare_body(void *arg)
{
	(void)arg;
	for (;;)
		ult__ctx_switch(&bare_co, &bare_main);
}

static double
bare_round_trip_ns(long n)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	uint64_t t0;

	ult__ctx_init(&bare_co, stack, sizeof(stack), bare_body, NULL);
	t0 = ult_now();
	for (bare_iters = 0; bare_iters < n; bare_iters++)
		ult__ctx_switch(&bare_main, &bare_co);
	return ((double)(ult_now() - t0) / (double)n);
}

/* ---- ult yield ---- */

static long yield_n;

static void *
yielder(void *arg)
{
	(void)arg;
	for (long i = 0; i < yield_n; i++)
		ult_yield();
	return (NULL);
}

static double
ult_yield_round_trip_ns(long n)
{
	struct ult_config cfg = {0};
	ult_thread_t *a, *b;
	long slice = 1000000;
	uint64_t t0;

	cfg.ncpu = 1;
	if (ult_init(&cfg) != 0)
		abort();
	/* Keep slice ends out of the measurement. */
	ult_sysctl("kern.sched.slice", NULL, &slice);
	yield_n = n;
	t0 = ult_now();
	ult_spawn(&a, NULL, yielder, NULL);
	ult_spawn(&b, NULL, yielder, NULL);
	ult_join(a, NULL);
	ult_join(b, NULL);
	t0 = ult_now() - t0;
	ult_shutdown();
	return ((double)t0 / (double)n);
}

/* ---- pthreads sched_yield on one CPU ---- */

static void *
pt_yielder(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (long i = 0; i < *(long *)arg; i++)
		sched_yield();
	return (NULL);
}

static double
pthread_yield_round_trip_ns(long n)
{
	pthread_t a, b;
	uint64_t t0 = ult_now();

	pthread_create(&a, NULL, pt_yielder, &n);
	pthread_create(&b, NULL, pt_yielder, &n);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return ((double)(ult_now() - t0) / (double)n);
}

/* ---- create + run + join ---- */

static void *
empty(void *arg)
{
	return (arg);
}

static void *
spawn_loop(void *arg)
{
	long n = *(long *)arg;
	uint64_t t0 = ult_now();

	for (long i = 0; i < n; i++) {
		ult_thread_t *t;

		if (ult_spawn(&t, NULL, empty, NULL) != 0 ||
		    ult_join(t, NULL) != 0)
			abort();
	}
	return ((void *)(uintptr_t)(ult_now() - t0));
}

static double
ult_create_ns(long n)
{
	struct ult_config cfg = {0};
	ult_thread_t *t;
	long warm = 1000;
	void *r;

	cfg.ncpu = 1;
	if (ult_init(&cfg) != 0)
		abort();
	ult_spawn(&t, NULL, spawn_loop, &warm); /* warm the stack pool */
	ult_join(t, NULL);
	ult_spawn(&t, NULL, spawn_loop, &n);
	ult_join(t, &r);
	ult_shutdown();
	return ((double)(uintptr_t)r / (double)n);
}

static double
pthread_create_ns(long n)
{
	uint64_t t0 = ult_now();

	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, empty, NULL) != 0)
			abort();
		pthread_join(t, NULL);
	}
	return ((double)(ult_now() - t0) / (double)n);
}

/* ---- skynet ---- */

static void *
skynet(void *arg)
{
	uintptr_t v = (uintptr_t)arg, num = v >> 8, level = v & 0xff;
	ult_thread_t *c[10];
	uintptr_t sum = 0;

	if (level == 0)
		return ((void *)num);
	for (uintptr_t i = 0; i < 10; i++)
		if (ult_spawn(&c[i], NULL, skynet,
			(void *)(((num * 10 + i) << 8) | (level - 1))) != 0)
			abort();
	for (int i = 0; i < 10; i++) {
		void *r;

		ult_join(c[i], &r);
		sum += (uintptr_t)r;
	}
	return ((void *)sum);
}

static void
run_skynet(int ncpu, int levels)
{
	struct ult_config cfg = {0};
	ult_thread_t *t;
	uint64_t t0;
	void *r;
	uintptr_t leaves = 1, want;

	for (int i = 0; i < levels; i++)
		leaves *= 10;
	want = leaves * (leaves - 1) / 2;
	cfg.ncpu = ncpu;
	if (ult_init(&cfg) != 0)
		abort();
	t0 = ult_now();
	ult_spawn(&t, NULL, skynet, (void *)(uintptr_t)levels);
	ult_join(t, &r);
	t0 = ult_now() - t0;
	ult_shutdown();
	printf("%.1f %lu %s\n", (double)t0 / 1e6, (unsigned long)(uintptr_t)r,
	    (uintptr_t)r == want ? "ok" : "WRONG");
}

/* Run fn in a child process; its stdout line comes back in buf and its
 * peak RSS in *rss_kib. */
static int
in_child(void (*fn)(int, int), int a, int b, char *buf, size_t len,
    long *rss_kib)
{
	struct rusage ru;
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(fds) != 0)
		return (-1);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		fn(a, b);
		fflush(stdout);
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fds[0]);
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return (-1);
	*rss_kib = ru.ru_maxrss;
	return (0);
}

static void
bench_yield(void)
{
	long n = quick ? 200000 : 2000000;
	double bare[5], ult[5], pt[5], b, u, p;

	for (int r = 0; r < rounds; r++) {
		bare[r] = bare_round_trip_ns(n);
		ult[r] = ult_yield_round_trip_ns(n);
		pt[r] = pthread_yield_round_trip_ns(n / 20);
	}
	b = median(bare, rounds);
	u = median(ult, rounds);
	p = median(pt, rounds);
	printf(
	    "yield round trip, 1 worker   ult %8.1f ns   bare switch %6.1f ns"
	    "  (ult/bare %.2fx)   pthread sched_yield %8.1f ns"
	    "  (pthread/ult %.1fx)\n",
	    u, b, u / b, p, p / u);
}

static void
bench_create(void)
{
	long n = quick ? 20000 : 200000, np = quick ? 500 : 5000;
	double ult[5], pt[5], u, p;

	for (int r = 0; r < rounds; r++) {
		ult[r] = ult_create_ns(n);
		pt[r] = pthread_create_ns(np);
	}
	u = median(ult, rounds);
	p = median(pt, rounds);
	printf("create+run+join, 1 worker    ult %8.1f ns   pthread "
	       "%10.1f ns   (pthread/ult %.0fx)\n",
	    u, p, p / u);
}

static void
skynet_child(int ncpu, int levels)
{
	run_skynet(ncpu, levels);
}

static void
bench_skynet(void)
{
	int levels = quick ? 5 : 6, ncpu[2] = {1, 0};

	for (int k = 0; k < 2; k++) {
		double ms[5];
		long rss[5], maxrss = 0;
		char buf[256], verdict[16] = "";
		unsigned long sum = 0;

		for (int r = 0; r < rounds; r++) {
			if (in_child(skynet_child, ncpu[k], levels, buf,
				sizeof(buf), &rss[r]) != 0 ||
			    sscanf(buf, "%lf %lu %15s", &ms[r], &sum,
				verdict) != 3) {
				printf("skynet: child failed\n");
				exit(1);
			}
			maxrss = rss[r] > maxrss ? rss[r] : maxrss;
		}
		printf("skynet %s leaves, %s   %8.1f ms   peak RSS %6.1f MiB   "
		       "sum %lu %s\n",
		    levels == 6 ? "1M" : "100k",
		    ncpu[k] ? "1 worker   " : "all workers", median(ms, rounds),
		    (double)maxrss / 1024.0, sum, verdict);
		if (strcmp(verdict, "ok") != 0)
			exit(1);
	}
}

int
main(int argc, char **argv)
{
	int any = 0;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
			rounds = 3;
		}
	printf("ult micro-benchmarks: median of %d rounds%s\n", rounds,
	    quick ? " (quick)" : "");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "yield") == 0)
			bench_yield(), any = 1;
		else if (strcmp(argv[i], "create") == 0)
			bench_create(), any = 1;
		else if (strcmp(argv[i], "skynet") == 0)
			bench_skynet(), any = 1;
	}
	if (!any) {
		bench_yield();
		bench_create();
		bench_skynet();
	}
	return (0);
}
