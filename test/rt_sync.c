/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sync objects under real contention: counts that must come out exact,
 * items that must not be lost, waiters that must all wake, and mixes of
 * uthreads with plain pthreads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "kern/runtime.h"
#include "kern/uthread.h"
#include "test.h"
#include "ult.h"

static void
init_n(int ncpu)
{
	struct ult_config cfg = {0};

	cfg.ncpu = ncpu;
	CHECK_EQ(ult_init(&cfg), 0);
}

/* --- mutex: exact counts ------------------------------------------- */

static ult_mutex_t cmtx = ULT_MUTEX_INITIALIZER;
static long ccount; /* protected by cmtx, deliberately not atomic */
static long cper;

static void *
incr(void *arg)
{
	(void)arg;
	for (long i = 0; i < cper; i++) {
		CHECK_EQ(ult_mutex_lock(&cmtx), 0);
		ccount++;
		CHECK_EQ(ult_mutex_unlock(&cmtx), 0);
	}
	return (NULL);
}

static void
mutex_count(int ncpu, int nut, int npt)
{
	ult_thread_t *t[64];
	pthread_t p[8];

	init_n(ncpu);
	ccount = 0;
	cper = 100000 / TEST_SCALE;
	for (int i = 0; i < nut; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, incr, NULL), 0);
	for (int i = 0; i < npt; i++)
		CHECK_EQ(pthread_create(&p[i], NULL, incr, NULL), 0);
	for (int i = 0; i < nut; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	for (int i = 0; i < npt; i++)
		CHECK_EQ(pthread_join(p[i], NULL), 0);
	CHECK_EQ(ccount, (long)(nut + npt) * cper);
	CHECK_EQ(ult_mutex_destroy(&cmtx), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

void
test_mutex_count(void)
{
	mutex_count(0, 64, 0);
}

void
test_mutex_count_oversubscribed(void)
{
	mutex_count(4, 64, 0);
}

void
test_mutex_count_mixed(void)
{
	mutex_count(0, 60, 4);
	mutex_count(3, 32, 4);
}

/* --- condvar: bounded buffer --------------------------------------- */

#define QCAP 64
static struct {
	ult_mutex_t m;
	ult_cond_t notfull, notempty;
	long buf[QCAP];
	int head, n;
	long produced_per, nprod;
} q = {.m = ULT_MUTEX_INITIALIZER,
    .notfull = ULT_COND_INITIALIZER,
    .notempty = ULT_COND_INITIALIZER};
static unsigned char *seen;

static void *
producer(void *arg)
{
	long base = (long)(intptr_t)arg * q.produced_per;

	for (long i = 0; i < q.produced_per; i++) {
		ult_mutex_lock(&q.m);
		while (q.n == QCAP)
			CHECK_EQ(ult_cond_wait(&q.notfull, &q.m), 0);
		q.buf[(q.head + q.n++) % QCAP] = base + i;
		ult_cond_signal(&q.notempty);
		ult_mutex_unlock(&q.m);
	}
	return (NULL);
}

static void *
consumer(void *arg)
{
	long got = 0;

	(void)arg;
	for (;;) {
		long item;

		ult_mutex_lock(&q.m);
		while (q.n == 0)
			CHECK_EQ(ult_cond_wait(&q.notempty, &q.m), 0);
		item = q.buf[q.head];
		q.head = (q.head + 1) % QCAP;
		q.n--;
		ult_cond_signal(&q.notfull);
		ult_mutex_unlock(&q.m);
		if (item < 0)
			break;
		CHECK(item < q.nprod * q.produced_per);
		CHECK_EQ(seen[item], 0); /* never twice */
		seen[item] = 1;
		got++;
	}
	return ((void *)(intptr_t)got);
}

void
test_cond_prodcons(void)
{
	enum {
		NP = 4,
		NC = 4
	};
	ult_thread_t *p[NP], *c[NC];
	pthread_t fp;
	long total = 0, n;
	void *r;

	init_n(0);
	q.nprod = NP + 1;
	q.produced_per = 1000000 / TEST_SCALE / (NP + 1);
	n = q.nprod * q.produced_per;
	seen = calloc((size_t)n, 1);
	CHECK(seen != NULL);
	for (int i = 0; i < NC; i++)
		CHECK_EQ(ult_spawn(&c[i], NULL, consumer, NULL), 0);
	for (int i = 0; i < NP; i++)
		CHECK_EQ(ult_spawn(&p[i], NULL, producer, (void *)(intptr_t)i),
		    0);
	/* One producer is a plain pthread. */
	CHECK_EQ(pthread_create(&fp, NULL, producer, (void *)(intptr_t)NP), 0);
	for (int i = 0; i < NP; i++)
		CHECK_EQ(ult_join(p[i], NULL), 0);
	CHECK_EQ(pthread_join(fp, NULL), 0);
	/* One poison pill per consumer; they queue behind the items. */
	for (int i = 0; i < NC; i++) {
		ult_mutex_lock(&q.m);
		while (q.n == QCAP)
			ult_cond_wait(&q.notfull, &q.m);
		q.buf[(q.head + q.n++) % QCAP] = -1;
		ult_cond_signal(&q.notempty);
		ult_mutex_unlock(&q.m);
	}
	for (int i = 0; i < NC; i++) {
		CHECK_EQ(ult_join(c[i], &r), 0);
		total += (long)(intptr_t)r;
	}
	CHECK_EQ(total, n);
	for (long i = 0; i < n; i++)
		CHECK_EQ(seen[i], 1);
	free(seen);
	CHECK_EQ(ult_cond_destroy(&q.notfull), 0);
	CHECK_EQ(ult_cond_destroy(&q.notempty), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static ult_mutex_t bm = ULT_MUTEX_INITIALIZER;
static ult_cond_t bc = ULT_COND_INITIALIZER;
static int bgo, bwaiting, bwoken;

static void *
bwaiter(void *arg)
{
	(void)arg;
	ult_mutex_lock(&bm);
	bwaiting++;
	while (!bgo)
		CHECK_EQ(ult_cond_wait(&bc, &bm), 0);
	bwoken++;
	ult_mutex_unlock(&bm);
	return (NULL);
}

void
test_cond_broadcast(void)
{
	enum {
		N = 200
	};
	ult_thread_t *t[N];
	pthread_t p;
	uint64_t t0, dl;
	int waiting;

	init_n(0);
	for (int i = 0; i < N; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, bwaiter, NULL), 0);
	CHECK_EQ(pthread_create(&p, NULL, bwaiter, NULL), 0);
	do {
		ult_mutex_lock(&bm);
		waiting = bwaiting;
		ult_mutex_unlock(&bm);
		ult_sleep_ns(1000000);
	} while (waiting < N + 1);
	ult_mutex_lock(&bm);
	bgo = 1;
	CHECK_EQ(ult_cond_broadcast(&bc), 0);
	ult_mutex_unlock(&bm);
	for (int i = 0; i < N; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	CHECK_EQ(bwoken, N + 1);

	/* timedwait: times out, and returns holding the mutex. */
	ult_mutex_lock(&bm);
	t0 = ult_now();
	dl = t0 + 20000000;
	CHECK_EQ(ult_cond_timedwait(&bc, &bm, dl), ETIMEDOUT);
	CHECK(ult_now() >= dl);
	CHECK_EQ(ult_mutex_trylock(&bm), EBUSY); /* still ours */
	CHECK_EQ(ult_mutex_unlock(&bm), 0);
	CHECK_EQ(ult_mutex_unlock(&bm), EPERM);
	CHECK_EQ(ult_cond_destroy(&bc), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static void *
timedwaiter(void *arg)
{
	(void)arg;
	ult_mutex_lock(&bm);
	uint64_t dl = ult_now() + 5000000;
	CHECK_EQ(ult_cond_timedwait(&bc, &bm, dl), ETIMEDOUT);
	CHECK(ult_now() >= dl);
	CHECK_EQ(ult_mutex_unlock(&bm), 0);
	return (NULL);
}

void
test_cond_timedwait_uthread(void)
{
	ult_thread_t *t[16];

	init_n(0);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, timedwaiter, NULL), 0);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(ult_cond_destroy(&bc), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static ult_mutex_t cr_m = ULT_MUTEX_INITIALIZER;
static ult_cond_t cr_c = ULT_COND_INITIALIZER;
static atomic_int cr_stop;
static atomic_long cr_woken, cr_timedout;

static unsigned
cr_rand(unsigned *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (*s);
}

/* Waits of 0-40 us against the signallers; every outcome is one of two. */
static void *
cr_waiter(void *arg)
{
	unsigned seed = 2654435761u * (unsigned)(uintptr_t)arg + 1;

	for (int i = 0; i < 300; i++) {
		uint64_t dl = ult_now() + cr_rand(&seed) % 40000;
		int r;

		CHECK_EQ(ult_mutex_lock(&cr_m), 0);
		r = ult_cond_timedwait(&cr_c, &cr_m, dl);
		CHECK(r == 0 || r == ETIMEDOUT);
		atomic_fetch_add(r == 0 ? &cr_woken : &cr_timedout, 1);
		CHECK_EQ(ult_mutex_unlock(&cr_m), 0);
	}
	return (NULL);
}

static void *
cr_waiter_pthread(void *arg)
{
	return (cr_waiter(arg));
}

/* Signals and broadcasts, with the mutex held or not, at random. */
static void *
cr_signaller(void *arg)
{
	unsigned seed = 40503u * (unsigned)(uintptr_t)arg + 7;

	while (!atomic_load(&cr_stop)) {
		unsigned r = cr_rand(&seed);
		int held = r & 1;

		if (held)
			CHECK_EQ(ult_mutex_lock(&cr_m), 0);
		if (r & 6)
			CHECK_EQ(ult_cond_signal(&cr_c), 0);
		else
			CHECK_EQ(ult_cond_broadcast(&cr_c), 0);
		if (held)
			CHECK_EQ(ult_mutex_unlock(&cr_m), 0);
		ult_sleep_ns(r % 20000);
	}
	return (NULL);
}

/*
 * The cond's waiter count stays exact while timeouts race signals: waiters
 * with 0-40 us deadlines (uthreads on two workers and a pthread) against
 * two signallers.  Once all are gone the cond must destroy cleanly, which
 * it refuses (EBUSY) if a timed-out waiter was counted out twice or never.
 */
void
test_cond_timeout_race(void)
{
	ult_thread_t *w[12], *sg[2];
	pthread_t p;

	init_n(2);
	atomic_store(&cr_stop, 0);
	atomic_store(&cr_woken, 0);
	atomic_store(&cr_timedout, 0);
	for (intptr_t i = 0; i < 12; i++)
		CHECK_EQ(ult_spawn(&w[i], NULL, cr_waiter, (void *)i), 0);
	CHECK_EQ(pthread_create(&p, NULL, cr_waiter_pthread, (void *)12), 0);
	for (intptr_t i = 0; i < 2; i++)
		CHECK_EQ(ult_spawn(&sg[i], NULL, cr_signaller, (void *)i), 0);
	for (int i = 0; i < 12; i++)
		CHECK_EQ(ult_join(w[i], NULL), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	atomic_store(&cr_stop, 1);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_join(sg[i], NULL), 0);
	CHECK_EQ(atomic_load(&cr_woken) + atomic_load(&cr_timedout), 13 * 300);
	CHECK(atomic_load(&cr_woken) > 0);
	CHECK(atomic_load(&cr_timedout) > 0);
	CHECK_EQ(ult_cond_destroy(&cr_c), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* --- semaphores ------------------------------------------------------ */

static ult_sem_t sem_items, sem_done;
static atomic_long sem_taken;

static void *
sem_taker(void *arg)
{
	long n = (long)(intptr_t)arg;

	for (long i = 0; i < n; i++) {
		CHECK_EQ(ult_sem_wait(&sem_items), 0);
		atomic_fetch_add(&sem_taken, 1);
	}
	CHECK_EQ(ult_sem_post(&sem_done), 0);
	return (NULL);
}

static void *
sem_giver(void *arg)
{
	long n = (long)(intptr_t)arg;

	for (long i = 0; i < n; i++)
		CHECK_EQ(ult_sem_post(&sem_items), 0);
	return (NULL);
}

void
test_sem_mixed(void)
{
	enum {
		NU = 16,
		NPT = 2
	};
	long per = 50000 / TEST_SCALE;
	ult_thread_t *t[NU], *g[NU];
	pthread_t pt[NPT], pg[NPT];
	int v;

	init_n(0);
	CHECK_EQ(ult_sem_init(&sem_items, 0), 0);
	CHECK_EQ(ult_sem_init(&sem_done, 0), 0);
	atomic_store(&sem_taken, 0);
	/* Takers and givers on both sides: uthreads and pthreads. */
	for (int i = 0; i < NU; i++)
		CHECK_EQ(
		    ult_spawn(&t[i], NULL, sem_taker, (void *)(intptr_t)per),
		    0);
	for (int i = 0; i < NPT; i++)
		CHECK_EQ(pthread_create(&pt[i], NULL, sem_taker,
			     (void *)(intptr_t)per),
		    0);
	for (int i = 0; i < NU; i++)
		CHECK_EQ(
		    ult_spawn(&g[i], NULL, sem_giver, (void *)(intptr_t)per),
		    0);
	for (int i = 0; i < NPT; i++)
		CHECK_EQ(pthread_create(&pg[i], NULL, sem_giver,
			     (void *)(intptr_t)per),
		    0);
	/* The main thread waits for every taker through the event sem. */
	for (int i = 0; i < NU + NPT; i++)
		CHECK_EQ(ult_sem_wait(&sem_done), 0);
	CHECK_EQ(atomic_load(&sem_taken), (long)(NU + NPT) * per);
	CHECK_EQ(ult_sem_getvalue(&sem_items, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(ult_sem_trywait(&sem_items), EAGAIN);
	for (int i = 0; i < NU; i++) {
		CHECK_EQ(ult_join(t[i], NULL), 0);
		CHECK_EQ(ult_join(g[i], NULL), 0);
	}
	for (int i = 0; i < NPT; i++) {
		CHECK_EQ(pthread_join(pt[i], NULL), 0);
		CHECK_EQ(pthread_join(pg[i], NULL), 0);
	}
	CHECK_EQ(ult_sem_destroy(&sem_items), 0);
	CHECK_EQ(ult_sem_destroy(&sem_done), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * Units are conserved while timeouts race with posts that hand a unit to
 * a sleeper: every post is taken by exactly one wait or left in the
 * value, whichever side of the race each timed wait ends on.
 */
static atomic_long sc_got, sc_posted;
static atomic_int sc_stop;

static void *
sc_waiter(void *arg)
{
	unsigned r = (unsigned)(uintptr_t)arg;

	while (!atomic_load(&sc_stop)) {
		r = r * 1103515245u + 12345u;
		/* 0 to 40 us: many expire just as a post arrives. */
		int e = ult_sem_timedwait(&sem_items,
		    ult_now() + (r >> 16) % 40000u);

		if (e == 0)
			atomic_fetch_add(&sc_got, 1);
		else
			CHECK_EQ(e, ETIMEDOUT);
	}
	return (NULL);
}

static void *
sc_poster(void *arg)
{
	long n = (long)(intptr_t)arg;

	for (long i = 0; i < n; i++) {
		CHECK_EQ(ult_sem_post(&sem_items), 0);
		atomic_fetch_add(&sc_posted, 1);
		if (i % 8 == 0)
			ult_yield();
	}
	return (NULL);
}

void
test_sem_conserved(void)
{
	enum {
		NW = 12,
		NP = 3
	};
	long per = 20000 / TEST_SCALE;
	ult_thread_t *w[NW], *p[NP];
	pthread_t fw;
	int v;

	init_n(0);
	CHECK_EQ(ult_sem_init(&sem_items, 0), 0);
	atomic_store(&sc_got, 0);
	atomic_store(&sc_posted, 0);
	atomic_store(&sc_stop, 0);
	for (int i = 0; i < NW; i++)
		CHECK_EQ(ult_spawn(&w[i], NULL, sc_waiter,
			     (void *)(uintptr_t)(i * 7919 + 1)),
		    0);
	CHECK_EQ(pthread_create(&fw, NULL, sc_waiter, (void *)(uintptr_t)77),
	    0);
	for (int i = 0; i < NP; i++)
		CHECK_EQ(
		    ult_spawn(&p[i], NULL, sc_poster, (void *)(intptr_t)per),
		    0);
	for (int i = 0; i < NP; i++)
		CHECK_EQ(ult_join(p[i], NULL), 0);
	atomic_store(&sc_stop, 1);
	for (int i = 0; i < NW; i++)
		CHECK_EQ(ult_join(w[i], NULL), 0);
	CHECK_EQ(pthread_join(fw, NULL), 0);
	CHECK_EQ(ult_sem_getvalue(&sem_items, &v), 0);
	CHECK_EQ(atomic_load(&sc_got) + v, (long)NP * per);
	CHECK_EQ(ult_sem_destroy(&sem_items), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static void *
sem_timed(void *arg)
{
	uint64_t dl = ult_now() + 3000000;

	(void)arg;
	CHECK_EQ(ult_sem_timedwait(&sem_items, dl), ETIMEDOUT);
	CHECK(ult_now() >= dl);
	/* Then an event from main arrives. */
	CHECK_EQ(ult_sem_wait(&sem_done), 0);
	return (NULL);
}

void
test_sem_timedwait(void)
{
	ult_thread_t *t[8];

	init_n(0);
	CHECK_EQ(ult_sem_init(&sem_items, 0), 0);
	CHECK_EQ(ult_sem_init(&sem_done, 0), 0);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, sem_timed, NULL), 0);
	CHECK_EQ(ult_sem_timedwait(&sem_items, ult_now() + 1000000), ETIMEDOUT);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(ult_sem_post(&sem_done), 0);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* --- rwlock ---------------------------------------------------------- */

static ult_rwlock_t rwl = ULT_RWLOCK_INITIALIZER;
static atomic_int rw_readers, rw_writers, rw_max_readers;
static atomic_int rw_writer_done;
static long rw_data[4];

static void *
rw_reader(void *arg)
{
	long limit = (long)(intptr_t)arg, i;

	for (i = 0; i < limit && !atomic_load(&rw_writer_done); i++) {
		CHECK_EQ(ult_rwlock_rdlock(&rwl), 0);
		int r = atomic_fetch_add(&rw_readers, 1) + 1;
		int m = atomic_load(&rw_max_readers);

		while (r > m &&
		    !atomic_compare_exchange_weak(&rw_max_readers, &m, r))
			;
		CHECK_EQ(atomic_load(&rw_writers), 0);
		CHECK_EQ(rw_data[0] + rw_data[1], rw_data[2] + rw_data[3]);
		ult_yield(); /* hold it across a switch: readers overlap */
		atomic_fetch_sub(&rw_readers, 1);
		CHECK_EQ(ult_rwlock_unlock(&rwl), 0);
	}
	return ((void *)(intptr_t)(i >= limit)); /* 1: ran out first */
}

static void *
rw_writer(void *arg)
{
	long n = (long)(intptr_t)arg;

	for (long i = 0; i < n; i++) {
		CHECK_EQ(ult_rwlock_wrlock(&rwl), 0);
		CHECK_EQ(atomic_fetch_add(&rw_writers, 1), 0);
		CHECK_EQ(atomic_load(&rw_readers), 0);
		rw_data[0]++;
		rw_data[3]++;
		ult_yield();
		rw_data[1]++;
		rw_data[2]++;
		atomic_fetch_sub(&rw_writers, 1);
		CHECK_EQ(ult_rwlock_unlock(&rwl), 0);
	}
	atomic_store(&rw_writer_done, 1);
	return (NULL);
}

/*
 * Readers share (several hold it at once), writers exclude, and a reader
 * stream does not starve writers: the readers would stop at `limit'
 * iterations each, far more than the writers need if they get in.
 */
static void
rwlock_run(int ncpu)
{
	enum {
		NR = 8
	};
	long limit = 2000000 / TEST_SCALE;
	ult_thread_t *r[NR], *w[2];
	pthread_t pr;
	void *out;

	init_n(ncpu);
	atomic_store(&rw_writer_done, 0);
	atomic_store(&rw_max_readers, 0);
	for (int i = 0; i < NR; i++)
		CHECK_EQ(
		    ult_spawn(&r[i], NULL, rw_reader, (void *)(intptr_t)limit),
		    0);
	CHECK_EQ(pthread_create(&pr, NULL, rw_reader, (void *)(intptr_t)limit),
	    0);
	ult_sleep_ns(2000000);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_spawn(&w[i], NULL, rw_writer, (void *)200), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_join(w[i], NULL), 0);
	/* The writers finished while readers were still going. */
	atomic_store(&rw_writer_done, 1);
	for (int i = 0; i < NR; i++) {
		CHECK_EQ(ult_join(r[i], &out), 0);
		CHECK(out == NULL);
	}
	CHECK_EQ(pthread_join(pr, &out), 0);
	CHECK(out == NULL);
	CHECK(atomic_load(&rw_max_readers) >= 2);
	CHECK_EQ(rw_data[0], rw_data[1]);
	CHECK_EQ(ult_rwlock_destroy(&rwl), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

void
test_rwlock(void)
{
	rwlock_run(0);
	rwlock_run(1);
	rwlock_run(4);
}

/* --- barrier and once ------------------------------------------------ */

static ult_barrier_t bar;
static atomic_int bar_arrived, bar_serial;
static int bar_rounds;

static void *
bar_thread(void *arg)
{
	int n = (int)(intptr_t)arg;

	for (int r = 0; r < bar_rounds; r++) {
		atomic_fetch_add(&bar_arrived, 1);
		int s = ult_barrier_wait(&bar);

		CHECK(s == 0 || s == ULT_BARRIER_SERIAL_THREAD);
		if (s == ULT_BARRIER_SERIAL_THREAD)
			atomic_fetch_add(&bar_serial, 1);
		/* Everybody of this round arrived before anybody left. */
		CHECK(atomic_load(&bar_arrived) >= (r + 1) * n);
		/* Second barrier: nobody runs ahead into the next round. */
		s = ult_barrier_wait(&bar);
		CHECK(s == 0 || s == ULT_BARRIER_SERIAL_THREAD);
		if (s == ULT_BARRIER_SERIAL_THREAD)
			atomic_fetch_add(&bar_serial, 1);
	}
	return (NULL);
}

void
test_barrier_reuse(void)
{
	enum {
		N = 1000
	};
	static ult_thread_t *t[N];

	init_n(0);
	bar_rounds = 100 / TEST_SCALE + 1;
	CHECK_EQ(ult_barrier_init(&bar, N), 0);
	for (int i = 0; i < N; i++)
		CHECK_EQ(
		    ult_spawn(&t[i], NULL, bar_thread, (void *)(intptr_t)N), 0);
	for (int i = 0; i < N; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(atomic_load(&bar_arrived), N * bar_rounds);
	CHECK_EQ(atomic_load(&bar_serial), 2 * bar_rounds);
	CHECK_EQ(ult_barrier_destroy(&bar), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static ult_once_t once = ULT_ONCE_INIT;
static atomic_int once_runs;
static int once_value;

static void
once_fn(void)
{
	atomic_fetch_add(&once_runs, 1);
	ult_yield(); /* let the others pile up behind it */
	ult_sleep_ns(1000000);
	once_value = 42;
}

static void *
once_caller(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_once(&once, once_fn), 0);
	CHECK_EQ(once_value, 42);
	return (NULL);
}

void
test_once_race(void)
{
	enum {
		N = 100
	};
	ult_thread_t *t[N];
	pthread_t p[2];

	init_n(0);
	for (int i = 0; i < N; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, once_caller, NULL), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&p[i], NULL, once_caller, NULL), 0);
	for (int i = 0; i < N; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_join(p[i], NULL), 0);
	CHECK_EQ(atomic_load(&once_runs), 1);
	CHECK_EQ(ult_once(&once, once_fn), 0);
	CHECK_EQ(atomic_load(&once_runs), 1);
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * Wait morphing: a signal from the mutex's owner wakes the waiter only
 * when the mutex is released, so the waiter never runs into the mutex
 * its waker still holds.  Broadcast the same, for every waiter of that
 * mutex; a waiter of another mutex is woken at once.
 */
static ult_mutex_t wm_m = ULT_MUTEX_INITIALIZER,
		   wm_other = ULT_MUTEX_INITIALIZER;
static ult_cond_t wm_c = ULT_COND_INITIALIZER;
static atomic_int wm_ready, wm_woken;

static void *
wm_waiter(void *arg)
{
	ult_mutex_t *m = arg;

	CHECK_EQ(ult_mutex_lock(m), 0);
	atomic_fetch_add(&wm_ready, 1);
	CHECK_EQ(ult_cond_wait(&wm_c, m), 0);
	atomic_fetch_add(&wm_woken, 1);
	CHECK_EQ(ult_mutex_unlock(m), 0);
	return (NULL);
}

static int
wm_state(ult_thread_t *t)
{
	struct ult_thread_info in;

	CHECK_EQ(ult_thread_info(t, &in), 0);
	return (in.state);
}

void
test_cond_wait_morphing(void)
{
	ult_thread_t *w[3];
	struct ult_config cfg = {0};

	cfg.ncpu = 2;
	CHECK_EQ(ult_init(&cfg), 0);
	CHECK_EQ(ult_spawn(&w[0], NULL, wm_waiter, &wm_m), 0);
	CHECK_EQ(ult_spawn(&w[1], NULL, wm_waiter, &wm_m), 0);
	CHECK_EQ(ult_spawn(&w[2], NULL, wm_waiter, &wm_other), 0);
	while (atomic_load(&wm_ready) < 3)
		usleep(1000);
	for (int i = 0; i < 3; i++)
		while (wm_state(w[i]) != ULT_STATE_SLEEPING)
			usleep(1000);
	/* The main thread (foreign) owns wm_m and broadcasts. */
	CHECK_EQ(ult_mutex_lock(&wm_m), 0);
	CHECK_EQ(ult_cond_broadcast(&wm_c), 0);
	/* wm_other's waiter was woken and finishes; wm_m's still sleep. */
	CHECK_EQ(ult_join(w[2], NULL), 0);
	CHECK_EQ(atomic_load(&wm_woken), 1);
	/* Still asleep on the cond, not woken to block on wm_m. */
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(wm_state(w[i]), ULT_STATE_SLEEPING);
		CHECK(ULT_LD(&w[i]->wchan) == &wm_c);
		CHECK(w[i]->ts_blocked == NULL);
	}
	CHECK_EQ(ult_cond_destroy(&wm_c), 0); /* counted out already */
	CHECK_EQ(ult_mutex_unlock(&wm_m), 0);
	CHECK_EQ(ult_join(w[0], NULL), 0);
	CHECK_EQ(ult_join(w[1], NULL), 0);
	CHECK_EQ(atomic_load(&wm_woken), 3);
	CHECK_EQ(ult_shutdown(), 0);
}
