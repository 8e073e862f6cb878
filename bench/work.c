/*
 * Helpers shared by the benchmark programs; see work.h.
 *
 * Busy work is a calibrated loop, not a wall-clock spin: a thread that
 * loses its CPU to another then takes longer to finish its work, which
 * is what the programs measure.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

int
bw_selected(int argc, char **argv, const char *name, const char *const *set,
    int nset)
{
	int any = 0;

	for (int i = 1; i < argc; i++)
		for (int k = 0; k < nset; k++)
			if (strcmp(argv[i], set[k]) == 0) {
				any = 1;
				if (strcmp(argv[i], name) == 0)
					return (1);
			}
	return (!any);
}
