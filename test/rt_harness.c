/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stress harness.  24 uthreads and 3 foreign pthreads do random mixes
 * of mutex, timed mutex, condition variable, semaphore, rwlock, once,
 * spawn+join, detached spawns, socket I/O through the poller, calls on
 * the blocking helpers (rt_harness_io.c) and raw blocking system calls
 * (the handoff and the spare worker), while they also change each other's
 * nice, binding and class.  Every object's invariant is checked as it is
 * used (one holder per mutex, no reader beside a writer, at most K
 * semaphore holders, once functions run exactly once, no item lost or
 * duplicated through the condition variable).  Beside them (in
 * rt_harness_watch.c) the policy's queue invariants are checked
 * concurrently, and a watchdog writes the runtime's hang report and
 * aborts when any thread stops making progress or a worker stays asleep
 * in the kernel while its queue holds work (the signature of a lost
 * wakeup, even one that an unrelated wakeup would rescue later).
 *
 * Four of the uthreads play a fixed pattern instead: a low-priority lock
 * owner bound to the last worker holds a lock across short sleeps, while
 * three realtime waiters bound elsewhere take it with timeouts, so the
 * owner is often queued on an otherwise idle worker when its priority
 * changes (lent, unlent).  Nobody meddles with them.
 *
 * It runs at 1, 2, 4 and 8 workers (more workers than this machine has
 * CPUs is the point), with and without asynchronous preemption, under
 * both policies.  ULT_STRESS_MS sets each run's length (default 1500),
 * ULT_STRESS_HANG_MS the silence that counts as a hang (default 20000).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kern/runtime.h"
#include "rt_harness.h"
#include "test.h"
#include "ult.h"

#define NMUTEX 4
#define NONCE 32
#define QLEN 16
#define SEM_TOKENS 3
#define NPATTERN 4 /* actors 0..3: the owner and its realtime waiters */

struct actor harness_actors[NACTORS];
atomic_int harness_stop, harness_failures;
uint64_t harness_run_until;
const char *_Atomic harness_main_doing;
static atomic_long detached_live, spawned, joined;

/* ---- objects and their invariants ---- */

static ult_mutex_t mtx[NMUTEX];
static struct {
	atomic_uintptr_t holder;
	long count; /* protected by mtx[i] */
} mstate[NMUTEX];
static atomic_long mcount_total;

static ult_mutex_t qm = ULT_MUTEX_INITIALIZER;
static ult_cond_t qnotfull = ULT_COND_INITIALIZER,
		  qnotempty = ULT_COND_INITIALIZER;
static long queue[QLEN], qhead, qlen, produced, consumed, psum, csum;

static ult_sem_t sem;
static atomic_int sem_inside;

static ult_rwlock_t rw = ULT_RWLOCK_INITIALIZER;
static atomic_int rw_readers, rw_writer;

static ult_once_t once[NONCE];
static atomic_int once_runs[NONCE], once_done[NONCE];

/* One function per once object: ult_once's functions take no argument.
 * (The trailing declaration lets each use end with a semicolon.) */
#define ONCE_FN(i)                                  \
	static void once_fn_##i(void)               \
	{                                           \
		atomic_fetch_add(&once_runs[i], 1); \
		ult_sleep_ns(20000);                \
		atomic_store(&once_done[i], 1);     \
	}                                           \
	extern int once_fn_##i##_defined
ONCE_FN(0);
ONCE_FN(1);
ONCE_FN(2);
ONCE_FN(3);
ONCE_FN(4);
ONCE_FN(5);
ONCE_FN(6);
ONCE_FN(7);
ONCE_FN(8);
ONCE_FN(9);
ONCE_FN(10);
ONCE_FN(11);
ONCE_FN(12);
ONCE_FN(13);
ONCE_FN(14);
ONCE_FN(15);
ONCE_FN(16);
ONCE_FN(17);
ONCE_FN(18);
ONCE_FN(19);
ONCE_FN(20);
ONCE_FN(21);
ONCE_FN(22);
ONCE_FN(23);
ONCE_FN(24);
ONCE_FN(25);
ONCE_FN(26);
ONCE_FN(27);
ONCE_FN(28);
ONCE_FN(29);
ONCE_FN(30);
ONCE_FN(31);

