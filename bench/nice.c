/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nice: CPU shares of eleven CPU hogs at nice -20, -16, ..., +20 that
 * share one CPU, and the wakeup latency of an interactive thread that
 * runs next to them (the test FreeBSD's ULE was checked with: eleven
 * niced shells watched with `top -o cpu').
 *
 *   ult       the hogs are uthreads on one worker, sched_ule, preempt=1
 *   ult-4bsd  the same under sched_4bsd
 *   linux     the hogs are processes pinned to one CPU, setpriority()
 *   model     the independent model of docs/ULE.md section 10 (ULE-C)
 *             recomputed here for the same run length
 *
 * For ult the shares come from a run of the hogs alone, as the model
 * has them, and the latency from a second run with the interactive
 * thread: its wakeups are ASTs on the running hog (a timeshare wakeup
 * never sets owepreempt on the local CPU, in FreeBSD either), which
 * requeue that hog at its calendar position instead of the head of the
 * current bucket, and so tilt the shares towards the low nice values
 * (stderr shows the shares of that second run).
 *
 * Shares are each hog's CPU time over the hogs' total: runtime_ns from
 * ult_thread_info for ult, /proc/PID/schedstat (wait4 rusage where that
 * is missing) for linux.  The interactive thread (nice 0) sleeps 10 ms
 * to an absolute deadline, then computes for 0.2 ms, in a loop; its
 * lateness past the deadline is reported as p50/p99/max.  Linux clamps
 * nice +20 to +19; the share line stays labelled nice=20.
 *
 * Checks (no timing assertions): the hogs ran, the probe woke, and the
 * CPU time of hogs and probe adds up to the window on the one CPU: above
 * 110 % they did not share one CPU (two would give up to 200 %; the
 * margin is for the hogs' last moments after the window); below 90 %
 * for ult, whose clock is the worker's wall time, the accounting lost
 * time; for linux, less than 90 % only warns: other processes may
 * share that CPU (on a loaded 2-CPU host the hogs got 39 %).
 *
 * Usage: nice [--quick] [--secs S] [--data DIR] [--model]
 *   --secs S   run each runtime S seconds (default 8, quick 1)
 *   --data DIR write DIR/nice.dat: `<nice> <ult> <ult-4bsd> <linux>
 *              <model>' shares in %, `-' where a runtime was skipped
 *              (bench/plot/nice.gp draws it)
 *   --model    print only the model's lines (to check the port)
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contract.h"
#include "nice_model.h"
#include "ult.h"
#include "work.h"

#define NHOGS 11
#define PERIOD_NS 10000000ull /* the probe's sleep */
#define PROBE_WORK_US 200.0   /* and its computation */

static const int nices[NHOGS] = {-20, -16, -12, -8, -4, 0, 4, 8, 12, 16, 20};

enum {
	RT_ULT,
	RT_4BSD,
	RT_LINUX,
	RT_MODEL,
	NRT
};
static const char *rtname[NRT] = {"ult", "ult-4bsd", "linux", "model"};

static double share[NRT][NHOGS];
static int have[NRT];
static int failed;
static double spins_per_us;
static atomic_int stop, probe_ready;

static void
fail(const char *what, const char *rt)
{
	fprintf(stderr, "nice: FAIL %s: %s\n", rt, what);
	failed = 1;
}

static void
result(const char *cas, const char *rt, const char *metric, double v)
{
	bw_emit(cas, rt, metric, 3, v);
}

/* ---- the interactive probe's record ---- */

struct probe {
	uint64_t *lat;
	size_t n, cap;
	uint64_t cpu_ns;
	int prio, score;
};

static void
probe_init(struct probe *p, double secs)
{
	memset(p, 0, sizeof(*p));
	p->cap = (size_t)(secs * 1e9 / (double)PERIOD_NS) + 64;
	if ((p->lat = calloc(p->cap, sizeof(*p->lat))) == NULL)
		abort();
}

static void
probe_report(struct probe *p, const char *rt)
{
	if (p->n == 0) {
		fail("the interactive thread never woke", rt);
		return;
	}
	qsort(p->lat, p->n, sizeof(*p->lat), bw_cmp_u64);
	fprintf(stderr, "  %s interactive: %zu wakeups\n", rt, p->n);
	result("interactive", rt, "p50_us",
	    (double)p->lat[bw_rank(p->n, 0.50)] / 1e3);
	result("interactive", rt, "p99_us",
	    (double)p->lat[bw_rank(p->n, 0.99)] / 1e3);
	result("interactive", rt, "max_us", (double)p->lat[p->n - 1] / 1e3);
	free(p->lat);
}

/* Shares from per-hog CPU times, and the sum check against the window. */
static void
shares(int rt, const uint64_t *cpu, uint64_t probe_cpu, uint64_t window,
    double lo_fail, double lo_warn)
{
	uint64_t tot = 0;
	double used;

	for (int i = 0; i < NHOGS; i++)
		tot += cpu[i];
	used = 100.0 * (double)(tot + probe_cpu) / (double)window;
	fprintf(stderr,
	    "  %s: hogs %.3f s + probe %.3f s of a %.3f s window on one CPU "
	    "(%.1f %%)\n",
	    rtname[rt], (double)tot / 1e9, (double)probe_cpu / 1e9,
	    (double)window / 1e9, used);
	if (tot == 0) {
		fail("no hog ran", rtname[rt]);
		return;
	}
	if (used > 110.0)
		fail("more CPU time than one CPU has: not on one CPU",
		    rtname[rt]);
	else if (used < lo_fail)
		fail("the CPU times do not add up to the window", rtname[rt]);
	else if (used < lo_warn)
		fprintf(stderr,
		    "  %s: warning: only %.1f %% of the CPU (other load?)\n",
		    rtname[rt], used);
	for (int i = 0; i < NHOGS; i++) {
		char cas[16];

		share[rt][i] = 100.0 * (double)cpu[i] / (double)tot;
		snprintf(cas, sizeof(cas), "nice=%d", nices[i]);
		result(cas, rtname[rt], "share%", share[rt][i]);
	}
	have[rt] = 1;
}

/* Start the hogs only once the probe sleeps in its loop: a nice 0
 * thread that has not run yet may not get a first run for seconds next
 * to nice -20 hogs under 4BSD, and would then measure nothing. */
static void
wait_probe(void)
{
	while (!atomic_load(&probe_ready))
		nanosleep(&(struct timespec){0, 100000}, NULL);
}

/* ---- ult: uthreads on one worker ---- */

struct uhog {
	ult_thread_t *t;
	uint64_t runtime_ns;
};

/* Charge the current stint (runtime_ns grows at switches) and read it. */
static uint64_t
own_runtime(int *prio, int *score)
{
	struct ult_thread_info i;

	ult_yield();
	if (ult_thread_info(NULL, &i) != 0)
		abort();
	if (prio != NULL) {
		*prio = i.priority;
		*score = i.interact_score;
	}
	return (i.runtime_ns);
}

static void *
ult_hog(void *arg)
{
	struct uhog *h = arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		bw_spin(1000);
	h->runtime_ns = own_runtime(NULL, NULL);
	return (NULL);
}

static void *
ult_probe(void *arg)
{
	struct probe *p = arg;
	unsigned long work = (unsigned long)(PROBE_WORK_US * spins_per_us);

	atomic_store(&probe_ready, 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t dl = ult_now() + PERIOD_NS, late;

		ult_sleep_until(dl);
		late = ult_now() - dl;
		if (p->n < p->cap)
			p->lat[p->n++] = late;
		bw_spin(work);
	}
	p->cpu_ns = own_runtime(&p->prio, &p->score);
	return (NULL);
}

/* Shares of a run with the interactive thread, for stderr only. */
static void
shares_note(int rt, const uint64_t *cpu)
{
	uint64_t tot = 0;

	for (int i = 0; i < NHOGS; i++)
		tot += cpu[i];
	fprintf(stderr, "  %s shares with the interactive thread:", rtname[rt]);
	for (int i = 0; i < NHOGS && tot > 0; i++)
		fprintf(stderr, " %d:%.1f", nices[i],
		    100.0 * (double)cpu[i] / (double)tot);
	fprintf(stderr, "\n");
}

/* The hogs alone (shares), or with the interactive thread (latency). */
static void
run_ult(int rt, const char *policy, double secs, int with_probe)
{
	struct ult_config cfg = {0};
	struct uhog hog[NHOGS];
	struct probe p;
	struct ult_cpu_info ci;
	struct ult_attr a;
	ult_thread_t *pt;
	uint64_t t0, t1, cpu[NHOGS];
	int e;

	cfg.ncpu = 1;
	cfg.policy = policy;
	cfg.preempt = 1;
	if ((e = ult_init(&cfg)) != 0) {
		fprintf(stderr, "skip: %s ult_init: %s\n", rtname[rt],
		    strerror(e));
		return;
	}
	fprintf(stderr, "%s: %s, 1 worker, preempt on, %.1f s, %s\n",
	    rtname[rt], ult_sched_name(), secs,
	    with_probe ? "with the interactive thread" : "hogs alone");
	probe_init(&p, secs);
	atomic_store(&stop, 0);
	atomic_store(&probe_ready, 0);
	alarm((unsigned)secs + 60);
	ult_attr_init(&a);
	a.name = "probe";
	if (with_probe) {
		if (ult_spawn(&pt, &a, ult_probe, &p) != 0)
			abort();
		wait_probe();
	}
	t0 = ult_now();
	for (int i = 0; i < NHOGS; i++) {
		a.nice = nices[i];
		a.name = "hog";
		if (ult_spawn(&hog[i].t, &a, ult_hog, &hog[i]) != 0)
			abort();
	}
	ult_sleep_ns((uint64_t)(secs * 1e9));
	atomic_store(&stop, 1);
	t1 = ult_now();
	for (int i = 0; i < NHOGS; i++) {
		ult_join(hog[i].t, NULL);
		cpu[i] = hog[i].runtime_ns;
	}
	if (with_probe)
		ult_join(pt, NULL);
	/* Sanitizer and static builds run without asynchronous preemption:
	 * then the first hog keeps the worker and the shares say nothing. */
	if (ult_cpu_info(0, &ci) == 0 && ci.preemptions == 0)
		fprintf(stderr, "  %s: note: no preemption happened\n",
		    rtname[rt]);
	ult_shutdown();
	alarm(0);
	if (!with_probe) {
		shares(rt, cpu, 0, t1 - t0, 90.0, 90.0);
		free(p.lat);
		return;
	}
	fprintf(stderr, "  %s probe: priority %d, interactivity score %d\n",
	    rtname[rt], p.prio, p.score);
	shares_note(rt, cpu);
	probe_report(&p, rtname[rt]);
}

/* ---- linux: kernel processes pinned to one CPU ---- */

static int lx_cpu;

static void *
lx_probe(void *arg)
{
	struct probe *p = arg;
	unsigned long work = (unsigned long)(PROBE_WORK_US * spins_per_us);
	struct timespec c0, c1;

	(void)bw_pin(lx_cpu);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	atomic_store(&probe_ready, 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t dl = bw_now_ns() + PERIOD_NS;
		struct timespec ts = {(time_t)(dl / 1000000000ull),
		    (long)(dl % 1000000000ull)};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
			   NULL) == EINTR)
			;
		if (p->n < p->cap)
			p->lat[p->n++] = bw_now_ns() - dl;
		bw_spin(work);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	p->cpu_ns = (uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000ll +
	    (c1.tv_nsec - c0.tv_nsec));
	return (NULL);
}

