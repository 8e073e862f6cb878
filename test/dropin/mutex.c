/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Mutexes (normal, recursive, errorcheck, priority inheritance) and
 * spinlocks: mutual exclusion under many threads, the error codes that
 * POSIX and glibc define for each type, trylock, timedlock, clocklock.
 */
#include "conf.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#define NTHREADS 32
#define ITERS 5000

enum how {
	PLAIN,
	RECURSIVE_TWICE,
	TRY_SPIN,
	TIMED,
	SPIN
};

struct hammer {
	pthread_mutex_t *m;
	pthread_spinlock_t *spin;
	enum how how;
	long counter;
	atomic_int inside;
	atomic_int overlaps;
	atomic_int errors;
};

static void
hammer_lock(struct hammer *h)
{
	struct timespec ts;

	switch (h->how) {
	case PLAIN:
		if (pthread_mutex_lock(h->m) != 0)
			atomic_fetch_add(&h->errors, 1);
		break;
	case RECURSIVE_TWICE:
		if (pthread_mutex_lock(h->m) != 0 ||
		    pthread_mutex_lock(h->m) != 0)
			atomic_fetch_add(&h->errors, 1);
		break;
	case TRY_SPIN:
		while (pthread_mutex_trylock(h->m) == EBUSY)
			sched_yield();
		break;
	case TIMED:
		ts = conf_deadline(CLOCK_REALTIME, 60000);
		if (pthread_mutex_timedlock(h->m, &ts) != 0)
			atomic_fetch_add(&h->errors, 1);
		break;
	case SPIN:
		if (pthread_spin_lock(h->spin) != 0)
			atomic_fetch_add(&h->errors, 1);
		break;
	}
}

static void
hammer_unlock(struct hammer *h)
{
	if (h->how == SPIN) {
		if (pthread_spin_unlock(h->spin) != 0)
			atomic_fetch_add(&h->errors, 1);
		return;
	}
	if (h->how == RECURSIVE_TWICE && pthread_mutex_unlock(h->m) != 0)
		atomic_fetch_add(&h->errors, 1);
	if (pthread_mutex_unlock(h->m) != 0)
		atomic_fetch_add(&h->errors, 1);
}

static void *
hammer_body(void *arg)
{
	struct hammer *h = arg;
	long v;
	int i;

	for (i = 0; i < ITERS; i++) {
		hammer_lock(h);
		if (atomic_fetch_add(&h->inside, 1) != 0)
			atomic_fetch_add(&h->overlaps, 1);
		/* A read-modify-write torn apart by a yield now and then. */
		v = h->counter;
		if (i % 64 == 0 && h->how != SPIN)
			sched_yield();
		h->counter = v + 1;
		atomic_fetch_sub(&h->inside, 1);
		hammer_unlock(h);
	}
	return (NULL);
}

static void
hammer(const char *name, pthread_mutex_t *m, pthread_spinlock_t *spin,
    enum how how, int nthreads)
{
	struct hammer h = {.m = m, .spin = spin, .how = how};
	pthread_t t[NTHREADS];
	char what[96];
	int i;

	for (i = 0; i < nthreads; i++)
		conf_create(&t[i], NULL, hammer_body, &h);
	for (i = 0; i < nthreads; i++)
		conf_join(t[i]);
	snprintf(what, sizeof(what), "%s: %d threads x %d: counter", name,
	    nthreads, ITERS);
	conf_long(what, h.counter, (long)nthreads * ITERS);
	snprintf(what, sizeof(what), "%s: two inside at once", name);
	conf_long(what, atomic_load(&h.overlaps), 0);
	snprintf(what, sizeof(what), "%s: lock/unlock errors", name);
	conf_long(what, atomic_load(&h.errors), 0);
}