static void (*const once_fns[NONCE])(void) = {once_fn_0, once_fn_1, once_fn_2,
    once_fn_3, once_fn_4, once_fn_5, once_fn_6, once_fn_7, once_fn_8, once_fn_9,
    once_fn_10, once_fn_11, once_fn_12, once_fn_13, once_fn_14, once_fn_15,
    once_fn_16, once_fn_17, once_fn_18, once_fn_19, once_fn_20, once_fn_21,
    once_fn_22, once_fn_23, once_fn_24, once_fn_25, once_fn_26, once_fn_27,
    once_fn_28, once_fn_29, once_fn_30, once_fn_31};

static unsigned
rnd(struct actor *a, unsigned n)
{
	return (test_rand(&a->seed) % n);
}

static void
spin_us(unsigned us)
{
	uint64_t end = ult_now() + us * 1000ull;

	while (ult_now() < end)
		;
}

/* Something to do while holding a lock: nothing, spin, yield or sleep. */
static void
hold(struct actor *a)
{
	switch (rnd(a, 6)) {
	case 0:
		spin_us(rnd(a, 200));
		break;
	case 1:
		ult_yield();
		break;
	case 2:
		ult_sleep_ns(rnd(a, 100000));
		break;
	default:
		break;
	}
}

static void
mutex_enter(struct actor *a, int i)
{
	uintptr_t me = (uintptr_t)a;

	if (atomic_exchange(&mstate[i].holder, me) != 0)
		FAIL("mutex %d has two holders", i);
	mstate[i].count++;
	atomic_fetch_add(&mcount_total, 1);
	hold(a);
	if (atomic_exchange(&mstate[i].holder, 0) != me)
		FAIL("mutex %d holder changed under its owner", i);
}

static void
op_mutex(struct actor *a)
{
	int i = (int)rnd(a, NMUTEX), r;

	if ((r = ult_mutex_lock(&mtx[i])) != 0) {
		FAIL("mutex_lock: %d", r);
		return;
	}
	mutex_enter(a, i);
	if ((r = ult_mutex_unlock(&mtx[i])) != 0)
		FAIL("mutex_unlock: %d", r);
}

static void
op_timedlock(struct actor *a)
{
	int i = (int)rnd(a, NMUTEX);
	int r = ult_mutex_timedlock(&mtx[i], ult_now() + rnd(a, 300000));

	if (r == ETIMEDOUT)
		return;
	if (r != 0) {
		FAIL("mutex_timedlock: %d", r);
		return;
	}
	mutex_enter(a, i);
	if ((r = ult_mutex_unlock(&mtx[i])) != 0)
		FAIL("mutex_unlock: %d", r);
}

/* Producer or consumer on the bounded queue; gives up after a timeout. */
static void
op_queue(struct actor *a)
{
	int produce = (int)rnd(a, 2), r = 0;
	uint64_t deadline = ult_now() + 2000000;

	if (ult_mutex_lock(&qm) != 0) {
		FAIL("queue lock");
		return;
	}
	if (produce) {
		while (qlen == QLEN && r == 0)
			r = ult_cond_timedwait(&qnotfull, &qm, deadline);
		if (qlen < QLEN) {
			long v = ++produced;

			queue[(qhead + qlen++) % QLEN] = v;
			psum += v;
			ult_cond_signal(&qnotempty);
		}
	} else {
		while (qlen == 0 && r == 0)
			r = ult_cond_timedwait(&qnotempty, &qm, deadline);
		if (qlen > 0) {
			csum += queue[qhead];
			qhead = (qhead + 1) % QLEN;
			qlen--;
			consumed++;
			ult_cond_signal(&qnotfull);
		}
	}
	if (r != 0 && r != ETIMEDOUT)
		FAIL("cond_timedwait: %d", r);
	if (ult_mutex_unlock(&qm) != 0)
		FAIL("queue unlock");
}

static void
op_sem(struct actor *a)
{
	int r = ult_sem_timedwait(&sem, ult_now() + rnd(a, 500000));

	if (r == ETIMEDOUT)
		return;
	if (r != 0) {
		FAIL("sem_timedwait: %d", r);
		return;
	}
	if (atomic_fetch_add(&sem_inside, 1) >= SEM_TOKENS)
		FAIL("more than %d semaphore holders", SEM_TOKENS);
	hold(a);
	atomic_fetch_sub(&sem_inside, 1);
	if ((r = ult_sem_post(&sem)) != 0)
		FAIL("sem_post: %d", r);
}

