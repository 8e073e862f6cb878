/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-uthread TLS, the parts the kernel sees (the thread id in the
 * descriptor, sched_getcpu, signal handlers, setuid-family calls,
 * preemption), what it costs in memory, the modes, and the chaos tunable
 * the other TLS tests use.  See rt_tls.c for the rules they share.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kern/runtime.h"
#include "kern/uthread.h"
#include "rt_test.h"
#include "rt_tls.h"

/* ---- what the kernel sees ---- */

#define KF_THREADS 8
#define KF_ROUNDS (200 / TEST_SCALE)

static pid_t kf_tid[5]; /* 4 workers and the spare (ult_cpu() == 4) */
static atomic_long kf_bad;
static pthread_mutex_t kf_ec, kf_pi, kf_rob;

static void
kf_check(int ok)
{
	if (!ok)
		atomic_fetch_add(&kf_bad, 1);
}

static void *
kf_note_tid(void *arg)
{
	kf_tid[ult_cpu()] = gettid();
	return (arg);
}

static int
getcpu_sys(void)
{
	unsigned cpu = 0;

	syscall(SYS_getcpu, &cpu, NULL, NULL);
	return ((int)cpu);
}

/* Through a volatile pointer: pthread_self is declared const, and the
 * compiler would reuse its first result. */
static pthread_t (*volatile kf_self)(void) = pthread_self;

static void *
kf_body(void *arg)
{
	pthread_t self = kf_self();

	(void)arg;
	for (int i = 0; i < KF_ROUNDS; i++) {
		int c0, c1, c;

		/* The descriptor's and the kernel's thread are the worker's. */
		kf_check(gettid() == kf_tid[ult_cpu()]);
		kf_check(pthread_equal(self, kf_self()));
		/* sched_getcpu, between two system calls that agree (the
		 * worker's kernel thread may move meanwhile). */
		c0 = getcpu_sys();
		c = sched_getcpu();
		c1 = getcpu_sys();
		kf_check(c0 != c1 || c == c0);
		/* Owner-checked mutexes taken and given back between
		 * switches. */
		kf_check(pthread_mutex_lock(&kf_ec) == 0);
		kf_check(pthread_mutex_lock(&kf_ec) == EDEADLK);
		kf_check(pthread_mutex_unlock(&kf_ec) == 0);
		kf_check(pthread_mutex_unlock(&kf_ec) == EPERM);
		kf_check(pthread_mutex_lock(&kf_pi) == 0);
		kf_check(pthread_mutex_unlock(&kf_pi) == 0);
		kf_check(pthread_mutex_lock(&kf_rob) == 0);
		kf_check(pthread_mutex_unlock(&kf_rob) == 0);
		ult_yield();
	}
	return (NULL);
}

/* A signal handler runs on the TLS of the uthread it interrupts. */
static __thread long sig_tl;
static volatile long sig_seen_tl;
static volatile pthread_t sig_seen_self;
static atomic_int sig_ready, sig_done;
static atomic_int sig_tid;

static void
on_usr1(int sig)
{
	(void)sig;
	sig_seen_tl = sig_tl;
	sig_seen_self = kf_self();
	atomic_store(&sig_done, 1);
}

static void *
sig_spinner(void *arg)
{
	sig_tl = 4242;
	ult_yield(); /* be somewhere else for a change */
	atomic_store(&sig_tid, gettid());
	atomic_store(&sig_ready, 1);
	while (!atomic_load(&sig_done))
		;
	kf_check(sig_seen_tl == 4242 && sig_tl == 4242);
	kf_check(pthread_equal(sig_seen_self, kf_self()));
	return (arg);
}

static void
init_mutexes(void)
{
	pthread_mutexattr_t a;

	CHECK_EQ(pthread_mutexattr_init(&a), 0);
	CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
	CHECK_EQ(pthread_mutex_init(&kf_ec, &a), 0);
	CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_NORMAL), 0);
	CHECK_EQ(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	CHECK_EQ(pthread_mutex_init(&kf_pi, &a), 0);
	CHECK_EQ(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_NONE), 0);
	CHECK_EQ(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), 0);
	CHECK_EQ(pthread_mutex_init(&kf_rob, &a), 0);
	pthread_mutexattr_destroy(&a);
}

