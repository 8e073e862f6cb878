/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Condition variables: a bounded-buffer producer/consumer, broadcast to
 * many waiters, token passing between threads, timed waits on both
 * clocks (attribute and clockwait), their error codes, and a timed wait
 * that is signalled before its deadline.
 */
#include "conf.h"

#include <stdatomic.h>
#include <stdint.h>

#define NPROD 4
#define NCONS 4
#define ITEMS 5000 /* per producer */
#define BUFSZ 8

static struct {
	pthread_mutex_t m;
	pthread_cond_t not_full, not_empty;
	long buf[BUFSZ];
	int head, count;
	int producers_left;
	long consumed_sum, consumed_n;
	int overflow;
} bb = {.m = PTHREAD_MUTEX_INITIALIZER,
    .not_full = PTHREAD_COND_INITIALIZER,
    .not_empty = PTHREAD_COND_INITIALIZER};

static void *
producer(void *arg)
{
	long base = (long)(intptr_t)arg * ITEMS;
	int i;

	for (i = 0; i < ITEMS; i++) {
		pthread_mutex_lock(&bb.m);
		while (bb.count == BUFSZ)
			pthread_cond_wait(&bb.not_full, &bb.m);
		bb.buf[(bb.head + bb.count) % BUFSZ] = base + i + 1;
		bb.count++;
		pthread_cond_signal(&bb.not_empty);
		pthread_mutex_unlock(&bb.m);
	}
	pthread_mutex_lock(&bb.m);
	if (--bb.producers_left == 0)
		pthread_cond_broadcast(&bb.not_empty);
	pthread_mutex_unlock(&bb.m);
	return (NULL);
}

static void *
consumer(void *arg)
{
	long v;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&bb.m);
		while (bb.count == 0 && bb.producers_left > 0)
			pthread_cond_wait(&bb.not_empty, &bb.m);
		if (bb.count == 0) {
			pthread_mutex_unlock(&bb.m);
			return (NULL);
		}
		if (bb.count > BUFSZ)
			bb.overflow++;
		v = bb.buf[bb.head];
		bb.head = (bb.head + 1) % BUFSZ;
		bb.count--;
		bb.consumed_sum += v;
		bb.consumed_n++;
		pthread_cond_signal(&bb.not_full);
		pthread_mutex_unlock(&bb.m);
	}
}

static void
check_prodcons(void)
{
	pthread_t p[NPROD], c[NCONS];
	long n = (long)NPROD * ITEMS;
	int i;

	bb.producers_left = NPROD;
	for (i = 0; i < NCONS; i++)
		conf_create(&c[i], NULL, consumer, NULL);
	for (i = 0; i < NPROD; i++)
		conf_create(&p[i], NULL, producer, (void *)(intptr_t)i);
	for (i = 0; i < NPROD; i++)
		conf_join(p[i]);
	for (i = 0; i < NCONS; i++)
		conf_join(c[i]);
	conf_long("producer/consumer 4x4, 20000 items: consumed", bb.consumed_n,
	    n);
	conf_long("producer/consumer: sum of items", bb.consumed_sum,
	    n * (n + 1) / 2);
	conf_long("producer/consumer: buffer overflows", bb.overflow, 0);
}

#define NWAITERS 32

static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	int waiting, go, woken;
} bc = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

static void *
broadcast_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&bc.m);
	bc.waiting++;
	while (!bc.go)
		pthread_cond_wait(&bc.c, &bc.m);
	bc.woken++;
	pthread_mutex_unlock(&bc.m);
	return (NULL);
}

static void
check_broadcast(void)
{
	pthread_t t[NWAITERS];
	int i, waiting;

	for (i = 0; i < NWAITERS; i++)
		conf_create(&t[i], NULL, broadcast_waiter, NULL);
	/* Until every waiter has registered (then they are all in wait). */
	do {
		conf_msleep(1);
		pthread_mutex_lock(&bc.m);
		waiting = bc.waiting;
		pthread_mutex_unlock(&bc.m);
	} while (waiting < NWAITERS);
	pthread_mutex_lock(&bc.m);
	bc.go = 1;
	conf_err("pthread_cond_broadcast", pthread_cond_broadcast(&bc.c), 0);
	pthread_mutex_unlock(&bc.m);
	for (i = 0; i < NWAITERS; i++)
		conf_join(t[i]);
	conf_long("broadcast to 32 waiters: woken", bc.woken, NWAITERS);
}

/* NRING threads pass a token round a ring, each on its own turn. */
#define NRING 8
#define ROUNDS 500

static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	int turn;
	long passes;
	int out_of_turn;
} ring = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

static void *
ring_member(void *arg)
{
	int me = (int)(intptr_t)arg, r;

	for (r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&ring.m);
		while (ring.turn != me)
			pthread_cond_wait(&ring.c, &ring.m);
		if (ring.passes % NRING != me)
			ring.out_of_turn++;
		ring.passes++;
		ring.turn = (me + 1) % NRING;
		pthread_cond_broadcast(&ring.c);
		pthread_mutex_unlock(&ring.m);
	}
	return (NULL);
}

