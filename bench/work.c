/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the benchmark programs; see work.h.
 *
 * Busy work is a calibrated loop, not a wall-clock spin: a thread that
 * loses its CPU to another then takes longer to finish its work, which
 * is what the programs measure.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "contract.h"
#include "work.h"

/* Tries of the calibration, and iterations a try (about 0.5 ms). */
#define CAL_TRIES 15
#define CAL_ITERS 2000000ul

uint64_t
bw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

/*
 * The volatile accumulator keeps the loop from being folded away; it is
 * local, on the caller's stack, because a shared one would make every
 * iteration pay for cache-line ping-pong between the CPUs that spin.
 */
unsigned long
bw_spin(unsigned long n)
{
	volatile unsigned long sink = 0;

	for (unsigned long i = 0; i < n; i++)
		sink += i;
	return (sink);
}

/*
 * The best of several short tries, after one untimed to warm up: the
 * machine is shared, and interference (preemption, interrupts, a slow
 * clock ramp) only ever slows a try down, so the fastest is the truest.
 */
double
bw_calibrate(void)
{
	uint64_t best = UINT64_MAX;

	bw_spin(CAL_ITERS);
	for (int i = 0; i < CAL_TRIES; i++) {
		uint64_t t0 = bw_now_ns(), d;

		bw_spin(CAL_ITERS);
		d = bw_now_ns() - t0;
		if (d < best)
			best = d;
	}
	return ((double)CAL_ITERS * 1000.0 / (double)(best ? best : 1));
}

void
bw_busy_us(double us, double per_us)
{
	bw_spin((unsigned long)(us * per_us));
}

int
bw_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

int
bw_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

double
bw_median(const double *v, int n)
{
	double *s = malloc((size_t)n * sizeof(*s)), m;

	if (s == NULL)
		bw_die("out of memory");
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), bw_cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return (m);
}

/* The rounding up tolerates p * n landing a hair above a whole number. */
size_t
bw_rank(size_t n, double p)
{
	long k = (long)((p * (double)n) + 0.999999);

	if (k < 1)
		k = 1;
	if (k > (long)n)
		k = (long)n;
	return ((size_t)k - 1);
}

int
bw_ncpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		return (CPU_COUNT(&set));
	return ((int)sysconf(_SC_NPROCESSORS_ONLN));
}

int
bw_first_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				return (c);
	return (0);
}

int
bw_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return (pthread_setaffinity_np(pthread_self(), sizeof(set), &set));
}

static char watchdog_msg[128];

static void
on_alarm(int sig)
{
	(void)sig;
	if (write(2, watchdog_msg, strlen(watchdog_msg)) < 0)
		_exit(3);
	_exit(3);
}

void
bw_watchdog(const char *prog)
{
	struct sigaction sa;

	snprintf(watchdog_msg, sizeof(watchdog_msg),
	    "%s: a run did not finish in time (hang?)\n", prog);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
}