void
test_tls_kernel_facing(void)
{
	static const int workers[] = {2, 4};
	struct sigaction sa, old;
	ult_thread_t *t[KF_THREADS];
	struct ult_attr a;

	init_mutexes();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, &old), 0);
	for (int r = 0; r < 2; r++) {
		tls_begin(workers[r]);
		atomic_store(&kf_bad, 0);
		ult_attr_init(&a);
		for (a.cpu = 0; a.cpu < workers[r]; a.cpu++) {
			CHECK_EQ(ult_spawn(&t[0], &a, kf_note_tid, NULL), 0);
			CHECK_EQ(ult_join(t[0], NULL), 0);
		}
		for (int i = 0; i < KF_THREADS; i++)
			CHECK_EQ(ult_spawn(&t[i], NULL, kf_body, NULL), 0);
		for (int i = 0; i < KF_THREADS; i++)
			CHECK_EQ(ult_join(t[i], NULL), 0);
		atomic_store(&sig_ready, 0);
		atomic_store(&sig_done, 0);
		CHECK_EQ(ult_spawn(&t[0], NULL, sig_spinner, NULL), 0);
		while (!atomic_load(&sig_ready))
			usleep(1000);
		CHECK_EQ(syscall(SYS_tgkill, getpid(), atomic_load(&sig_tid),
			     SIGUSR1),
		    0);
		CHECK_EQ(ult_join(t[0], NULL), 0);
		CHECK_EQ(atomic_load(&kf_bad), 0);
		tls_end();
	}
	sigaction(SIGUSR1, &old, NULL);
}

/*
 * ---- setuid and friends while uthreads run ----
 * glibc makes every thread it knows run the call (a signal each), and
 * waits for each to report in its own descriptor; a worker running a
 * uthread must report in the worker's.  A hang here is the failure.
 */
static atomic_int sx_stop;

static void *
sx_spin(void *arg)
{
	while (!atomic_load(&sx_stop))
		;
	return (arg);
}

static void *
sx_call(void *arg)
{
	CHECK_EQ(setegid(getegid()), 0);
	CHECK_EQ(seteuid(geteuid()), 0);
	return (arg);
}