static void
check_ring(void)
{
	pthread_t t[NRING];
	int i;

	for (i = 0; i < NRING; i++)
		conf_create(&t[i], NULL, ring_member, (void *)(intptr_t)i);
	for (i = 0; i < NRING; i++)
		conf_join(t[i]);
	conf_long("token ring of 8, 500 rounds: passes", ring.passes,
	    (long)NRING * ROUNDS);
	conf_long("token ring: out of turn", ring.out_of_turn, 0);
}

/* With an errorcheck mutex, unlock succeeds only if the wait gave the
 * mutex back to its caller. */
static void
init_errorcheck(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	conf_must("mutex_init", pthread_mutex_init(m, &a));
	pthread_mutexattr_destroy(&a);
}

static void
timed(const char *what, pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
    int use_clockwait, long ms, int want)
{
	struct timespec ts = conf_deadline(clk, ms);
	char buf[96];
	int rc;

	pthread_mutex_lock(m);
	do {
		if (use_clockwait)
			rc = pthread_cond_clockwait(c, m, clk, &ts);
		else
			rc = pthread_cond_timedwait(c, m, &ts);
		/* Nobody signals: 0 would be a spurious wakeup; wait on. */
	} while (rc == 0);
	conf_err(what, rc, want);
	snprintf(buf, sizeof(buf), "%s: mutex held after", what);
	conf_err(buf, pthread_mutex_unlock(m), 0);
	if (want == ETIMEDOUT && ms > 0) {
		snprintf(buf, sizeof(buf), "%s: returned after its deadline",
		    what);
		conf_ok(buf, conf_ts_ge(conf_now(clk), ts));
	}
}

static void
check_timeouts(void)
{
	pthread_condattr_t ca;
	pthread_cond_t c, cm;
	pthread_mutex_t m;
	struct timespec bad;
	clockid_t clk;

	init_errorcheck(&m);
	conf_must("cond_init", pthread_cond_init(&c, NULL));
	conf_must("condattr_init", pthread_condattr_init(&ca));
	conf_ok("condattr default clock REALTIME",
	    pthread_condattr_getclock(&ca, &clk) == 0 && clk == CLOCK_REALTIME);
	conf_err("condattr_setclock MONOTONIC",
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
	conf_ok("condattr_getclock MONOTONIC",
	    pthread_condattr_getclock(&ca, &clk) == 0 &&
		clk == CLOCK_MONOTONIC);
	conf_err("condattr_setclock PROCESS_CPUTIME",
	    pthread_condattr_setclock(&ca, CLOCK_PROCESS_CPUTIME_ID), EINVAL);
	conf_must("cond_init monotonic", pthread_cond_init(&cm, &ca));
	pthread_condattr_destroy(&ca);

	timed("timedwait REALTIME, deadline in the past", &c, &m,
	    CLOCK_REALTIME, 0, -1000, ETIMEDOUT);
	timed("timedwait REALTIME, 20ms", &c, &m, CLOCK_REALTIME, 0, 20,
	    ETIMEDOUT);
	timed("timedwait on a MONOTONIC cond, deadline in the past", &cm, &m,
	    CLOCK_MONOTONIC, 0, -1000, ETIMEDOUT);
	timed("timedwait on a MONOTONIC cond, 20ms", &cm, &m, CLOCK_MONOTONIC,
	    0, 20, ETIMEDOUT);
	timed("clockwait MONOTONIC, deadline in the past", &c, &m,
	    CLOCK_MONOTONIC, 1, -1000, ETIMEDOUT);
	timed("clockwait MONOTONIC, 20ms", &c, &m, CLOCK_MONOTONIC, 1, 20,
	    ETIMEDOUT);
	timed("clockwait REALTIME, 20ms", &c, &m, CLOCK_REALTIME, 1, 20,
	    ETIMEDOUT);

	pthread_mutex_lock(&m);
	bad = conf_now(CLOCK_REALTIME);
	bad.tv_nsec = 1000000000L;
	conf_err("timedwait tv_nsec 1e9", pthread_cond_timedwait(&c, &m, &bad),
	    EINVAL);
	bad.tv_nsec = 0;
	conf_err("clockwait on PROCESS_CPUTIME clock",
	    pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &bad),
	    EINVAL);
	conf_err("mutex still held after the EINVAL waits",
	    pthread_mutex_unlock(&m), 0);

	conf_err("cond_signal with no waiters", pthread_cond_signal(&c), 0);
	conf_err("cond_broadcast with no waiters", pthread_cond_broadcast(&c),
	    0);
	conf_err("cond_destroy", pthread_cond_destroy(&c), 0);
	conf_err("cond_destroy monotonic", pthread_cond_destroy(&cm), 0);
	pthread_mutex_destroy(&m);
}

/* A timed wait woken by a signal long before its deadline. */
static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	int waiting, flag, rc;
	clockid_t clk;
	int clockwait;
} sw = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

