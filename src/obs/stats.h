/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Run-queue delay and the ULT_STATS report (stats.c).
 */
#ifndef ULT_CORE_STATS_H
#define ULT_CORE_STATS_H

#include <stdint.h>

#include "../util/atomic.h"

struct ult_thread;

/* ULT_STATS=1: a histogram per uthread and the report at the end. */
extern int ult__stats_on;

/* Power-of-two buckets cut in four (sub-buckets 25% wide). */
#define STATS_HIST_BUCKETS 256
void ult__stats_hist_add(uint32_t *h, uint64_t ns);

/*
 * A uthread's figures (struct ult_thread's part), read by
 * ult_thread_info and the report (s, a).  Run-queue delay, from becoming
 * runnable to running: rq_ns is written by whoever makes the thread
 * runnable, under its thread lock, and read at its next switch-in; the
 * sums by the thread's own switch-in.
 */
struct ult__stats_part {
	atomic_uint_fast64_t runtime_ns, nvcsw, nivcsw, nmigrations;
	uint64_t rq_ns;
	atomic_uint_fast64_t rqd_sum, rqd_n, rqd_max;
	uint32_t *rqd_hist; /* (c) ULT_STATS's histogram, or NULL */
};

/* Read ULT_STATS (0, or EINVAL for a value other than 0 or 1). */
int ult__stats_configure(void);
/* A thread struct is set up for a new uthread / freed for good. */
void ult__stats_thread_init(struct ult_thread *ut);
void ult__stats_thread_free(struct ult_thread *ut);
/* ut exits: keep its figures for the report. */
void ult__stats_exit(struct ult_thread *ut);
/* Print the report to stderr (once per ult_init; later calls do
 * nothing), then forget the exited threads' figures. */
void ult__stats_report(void);

struct ult__subsys;
extern const struct ult__subsys ult__stats_subsys;

#endif
