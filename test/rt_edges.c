/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Edges of the scheduler interface where wakeups used to get lost or a
 * thread moved when it must not: binding a running thread that receives
 * a lend, lends to a queued bound owner, the idle class at its worst
 * priority, binding a preempted thread, and fork() with the runtime up.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kern/runtime.h"
#include "kern/worker.h"
#include "obs/debug.h"
#include "rt_test.h"
#include "test.h"
#include "ult.h"

/* ---- bind + lend ---- */

static ult_mutex_t bl_m = ULT_MUTEX_INITIALIZER;
static atomic_int bl_locked, bl_release, bl_cpu_after;

static void *
bl_holder(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_mutex_lock(&bl_m), 0);
	atomic_store(&bl_locked, 1);
	while (!atomic_load(&bl_release))
		;
	CHECK_EQ(ult_mutex_unlock(&bl_m), 0);
	ult_yield(); /* its next switch applies the binding */
	atomic_store(&bl_cpu_after, ult_cpu());
	return (NULL);
}

static void *
bl_waiter(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_mutex_lock(&bl_m), 0);
	CHECK_EQ(ult_mutex_unlock(&bl_m), 0);
	return (NULL);
}

/*
 * A running lock holder is bound to another worker by a foreign thread,
 * then a better thread blocks on its lock and lends it its priority.
 * The lend must go to the holder's own worker's queue: it used to go to
 * the target's (named by the binding already), claiming a priority there
 * that nothing on that idle worker had, and writing under the wrong lock.
 */