static void
init_type(pthread_mutex_t *m, int type, int protocol)
{
	pthread_mutexattr_t a;

	conf_must("mutexattr_init", pthread_mutexattr_init(&a));
	conf_must("mutexattr_settype", pthread_mutexattr_settype(&a, type));
	conf_must("mutexattr_setprotocol",
	    pthread_mutexattr_setprotocol(&a, protocol));
	conf_must("mutex_init", pthread_mutex_init(m, &a));
	pthread_mutexattr_destroy(&a);
}

static void
check_hammers(void)
{
	static pthread_mutex_t st = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t m;
	pthread_spinlock_t s;

	hammer("static initializer", &st, NULL, PLAIN, NTHREADS);
	init_type(&m, PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE);
	hammer("recursive, locked twice", &m, NULL, RECURSIVE_TWICE, NTHREADS);
	pthread_mutex_destroy(&m);
	init_type(&m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE);
	hammer("errorcheck", &m, NULL, PLAIN, NTHREADS);
	pthread_mutex_destroy(&m);
	init_type(&m, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_INHERIT);
	hammer("priority inheritance", &m, NULL, PLAIN, NTHREADS);
	pthread_mutex_destroy(&m);
	conf_must("mutex_init", pthread_mutex_init(&m, NULL));
	hammer("trylock loop", &m, NULL, TRY_SPIN, NTHREADS);
	hammer("timedlock", &m, NULL, TIMED, NTHREADS);
	pthread_mutex_destroy(&m);
	conf_must("spin_init", pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE));
	/* Natively a spinner burns its time slice while a preempted holder
	 * waits: few threads. */
	hammer("spinlock", NULL, &s, SPIN, 4);
	pthread_spin_destroy(&s);
}

/*
 * Another thread's view of a mutex: it runs one operation at main's
 * request and reports the result.
 */
enum op {
	OP_TRYLOCK,
	OP_UNLOCK,
	OP_LOCK_HOLD,
	OP_RELEASE,
	OP_QUIT
};

struct other {
	pthread_mutex_t *m;
	pthread_mutex_t lk;
	pthread_cond_t cv;
	int pending; /* an op to run, or -1 */
	enum op op;
	int result;
	pthread_t t;
};

static void *
other_body(void *arg)
{
	struct other *o = arg;
	enum op op;
	int r;

	for (;;) {
		pthread_mutex_lock(&o->lk);
		while (o->pending < 0)
			pthread_cond_wait(&o->cv, &o->lk);
		op = o->op;
		pthread_mutex_unlock(&o->lk);
		switch (op) {
		case OP_TRYLOCK:
			r = pthread_mutex_trylock(o->m);
			if (r == 0)
				pthread_mutex_unlock(o->m);
			break;
		case OP_UNLOCK:
			r = pthread_mutex_unlock(o->m);
			break;
		case OP_LOCK_HOLD:
			r = pthread_mutex_lock(o->m);
			break;
		case OP_RELEASE:
			r = pthread_mutex_unlock(o->m);
			break;
		default:
			r = 0;
			break;
		}
		pthread_mutex_lock(&o->lk);
		o->result = r;
		o->pending = -1;
		pthread_cond_broadcast(&o->cv);
		pthread_mutex_unlock(&o->lk);
		if (op == OP_QUIT)
			return (NULL);
	}
}

static void
other_start(struct other *o, pthread_mutex_t *m)
{
	o->m = m;
	pthread_mutex_init(&o->lk, NULL);
	pthread_cond_init(&o->cv, NULL);
	o->pending = -1;
	conf_create(&o->t, NULL, other_body, o);
}

static int
other_do(struct other *o, enum op op)
{
	int r;

	pthread_mutex_lock(&o->lk);
	o->op = op;
	o->pending = 1;
	pthread_cond_broadcast(&o->cv);
	while (o->pending >= 0)
		pthread_cond_wait(&o->cv, &o->lk);
	r = o->result;
	pthread_mutex_unlock(&o->lk);
	return (r);
}

static void
other_stop(struct other *o)
{
	other_do(o, OP_QUIT);
	conf_join(o->t);
	pthread_mutex_destroy(&o->lk);
	pthread_cond_destroy(&o->cv);
}