/* Time on the CPU in ns, the first field of /proc/PID/schedstat. */
static int
schedstat_ns(pid_t pid, uint64_t *ns)
{
	char path[64];
	unsigned long long v;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	*ns = v;
	return (ok ? 0 : -1);
}

/* A child tries nice -20: it needs CAP_SYS_NICE (or RLIMIT_NICE). */
static int
nice_allowed(void)
{
	int status;
	pid_t pid;

	if ((pid = fork()) < 0)
		return (0);
	if (pid == 0)
		_exit(setpriority(PRIO_PROCESS, 0, -20) == 0 ? 0 : 1);
	if (waitpid(pid, &status, 0) != pid)
		return (0);
	return (WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void
run_linux(double secs)
{
	cpu_set_t all, rest;
	pid_t pid[NHOGS], parent = getpid();
	uint64_t t0, t1, s0[NHOGS], s1[NHOGS], cpu[NHOGS];
	int schedstat = 1, ncpu = 0;
	struct probe p;
	pthread_t pt;

	if (!nice_allowed()) {
		fprintf(stderr,
		    "skip: linux setpriority(-20) refused (no "
		    "CAP_SYS_NICE)\n");
		return;
	}
	if (sched_getaffinity(0, sizeof(all), &all) != 0) {
		fprintf(stderr, "skip: linux sched_getaffinity failed\n");
		return;
	}
	/* The last allowed CPU for the hogs, the others for us. */
	CPU_ZERO(&rest);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			lx_cpu = c;
			ncpu++;
		}
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all) && c != lx_cpu)
			CPU_SET(c, &rest);
	if (ncpu > 1)
		sched_setaffinity(0, sizeof(rest), &rest);
	fprintf(stderr, "linux: 11 processes on CPU %d, %.1f s\n", lx_cpu,
	    secs);
	probe_init(&p, secs);
	atomic_store(&stop, 0);
	atomic_store(&probe_ready, 0);
	alarm((unsigned)secs + 60);
	if (pthread_create(&pt, NULL, lx_probe, &p) != 0)
		abort();
	wait_probe();
	t0 = bw_now_ns();
	fflush(NULL);
	for (int i = 0; i < NHOGS; i++) {
		if ((pid[i] = fork()) < 0) {
			perror("fork");
			exit(1);
		}
		if (pid[i] == 0) {
			volatile unsigned long x = 0;

			/* Die with the parent, whatever kills it. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			alarm(0);
			(void)bw_pin(lx_cpu);
			setpriority(PRIO_PROCESS, 0, nices[i]);
			for (;;)
				x++;
		}
	}
	for (int i = 0; i < NHOGS; i++)
		if (schedstat_ns(pid[i], &s0[i]) != 0)
			schedstat = 0;
	if (schedstat)
		t0 = bw_now_ns();
	nanosleep(&(struct timespec){(time_t)secs,
		      (long)((secs - (double)(time_t)secs) * 1e9)},
	    NULL);
	t1 = bw_now_ns();
	for (int i = 0; i < NHOGS; i++)
		if (schedstat && schedstat_ns(pid[i], &s1[i]) != 0)
			schedstat = 0;
	atomic_store(&stop, 1);
	for (int i = 0; i < NHOGS; i++)
		kill(pid[i], SIGKILL);
	for (int i = 0; i < NHOGS; i++) {
		struct rusage ru;
		int status;

		while (wait4(pid[i], &status, 0, &ru) < 0 && errno == EINTR)
			;
		if (!schedstat) {
			cpu[i] = (uint64_t)(ru.ru_utime.tv_sec +
				     ru.ru_stime.tv_sec) *
				1000000000ull +
			    (uint64_t)(ru.ru_utime.tv_usec +
				ru.ru_stime.tv_usec) *
				1000ull;
			t1 = bw_now_ns();
		} else
			cpu[i] = s1[i] - s0[i];
	}
	pthread_join(pt, NULL);
	alarm(0);
	sched_setaffinity(0, sizeof(all), &all);
	fprintf(stderr, "  linux: CPU time from %s\n",
	    schedstat ? "/proc/PID/schedstat" : "wait4 rusage");
	shares(RT_LINUX, cpu, p.cpu_ns, t1 - t0, 0.0, 90.0);
	probe_report(&p, "linux");
}

/* ---- the model (nice_model.c) ---- */

static void
run_model(long secs)
{
	double steady[NHOGS], sum = 0;

	model_run(nices, NHOGS, 120, 20, steady);
	fprintf(stderr,
	    "model (ULE-C, classic) steady state, 120 s after "
	    "20 s:");
	for (int i = 0; i < NHOGS; i++)
		fprintf(stderr, " %.2f", steady[i]);
	fprintf(stderr, "\nmodel for the measured %ld s from the start:\n",
	    secs);
	model_run(nices, NHOGS, secs, 0, share[RT_MODEL]);
	for (int i = 0; i < NHOGS; i++) {
		char cas[16];

		snprintf(cas, sizeof(cas), "nice=%d", nices[i]);
		result(cas, "model", "share%", share[RT_MODEL][i]);
		sum += share[RT_MODEL][i];
	}
	if (sum < 99.9 || sum > 100.1)
		fail("shares do not add up", "model");
	have[RT_MODEL] = 1;
}

static int
write_data(const char *dir)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/nice.dat", dir);
	if ((f = fopen(path, "w")) == NULL) {
		perror(path);
		return (-1);
	}
	fprintf(f,
	    "# CPU share %% of 11 hogs on one CPU; '-' = runtime "
	    "skipped\n# nice ult ult-4bsd linux model\n");
	for (int i = 0; i < NHOGS; i++) {
		fprintf(f, "%d", nices[i]);
		for (int rt = 0; rt < NRT; rt++)
			if (have[rt])
				fprintf(f, " %.3f", share[rt][i]);
			else
				fprintf(f, " -");
		fprintf(f, "\n");
	}
	fclose(f);
	fprintf(stderr, "wrote %s\n", path);
	return (0);
}

int
main(int argc, char **argv)
{
	double secs = 0;
	int model_only = 0;
	const struct bw_opt opts[] = {
	    {"--secs", BW_DOUBLE, &secs, 0.1, 3600, "S"},
	    {"--model", BW_FLAG, &model_only, 0, 0, NULL},
	    {0},
	};

	bw_args("nice", argc, argv, opts, NULL);
	if (secs == 0)
		secs = bw_quick ? 1 : 8;
	bw_watchdog("nice");
	/* The model counts whole seconds, like the Python original. */
	run_model(secs < 1 ? 1 : (long)(secs + 0.5));
	if (!model_only) {
		/* The probe's 0.2 ms is computation, not a wall-clock spin
		 * that would also count the time it spends preempted. */
		spins_per_us = bw_calibrate();
		fprintf(stderr, "busy loop: %.0f iterations/us\n",
		    spins_per_us);
		run_ult(RT_ULT, "ule", secs, 0);
		run_ult(RT_4BSD, "4bsd", secs, 0);
		run_ult(RT_ULT, "ule", secs, 1);
		run_ult(RT_4BSD, "4bsd", secs, 1);
		run_linux(secs);
	}
	if (bw_data != NULL && write_data(bw_data) != 0)
		return (1);
	if (failed)
		return (1);
	return (0);
}