void
test_bind_running_lend(void)
{
	ult_thread_t *h, *w;
	struct ult_attr a;
	struct sched_cpu_stats st;
	int home;

	rt_init(3, -1);
	atomic_store(&bl_locked, 0);
	atomic_store(&bl_release, 0);
	atomic_store(&bl_cpu_after, -1);
	ult_attr_init(&a);
	a.nice = 20;
	a.cpu = 0;
	CHECK_EQ(ult_spawn(&h, &a, bl_holder, NULL), 0);
	while (!atomic_load(&bl_locked))
		usleep(1000);
	CHECK_EQ(ult_bind(h, -1), 0);
	CHECK_EQ(ult_bind(h, 1), 0);
	home = rt_info(h).cpu;
	CHECK_EQ(home, 0); /* still running where it was */
	ult_attr_init(&a);
	a.nice = -20;
	a.cpu = 2;
	CHECK_EQ(ult_spawn(&w, &a, bl_waiter, NULL), 0);
	while (rt_info(w).state != ULT_STATE_SLEEPING)
		usleep(1000);
	/* The waiter blocked and lent to the holder, which still runs on
	 * worker 0: worker 1 runs nothing and must not claim that
	 * priority. */
	CHECK_EQ(rt_info(h).priority, rt_info(w).priority);
	ult__rt.sched->cpu_stats(1, &st);
	CHECK_EQ(st.load, 0);
	CHECK(st.lowpri >= 224);
	atomic_store(&bl_release, 1);
	CHECK_EQ(ult_join(w, NULL), 0);
	CHECK_EQ(ult_join(h, NULL), 0);
	CHECK_EQ(atomic_load(&bl_cpu_after), 1);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- lends to a queued, bound owner ---- */

static ult_mutex_t lq_m = ULT_MUTEX_INITIALIZER;
static atomic_int lq_stop;
static atomic_long lq_rounds;

static void *
lq_owner(void *arg)
{
	(void)arg;
	while (!atomic_load(&lq_stop)) {
		CHECK_EQ(ult_mutex_lock(&lq_m), 0);
		ult_sleep_ns(20000);
		CHECK_EQ(ult_mutex_unlock(&lq_m), 0);
		atomic_fetch_add(&lq_rounds, 1);
		ult_sleep_ns(5000);
	}
	return (NULL);
}

static void *
lq_waiter(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	while (!atomic_load(&lq_stop)) {
		int r;

		ult_sleep_ns(test_rand(&seed) % 30000);
		r = ult_mutex_timedlock(&lq_m, ult_now() + 200000);
		if (r == 0)
			CHECK_EQ(ult_mutex_unlock(&lq_m), 0);
		else
			CHECK_EQ(r, ETIMEDOUT);
	}
	return (NULL);
}

/*
 * The lock owner, bound to a worker of its own, is queued there after
 * each sleep while realtime waiters on other workers lend to it and take
 * the lend back when they time out.  4BSD requeued it with the queue
 * length dropping to zero for an instant, which the idle worker could
 * read and go to sleep on; with nothing left to wake it the owner stayed
 * queued for good.  Fails when a worker sleeps with work queued for
 * 200 ms, or when the owner stops for 5 s.
 */
void
test_lend_queued_owner(void)
{
	ult_thread_t *o, *w[3];
	struct ult_attr a;
	long last = -1;
	int stranded = 0;
	uint64_t end, seen;

	rt_init(4, 0);
	atomic_store(&lq_stop, 0);
	atomic_store(&lq_rounds, 0);
	ult_attr_init(&a);
	a.cpu = 1;
	a.nice = 20;
	CHECK_EQ(ult_spawn(&o, &a, lq_owner, NULL), 0);
	for (int i = 0; i < 3; i++) {
		static const int cpus[3] = {0, 2, 3};

		ult_attr_init(&a);
		a.cpu = cpus[i];
		a.cls = ULT_CLASS_REALTIME;
		a.rtprio = 4 + 8 * i;
		CHECK_EQ(
		    ult_spawn(&w[i], &a, lq_waiter, (void *)(uintptr_t)(i + 1)),
		    0);
	}
	seen = ult_now();
	end = seen + 3000000000ull / TEST_SCALE;
	while (ult_now() < end) {
		long r = atomic_load(&lq_rounds);

		usleep(10000);
		stranded = ult__worker_stranded(1) ? stranded + 1 : 0;
		if (stranded >= 20) {
			ult__debug_dump(STDERR_FILENO);
			CHECK(!"worker 1 sleeps with the owner queued");
		}
		if (r != last) {
			last = r;
			seen = ult_now();
		}
		CHECK(ult_now() - seen < 5000000000ull);
	}
	atomic_store(&lq_stop, 1);
	CHECK_EQ(ult_join(o, NULL), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ult_join(w[i], NULL), 0);
	CHECK(atomic_load(&lq_rounds) > 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- the idle class at rtprio 31 ---- */

static void *
ret_arg(void *arg)
{
	return (arg);
}

static void *
idle_self(void *arg)
{
	CHECK_EQ(ult_setclass(NULL, ULT_CLASS_IDLE, 31), 0);
	ult_sleep_ns(1000000);
	return (arg);
}

/*
 * Priority 255 ties with the idle thread's: no priority test wakes a
 * sleeping worker for it, whether it is spawned from a foreign thread,
 * made runnable by a timer, or woken from another worker.
 */
void
test_idle_class_lowest(void)
{
	struct ult_attr a;
	ult_thread_t *t;
	void *r;

	for (int ncpu = 1; ncpu <= 2; ncpu++) {
		rt_init(ncpu, 0);
		usleep(100000); /* let every worker go to sleep */
		ult_attr_init(&a);
		a.cls = ULT_CLASS_IDLE;
		a.rtprio = 31;
		CHECK_EQ(ult_spawn(&t, &a, ret_arg, (void *)7), 0);
		CHECK_EQ(ult_join(t, &r), 0);
		CHECK_EQ((intptr_t)r, 7);
		usleep(100000);
		CHECK_EQ(ult_spawn(&t, NULL, idle_self, (void *)8), 0);
		CHECK_EQ(ult_join(t, &r), 0);
		CHECK_EQ((intptr_t)r, 8);
		CHECK_EQ(ult_shutdown(), 0);
	}
}

/* ---- binding a preempted thread ---- */

static atomic_int bp_stop, bp_moved, bp_started;
/* Called through a volatile pointer: the compiler may not hoist the
 * read out of the loop (pthread_self is declared const). */
static pthread_t (*volatile bp_self)(void) = pthread_self;

static void *
bp_spin(void *arg)
{
	pthread_t me = bp_self(); /* the worker's kernel thread */

	(void)arg;
	atomic_store(&bp_started, 1);
	while (!atomic_load_explicit(&bp_stop, memory_order_relaxed))
		if (!pthread_equal(bp_self(), me)) {
			atomic_store(&bp_moved, 1);
			break;
		}
	return (NULL);
}

/*
 * A thread that never switches voluntarily is bound back and forth by a
 * foreign thread while it is preempted by a rival: it must never find
 * itself on another kernel thread (the migration rule).  It used to move
 * when the binding came before its preemption was taken.
 */
void
test_bind_preempted_stays(void)
{
	ult_thread_t *t, *r;
	struct ult_attr a;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	SKIP("no asynchronous preemption in this build");
#endif
	rt_init(2, 1);
	atomic_store(&bp_stop, 0);
	atomic_store(&bp_moved, 0);
	atomic_store(&bp_started, 0);
	CHECK_EQ(ult_spawn(&t, NULL, bp_spin, NULL), 0);
	while (!atomic_load(&bp_started))
		usleep(1000);
	ult_attr_init(&a);
	a.cpu = rt_info(t).cpu;
	CHECK_EQ(ult_spawn(&r, &a, bp_spin, NULL), 0);
	for (int i = 0; i < 2000 && !atomic_load(&bp_moved); i++) {
		CHECK_EQ(ult_bind(t, i & 1), 0);
		usleep(500);
	}
	/* It was preempted meanwhile, or the test showed nothing. */
	while (rt_info(t).nivcsw == 0)
		usleep(1000);
	atomic_store(&bp_stop, 1);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_join(r, NULL), 0);
	CHECK_EQ(atomic_load(&bp_moved), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- fork ---- */

/* In a fork child: the runtime is down, and every call says so at once;
 * ult_init starts one of the child's own, which runs uthreads and stops
 * (DESIGN.md section 10.1). */
static int
child_checks(void)
{
	ult_thread_t *t;
	void *ret = NULL;
	int v;

	alarm(10);
	if (ult_self() != NULL || ult_cpu() != -1 || ult_ncpu() != 0 ||
	    ult_sched_name() != NULL)
		return (10);
	if (ult_spawn(&t, NULL, ret_arg, NULL) != ENXIO)
		return (11);
	if (ult_sleep_ns(1000000) != 0)
		return (12); /* a foreign thread's sleep */
	if (ult_shutdown() != ENXIO)
		return (13);
	if (ult_sysctl("kern.sched.slice", &(long){0}, NULL) != ENXIO)
		return (14);
	if (ult_cpu_info(0, &(struct ult_cpu_info){0}) != ENXIO ||
	    ult_getnice(NULL, &v) != ENXIO)
		return (15);
	ult_yield(); /* sched_yield */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	/* TSan ends a child that starts threads after a multithreaded
	 * fork ("not supported"). GCC 12's ASan allocator takes no lock
	 * across fork, unlike glibc malloc: a parent worker freeing into
	 * the quarantine at that moment leaves its lock held for good, and
	 * the child's first new thread waits on it forever. */
	return (0);
#endif
	if (ult_init(NULL) != 0 || ult_ncpu() < 1)
		return (16);
	for (int i = 0; i < 50; i++)
		if (ult_spawn(&t, NULL, ret_arg, &v) != 0 ||
		    ult_join(t, &ret) != 0 || ret != &v)
			return (17);
	if (ult_shutdown() != 0 || ult_ncpu() != 0)
		return (18);
	return (0);
}

static int fk_status;

static void *
fork_from_uthread(void *arg)
{
	pid_t p = fork();

	(void)arg;
	if (p == 0)
		_exit(child_checks());
	CHECK(p > 0);
	CHECK_EQ(waitpid(p, &fk_status, 0), p);
	return (NULL);
}

void
test_fork_child(void)
{
	ult_thread_t *t;
	int st;
	pid_t p;

	rt_init(2, 0);
	CHECK_EQ(ult_spawn(&t, NULL, ret_arg, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	p = fork();
	if (p == 0)
		_exit(child_checks());
	CHECK(p > 0);
	CHECK_EQ(waitpid(p, &st, 0), p);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	/* The same from a uthread: the child's one thread is foreign. */
	CHECK_EQ(ult_spawn(&t, NULL, fork_from_uthread, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK(WIFEXITED(fk_status));
	CHECK_EQ(WEXITSTATUS(fk_status), 0);
	/* The parent's runtime is untouched. */
	CHECK_EQ(ult_spawn(&t, NULL, ret_arg, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
	/* A child of a process whose runtime is stopped may start one. */
	p = fork();
	if (p == 0) {
		alarm(10);
		if (ult_init(NULL) != 0 || ult_spawn(&t, NULL, ret_arg, NULL) ||
		    ult_join(t, NULL) || ult_shutdown())
			_exit(20);
		_exit(0);
	}
	CHECK_EQ(waitpid(p, &st, 0), p);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
}

/* ---- the hang report ---- */

static ult_mutex_t hr_m = ULT_MUTEX_INITIALIZER;
static ult_cond_t hr_c = ULT_COND_INITIALIZER;
static atomic_int hr_go;

static void *
hr_sleeper(void *arg)
{
	CHECK_EQ(ult_mutex_lock(&hr_m), 0);
	while (!atomic_load(&hr_go))
		CHECK_EQ(ult_cond_wait(&hr_c, &hr_m), 0);
	CHECK_EQ(ult_mutex_unlock(&hr_m), 0);
	return (arg);
}

/* Holds hr_m2 while it sleeps like hr_sleeper; hr_blocked waits for it. */
static ult_mutex_t hr_m2 = ULT_MUTEX_INITIALIZER;

static void *
hr_owner(void *arg)
{
	CHECK_EQ(ult_mutex_lock(&hr_m2), 0);
	hr_sleeper(arg);
	CHECK_EQ(ult_mutex_unlock(&hr_m2), 0);
	return (arg);
}

static void *
hr_blocked(void *arg)
{
	CHECK_EQ(ult_mutex_lock(&hr_m2), 0);
	CHECK_EQ(ult_mutex_unlock(&hr_m2), 0);
	return (arg);
}

/* What a watchdog prints: every worker with its queues, every uthread
 * with its state, its lock and what it waits on, and a lock's owner. */
void
test_hang_report(void)
{
	struct ult_attr a;
	ult_thread_t *t, *o, *b;
	char buf[65536], want[96];
	FILE *f = tmpfile();
	size_t n;

	CHECK(f != NULL);
	rt_init(2, 0);
	ult_attr_init(&a);
	a.name = "report-sleeper";
	CHECK_EQ(ult_spawn(&t, &a, hr_sleeper, NULL), 0);
	a.name = "report-owner";
	CHECK_EQ(ult_spawn(&o, &a, hr_owner, NULL), 0);
	while (rt_info(t).state != ULT_STATE_SLEEPING ||
	    rt_info(o).state != ULT_STATE_SLEEPING)
		usleep(1000);
	a.name = "report-blocked";
	CHECK_EQ(ult_spawn(&b, &a, hr_blocked, NULL), 0);
	while (rt_info(b).state != ULT_STATE_SLEEPING)
		usleep(1000);
	ult__debug_dump(fileno(f));
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	CHECK(strstr(buf, "hang report: ULE") != NULL ||
	    strstr(buf, "hang report: 4BSD") != NULL);
	CHECK(strstr(buf, "worker 0 ") != NULL &&
	    strstr(buf, "worker 1 ") != NULL);
	CHECK(strstr(buf, "cpu 1") != NULL); /* the policy's queues */
	snprintf(want, sizeof(want), "'report-sleeper'");
	CHECK(strstr(buf, want) != NULL);
	CHECK(strstr(buf, "lock sleepq chain") != NULL);
	CHECK(strstr(buf, "last: sleepq") != NULL);
	CHECK(strstr(buf, "end of hang report") != NULL);
	snprintf(want, sizeof(want), "waits for lock %p owned by uthread %llu",
	    (void *)&hr_m2, (unsigned long long)rt_info(o).id);
	if (strstr(buf, want) == NULL) {
		fprintf(stderr, "no \"%s\" in:\n%s", want, buf);
		CHECK(0);
	}
	CHECK_EQ(ult_mutex_lock(&hr_m), 0);
	atomic_store(&hr_go, 1);
	CHECK_EQ(ult_cond_broadcast(&hr_c), 0);
	CHECK_EQ(ult_mutex_unlock(&hr_m), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_join(o, NULL), 0);
	CHECK_EQ(ult_join(b, NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- an invariant firing ---- */

/*
 * Releasing a spin lock one does not hold is caught by the invariants of
 * a debug build: the child prints where, what and who, and aborts.
 */
void
test_kassert_fires(void)
{
	int pipefd[2], st;
	char buf[512] = {0};
	ssize_t n;
	pid_t p;

#ifndef ULT_INVARIANTS
	SKIP("invariants are compiled into debug builds only");
#endif
	CHECK_EQ(pipe(pipefd), 0);
	fflush(NULL);
	if ((p = fork()) == 0) {
		static struct mtx m = MTX_INITIALIZER("kassert test");

		dup2(pipefd[1], STDERR_FILENO);
		ULT_ST(&m.mtx_locked, 1); /* held, but not by us */
		mtx_unlock_spin(&m);
		_exit(0);
	}
	close(pipefd[1]);
	CHECK_EQ(waitpid(p, &st, 0), p);
	n = read(pipefd[0], buf, sizeof(buf) - 1);
	close(pipefd[0]);
	CHECK(n > 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK(strstr(buf, "ult: assertion failed at") != NULL);
	CHECK(strstr(buf, "lock.h") != NULL);
	CHECK(strstr(buf, "in mtx_unlock_spin()") != NULL);
	CHECK(strstr(buf, "mtx_owned(m)") != NULL);
	CHECK(strstr(buf, "(kassert test)") != NULL);
	CHECK(strstr(buf, "a foreign thread") != NULL);
}