static void
check_errorcheck(void)
{
	struct other o;
	pthread_mutex_t m;

	init_type(&m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE);
	other_start(&o, &m);
	conf_err("errorcheck unlock while unlocked", pthread_mutex_unlock(&m),
	    EPERM);
	conf_err("errorcheck lock", pthread_mutex_lock(&m), 0);
	conf_err("errorcheck relock", pthread_mutex_lock(&m), EDEADLK);
	conf_err("errorcheck trylock by owner", pthread_mutex_trylock(&m),
	    EBUSY);
	conf_err("errorcheck trylock by another thread",
	    other_do(&o, OP_TRYLOCK), EBUSY);
	conf_err("errorcheck unlock by non-owner", other_do(&o, OP_UNLOCK),
	    EPERM);
	conf_err("errorcheck unlock by owner", pthread_mutex_unlock(&m), 0);
	conf_err("errorcheck second unlock", pthread_mutex_unlock(&m), EPERM);
	conf_err("errorcheck trylock by another thread once free",
	    other_do(&o, OP_TRYLOCK), 0);
	conf_err("errorcheck another thread locks", other_do(&o, OP_LOCK_HOLD),
	    0);
	conf_err("errorcheck unlock by main while another holds",
	    pthread_mutex_unlock(&m), EPERM);
	conf_err("errorcheck holder unlocks", other_do(&o, OP_RELEASE), 0);
	other_stop(&o);
	conf_err("errorcheck destroy", pthread_mutex_destroy(&m), 0);
}

static void
check_recursive(void)
{
	struct other o;
	pthread_mutex_t m;
	int i, errs = 0;

	init_type(&m, PTHREAD_MUTEX_RECURSIVE, PTHREAD_PRIO_NONE);
	other_start(&o, &m);
	conf_err("recursive unlock while unlocked", pthread_mutex_unlock(&m),
	    EPERM);
	for (i = 0; i < 5; i++)
		errs += pthread_mutex_lock(&m) != 0;
	conf_long("recursive lock depth 5: errors", errs, 0);
	conf_err("recursive trylock by owner", pthread_mutex_trylock(&m), 0);
	conf_err("recursive trylock by another thread",
	    other_do(&o, OP_TRYLOCK), EBUSY);
	conf_err("recursive unlock by non-owner", other_do(&o, OP_UNLOCK),
	    EPERM);
	for (errs = 0, i = 0; i < 5; i++) {
		errs += pthread_mutex_unlock(&m) != 0;
		if (other_do(&o, OP_TRYLOCK) != EBUSY)
			errs++;
	}
	conf_long("recursive: 5 unlocks, still held by owner: errors", errs, 0);
	conf_err("recursive last unlock", pthread_mutex_unlock(&m), 0);
	conf_err("recursive trylock by another thread once free",
	    other_do(&o, OP_TRYLOCK), 0);
	conf_err("recursive unlock once free", pthread_mutex_unlock(&m), EPERM);
	other_stop(&o);
	conf_err("recursive destroy", pthread_mutex_destroy(&m), 0);
}

