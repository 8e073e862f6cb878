/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Run-queue delay and the ULT_STATS report (stats.c).
 */
#ifndef ULT_CORE_STATS_H
#define ULT_CORE_STATS_H

#include <stdint.h>

#include "../kern/runtime.h"

/* ULT_STATS=1: a histogram per uthread and the report at the end. */
extern int ult__stats_on;

/* Power-of-two buckets cut in four (sub-buckets 25% wide). */
#define STATS_HIST_BUCKETS 256
void ult__stats_hist_add(uint32_t *h, uint64_t ns);

/* ut is switched in at now: charge the time it waited runnable. */
static inline void
ult__stats_rq_delay(struct ult_thread *ut, uint64_t now)
{
	uint64_t d = now > ut->rq_ns ? now - ut->rq_ns : 0;

	ULT_ST(&ut->rqd_sum, ULT_LD(&ut->rqd_sum) + d);
	ULT_ST(&ut->rqd_n, ULT_LD(&ut->rqd_n) + 1);
	if (d > ULT_LD(&ut->rqd_max))
		ULT_ST(&ut->rqd_max, d);
	if (ULT_UNLIKELY(ut->rqd_hist != NULL))
		ult__stats_hist_add(ut->rqd_hist, d);
}

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

#endif