static void
op_rwlock(struct actor *a)
{
	int r;

	if (rnd(a, 4) == 0) {
		if ((r = ult_rwlock_wrlock(&rw)) != 0) {
			FAIL("wrlock: %d", r);
			return;
		}
		if (atomic_exchange(&rw_writer, 1) != 0 ||
		    atomic_load(&rw_readers) != 0)
			FAIL("a writer beside another owner");
		hold(a);
		atomic_store(&rw_writer, 0);
	} else {
		if ((r = ult_rwlock_rdlock(&rw)) != 0) {
			FAIL("rdlock: %d", r);
			return;
		}
		atomic_fetch_add(&rw_readers, 1);
		if (atomic_load(&rw_writer) != 0)
			FAIL("a reader beside a writer");
		hold(a);
		atomic_fetch_sub(&rw_readers, 1);
	}
	if ((r = ult_rwlock_unlock(&rw)) != 0)
		FAIL("rwlock_unlock: %d", r);
}

static void
op_once(struct actor *a)
{
	int i = (int)rnd(a, NONCE), r = ult_once(&once[i], once_fns[i]);

	if (r != 0)
		FAIL("once: %d", r);
	else if (!atomic_load(&once_done[i]) || atomic_load(&once_runs[i]) != 1)
		FAIL("once %d: returned before its function finished, or ran "
		     "it %d times",
		    i, atomic_load(&once_runs[i]));
}

/* A child does a little of everything a thread does to the scheduler. */
static void *
child(void *arg)
{
	struct actor me = {0};

	me.seed = (unsigned)(uintptr_t)arg | 1;
	for (int i = (int)rnd(&me, 4); i > 0; i--) {
		switch (rnd(&me, 3)) {
		case 0:
			ult_yield();
			break;
		case 1:
			ult_sleep_ns(rnd(&me, 50000));
			break;
		default:
			op_mutex(&me);
		}
	}
	return ((void *)((uintptr_t)arg + 1));
}

static void *
detached_child(void *arg)
{
	child(arg);
	atomic_fetch_sub(&detached_live, 1);
	return (NULL);
}

static void
op_spawn_join(struct actor *a)
{
	uintptr_t v = test_rand(&a->seed) & 0xffffff;
	struct ult_attr at;
	ult_thread_t *t;
	void *r;
	int e;

	ult_attr_init(&at);
	if (rnd(a, 4) == 0)
		at.cpu = (int)rnd(a, (unsigned)ult_ncpu());
	if (rnd(a, 4) == 0)
		at.nice = (int)rnd(a, 41) - 20;
	if ((e = ult_spawn(&t, &at, child, (void *)v)) != 0) {
		FAIL("spawn: %d", e);
		return;
	}
	atomic_fetch_add(&spawned, 1);
	if ((e = ult_join(t, &r)) != 0)
		FAIL("join: %d", e);
	else if ((uintptr_t)r != v + 1)
		FAIL("join: child returned %p for %p", r, (void *)v);
	else
		atomic_fetch_add(&joined, 1);
}

static void
op_detach(struct actor *a)
{
	struct ult_attr at;
	int e;

	ult_attr_init(&at);
	at.detached = 1;
	atomic_fetch_add(&detached_live, 1);
	e = ult_spawn(NULL, &at, detached_child,
	    (void *)(uintptr_t)(test_rand(&a->seed) & 0xffffff));
	if (e != 0) {
		atomic_fetch_sub(&detached_live, 1);
		FAIL("detached spawn: %d", e);
	}
}

static void
op_io(struct actor *a)
{
	char why[128] = "";

	if (harness_io_round(&a->seed, why, sizeof(why)) != 0)
		FAIL("actor %d: %s", a->idx, why);
}

static void
op_blocking(struct actor *a)
{
	char why[128] = "";

	if (harness_blocking_round(&a->seed, why, sizeof(why)) != 0)
		FAIL("actor %d: %s", a->idx, why);
}