/* Lock timeouts, with the mutex held by another thread. */
static void
check_timed(void)
{
	struct timespec ts, bad;
	struct other o;
	pthread_mutex_t m;
	int rc;

	conf_must("mutex_init", pthread_mutex_init(&m, NULL));
	other_start(&o, &m);
	ts = conf_deadline(CLOCK_REALTIME, 10000);
	conf_err("timedlock on a free mutex", pthread_mutex_timedlock(&m, &ts),
	    0);
	conf_err("trylock by another thread while held",
	    other_do(&o, OP_TRYLOCK), EBUSY);
	pthread_mutex_unlock(&m);
	conf_err("another thread takes the mutex", other_do(&o, OP_LOCK_HOLD),
	    0);
	conf_err("trylock held", pthread_mutex_trylock(&m), EBUSY);
	ts = conf_deadline(CLOCK_REALTIME, -1000);
	conf_err("timedlock held, deadline in the past",
	    pthread_mutex_timedlock(&m, &ts), ETIMEDOUT);
	ts = conf_deadline(CLOCK_REALTIME, 20);
	conf_err("timedlock held, 20ms deadline",
	    pthread_mutex_timedlock(&m, &ts), ETIMEDOUT);
	conf_ok("timedlock returned at or after its deadline",
	    conf_ts_ge(conf_now(CLOCK_REALTIME), ts));
	bad = conf_now(CLOCK_REALTIME);
	bad.tv_nsec = 1000000000L;
	conf_err("timedlock held, tv_nsec 1e9",
	    pthread_mutex_timedlock(&m, &bad), EINVAL);
	bad.tv_nsec = -1;
	conf_err("timedlock held, tv_nsec -1",
	    pthread_mutex_timedlock(&m, &bad), EINVAL);
	ts = conf_deadline(CLOCK_MONOTONIC, -1000);
	conf_err("clocklock MONOTONIC held, deadline in the past",
	    pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &ts), ETIMEDOUT);
	ts = conf_deadline(CLOCK_MONOTONIC, 20);
	conf_err("clocklock MONOTONIC held, 20ms deadline",
	    pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &ts), ETIMEDOUT);
	conf_ok("clocklock returned at or after its deadline",
	    conf_ts_ge(conf_now(CLOCK_MONOTONIC), ts));
	conf_err("holder unlocks", other_do(&o, OP_RELEASE), 0);
	rc = pthread_mutex_trylock(&m);
	conf_err("trylock once free", rc, 0);
	if (rc == 0)
		pthread_mutex_unlock(&m);
	other_stop(&o);
	pthread_mutex_destroy(&m);
}

/* A timed lock that the holder releases before the deadline. */
static void *
hold_a_while(void *arg)
{
	pthread_mutex_t *m = arg;

	pthread_mutex_lock(m);
	conf_msleep(20);
	pthread_mutex_unlock(m);
	return (NULL);
}

static void
check_timed_success(void)
{
	pthread_mutex_t m;
	struct timespec ts;
	pthread_t t;
	int rc;

	conf_must("mutex_init", pthread_mutex_init(&m, NULL));
	conf_create(&t, NULL, hold_a_while, &m);
	/* Wait for the helper to own it, then block in timedlock. */
	while ((rc = pthread_mutex_trylock(&m)) == 0) {
		pthread_mutex_unlock(&m);
		sched_yield();
	}
	ts = conf_deadline(CLOCK_REALTIME, 30000);
	conf_err("timedlock gets the mutex when the holder unlocks",
	    pthread_mutex_timedlock(&m, &ts), 0);
	pthread_mutex_unlock(&m);
	conf_join(t);
	pthread_mutex_destroy(&m);
}

static void
check_attrs(void)
{
	pthread_mutexattr_t a;
	int types[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE,
	    PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_DEFAULT};
	int i, v, errs = 0;

	conf_must("mutexattr_init", pthread_mutexattr_init(&a));
	conf_err("mutexattr_settype 12345",
	    pthread_mutexattr_settype(&a, 12345), EINVAL);
	for (i = 0; i < 4; i++) {
		if (pthread_mutexattr_settype(&a, types[i]) != 0 ||
		    pthread_mutexattr_gettype(&a, &v) != 0 || v != types[i])
			errs++;
	}
	conf_long("mutexattr settype/gettype round trip: errors", errs, 0);
	conf_err("mutexattr_setprotocol PRIO_INHERIT",
	    pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), 0);
	conf_ok("mutexattr_getprotocol PRIO_INHERIT",
	    pthread_mutexattr_getprotocol(&a, &v) == 0 &&
		v == PTHREAD_PRIO_INHERIT);
	pthread_mutexattr_destroy(&a);
}

