/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef ULT_KERN_HANDOFF_H
#define ULT_KERN_HANDOFF_H

#include "../util/atomic.h"

struct ult__worker;

/* handoff.c: the clock thread's look at a busy worker at a stat tick: one
 * that has run the same uthread for ult.handoff_us while its kernel thread
 * sleeps is blocked in the kernel, and its queue goes to the others. */
extern atomic_int ult__handoff_us;
void ult__handoff_tick(int cpu);
void ult__handoff_set(struct ult__worker *w, int on);
void ult__handoff_init(void);
void ult__handoff_fini(void);
/* The spare worker in or out of service, after a round of ticks. */
void ult__handoff_spare(void);
long ult__handoff_spare_runs(void); /* sysctl ult.spare_runs */
long ult__handoff_has_spare(void);  /* sysctl ult.spare */

#endif
