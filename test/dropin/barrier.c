/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Barriers: nobody leaves a round before everyone has arrived, exactly
 * one PTHREAD_BARRIER_SERIAL_THREAD per round, reuse across many rounds,
 * re-initialisation with another count, and count 0 refused.
 */
#include "conf.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#define NTHREADS 16
#define ROUNDS 200

static pthread_barrier_t bar;
static atomic_int arrived[ROUNDS], serial[ROUNDS];
static atomic_int early, bad_rc;
static int nthreads;

static void *
rounds(void *arg)
{
	int r, rc;

	for (r = 0; r < ROUNDS; r++) {
		atomic_fetch_add(&arrived[r], 1);
		if (((intptr_t)arg + r) % 7 == 0)
			sched_yield();
		rc = pthread_barrier_wait(&bar);
		if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
			atomic_fetch_add(&serial[r], 1);
		else if (rc != 0)
			atomic_fetch_add(&bad_rc, 1);
		/* Everyone of this round is in, whoever left first. */
		if (atomic_load(&arrived[r]) != nthreads)
			atomic_fetch_add(&early, 1);
	}
	return (NULL);
}

static void
run_rounds(int n, int main_joins)
{
	pthread_t t[NTHREADS];
	int i, r, not_one = 0;
	char what[96];

	nthreads = n;
	for (r = 0; r < ROUNDS; r++) {
		atomic_store(&arrived[r], 0);
		atomic_store(&serial[r], 0);
	}
	atomic_store(&early, 0);
	atomic_store(&bad_rc, 0);
	conf_must("barrier_init",
	    pthread_barrier_init(&bar, NULL, (unsigned)n));
	for (i = 0; i < n - main_joins; i++)
		conf_create(&t[i], NULL, rounds, (void *)(intptr_t)i);
	if (main_joins)
		rounds((void *)(intptr_t)(n - 1));
	for (i = 0; i < n - main_joins; i++)
		conf_join(t[i]);
	for (r = 0; r < ROUNDS; r++)
		not_one += atomic_load(&serial[r]) != 1;
	snprintf(what, sizeof(what),
	    "%d threads%s, 200 rounds: rounds without exactly one serial "
	    "thread",
	    n, main_joins ? " (main among them)" : "");
	conf_long(what, not_one, 0);
	snprintf(what, sizeof(what), "%d threads: left before all arrived", n);
	conf_long(what, atomic_load(&early), 0);
	snprintf(what, sizeof(what), "%d threads: other return values", n);
	conf_long(what, atomic_load(&bad_rc), 0);
	conf_err("barrier_destroy", pthread_barrier_destroy(&bar), 0);
}

static void
check_errors(void)
{
	pthread_barrierattr_t a;
	pthread_barrier_t b;
	int i, serials = 0, pshared;

	conf_err("barrier_init count 0", pthread_barrier_init(&b, NULL, 0),
	    EINVAL);
	conf_err("barrier_init count 1", pthread_barrier_init(&b, NULL, 1), 0);
	for (i = 0; i < 10; i++)
		serials +=
		    pthread_barrier_wait(&b) == PTHREAD_BARRIER_SERIAL_THREAD;
	conf_long("count 1: 10 waits, serial each time", serials, 10);
	conf_err("barrier_destroy", pthread_barrier_destroy(&b), 0);
	conf_must("barrierattr_init", pthread_barrierattr_init(&a));
	conf_ok("barrierattr default PROCESS_PRIVATE",
	    pthread_barrierattr_getpshared(&a, &pshared) == 0 &&
		pshared == PTHREAD_PROCESS_PRIVATE);
	conf_err("barrier_init with a private attr",
	    pthread_barrier_init(&b, &a, 2), 0);
	conf_err("barrier_destroy", pthread_barrier_destroy(&b), 0);
	pthread_barrierattr_destroy(&a);
}

/*
 * The serial thread destroys the barrier and reuses its memory as soon
 * as its wait returns, while the others may still be on their way out of
 * theirs (glibc's destroy waits for them): nothing may be written there
 * afterwards.
 */
#define NDESTROY 4
#define DESTROY_ROUNDS 100

struct bbox {
	pthread_barrier_t b;
	atomic_int destroy_errs;
};

static void *
destroying_waiter(void *arg)
{
	struct bbox *x = arg;
	int r = pthread_barrier_wait(&x->b);

	if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
		if (pthread_barrier_destroy(&x->b) != 0)
			atomic_fetch_add(&x->destroy_errs, 1);
		memset(&x->b, 0x5a, sizeof(x->b));
	} else if (r != 0) {
		atomic_fetch_add(&x->destroy_errs, 1);
	}
	return (NULL);
}

static void
check_destroy_by_serial(void)
{
	pthread_t t[NDESTROY];
	const unsigned char *p;
	struct bbox *x;
	int n, i, errs = 0, corrupt = 0;

	for (n = 0; n < DESTROY_ROUNDS; n++) {
		if ((x = calloc(1, sizeof(*x))) == NULL)
			conf_must("calloc", ENOMEM);
		conf_must("barrier_init",
		    pthread_barrier_init(&x->b, NULL, NDESTROY));
		for (i = 0; i < NDESTROY; i++)
			conf_create(&t[i], NULL, destroying_waiter, x);
		for (i = 0; i < NDESTROY; i++)
			conf_join(t[i]);
		errs += atomic_load(&x->destroy_errs);
		p = (const unsigned char *)&x->b;
		for (i = 0; i < (int)sizeof(x->b); i++)
			corrupt += p[i] != 0x5a;
		free(x);
	}
	conf_long("barrier destroyed by its serial thread (100 times): errors",
	    errs, 0);
	conf_long("bytes written after the memory was reused", corrupt, 0);
}

int
main(void)
{
	conf_begin("barrier");
	check_errors();
	run_rounds(NTHREADS, 0);
	/* The same object again, another count, and main taking part. */
	run_rounds(5, 1);
	run_rounds(2, 0);
	check_destroy_by_serial();
	return (conf_end());
}