static void
check_spin(void)
{
	pthread_spinlock_t s;

	conf_must("spin_init", pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE));
	conf_err("spin_trylock free", pthread_spin_trylock(&s), 0);
	conf_err("spin_trylock held", pthread_spin_trylock(&s), EBUSY);
	conf_err("spin_unlock", pthread_spin_unlock(&s), 0);
	conf_err("spin_lock", pthread_spin_lock(&s), 0);
	conf_err("spin_unlock", pthread_spin_unlock(&s), 0);
	conf_err("spin_destroy", pthread_spin_destroy(&s), 0);
}

/* glibc's static initializers for the other types. */
static void
check_static_initializers(void)
{
	static pthread_mutex_t rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t ec = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
	static pthread_mutex_t ad = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
	struct timespec ts;

	conf_err("static recursive: lock", pthread_mutex_lock(&rec), 0);
	conf_err("static recursive: lock again", pthread_mutex_lock(&rec), 0);
	conf_err("static recursive: trylock by owner",
	    pthread_mutex_trylock(&rec), 0);
	ts = conf_deadline(CLOCK_REALTIME, -1000);
	conf_err("static recursive: timedlock by owner, past deadline",
	    pthread_mutex_timedlock(&rec, &ts), 0);
	conf_err("static recursive: 4 unlocks",
	    pthread_mutex_unlock(&rec) | pthread_mutex_unlock(&rec) |
		pthread_mutex_unlock(&rec) | pthread_mutex_unlock(&rec),
	    0);
	conf_err("static recursive: fifth unlock", pthread_mutex_unlock(&rec),
	    EPERM);
	conf_err("static errorcheck: unlock while unlocked",
	    pthread_mutex_unlock(&ec), EPERM);
	conf_err("static errorcheck: lock", pthread_mutex_lock(&ec), 0);
	conf_err("static errorcheck: relock", pthread_mutex_lock(&ec), EDEADLK);
	ts = conf_deadline(CLOCK_REALTIME, 10000);
	conf_err("static errorcheck: timedlock by owner",
	    pthread_mutex_timedlock(&ec, &ts), EDEADLK);
	conf_err("static errorcheck: unlock", pthread_mutex_unlock(&ec), 0);
	conf_err("static adaptive: lock", pthread_mutex_lock(&ad), 0);
	conf_err("static adaptive: trylock held", pthread_mutex_trylock(&ad),
	    EBUSY);
	conf_err("static adaptive: unlock", pthread_mutex_unlock(&ad), 0);
	hammer("static adaptive", &ad, NULL, PLAIN, 8);
}

/*
 * The last user of a mutex may destroy it and reuse the memory as soon
 * as it holds it: the unlock that handed it over must not write to it
 * afterwards.  The memory is filled with a pattern that must survive.
 */
#define HANDOVERS 200

struct box {
	pthread_mutex_t m;
	struct conf_step locked;
};

static int box_destroy_errs, box_corrupt;

static void *
last_user(void *arg)
{
	struct box *b = arg;
	const unsigned char *p = (const unsigned char *)&b->m;
	size_t i;

	/* Blocks until the first user unlocks (it holds the mutex). */
	conf_step_wait(&b->locked, 1);
	pthread_mutex_lock(&b->m);
	pthread_mutex_unlock(&b->m);
	if (pthread_mutex_destroy(&b->m) != 0)
		box_destroy_errs++;
	memset(&b->m, 0x5a, sizeof(b->m));
	conf_step_set(&b->locked, 2);
	conf_step_wait(&b->locked, 3);
	for (i = 0; i < sizeof(b->m); i++)
		if (p[i] != 0x5a)
			box_corrupt++;
	return (NULL);
}