void
test_tls_setxid(void)
{
	ult_thread_t *t[2], *c;
	struct ult_attr a;
	pthread_t p;

	rt_init(2, -1);
	atomic_store(&sx_stop, 0);
	ult_attr_init(&a);
	a.cpu = 0;
	CHECK_EQ(ult_spawn(&t[0], &a, sx_spin, NULL), 0);
	a.cpu = 1;
	CHECK_EQ(ult_spawn(&t[1], &a, sx_spin, NULL), 0);
	usleep(10000);
	CHECK_EQ(pthread_create(&p, NULL, sx_call, NULL), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	/* From a uthread too, while the other worker runs one. */
	CHECK_EQ(ult_spawn(&c, &a, sx_call, NULL), 0);
	atomic_store(&sx_stop, 1);
	CHECK_EQ(ult_join(c, NULL), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * ---- preempted, and moved, in the middle of a loop ----
 * With ult.preempt_migrate=1 a preempted uthread may resume on another
 * worker, from inside the signal handler (ult.chaos_migrate=2 moves it
 * at every preemption); the kernel's rt_sigreturn does not restore the
 * FS base, the switch path does.
 */
static atomic_int pr_stop;
static atomic_long pr_bad, pr_moves;
static __thread volatile long pr_tl;

static void *
pr_ticker(void *arg)
{
	while (!atomic_load(&pr_stop))
		ult_sleep_ns(500000);
	return (arg);
}

static void *
pr_hog(void *arg)
{
	long id = (long)(intptr_t)arg + 1;
	/* Read at every step (volatile), through the thread pointer and
	 * through addresses taken before the loop, as compiled code keeps
	 * them. */
	volatile long *kept = &pr_tl;
	volatile int *err = &errno;

	errno = (int)id;
	pr_tl = id;
	for (long i = 0; i < 40000000 / TEST_SCALE; i++)
		if (pr_tl != id || *kept != id || *err != id) {
			atomic_fetch_add(&pr_bad, 1);
			break;
		}
	atomic_fetch_add(&pr_moves, (long)rt_info(NULL).nmigrations);
	return (NULL);
}

void
test_tls_preempt(void)
{
	ult_thread_t *t[4], *tk[2];
	struct ult_cpu_info ci;
	long one = 1, two = 2, slice = 1;
	uint64_t pre = 0;

	if (!rt_preempt_available())
		SKIP("no asynchronous preemption in this build");
	rt_init(2, 1);
	if (!tls_on() && !tls_worker_asked()) {
		CHECK_EQ(ult_shutdown(), 0);
		SKIP(tls_off_reason());
	}
	CHECK_EQ(ult_sysctl("ult.preempt_migrate", NULL, &one), 0);
	CHECK_EQ(ult_sysctl("ult.chaos_migrate", NULL, &two), 0);
	CHECK_EQ(ult_sysctl("kern.sched.slice", NULL, &slice), 0);
	atomic_store(&pr_stop, 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_spawn(&tk[i], NULL, pr_ticker, NULL), 0);
	for (intptr_t i = 0; i < 4; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, pr_hog, (void *)i), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	atomic_store(&pr_stop, 1);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_join(tk[i], NULL), 0);
	for (int c = 0; c < 2; c++) {
		CHECK_EQ(ult_cpu_info(c, &ci), 0);
		pre += ci.preemptions;
	}
	fprintf(stderr,
	    "%lu preemptions, %ld migrations of the hogs, %ld bad\n",
	    (unsigned long)pre, atomic_load(&pr_moves), atomic_load(&pr_bad));
	CHECK(pre > 0);
	CHECK_EQ(atomic_load(&pr_bad), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * ---- memory ----
 * 10^6 uthreads that malloc and free and touch __thread data, spawned
 * and joined in turn: no uthread may leave memory behind (malloc's
 * per-thread cache above all), so RSS and malloc's in-use bytes stay
 * flat after a warm-up.  The warm-up fills the pools of stacks and thread
 * blocks to their bound first (a burst of live threads), then runs a
 * tenth of the spawns.
 */

#define MEM_TOTAL (1000000 / TEST_SCALE)
#define MEM_WARM (MEM_TOTAL / 10)
#define MEM_BURST 512

static __thread char mem_buf[512];
static __thread long mem_init = 11;
static atomic_long mem_bad;

static long
rss_kib(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (res * (sysconf(_SC_PAGESIZE) / 1024));
}

static void *
mem_child(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;
	void *p[4];

	if (mem_init != 11 || mem_buf[0] != 0)
		atomic_fetch_add(&mem_bad, 1);
	mem_init = i;
	for (int k = 0; k < 4; k++) {
		p[k] = malloc(16 + (i * 131 + (unsigned)k * 97) % 1000);
		memset(p[k], k, 16);
	}
	snprintf(mem_buf, sizeof(mem_buf), "%u", i);
	for (int k = 0; k < 4; k++)
		free(p[k]);
	return (NULL);
}

static void *
mem_spawner(void *arg)
{
	long n = (long)(intptr_t)arg;

	for (long i = 0; i < n; i++) {
		ult_thread_t *t;

		CHECK_EQ(ult_spawn(&t, NULL, mem_child, (void *)(uintptr_t)i),
		    0);
		CHECK_EQ(ult_join(t, NULL), 0);
		if (i % 1000 == 0)
			ult_yield();
	}
	return (NULL);
}

static ult_barrier_t mem_bar;

static void *
mem_live(void *arg)
{
	ult_barrier_wait(&mem_bar);
	return (mem_child(arg));
}

static void
mem_burst(void)
{
	static ult_thread_t *t[MEM_BURST];

	CHECK_EQ(ult_barrier_init(&mem_bar, MEM_BURST), 0);
	for (int i = 0; i < MEM_BURST; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, mem_live, NULL), 0);
	for (int i = 0; i < MEM_BURST; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(ult_barrier_destroy(&mem_bar), 0);
}

static void
mem_round(long n)
{
	ult_thread_t *t[2];

	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, mem_spawner,
			     (void *)(intptr_t)(n / 2)),
		    0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
}

void
test_tls_memory(void)
{
	long r0, r1;
	size_t u0, u1;

	tls_begin(2);
	atomic_store(&mem_bad, 0);
	mem_burst();
	mem_round(MEM_WARM);
	r0 = rss_kib();
	u0 = mallinfo2().uordblks;
	mem_round(MEM_TOTAL - MEM_WARM);
	r1 = rss_kib();
	u1 = mallinfo2().uordblks;
	fprintf(stderr,
	    "RSS %ld -> %ld KiB, malloc in use %zu -> %zu bytes, %ld bad\n", r0,
	    r1, u0, u1, atomic_load(&mem_bad));
	CHECK_EQ(atomic_load(&mem_bad), 0);
	CHECK(r1 <= r0 + r0 / 10);
	CHECK(u1 <= u0 + 64 * 1024);
	tls_end();
}

/* ---- the modes ---- */

void
test_tls_mode(void)
{
	struct ult_config cfg = {0};
	long v = 1, avail;

	/* Default: per uthread where it can be had. */
	CHECK_EQ(ult_init(NULL), 0);
	avail = tls_on();
	CHECK_EQ(ult_sysctl("ult.tls", NULL, &v), EPERM);
	v = 3;
	CHECK_EQ(ult_sysctl("ult.chaos_migrate", NULL, &v), EINVAL);
	CHECK_EQ(ult_shutdown(), 0);
	cfg.tls = 1;
	CHECK_EQ(ult_init(&cfg), 0);
	CHECK_EQ(tls_on(), avail);
	CHECK_EQ(ult_shutdown(), 0);
	cfg.tls = -1;
	CHECK_EQ(ult_init(&cfg), 0);
	CHECK_EQ(tls_on(), 0);
	CHECK_EQ(ult_shutdown(), 0);
	CHECK_EQ(setenv("ULT_TLS", "worker", 1), 0);
	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(tls_on(), 0);
	CHECK_EQ(ult_shutdown(), 0);
	/* The configuration wins over the environment. */
	cfg.tls = 1;
	CHECK_EQ(ult_init(&cfg), 0);
	CHECK_EQ(tls_on(), avail);
	CHECK_EQ(ult_shutdown(), 0);
	CHECK_EQ(setenv("ULT_TLS", "uthread", 1), 0);
	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(tls_on(), avail);
	CHECK_EQ(ult_shutdown(), 0);
	CHECK_EQ(setenv("ULT_TLS", "pthread", 1), 0);
	CHECK_EQ(ult_init(NULL), EINVAL);
	CHECK_EQ(unsetenv("ULT_TLS"), 0);
	fprintf(stderr, "per-uthread TLS %s\n", avail ? "on" : "off");
}

/*
 * ---- the chaos tunable ----
 * Each voluntary switch of a free uthread moves it to the next worker; a
 * bound one stays; once the tunable is off the chaos binding goes.
 */
static int ch_moves, ch_invol, ch_bound_moves, ch_free;

static void *
ch_free_body(void *arg)
{
	struct ult_thread_info before = rt_info(NULL), after;

	for (int i = 0; i < 100; i++) {
		int c = ult_cpu();

		ult_yield();
		ch_moves += ult_cpu() != c;
	}
	after = rt_info(NULL);
	ch_invol = (int)(after.nivcsw - before.nivcsw);
	return (arg);
}

static void *
ch_bound_body(void *arg)
{
	for (int i = 0; i < 100; i++) {
		ult_yield();
		ch_bound_moves += ult_cpu() != 1;
	}
	return (arg);
}

static atomic_int ch_off, ch_seen;

/* Chaos-bound while the tunable is on; free again after one switch once
 * it is off.  The main thread turns it off only after the first look, so
 * a slow host cannot make the look come too late. */
static void *
ch_after_body(void *arg)
{
	struct ult_thread *self = (struct ult_thread *)ult_self();

	ult_yield();
	ch_free = ult__rt.sched->is_bound(&self->td);
	atomic_store(&ch_seen, 1);
	while (!atomic_load(&ch_off))
		ult_yield();
	ult_yield();
	ch_free = ch_free && !ult__rt.sched->is_bound(&self->td) &&
	    ult_bind(NULL, 0) == 0 && ult_cpu() == 0 && ult_bind(NULL, -1) == 0;
	return (arg);
}

void
test_chaos_migrate(void)
{
	long one = 1, zero = 0;
	struct ult_attr a;
	ult_thread_t *t;

	rt_init(2, -1);
	CHECK_EQ(ult_sysctl("ult.chaos_migrate", NULL, &one), 0);
	CHECK_EQ(ult_spawn(&t, NULL, ch_free_body, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	fprintf(stderr, "%d moves, %d involuntary switches in 100 yields\n",
	    ch_moves, ch_invol);
	/* Every yield moves the thread, but for one that an involuntary
	 * switch (a preemption, or the clock's reschedule on a slow host)
	 * took the place of; such a switch may also come on its own. */
	CHECK(ch_moves <= 100 && ch_moves + ch_invol >= 100);
	ult_attr_init(&a);
	a.cpu = 1;
	CHECK_EQ(ult_spawn(&t, &a, ch_bound_body, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ch_bound_moves, 0);
	CHECK_EQ(ult_spawn(&t, NULL, ch_after_body, NULL), 0);
	while (!atomic_load(&ch_seen))
		usleep(100);
	CHECK_EQ(ult_sysctl("ult.chaos_migrate", NULL, &zero), 0);
	atomic_store(&ch_off, 1);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK(ch_free);
	CHECK_EQ(ult_shutdown(), 0);
}