static void *
signalled_waiter(void *arg)
{
	struct timespec ts = conf_deadline(sw.clk, 30000);
	int rc = 0;

	(void)arg;
	pthread_mutex_lock(&sw.m);
	sw.waiting = 1;
	while (!sw.flag && rc == 0) {
		if (sw.clockwait)
			rc = pthread_cond_clockwait(&sw.c, &sw.m, sw.clk, &ts);
		else
			rc = pthread_cond_timedwait(&sw.c, &sw.m, &ts);
	}
	sw.rc = rc;
	pthread_mutex_unlock(&sw.m);
	return (NULL);
}

static void
signalled(const char *what, clockid_t clk, int clockwait)
{
	pthread_t t;
	int waiting;

	sw.clk = clk;
	sw.clockwait = clockwait;
	sw.waiting = sw.flag = 0;
	sw.rc = -1;
	conf_create(&t, NULL, signalled_waiter, NULL);
	do {
		conf_msleep(1);
		pthread_mutex_lock(&sw.m);
		waiting = sw.waiting;
		pthread_mutex_unlock(&sw.m);
	} while (!waiting);
	pthread_mutex_lock(&sw.m);
	sw.flag = 1;
	pthread_cond_signal(&sw.c);
	pthread_mutex_unlock(&sw.m);
	conf_join(t);
	conf_err(what, sw.rc, 0);
}

/* Waiting with an errorcheck mutex one does not hold. */
static void
check_eperm(void)
{
	struct timespec ts = conf_deadline(CLOCK_REALTIME, 10000);
	pthread_mutex_t m;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;

	init_errorcheck(&m);
	conf_err("cond_wait, errorcheck mutex not held",
	    pthread_cond_wait(&c, &m), EPERM);
	conf_err("cond_timedwait, errorcheck mutex not held",
	    pthread_cond_timedwait(&c, &m, &ts), EPERM);
	pthread_mutex_destroy(&m);
	pthread_cond_destroy(&c);
}

/*
 * POSIX: a condition variable may be destroyed as soon as the threads
 * blocked on it have been woken, here by the broadcaster with the mutex
 * still held.  The woken threads must not write to it afterwards: its
 * memory is filled with a pattern that must survive.
 */
#define NDESTROY 4
#define DESTROY_ROUNDS 50

struct dcv {
	pthread_mutex_t m;
	pthread_cond_t c;
	int waiting, go, woken;
};

static void *
dcv_waiter(void *arg)
{
	struct dcv *d = arg;
	int r = 0;

	pthread_mutex_lock(&d->m);
	d->waiting++;
	while (!d->go && r == 0)
		r = pthread_cond_wait(&d->c, &d->m);
	if (r == 0)
		d->woken++;
	pthread_mutex_unlock(&d->m);
	return (NULL);
}

static void
check_destroy_after_broadcast(void)
{
	pthread_t t[NDESTROY];
	struct dcv *d;
	const unsigned char *p;
	int n, i, waiting, destroy_errs = 0, woken = 0, corrupt = 0;

	for (n = 0; n < DESTROY_ROUNDS; n++) {
		if ((d = calloc(1, sizeof(*d))) == NULL)
			conf_must("calloc", ENOMEM);
		pthread_mutex_init(&d->m, NULL);
		pthread_cond_init(&d->c, NULL);
		for (i = 0; i < NDESTROY; i++)
			conf_create(&t[i], NULL, dcv_waiter, d);
		do {
			conf_msleep(1);
			pthread_mutex_lock(&d->m);
			waiting = d->waiting;
			pthread_mutex_unlock(&d->m);
		} while (waiting < NDESTROY);
		pthread_mutex_lock(&d->m);
		d->go = 1;
		pthread_cond_broadcast(&d->c);
		destroy_errs += pthread_cond_destroy(&d->c) != 0;
		memset(&d->c, 0x5a, sizeof(d->c));
		pthread_mutex_unlock(&d->m);
		for (i = 0; i < NDESTROY; i++)
			conf_join(t[i]);
		woken += d->woken;
		p = (const unsigned char *)&d->c;
		for (i = 0; i < (int)sizeof(d->c); i++)
			corrupt += p[i] != 0x5a;
		pthread_mutex_destroy(&d->m);
		free(d);
	}
	conf_long("destroy right after broadcast (50 times): destroy errors",
	    destroy_errs, 0);
	conf_long("destroy right after broadcast: waiters woken", woken,
	    NDESTROY * DESTROY_ROUNDS);
	conf_long("bytes written after the memory was reused", corrupt, 0);
}

int
main(void)
{
	conf_begin("cond");
	check_eperm();
	check_destroy_after_broadcast();
	check_timeouts();
	signalled("timedwait signalled before its 30s deadline", CLOCK_REALTIME,
	    0);
	signalled("clockwait MONOTONIC signalled before its 30s deadline",
	    CLOCK_MONOTONIC, 1);
	check_broadcast();
	check_ring();
	check_prodcons();
	return (conf_end());
}