/* Change the nice, binding or class of a random uthread (maybe itself). */
static void
op_meddle(struct actor *a)
{
	struct actor *v =
	    &harness_actors[NPATTERN + rnd(a, NUTHREADS - NPATTERN)];
	ult_thread_t *t = v == a ? NULL : atomic_load(&v->ut);
	int r = 0, ncpu = ult_ncpu();

	if (v != a && t == NULL)
		return; /* not spawned yet */
	switch (rnd(a, 3)) {
	case 0:
		r = ult_setnice(t, (int)rnd(a, 41) - 20);
		break;
	case 1:
		r = ult_bind(t, (int)rnd(a, (unsigned)ncpu + 1) - 1);
		break;
	default:
		switch (rnd(a, 4)) {
		case 0:
			r = ult_setclass(t, ULT_CLASS_REALTIME,
			    (int)rnd(a, 32));
			break;
		case 1:
			r = ult_setclass(t, ULT_CLASS_REALTIME_RR,
			    (int)rnd(a, 32));
			break;
		default:
			r = ult_setclass(t, ULT_CLASS_TIMESHARE, 0);
		}
	}
	/* An actor that saw the end of the run first may have finished. */
	if (r != 0 && !(r == ESRCH && atomic_load(&harness_stop)))
		FAIL("meddling with actor %d: %d", v->idx, r);
}

/*
 * A few operations in the idle class: it runs only when its worker has
 * nothing else, so the watchdog does not expect progress from it.
 */
static void
op_idle_class(struct actor *a)
{
	if (atomic_load(&a->ut) == NULL)
		return;
	atomic_store(&a->exempt, 1);
	if (ult_setclass(NULL, ULT_CLASS_IDLE, (int)rnd(a, 32)) != 0)
		FAIL("setclass idle");
	op_mutex(a);
	ult_sleep_ns(rnd(a, 50000));
	if (ult_setclass(NULL, ULT_CLASS_TIMESHARE, 0) != 0)
		FAIL("setclass timeshare");
	atomic_store(&a->exempt, 0);
}

/*
 * A raw system call that blocks the worker in the kernel, as a library's
 * own blocking call would: mostly short, now and then long enough (30 ms)
 * for the clock to mark the worker blocked and hand its queue over, to
 * the spare worker when every worker is in one.  A preemption signal may
 * end it early (EINTR), which is all the same here.
 */
static void
op_raw_block(struct actor *a)
{
	struct timespec ts = {0, 0};
	int e = errno; /* the harness checks that ops keep it */

	ts.tv_nsec = rnd(a, 8) == 0 ? 30000000 : (long)rnd(a, 1000000);
	(void)nanosleep(&ts, NULL);
	errno = e;
}

static const struct {
	const char *name;
	void (*fn)(struct actor *);
	int uthread_only;
} ops[] = {
    {"mutex", op_mutex, 0},
    {"mutex", op_mutex, 0},
    {"timedlock", op_timedlock, 0},
    {"queue", op_queue, 0},
    {"queue", op_queue, 0},
    {"sem", op_sem, 0},
    {"rwlock", op_rwlock, 0},
    {"once", op_once, 0},
    {"spawn+join", op_spawn_join, 0},
    {"detach", op_detach, 0},
    {"io", op_io, 0},
    {"blocking", op_blocking, 0},
    {"meddle", op_meddle, 0},
    {"meddle", op_meddle, 0},
    {"idle class", op_idle_class, 1},
    {"raw block", op_raw_block, 1},
};

/*
 * Every other QUIET_NS the random actors rest and only the pattern runs:
 * most workers then sleep and wake in turn, and the owner's worker has
 * nothing but the owner to run, which is when a wakeup lost on an idle
 * worker becomes a hang.  The rest is one long sleep each, so that no
 * unrelated wakeup happens to rescue a worker that missed its own.
 */
#define QUIET_NS 200000000ull

static int
quiet_now(void)
{
	return ((ult_now() / QUIET_NS) % 2 == 1);
}

static void
quiet_phase(struct actor *a)
{
	uint64_t end = (ult_now() / QUIET_NS + 1) * QUIET_NS;

	if (!quiet_now())
		return;
	atomic_store(&a->exempt, 1);
	ult_sleep_until(end < harness_run_until ? end : harness_run_until);
	atomic_store(&a->last, ult_now());
	atomic_store(&a->exempt, 0);
}

