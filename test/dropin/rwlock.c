/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Read-write locks: readers hold it together, writers alone (checked
 * with counters under many threads), try/timed/clock forms and their
 * error codes while another thread holds the lock.
 */
#include "conf.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#define NREADERS 8

/* All NREADERS readers inside at once, or a timeout: no hang. */
static struct {
	pthread_rwlock_t rw;
	pthread_mutex_t m;
	pthread_cond_t c;
	int inside, max_inside, timeouts;
} rc = {.rw = PTHREAD_RWLOCK_INITIALIZER,
    .m = PTHREAD_MUTEX_INITIALIZER,
    .c = PTHREAD_COND_INITIALIZER};

static void *
concurrent_reader(void *arg)
{
	struct timespec ts = conf_deadline(CLOCK_REALTIME, 20000);
	int r = 0;

	(void)arg;
	pthread_rwlock_rdlock(&rc.rw);
	pthread_mutex_lock(&rc.m);
	rc.inside++;
	if (rc.inside > rc.max_inside)
		rc.max_inside = rc.inside;
	pthread_cond_broadcast(&rc.c);
	while (rc.max_inside < NREADERS && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&rc.c, &rc.m, &ts);
	if (r == ETIMEDOUT)
		rc.timeouts++;
	rc.inside--;
	pthread_mutex_unlock(&rc.m);
	pthread_rwlock_unlock(&rc.rw);
	return (NULL);
}

static void
check_concurrent_readers(void)
{
	pthread_t t[NREADERS];
	int i;

	for (i = 0; i < NREADERS; i++)
		conf_create(&t[i], NULL, concurrent_reader, NULL);
	for (i = 0; i < NREADERS; i++)
		conf_join(t[i]);
	conf_long("8 readers hold the lock at the same time: most inside",
	    rc.max_inside, NREADERS);
	conf_long("readers that gave up waiting for the others", rc.timeouts,
	    0);
}

/* Writers keep a == b and count; readers check they never see it torn. */
#define NWRITERS 8
#define NRD 16
#define WITERS 2000
#define RITERS 4000

static struct {
	pthread_rwlock_t rw;
	long a, b, writes;
	atomic_int writers_in, readers_in;
	atomic_int bad_writer, bad_reader, torn, errors;
	int kind; /* 0 lock, 1 try loop, 2 timed */
} ex = {.rw = PTHREAD_RWLOCK_INITIALIZER};

static void
ex_wrlock(void)
{
	struct timespec ts;
	int r;

	if (ex.kind == 1) {
		while ((r = pthread_rwlock_trywrlock(&ex.rw)) == EBUSY)
			sched_yield();
	} else if (ex.kind == 2) {
		ts = conf_deadline(CLOCK_REALTIME, 60000);
		r = pthread_rwlock_timedwrlock(&ex.rw, &ts);
	} else {
		r = pthread_rwlock_wrlock(&ex.rw);
	}
	if (r != 0)
		atomic_fetch_add(&ex.errors, 1);
}

static void
ex_rdlock(void)
{
	struct timespec ts;
	int r;

	if (ex.kind == 1) {
		while ((r = pthread_rwlock_tryrdlock(&ex.rw)) == EBUSY)
			sched_yield();
	} else if (ex.kind == 2) {
		ts = conf_deadline(CLOCK_MONOTONIC, 60000);
		r = pthread_rwlock_clockrdlock(&ex.rw, CLOCK_MONOTONIC, &ts);
	} else {
		r = pthread_rwlock_rdlock(&ex.rw);
	}
	if (r != 0)
		atomic_fetch_add(&ex.errors, 1);
}

static void *
writer(void *arg)
{
	long v;
	int i;

	(void)arg;
	for (i = 0; i < WITERS; i++) {
		ex_wrlock();
		if (atomic_fetch_add(&ex.writers_in, 1) != 0 ||
		    atomic_load(&ex.readers_in) != 0)
			atomic_fetch_add(&ex.bad_writer, 1);
		v = ex.a;
		ex.a = v + 1;
		if (i % 50 == 0)
			sched_yield();
		ex.b = v + 1;
		ex.writes++;
		atomic_fetch_sub(&ex.writers_in, 1);
		if (pthread_rwlock_unlock(&ex.rw) != 0)
			atomic_fetch_add(&ex.errors, 1);
	}
	return (NULL);
}

