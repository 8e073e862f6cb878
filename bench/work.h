/*
 * Helpers shared by the benchmark programs (hint, nice, latency, make,
 * micro): a clock, a calibrated busy loop and qsort comparators.
 */
#ifndef BENCH_WORK_H
#define BENCH_WORK_H

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

/* Whether a run named `name', one of the nset names in set, is selected
 * by the command line: yes if it is named there, or if no name of the set
 * is (so "make j4 ult" runs one case on one runtime). */
int bw_selected(int argc, char **argv, const char *name, const char *const *set,
    int nset);

/* Ascending order for qsort(). */
int bw_cmp_u64(const void *a, const void *b);
int bw_cmp_double(const void *a, const void *b);

#endif /* BENCH_WORK_H */