static void
check_handover_destroy(void)
{
	struct box *b;
	pthread_t t;
	int n;

	for (n = 0; n < HANDOVERS; n++) {
		if ((b = calloc(1, sizeof(*b))) == NULL)
			conf_must("calloc", ENOMEM);
		pthread_mutex_init(&b->m, NULL);
		b->locked = (struct conf_step)CONF_STEP_INIT;
		pthread_mutex_lock(&b->m);
		conf_create(&t, NULL, last_user, b);
		conf_step_set(&b->locked, 1);
		if (n % 2)
			conf_msleep(1); /* let it block in lock */
		pthread_mutex_unlock(&b->m);
		conf_step_wait(&b->locked, 2);
		conf_step_set(&b->locked, 3);
		conf_join(t);
		free(b);
	}
	conf_long("mutex destroyed by the next owner (200 times): destroy "
		  "errors",
	    box_destroy_errs, 0);
	conf_long("bytes written after the memory was reused", box_corrupt, 0);
}

/* glibc's default and normal mutexes check no owner at unlock: another
 * thread's unlock releases the mutex, for a waiter too. */
static void *
waits_for(void *arg)
{
	pthread_mutex_t *m = arg;
	int r = pthread_mutex_lock(m);

	if (r == 0)
		pthread_mutex_unlock(m);
	return ((void *)(long)r);
}

static void
check_unlock_by_other(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, n;
	struct other o;
	pthread_t w;

	other_start(&o, &m);
	conf_err("default: another thread locks", other_do(&o, OP_LOCK_HOLD),
	    0);
	conf_err("default: main, not the owner, unlocks",
	    pthread_mutex_unlock(&m), 0);
	conf_err("default: free after it", pthread_mutex_trylock(&m), 0);
	conf_create(&w, NULL, waits_for, &m);
	conf_err("default: another thread unlocks what main holds",
	    other_do(&o, OP_UNLOCK), 0);
	conf_long("default: a waiter takes it then", (long)conf_join(w), 0);
	other_stop(&o);

	init_type(&n, PTHREAD_MUTEX_NORMAL, PTHREAD_PRIO_NONE);
	other_start(&o, &n);
	conf_err("normal: another thread locks", other_do(&o, OP_LOCK_HOLD), 0);
	conf_err("normal: main, not the owner, unlocks",
	    pthread_mutex_unlock(&n), 0);
	conf_err("normal: free after it", pthread_mutex_trylock(&n), 0);
	conf_err("normal: main unlocks", pthread_mutex_unlock(&n), 0);
	other_stop(&o);
	pthread_mutex_destroy(&n);
}

/* A default mutex relocked by its owner waits for ever, as glibc's
 * does; a signal's handler runs meanwhile, and an asynchronous cancel
 * ends the thread. */
static pthread_mutex_t relocked = PTHREAD_MUTEX_INITIALIZER;
static atomic_int relock_ready, relock_handled;

static void
on_usr2_relock(int sig)
{
	(void)sig;
	atomic_store(&relock_handled, 1);
}

static void *
relocker(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	pthread_mutex_lock(&relocked);
	atomic_store(&relock_ready, 1);
	pthread_mutex_lock(&relocked);
	return (NULL);
}

static void
check_relock_wait(void)
{
	struct sigaction sa;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2_relock;
	sigemptyset(&sa.sa_mask);
	conf_must("sigaction", sigaction(SIGUSR2, &sa, NULL));
	conf_create(&t, NULL, relocker, NULL);
	while (!atomic_load(&relock_ready))
		conf_msleep(1);
	conf_err("pthread_kill the relocking thread", pthread_kill(t, SIGUSR2),
	    0);
	for (int i = 0; i < 10000 && !atomic_load(&relock_handled); i++)
		conf_msleep(1);
	conf_long("its handler ran", atomic_load(&relock_handled), 1);
	conf_err("pthread_cancel it (asynchronous)", pthread_cancel(t), 0);
	conf_ok("it ended cancelled", conf_join(t) == PTHREAD_CANCELED);
}

int
main(void)
{
	conf_begin("mutex");
	check_static_initializers();
	check_handover_destroy();
	check_attrs();
	check_errorcheck();
	check_recursive();
	check_unlock_by_other();
	check_relock_wait();
	check_timed();
	check_timed_success();
	check_spin();
	check_hammers();
	return (conf_end());
}
