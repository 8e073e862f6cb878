/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Thread CPU-time clocks: CLOCK_THREAD_CPUTIME_ID counts the calling
 * thread's time only (a new thread starts below its creator, which has
 * computed for 50 ms of its own clock), pthread_getcpuclockid names a
 * clock another thread reads (it has at least what the thread itself
 * read, and it never goes back), clock_getres answers for it, and the
 * clock of a thread that has been joined is gone (EINVAL) once the kernel
 * has released it.
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"

static uint64_t
ns(clockid_t c, int *err)
{
	struct timespec ts;

	*err = clock_gettime(c, &ts) == 0 ? 0 : errno;
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* Computes until its own clock says `want' ns more. */
static uint64_t
spin(uint64_t want)
{
	int err;
	uint64_t start = ns(CLOCK_THREAD_CPUTIME_ID, &err), now = start;
	volatile unsigned long sink = 0;

	while (err == 0 && now - start < want) {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		now = ns(CLOCK_THREAD_CPUTIME_ID, &err);
	}
	return (err == 0 ? now : 0);
}

static void *
at_start(void *arg)
{
	int err;
	uint64_t t = ns(CLOCK_THREAD_CPUTIME_ID, &err);

	(void)arg;
	return ((void *)(uintptr_t)(err == 0 ? t : UINT64_MAX));
}

static pthread_barrier_t bar;
static uint64_t own_view;

static void *
computes(void *arg)
{
	(void)arg;
	own_view = spin(2000000);
	pthread_barrier_wait(&bar); /* it has computed */
	pthread_barrier_wait(&bar); /* main has read its clock */
	return (NULL);
}

int
main(void)
{
	pthread_t t;
	clockid_t c;
	struct timespec res;
	uint64_t mine, a, b;
	int err;

	conf_begin("cpuclock");
	mine = spin(50000000);
	conf_ok("main's own clock advanced as it computed", mine != 0);
	conf_create(&t, NULL, at_start, NULL);
	a = (uint64_t)(uintptr_t)conf_join(t);
	conf_ok("a new thread's clock starts below its creator's",
	    a != UINT64_MAX && a < mine);

	conf_must("pthread_barrier_init", pthread_barrier_init(&bar, NULL, 2));
	conf_create(&t, NULL, computes, NULL);
	conf_err("pthread_getcpuclockid", pthread_getcpuclockid(t, &c), 0);
	pthread_barrier_wait(&bar);
	a = ns(c, &err);
	conf_err("clock_gettime on another thread's clock", err, 0);
	conf_ok("it has what the thread read of its own", a >= own_view);
	b = ns(c, &err);
	conf_ok("and does not go back", err == 0 && b >= a);
	conf_err("clock_getres on it", clock_getres(c, &res) == 0 ? 0 : errno,
	    0);
	pthread_barrier_wait(&bar);
	conf_join(t);
	/* The kernel wakes the joiner as the thread clears its id, a moment
	 * before it releases the task and its clock: natively a read just
	 * after the join may still succeed, so the test waits up to 2 s for
	 * the clock to go. */
	for (int i = 0; i < 2000; i++) {
		(void)ns(c, &err);
		if (err != 0)
			break;
		usleep(1000);
	}
	conf_err("clock_gettime once the thread is joined", err, EINVAL);

	conf_err("pthread_getcpuclockid(self)",
	    pthread_getcpuclockid(pthread_self(), &c), 0);
	a = ns(c, &err);
	conf_ok("main's clock through its id", err == 0 && a >= mine);
	pthread_barrier_destroy(&bar);
	return (conf_end());
}
