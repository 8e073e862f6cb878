/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * make: a synthetic parallel make ("mkdag", specified in bench/README.md),
 * the buildworld analogue.  What make -jN stresses in a
 * scheduler is kept: many short-lived threads (every task is a fresh
 * thread, as every compile is a fork/exec), a job-token limit above the
 * CPU count, heavy-tailed task lengths, brief blocking, and a DAG whose
 * joins (archives, the link) wait on the stragglers.
 *
 * The DAG, D directories x F files (50 x 40; --quick 8 x 10), is drawn
 * from splitmix64 seeded 42, u = (next() >> 11) * 2^-53, in this order
 * for each file (directory-major): the depend u, then the compile u1, u2.
 *   stage depend  one task per file, busy 50 + 150 u us
 *   stage all     per file a compile: busy min(2000 us * exp(z), 200 ms)
 *                 with z = sqrt(-2 ln u1) cos(2 pi u2), then a 50 us sleep
 *                 (the I/O); per directory an archive (1 ms busy) after
 *                 its compiles; one link (5 ms busy) after every archive
 * The stages run one after the other, as make's do.
 *
 * Executor: a dispatcher (make itself: a uthread under ult, the main
 * thread for pthread) takes a job token from a counting semaphore of J,
 * reaps (joins) the tasks that have finished, and starts the
 * lowest-numbered ready task on a freshly created thread; the task posts
 * its token back when it is done.  Numbering is directory-major with each
 * directory's archive right after its compiles and the link last, so
 * "lowest-numbered ready" is the order in which make's walk of the
 * dependency tree would find the targets buildable.
 *
 * Busy work is a loop calibrated at start (iterations per microsecond),
 * not a clock spin, so time a task loses to others stretches the run.
 *
 * Runtimes: ult (sched_ule, all workers, preemption on), ult-4bsd (the
 * same under sched_4bsd), pthread (1:1 threads, the baseline); case j1
 * runs the pthread executor with one token (make -j1, the serial base).
 * Reported: real_s (the two stages, wall), user_s and sys_s (getrusage
 * RUSAGE_SELF deltas, the whole process: workers, clock thread and all),
 * tasks/s; the critical path and the serial work go to stderr.
 *
 * Checked: every task ran exactly once, no compile started before the
 * depend stage was over, every archive started after its compiles ended,
 * the link started after every archive ended and was the last to run.
 *
 * Usage: make [--quick] [--data DIR] [j1|j4|j16|ult|ult-4bsd|pthread ...]
 * (names filter the cases and runtimes; --data is accepted and unused).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "contract.h"
#include "rt.h"
#include "work.h"

#define IO_SLEEP_NS 50000
#define ARCHIVE_US 1000
#define LINK_US 5000

enum {
	K_DEPEND,
	K_COMPILE,
	K_ARCHIVE,
	K_LINK
};

struct task {
	int kind;
	int parent;	   /* made ready when this ends; -1: none */
	int deps;	   /* unfinished prerequisites; under the lock */
	uint32_t dur_us;   /* busy work */
	atomic_int runs;   /* times the body ran: must end at 1 */
	long start, end;   /* global sequence numbers; under the lock */
	bw_thread_t th;	   /* the thread that runs it */
	struct task *base; /* the stage's array, to find the parent */
};

static int ndir = 50, nfile = 40;
static double iters_per_us;
static int ncpus; /* in the affinity mask: ult's default worker count */

/* ---- the DAG ---- */

static uint64_t rng_state;

static uint64_t
splitmix64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31));
}

static double
uniform(void)
{
	return ((double)(splitmix64() >> 11) * 0x1p-53);
}

static struct task *depend_tasks, *all_tasks;
static int ndepend, nall;
static double serial_us, critical_us;

static int
compile_index(int d, int f)
{
	return (d * (nfile + 1) + f);
}

static int
archive_index(int d)
{
	return (d * (nfile + 1) + nfile);
}