static void *
reader(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < RITERS; i++) {
		ex_rdlock();
		atomic_fetch_add(&ex.readers_in, 1);
		if (atomic_load(&ex.writers_in) != 0)
			atomic_fetch_add(&ex.bad_reader, 1);
		if (ex.a != ex.b)
			atomic_fetch_add(&ex.torn, 1);
		if (i % 50 == 0)
			sched_yield();
		if (ex.a != ex.b)
			atomic_fetch_add(&ex.torn, 1);
		atomic_fetch_sub(&ex.readers_in, 1);
		if (pthread_rwlock_unlock(&ex.rw) != 0)
			atomic_fetch_add(&ex.errors, 1);
	}
	return (NULL);
}

static void
check_exclusion(const char *name, int kind)
{
	pthread_t w[NWRITERS], r[NRD];
	char what[96];
	int i;

	ex.kind = kind;
	ex.a = ex.b = ex.writes = 0;
	atomic_store(&ex.bad_writer, 0);
	atomic_store(&ex.bad_reader, 0);
	atomic_store(&ex.torn, 0);
	atomic_store(&ex.errors, 0);
	for (i = 0; i < NRD; i++)
		conf_create(&r[i], NULL, reader, NULL);
	for (i = 0; i < NWRITERS; i++)
		conf_create(&w[i], NULL, writer, NULL);
	for (i = 0; i < NWRITERS; i++)
		conf_join(w[i]);
	for (i = 0; i < NRD; i++)
		conf_join(r[i]);
	snprintf(what, sizeof(what), "%s: 8 writers x 2000: writes", name);
	conf_long(what, ex.writes, (long)NWRITERS * WITERS);
	snprintf(what, sizeof(what), "%s: final value", name);
	conf_long(what, ex.b, (long)NWRITERS * WITERS);
	snprintf(what, sizeof(what), "%s: writer not alone", name);
	conf_long(what, atomic_load(&ex.bad_writer), 0);
	snprintf(what, sizeof(what), "%s: reader beside a writer", name);
	conf_long(what, atomic_load(&ex.bad_reader), 0);
	snprintf(what, sizeof(what), "%s: torn reads", name);
	conf_long(what, atomic_load(&ex.torn), 0);
	snprintf(what, sizeof(what), "%s: errors", name);
	conf_long(what, atomic_load(&ex.errors), 0);
}

/* A helper thread holding the lock (read or write) on request. */
static struct {
	pthread_rwlock_t *rw;
	struct conf_step step;
	int write;
} holder = {.step = CONF_STEP_INIT};

static void *
holder_body(void *arg)
{
	(void)arg;
	if (holder.write)
		pthread_rwlock_wrlock(holder.rw);
	else
		pthread_rwlock_rdlock(holder.rw);
	conf_step_set(&holder.step, 1);
	conf_step_wait(&holder.step, 2);
	pthread_rwlock_unlock(holder.rw);
	return (NULL);
}

static pthread_t
hold(pthread_rwlock_t *rw, int write)
{
	pthread_t t;

	holder.rw = rw;
	holder.write = write;
	conf_step_reset(&holder.step);
	conf_create(&t, NULL, holder_body, NULL);
	conf_step_wait(&holder.step, 1);
	return (t);
}

static void
release(pthread_t t)
{
	conf_step_set(&holder.step, 2);
	conf_join(t);
}

