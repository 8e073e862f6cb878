/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the benchmark programs: a clock, a calibrated busy
 * loop, the CPUs the process may use, a watchdog and order statistics.
 */
#ifndef BENCH_WORK_H
#define BENCH_WORK_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bw_now_ns(void);

/* n iterations of the busy loop; the result only keeps the loop alive. */
unsigned long bw_spin(unsigned long n);

/* Iterations of bw_spin() per microsecond, the best of several tries. */
double bw_calibrate(void);

/* About us microseconds of bw_spin() at per_us iterations a microsecond. */
void bw_busy_us(double us, double per_us);

/* From now on SIGALRM ends the program (exit 3) with "<prog>: a run did
 * not finish in time": a hung run fails with a message instead of waiting
 * for a CTest timeout.  Arm it with alarm(). */
void bw_watchdog(const char *prog);

/* Ascending order for qsort(). */
int bw_cmp_u64(const void *a, const void *b);
int bw_cmp_double(const void *a, const void *b);

/* The median of v[0..n-1] (the mean of the middle two for even n); v is
 * left as it is. */
double bw_median(const double *v, int n);

/* The nearest rank for percentile p (0..1) of n sorted samples, as an
 * index: the smallest sample with at least p of them at or below it. */
size_t bw_rank(size_t n, double p);

/* How many CPUs the affinity mask allows (ult's default worker count),
 * and the first of them. */
int bw_ncpus(void);
int bw_first_cpu(void);

/* Pin the calling thread to one CPU; 0 or an errno value. */
int bw_pin(int cpu);

#endif /* BENCH_WORK_H */
