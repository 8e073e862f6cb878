/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unnamed semaphores: counts through posts and waits from many threads,
 * a semaphore as a limit on how many are inside, trywait/timedwait/
 * clockwait and their errors (errno), sem_init and sem_post limits.
 */
#include "conf.h"

#include <limits.h>
#include <semaphore.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#define NPOST 8
#define NWAIT 8
#define PER 2000

static sem_t s;
static atomic_int errors;

static void *
poster(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < PER; i++) {
		if (sem_post(&s) != 0)
			atomic_fetch_add(&errors, 1);
		if (i % 100 == 0)
			sched_yield();
	}
	return (NULL);
}

static void *
waiter(void *arg)
{
	struct timespec ts;
	int i, r;

	for (i = 0; i < PER; i++) {
		switch (((intptr_t)arg + i) % 3) {
		case 0:
			r = sem_wait(&s);
			break;
		case 1:
			ts = conf_deadline(CLOCK_REALTIME, 60000);
			r = sem_timedwait(&s, &ts);
			break;
		default:
			while ((r = sem_trywait(&s)) != 0 && errno == EAGAIN)
				sched_yield();
			break;
		}
		if (r != 0)
			atomic_fetch_add(&errors, 1);
	}
	return (NULL);
}

static void
check_counts(void)
{
	pthread_t p[NPOST], w[NWAIT];
	int i, v = -1;

	conf_must("sem_init", sem_init(&s, 0, 0));
	for (i = 0; i < NWAIT; i++)
		conf_create(&w[i], NULL, waiter, (void *)(intptr_t)i);
	for (i = 0; i < NPOST; i++)
		conf_create(&p[i], NULL, poster, NULL);
	for (i = 0; i < NPOST; i++)
		conf_join(p[i]);
	for (i = 0; i < NWAIT; i++)
		conf_join(w[i]);
	conf_long("8 posters x 2000, 8 waiters x 2000: errors",
	    atomic_load(&errors), 0);
	sem_getvalue(&s, &v);
	conf_long("value after", v, 0);
	for (i = 0; i < 5; i++)
		sem_post(&s);
	sem_getvalue(&s, &v);
	conf_long("value after 5 posts", v, 5);
	conf_err("sem_trywait with value 5", conf_rc_errno(sem_trywait(&s)), 0);
	sem_getvalue(&s, &v);
	conf_long("value after a trywait", v, 4);
	conf_err("sem_destroy", conf_rc_errno(sem_destroy(&s)), 0);
}

/* At most LIMIT threads between sem_wait and sem_post. */
#define LIMIT 3
#define NLIM 16

static sem_t lim;
static atomic_int inside, max_inside, passes;

static void *
limited(void *arg)
{
	int i, n, m;

	(void)arg;
	for (i = 0; i < 300; i++) {
		if (sem_wait(&lim) != 0) {
			atomic_fetch_add(&errors, 1);
			continue;
		}
		n = atomic_fetch_add(&inside, 1) + 1;
		m = atomic_load(&max_inside);
		while (
		    n > m && !atomic_compare_exchange_weak(&max_inside, &m, n))
			;
		if (i % 3 == 0)
			sched_yield();
		atomic_fetch_add(&passes, 1);
		atomic_fetch_sub(&inside, 1);
		sem_post(&lim);
	}
	return (NULL);
}

static void
check_limit(void)
{
	pthread_t t[NLIM];
	int i, v = -1;

	atomic_store(&errors, 0);
	conf_must("sem_init", sem_init(&lim, 0, LIMIT));
	for (i = 0; i < NLIM; i++)
		conf_create(&t[i], NULL, limited, NULL);
	for (i = 0; i < NLIM; i++)
		conf_join(t[i]);
	conf_long("16 threads through a semaphore of 3: passes",
	    atomic_load(&passes), NLIM * 300);
	conf_ok("never more than 3 inside", atomic_load(&max_inside) <= LIMIT);
	conf_long("errors", atomic_load(&errors), 0);
	sem_getvalue(&lim, &v);
	conf_long("value restored", v, LIMIT);
	sem_destroy(&lim);
}

/* A waiter blocked at 0 is woken by a post from another thread. */
static void *
post_later(void *arg)
{
	conf_msleep(10);
	sem_post(arg);
	return (NULL);
}