static void
check_errors(void)
{
	pthread_rwlock_t rw;
	struct timespec ts;
	pthread_t t;
	int r;

	conf_must("rwlock_init", pthread_rwlock_init(&rw, NULL));

	t = hold(&rw, 0);
	conf_err("trywrlock while another thread reads",
	    pthread_rwlock_trywrlock(&rw), EBUSY);
	ts = conf_deadline(CLOCK_REALTIME, -1000);
	conf_err("timedwrlock while read-held, deadline in the past",
	    pthread_rwlock_timedwrlock(&rw, &ts), ETIMEDOUT);
	ts = conf_deadline(CLOCK_REALTIME, 20);
	conf_err("timedwrlock while read-held, 20ms",
	    pthread_rwlock_timedwrlock(&rw, &ts), ETIMEDOUT);
	conf_ok("timedwrlock returned after its deadline",
	    conf_ts_ge(conf_now(CLOCK_REALTIME), ts));
	ts = conf_deadline(CLOCK_MONOTONIC, 20);
	conf_err("clockwrlock MONOTONIC while read-held, 20ms",
	    pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &ts), ETIMEDOUT);
	conf_ok("clockwrlock returned after its deadline",
	    conf_ts_ge(conf_now(CLOCK_MONOTONIC), ts));
	r = pthread_rwlock_tryrdlock(&rw);
	conf_err("tryrdlock while another thread reads", r, 0);
	if (r == 0)
		pthread_rwlock_unlock(&rw);
	release(t);

	t = hold(&rw, 1);
	conf_err("trywrlock while another thread writes",
	    pthread_rwlock_trywrlock(&rw), EBUSY);
	conf_err("tryrdlock while another thread writes",
	    pthread_rwlock_tryrdlock(&rw), EBUSY);
	ts = conf_deadline(CLOCK_REALTIME, -1000);
	conf_err("timedrdlock while write-held, deadline in the past",
	    pthread_rwlock_timedrdlock(&rw, &ts), ETIMEDOUT);
	ts = conf_deadline(CLOCK_REALTIME, 20);
	conf_err("timedrdlock while write-held, 20ms",
	    pthread_rwlock_timedrdlock(&rw, &ts), ETIMEDOUT);
	ts = conf_deadline(CLOCK_MONOTONIC, -1000);
	conf_err("clockrdlock MONOTONIC while write-held, past",
	    pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &ts), ETIMEDOUT);
	ts = conf_deadline(CLOCK_REALTIME, 10);
	ts.tv_nsec = 1000000000L;
	conf_err("timedwrlock while write-held, tv_nsec 1e9",
	    pthread_rwlock_timedwrlock(&rw, &ts), EINVAL);
	release(t);

	conf_err("trywrlock once free", pthread_rwlock_trywrlock(&rw), 0);
	conf_err("unlock", pthread_rwlock_unlock(&rw), 0);
	conf_err("rdlock twice (same thread)",
	    pthread_rwlock_rdlock(&rw) | pthread_rwlock_rdlock(&rw), 0);
	conf_err("unlock twice",
	    pthread_rwlock_unlock(&rw) | pthread_rwlock_unlock(&rw), 0);
	ts = conf_deadline(CLOCK_REALTIME, 10000);
	conf_err("timedwrlock free", pthread_rwlock_timedwrlock(&rw, &ts), 0);
	conf_err("unlock", pthread_rwlock_unlock(&rw), 0);
	conf_err("rwlock_destroy", pthread_rwlock_destroy(&rw), 0);
}

/* A writer blocked behind a reader gets the lock when the reader leaves. */
static void *
blocked_writer(void *arg)
{
	struct timespec ts = conf_deadline(CLOCK_REALTIME, 30000);
	int r = pthread_rwlock_timedwrlock(arg, &ts);

	if (r == 0)
		pthread_rwlock_unlock(arg);
	return ((void *)(intptr_t)r);
}

static void
check_handoff(void)
{
	pthread_rwlock_t rw;
	pthread_t t, w;
	int r;

	conf_must("rwlock_init", pthread_rwlock_init(&rw, NULL));
	t = hold(&rw, 0);
	conf_create(&w, NULL, blocked_writer, &rw);
	conf_msleep(10);
	release(t);
	r = (int)(intptr_t)conf_join(w);
	conf_err("writer queued behind a reader gets the lock", r, 0);
	conf_err("rwlock_destroy", pthread_rwlock_destroy(&rw), 0);
}

int
main(void)
{
	conf_begin("rwlock");
	check_errors();
	check_handoff();
	check_concurrent_readers();
	check_exclusion("rdlock/wrlock", 0);
	check_exclusion("try loops", 1);
	check_exclusion("timed and clock", 2);
	return (conf_end());
}