static void
build_dag(void)
{
	double maxdep = 0, maxdir = 0;

	ndepend = ndir * nfile;
	nall = ndir * (nfile + 1) + 1;
	depend_tasks = calloc((size_t)ndepend, sizeof(*depend_tasks));
	all_tasks = calloc((size_t)nall, sizeof(*all_tasks));
	if (depend_tasks == NULL || all_tasks == NULL)
		bw_die("out of memory");
	rng_state = 42;
	serial_us = 0;
	for (int d = 0; d < ndir; d++) {
		double dirmax = 0;

		for (int f = 0; f < nfile; f++) {
			struct task *dt = &depend_tasks[d * nfile + f];
			struct task *ct = &all_tasks[compile_index(d, f)];
			double u1, u2, z, dur;

			dt->kind = K_DEPEND;
			dt->parent = -1;
			dt->dur_us = (uint32_t)(50.0 + 150.0 * uniform());
			u1 = uniform();
			u2 = uniform();
			if (u1 <= 0)
				u1 = 0x1p-53;
			z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
			dur = fmin(2000.0 * exp(z), 200000.0);
			ct->kind = K_COMPILE;
			ct->parent = archive_index(d);
			ct->dur_us = (uint32_t)dur;
			serial_us +=
			    dt->dur_us + ct->dur_us + IO_SLEEP_NS / 1e3;
			if (dt->dur_us > maxdep)
				maxdep = dt->dur_us;
			if (ct->dur_us > dirmax)
				dirmax = ct->dur_us;
		}
		all_tasks[archive_index(d)].kind = K_ARCHIVE;
		all_tasks[archive_index(d)].parent = nall - 1;
		all_tasks[archive_index(d)].dur_us = ARCHIVE_US;
		serial_us += ARCHIVE_US;
		if (dirmax > maxdir)
			maxdir = dirmax;
	}
	all_tasks[nall - 1].kind = K_LINK;
	all_tasks[nall - 1].parent = -1;
	all_tasks[nall - 1].dur_us = LINK_US;
	serial_us += LINK_US;
	critical_us =
	    maxdep + maxdir + IO_SLEEP_NS / 1e3 + ARCHIVE_US + LINK_US;
}

/* Fresh counters and dependency counts for the next run. */
static void
reset_stage(struct task *t, int n)
{
	for (int i = 0; i < n; i++) {
		t[i].deps = 0;
		t[i].start = t[i].end = -1;
		t[i].base = t;
		atomic_store(&t[i].runs, 0);
	}
	for (int i = 0; i < n; i++)
		if (t[i].parent >= 0)
			t[t[i].parent].deps++;
}

/* ---- the executor ---- */

static bw_mutex_t lock;
static bw_cond_t ready; /* a task became ready */
static bw_sem_t tokens; /* the job tokens */

static int *heap, nheap;    /* ready, not started; a min-heap */
static int *finished, nfin; /* ended, not yet reaped */
static long seq;	    /* next start/end sequence number */
static struct task *stage;  /* the stage being run */

static void
heap_push(int v)
{
	int i = nheap++;

	while (i > 0 && heap[(i - 1) / 2] > v) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = v;
}

