/*
 * make: a synthetic parallel make ("mkdag", docs: shared benchmarks.md
 * section 7), the buildworld analogue.  What make -jN stresses in a
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
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ult.h"
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
	int parent;	  /* made ready when this ends; -1: none */
	int deps;	  /* unfinished prerequisites; under the lock */
	uint32_t dur_us;  /* busy work */
	atomic_int runs;  /* times the body ran: must end at 1 */
	long start, end;  /* global sequence numbers; under the lock */
	ult_thread_t *ut; /* the thread that runs it */
	pthread_t pt;
	struct task *base; /* the stage's array, to find the parent */
};

static int quick, ndir = 50, nfile = 40;
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
	if (depend_tasks == NULL || all_tasks == NULL) {
		fprintf(stderr, "make: out of memory\n");
		exit(1);
	}
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

/* ---- the runtime under test: ult objects or pthread ones ---- */

static int use_ult;
static ult_mutex_t u_lock;
static ult_cond_t u_ready;
static ult_sem_t u_tokens;
static pthread_mutex_t p_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t p_ready = PTHREAD_COND_INITIALIZER;
static sem_t p_tokens;

static void
must(int err, const char *what)
{
	if (err != 0) {
		fprintf(stderr, "make: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

static void
lock(void)
{
	if (use_ult)
		must(ult_mutex_lock(&u_lock), "ult_mutex_lock");
	else
		must(pthread_mutex_lock(&p_lock), "pthread_mutex_lock");
}

static void
unlock(void)
{
	if (use_ult)
		must(ult_mutex_unlock(&u_lock), "ult_mutex_unlock");
	else
		must(pthread_mutex_unlock(&p_lock), "pthread_mutex_unlock");
}

static void
ready_wait(void)
{
	if (use_ult)
		must(ult_cond_wait(&u_ready, &u_lock), "ult_cond_wait");
	else
		must(pthread_cond_wait(&p_ready, &p_lock), "pthread_cond_wait");
}

static void
ready_signal(void)
{
	if (use_ult)
		must(ult_cond_signal(&u_ready), "ult_cond_signal");
	else
		must(pthread_cond_signal(&p_ready), "pthread_cond_signal");
}

static void
token_take(void)
{
	if (use_ult) {
		must(ult_sem_wait(&u_tokens), "ult_sem_wait");
		return;
	}
	while (sem_wait(&p_tokens) != 0)
		if (errno != EINTR)
			must(errno, "sem_wait");
}

static void
token_give(void)
{
	if (use_ult)
		must(ult_sem_post(&u_tokens), "ult_sem_post");
	else if (sem_post(&p_tokens) != 0)
		must(errno, "sem_post");
}

static void
io_sleep(void)
{
	struct timespec ts = {0, IO_SLEEP_NS};

	if (use_ult) {
		must(ult_sleep_ns(IO_SLEEP_NS), "ult_sleep_ns");
		return;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* ---- the executor ---- */

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
		io_sleep();
	lock();
	t->end = seq++;
	if (t->parent >= 0 && --t->base[t->parent].deps == 0) {
		heap_push(t->parent);
		ready_signal();
	}
	finished[nfin++] = (int)(t - t->base);
	unlock();
	/* Last: once the token is back the dispatcher may finish the
	 * stage; the thread itself is waited for by the join. */
	token_give();
	return (NULL);
}

/* The dispatcher's wait(): join every task that has ended. */
static void
reap(int *reaped)
{
	int upto;

	lock();
	upto = nfin;
	unlock();
	for (; *reaped < upto; (*reaped)++) {
		struct task *t = &stage[finished[*reaped]];

		if (use_ult)
			must(ult_join(t->ut, NULL), "ult_join");
		else
			must(pthread_join(t->pt, NULL), "pthread_join");
	}
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

		token_take();
		reap(&reaped);
		lock();
		while (nheap == 0)
			ready_wait();
		i = heap_pop();
		t[i].start = seq++;
		unlock();
		if (use_ult)
			must(ult_spawn(&t[i].ut, NULL, task_main, &t[i]),
			    "ult_spawn");
		else
			must(pthread_create(&t[i].pt, NULL, task_main, &t[i]),
			    "pthread_create");
	}
	/* Every token back means every task has ended. */
	for (int k = 0; k < jobs; k++)
		token_take();
	for (int k = 0; k < jobs; k++)
		token_give();
	reap(&reaped);
	if (reaped != n) {
		fprintf(stderr, "make: reaped %d of %d tasks\n", reaped, n);
		exit(1);
	}
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
	struct ult_config cfg = {0};
	struct rusage r0, r1;
	char cs[16];
	uint64_t t0, t1;
	double real;
	int ntasks = ndepend + nall;

	snprintf(cs, sizeof(cs), "j%d", jobs);
	use_ult = strncmp(rt, "ult", 3) == 0;
	jobs_now = jobs;
	seq = 0;
	reset_stage(depend_tasks, ndepend);
	reset_stage(all_tasks, nall);
	if (use_ult) {
		cfg.policy = strcmp(rt, "ult-4bsd") == 0 ? "4bsd" : "ule";
		cfg.preempt = 1;
		must(ult_init(&cfg), "ult_init");
		must(ult_mutex_init(&u_lock), "ult_mutex_init");
		must(ult_cond_init(&u_ready), "ult_cond_init");
		must(ult_sem_init(&u_tokens, (unsigned)jobs), "ult_sem_init");
	} else if (sem_init(&p_tokens, 0, (unsigned)jobs) != 0)
		must(errno, "sem_init");
	alarm(quick ? 60 : 300);
	getrusage(RUSAGE_SELF, &r0);
	t0 = ult_now();
	if (use_ult) {
		ult_thread_t *mk;

		must(ult_spawn(&mk, NULL, make_main, NULL), "ult_spawn");
		must(ult_join(mk, NULL), "ult_join");
	} else
		make_main(NULL);
	t1 = ult_now();
	getrusage(RUSAGE_SELF, &r1);
	alarm(0);
	if (use_ult)
		must(ult_shutdown(), "ult_shutdown");
	else
		sem_destroy(&p_tokens);
	if (!check(cs, rt))
		return (1);
	real = (double)(t1 - t0) / 1e9;
	printf("R\tmake\t%s\t%s\treal_s\t%.3f\n", cs, rt, real);
	printf("R\tmake\t%s\t%s\tuser_s\t%.3f\n", cs, rt,
	    tv_s(r0.ru_utime, r1.ru_utime));
	printf("R\tmake\t%s\t%s\tsys_s\t%.3f\n", cs, rt,
	    tv_s(r0.ru_stime, r1.ru_stime));
	printf("R\tmake\t%s\t%s\ttasks/s\t%.0f\n", cs, rt, ntasks / real);
	fflush(stdout);
	fprintf(stderr, "make: %s %-8s real %.3f s (lower bound %.3f s)\n", cs,
	    rt, real, fmax(critical_us, serial_us / ncpus) / 1e6);
	return (0);
}

int
main(int argc, char **argv)
{
	static const char *const cases[] = {"j1", "j4", "j16"};
	static const char *const rts[] = {"ult", "ult-4bsd", "pthread"};
	static const int jobs[] = {1, 4, 16};
	cpu_set_t set;
	int fail = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
			ndir = 8;
			nfile = 10;
		} else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
			i++;
	}
	bw_watchdog("make");
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		ncpus = CPU_COUNT(&set);
	else
		ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
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
		if (!bw_selected(argc, argv, cases[c], cases, 3))
			continue;
		for (int r = 0; r < 3; r++) {
			/* -j1 is the serial baseline: pthread only. */
			if (jobs[c] == 1 && strcmp(rts[r], "pthread") != 0)
				continue;
			if (!bw_selected(argc, argv, rts[r], rts, 3))
				continue;
			fail |= run_one(jobs[c], rts[r]);
		}
	}
	return (fail);
}
