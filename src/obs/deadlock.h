/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef ULT_OBS_DEADLOCK_H
#define ULT_OBS_DEADLOCK_H

#include <stdio.h>

/* deadlock.c: print each cycle of uthreads that wait for locks the next
 * one owns to f, each line starting with prefix; returns the number of
 * cycles.  Takes the slab's lock and each uthread's lock in turn (not
 * for hang reports).  Context: any thread outside the runtime's locks. */
int ult__deadlock_report(FILE *f, const char *prefix);

#endif