static int
heap_pop(void)
{
	int top = heap[0], v = heap[--nheap], i = 0;

	for (;;) {
		int c = 2 * i + 1;

		if (c >= nheap)
			break;
		if (c + 1 < nheap && heap[c + 1] < heap[c])
			c++;
		if (heap[c] >= v)
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = v;
	return (top);
}

static void *
task_main(void *arg)
{
	struct task *t = arg;

	atomic_fetch_add(&t->runs, 1);
	bw_busy_us(t->dur_us, iters_per_us);
	if (t->kind == K_COMPILE)
		bw_sleep_ns(IO_SLEEP_NS);
	bw_mutex_lock(&lock);
	t->end = seq++;
	if (t->parent >= 0 && --t->base[t->parent].deps == 0) {
		heap_push(t->parent);
		bw_cond_signal(&ready);
	}
	finished[nfin++] = (int)(t - t->base);
	bw_mutex_unlock(&lock);
	/* Last: once the token is back the dispatcher may finish the
	 * stage; the thread itself is waited for by the join. */
	bw_sem_post(&tokens);
	return (NULL);
}

/* The dispatcher's wait(): join every task that has ended. */
static void
reap(int *reaped)
{
	int upto;

	bw_mutex_lock(&lock);
	upto = nfin;
	bw_mutex_unlock(&lock);
	for (; *reaped < upto; (*reaped)++)
		bw_join(&stage[finished[*reaped]].th);
}

static void
run_stage(struct task *t, int n, int jobs)
{
	int reaped = 0;

	stage = t;
	nheap = nfin = 0;
	for (int i = 0; i < n; i++)
		if (t[i].deps == 0)
			heap_push(i);
	for (int started = 0; started < n; started++) {
		int i;

		bw_sem_wait(&tokens);
		reap(&reaped);
		bw_mutex_lock(&lock);
		while (nheap == 0)
			bw_cond_wait(&ready, &lock);
		i = heap_pop();
		t[i].start = seq++;
		bw_mutex_unlock(&lock);
		bw_must(bw_spawn(&t[i].th, task_main, &t[i]), "spawn");
	}
	/* Every token back means every task has ended. */
	for (int k = 0; k < jobs; k++)
		bw_sem_wait(&tokens);
	for (int k = 0; k < jobs; k++)
		bw_sem_post(&tokens);
	reap(&reaped);
	if (reaped != n)
		bw_die("reaped %d of %d tasks", reaped, n);
}

static int jobs_now;

static void *
make_main(void *arg)
{
	(void)arg;
	run_stage(depend_tasks, ndepend, jobs_now);
	run_stage(all_tasks, nall, jobs_now);
	return (NULL);
}

static int
check(const char *cs, const char *rt)
{
	long depend_end = -1, first_all = -1, link_start;
	int bad = 0, link = nall - 1;

	for (int i = 0; i < ndepend; i++) {
		if (atomic_load(&depend_tasks[i].runs) != 1)
			bad++;
		if (depend_tasks[i].end > depend_end)
			depend_end = depend_tasks[i].end;
	}
	for (int i = 0; i < nall; i++) {
		struct task *t = &all_tasks[i];

		if (atomic_load(&t->runs) != 1 || t->start < 0 || t->end < 0)
			bad++;
		if (first_all < 0 || t->start < first_all)
			first_all = t->start;
		if (t->parent >= 0 && t->end > all_tasks[t->parent].start)
			bad++;
	}
	link_start = all_tasks[link].start;
	for (int i = 0; i < link; i++)
		if (all_tasks[i].start > link_start ||
		    all_tasks[i].end > all_tasks[link].end)
			bad++;
	if (first_all <= depend_end)
		bad++;
	if (all_tasks[link].end != seq - 1)
		bad++;
	if (bad != 0)
		fprintf(stderr,
		    "make: %s %s: %d violations (a task not run exactly "
		    "once or run out of dependency order)\n",
		    cs, rt, bad);
	return (bad == 0);
}

static double
tv_s(struct timeval a, struct timeval b)
{
	return ((double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_usec - a.tv_usec) * 1e-6);
}

/* One run: returns 0 if the results check out. */
static int
run_one(int jobs, const char *rt)
{
	struct rusage r0, r1;
	char cs[16];
	uint64_t t0, t1;
	double real;
	int ntasks = ndepend + nall;

	snprintf(cs, sizeof(cs), "j%d", jobs);
	jobs_now = jobs;
	seq = 0;
	reset_stage(depend_tasks, ndepend);
	reset_stage(all_tasks, nall);
	bw_rt_start(rt, 0, 1);
	bw_mutex_init(&lock);
	bw_cond_init(&ready);
	bw_sem_init(&tokens, (unsigned)jobs);
	alarm(bw_quick ? 60 : 300);
	getrusage(RUSAGE_SELF, &r0);
	t0 = ult_now();
	/* make itself is a uthread under ult, the main thread for pthread. */
	if (bw_ult) {
		bw_thread_t mk;

		bw_must(bw_spawn(&mk, make_main, NULL), "spawn");
		bw_join(&mk);
	} else
		make_main(NULL);
	t1 = ult_now();
	getrusage(RUSAGE_SELF, &r1);
	alarm(0);
	bw_sem_destroy(&tokens);
	bw_cond_destroy(&ready);
	bw_mutex_destroy(&lock);
	bw_rt_stop();
	if (!check(cs, rt))
		return (1);
	real = (double)(t1 - t0) / 1e9;
	bw_emit(cs, rt, "real_s", 3, real);
	bw_emit(cs, rt, "user_s", 3, tv_s(r0.ru_utime, r1.ru_utime));
	bw_emit(cs, rt, "sys_s", 3, tv_s(r0.ru_stime, r1.ru_stime));
	bw_emit(cs, rt, "tasks/s", 0, ntasks / real);
	fprintf(stderr, "make: %s %-8s real %.3f s (lower bound %.3f s)\n", cs,
	    rt, real, fmax(critical_us, serial_us / ncpus) / 1e6);
	return (0);
}

int
main(int argc, char **argv)
{
	static const char *const cases[] = {"j1", "j4", "j16", NULL};
	static const char *const rts[] = {"ult", "ult-4bsd", "pthread", NULL};
	static const char *const *const groups[] = {cases, rts, NULL};
	static const int jobs[] = {1, 4, 16};
	int fail = 0;

	bw_args("make", argc, argv, NULL, groups);
	if (bw_quick) {
		ndir = 8;
		nfile = 10;
	}
	bw_watchdog("make");
	ncpus = bw_ncpus();
	iters_per_us = bw_calibrate();
	build_dag();
	heap = malloc((size_t)nall * sizeof(*heap));
	finished = malloc((size_t)nall * sizeof(*finished));
	if (heap == NULL || finished == NULL)
		return (1);
	fprintf(stderr,
	    "make: %d dirs x %d files, %d tasks per run; busy loop %.0f "
	    "iterations/us\n"
	    "make: serial work %.3f s, critical path %.3f s, %d CPUs\n",
	    ndir, nfile, ndepend + nall, iters_per_us, serial_us / 1e6,
	    critical_us / 1e6, ncpus);
	for (int c = 0; c < 3; c++) {
		if (!bw_selected(cases[c]))
			continue;
		for (int r = 0; r < 3; r++) {
			/* -j1 is the serial baseline: pthread only. */
			if (jobs[c] == 1 && strcmp(rts[r], "pthread") != 0)
				continue;
			if (!bw_selected(rts[r]))
				continue;
			fail |= run_one(jobs[c], rts[r]);
		}
	}
	return (fail);
}
