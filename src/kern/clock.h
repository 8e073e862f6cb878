/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The clock thread (clock.c): it plays the clock interrupt, runs the
 * timers and drives the preemption and handoff ticks.
 */
#ifndef ULT_KERN_CLOCK_H
#define ULT_KERN_CLOCK_H

#include <stdint.h>

/* clock.c: the thread that plays the clock interrupt */
int ult__clock_start(void);
void ult__clock_stop(void);
void ult__clock_kick(uint64_t deadline_ns);
/* Wake the clock thread to look at its state again (I/O was armed). */
void ult__clock_rearm(void);

#endif