static void
actor_loop(struct actor *a)
{
	int myerr = 1000 + a->idx;

	while (!atomic_load_explicit(&harness_stop, memory_order_relaxed)) {
		unsigned k = rnd(a, sizeof(ops) / sizeof(ops[0]));

		if (ops[k].uthread_only && atomic_load(&a->ut) == NULL)
			continue;
		a->doing = ops[k].name;
		errno_set(myerr);
		ops[k].fn(a);
		if (errno_get() != myerr)
			FAIL("actor %d: errno %d after %s", a->idx, errno_get(),
			    ops[k].name);
		/* Pauses let workers go idle and wake again: that is where
		 * a lost wakeup shows. */
		if (rnd(a, 4) == 0)
			ult_sleep_ns(rnd(a, 1000000));
		quiet_phase(a);
		atomic_fetch_add(&a->ops, 1);
		atomic_store(&a->last, ult_now());
		if (ult_now() >= harness_run_until)
			atomic_store(&harness_stop, 1);
	}
	a->doing = "finished";
}

static ult_mutex_t pattern_mtx = ULT_MUTEX_INITIALIZER;

/* One round of the owner's or a waiter's part of the pattern. */
static void
pattern_round(struct actor *a)
{
	int r;

	if (a->idx == 0) {
		if (ult_mutex_lock(&pattern_mtx) != 0)
			FAIL("pattern lock");
		ult_sleep_ns(20000);
		if (ult_mutex_unlock(&pattern_mtx) != 0)
			FAIL("pattern unlock");
		ult_sleep_ns(5000);
		return;
	}
	ult_sleep_ns(rnd(a, 30000));
	r = ult_mutex_timedlock(&pattern_mtx, ult_now() + 200000);
	if (r == 0 && ult_mutex_unlock(&pattern_mtx) != 0)
		FAIL("pattern unlock");
	else if (r != 0 && r != ETIMEDOUT)
		FAIL("pattern timedlock: %d", r);
}

static void
pattern_loop(struct actor *a)
{
	int ncpu = ult_ncpu(), myerr = 1000 + a->idx;

	if (a->idx == 0) {
		if (ult_setnice(NULL, 20) != 0 || ult_bind(NULL, ncpu - 1) != 0)
			FAIL("pattern owner setup");
	} else if (ult_setclass(NULL, ULT_CLASS_REALTIME, 4 + 8 * a->idx) !=
		0 ||
	    ult_bind(NULL, (a->idx - 1) % (ncpu > 1 ? ncpu - 1 : 1)) != 0)
		FAIL("pattern waiter setup");
	a->doing = a->idx == 0 ? "pattern owner" : "pattern waiter";
	while (!atomic_load_explicit(&harness_stop, memory_order_relaxed)) {
		errno_set(myerr);
		pattern_round(a);
		if (errno_get() != myerr)
			FAIL("actor %d: errno %d in the pattern", a->idx,
			    errno_get());
		atomic_fetch_add(&a->ops, 1);
		atomic_store(&a->last, ult_now());
		if (ult_now() >= harness_run_until)
			atomic_store(&harness_stop, 1);
	}
	a->doing = "finished";
}

static void *
uthread_actor(void *arg)
{
	struct actor *a = arg;

	/* A handle written by the spawner may not be visible yet. */
	while (atomic_load(&a->ut) == NULL)
		ult_yield();
	if (a->idx < NPATTERN)
		pattern_loop(a);
	else
		actor_loop(a);
	return (NULL);
}

static void *
pthread_actor(void *arg)
{
	actor_loop(arg);
	return (NULL);
}