static void
check_errors(void)
{
	struct timespec ts;
	pthread_t t;
	sem_t z;
	int v;

	conf_err("sem_init value SEM_VALUE_MAX + 1",
	    conf_rc_errno(sem_init(&z, 0, (unsigned)SEM_VALUE_MAX + 1)),
	    EINVAL);
	conf_must("sem_init 0", sem_init(&z, 0, 0));
	conf_err("sem_trywait at 0", conf_rc_errno(sem_trywait(&z)), EAGAIN);
	ts = conf_deadline(CLOCK_REALTIME, -1000);
	conf_err("sem_timedwait at 0, deadline in the past",
	    conf_rc_errno(sem_timedwait(&z, &ts)), ETIMEDOUT);
	ts = conf_deadline(CLOCK_REALTIME, 20);
	conf_err("sem_timedwait at 0, 20ms",
	    conf_rc_errno(sem_timedwait(&z, &ts)), ETIMEDOUT);
	conf_ok("sem_timedwait returned after its deadline",
	    conf_ts_ge(conf_now(CLOCK_REALTIME), ts));
	ts = conf_deadline(CLOCK_MONOTONIC, -1000);
	conf_err("sem_clockwait MONOTONIC at 0, deadline in the past",
	    conf_rc_errno(sem_clockwait(&z, CLOCK_MONOTONIC, &ts)), ETIMEDOUT);
	ts = conf_deadline(CLOCK_MONOTONIC, 20);
	conf_err("sem_clockwait MONOTONIC at 0, 20ms",
	    conf_rc_errno(sem_clockwait(&z, CLOCK_MONOTONIC, &ts)), ETIMEDOUT);
	conf_ok("sem_clockwait returned after its deadline",
	    conf_ts_ge(conf_now(CLOCK_MONOTONIC), ts));
	ts = conf_now(CLOCK_REALTIME);
	ts.tv_nsec = 1000000000L;
	conf_err("sem_timedwait at 0, tv_nsec 1e9",
	    conf_rc_errno(sem_timedwait(&z, &ts)), EINVAL);
	sem_getvalue(&z, &v);
	conf_long("value still 0", v, 0);

	conf_create(&t, NULL, post_later, &z);
	conf_err("sem_wait at 0 woken by another thread's post",
	    conf_rc_errno(sem_wait(&z)), 0);
	conf_join(t);
	conf_create(&t, NULL, post_later, &z);
	ts = conf_deadline(CLOCK_REALTIME, 30000);
	conf_err("sem_timedwait at 0 woken before its deadline",
	    conf_rc_errno(sem_timedwait(&z, &ts)), 0);
	conf_join(t);
	sem_destroy(&z);

	conf_must("sem_init SEM_VALUE_MAX",
	    sem_init(&z, 0, (unsigned)SEM_VALUE_MAX));
	conf_err("sem_post at SEM_VALUE_MAX", conf_rc_errno(sem_post(&z)),
	    EOVERFLOW);
	sem_getvalue(&z, &v);
	conf_ok("value still SEM_VALUE_MAX", v == SEM_VALUE_MAX);
	sem_destroy(&z);
}

/*
 * POSIX: a semaphore nobody is blocked on may be destroyed; the woken
 * waiter destroys it and reuses the memory while the post that woke it
 * may still be returning.  Nothing may be written there afterwards.
 */
#define HANDOFFS 200

struct sbox {
	sem_t s;
	int destroy_rc;
};

static void *
destroys_after_wait(void *arg)
{
	struct sbox *b = arg;

	if (sem_wait(&b->s) != 0) {
		b->destroy_rc = -2;
		return (NULL);
	}
	b->destroy_rc = sem_destroy(&b->s);
	memset(&b->s, 0x5a, sizeof(b->s));
	return (NULL);
}

static void
check_destroy_after_post(void)
{
	const unsigned char *p;
	struct sbox *b;
	pthread_t t;
	int n, i, errs = 0, corrupt = 0;

	for (n = 0; n < HANDOFFS; n++) {
		if ((b = calloc(1, sizeof(*b))) == NULL)
			conf_must("calloc", ENOMEM);
		conf_must("sem_init", sem_init(&b->s, 0, 0));
		conf_create(&t, NULL, destroys_after_wait, b);
		if (n % 2)
			conf_msleep(1); /* let it block in sem_wait */
		errs += sem_post(&b->s) != 0;
		conf_join(t);
		errs += b->destroy_rc != 0;
		p = (const unsigned char *)&b->s;
		for (i = 0; i < (int)sizeof(b->s); i++)
			corrupt += p[i] != 0x5a;
		free(b);
	}
	conf_long("semaphore destroyed by its woken waiter (200 times): errors",
	    errs, 0);
	conf_long("bytes written after the memory was reused", corrupt, 0);
}

int
main(void)
{
	conf_begin("sem");
	check_errors();
	check_counts();
	check_limit();
	check_destroy_after_post();
	return (conf_end());
}