static void
harness(int ncpu, int preempt)
{
	struct ult_config cfg = {0};
	long mtotal = 0, checks;
	int v;

	cfg.ncpu = ncpu;
	cfg.preempt = preempt ? 1 : -1;
	CHECK_EQ(ult_init(&cfg), 0);
	harness_run_until = ult_now() + harness_env_ms("ULT_STRESS_MS", 1500);
	for (int i = 0; i < NMUTEX; i++)
		CHECK_EQ(ult_mutex_init(&mtx[i]), 0);
	CHECK_EQ(ult_sem_init(&sem, SEM_TOKENS), 0);
	for (int i = 0; i < NONCE; i++)
		once[i] = (ult_once_t)ULT_ONCE_INIT;
	for (int i = 0; i < NACTORS; i++) {
		struct actor *a = &harness_actors[i];

		a->idx = i;
		a->seed = (unsigned)i * 2654435761u + 17;
		a->doing = "starting";
		atomic_store(&a->last, ult_now());
	}
	harness_watch_start(harness_env_ms("ULT_STRESS_HANG_MS", 20000));
	for (int i = 0; i < NUTHREADS; i++) {
		ult_thread_t *t;

		CHECK_EQ(ult_spawn(&t, NULL, uthread_actor, &harness_actors[i]),
		    0);
		atomic_store(&harness_actors[i].ut, t);
	}
	for (int i = NUTHREADS; i < NACTORS; i++)
		CHECK_EQ(pthread_create(&harness_actors[i].pt, NULL,
			     pthread_actor, &harness_actors[i]),
		    0);

	atomic_store(&harness_main_doing, "joining the actors");
	for (int i = 0; i < NUTHREADS; i++)
		CHECK_EQ(ult_join(atomic_load(&harness_actors[i].ut), NULL), 0);
	for (int i = NUTHREADS; i < NACTORS; i++)
		CHECK_EQ(pthread_join(harness_actors[i].pt, NULL), 0);
	checks = harness_checker_stop();
	harness_sample_stop();
	{
		/* What the raw blocking calls made of the handoff. */
		struct ult_cpu_info ci;
		long runs = -1;
		uint64_t h = 0;

		for (int c = 0; ult_cpu_info(c, &ci) == 0; c++)
			h += ci.handoffs;
		(void)ult_sysctl("ult.spare_runs", &runs, NULL);
		fprintf(stderr,
		    "harness: %llu handoffs, the spare in service %ld times\n",
		    (unsigned long long)h, runs);
	}
	atomic_store(&harness_main_doing, "ult_shutdown");
	CHECK_EQ(ult_shutdown(), 0);
	harness_watch_stop();

	/* What the objects say after everything has finished. */
	for (int i = 0; i < NMUTEX; i++)
		mtotal += mstate[i].count;
	CHECK_EQ(mtotal, atomic_load(&mcount_total));
	while (qlen > 0) {
		csum += queue[qhead];
		qhead = (qhead + 1) % QLEN;
		qlen--;
		consumed++;
	}
	CHECK_EQ(consumed, produced);
	CHECK_EQ(csum, psum);
	CHECK_EQ(ult_sem_getvalue(&sem, &v), 0);
	CHECK_EQ(v, SEM_TOKENS);
	CHECK_EQ(atomic_load(&spawned), atomic_load(&joined));
	CHECK_EQ(atomic_load(&detached_live), 0);
	for (int i = 0; i < NONCE; i++)
		CHECK(atomic_load(&once_runs[i]) <= 1);
	CHECK(checks > 0);
	CHECK_EQ(atomic_load(&harness_failures), 0);
	for (int i = 0; i < NACTORS; i++)
		CHECK(atomic_load(&harness_actors[i].ops) > 0);
	printf("%d workers, preemption %s: %ld lock sections, %ld items, "
	       "%ld children, %ld owner rounds, %d queue checks\n",
	    ncpu, preempt ? "on" : "off", mtotal, produced,
	    atomic_load(&spawned), atomic_load(&harness_actors[0].ops),
	    (int)checks);
}

void
test_harness_w1(void)
{
	harness(1, 1);
}

void
test_harness_w2(void)
{
	harness(2, 1);
}

void
test_harness_w4(void)
{
	harness(4, 1);
}

void
test_harness_w8(void)
{
	harness(8, 1);
}

void
test_harness_w1_nopreempt(void)
{
	harness(1, 0);
}

void
test_harness_w2_nopreempt(void)
{
	harness(2, 0);
}

void
test_harness_w4_nopreempt(void)
{
	harness(4, 0);
}

void
test_harness_w8_nopreempt(void)
{
	harness(8, 0);
}
