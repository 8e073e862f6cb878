/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef ULT_KERN_STEAL_H
#define ULT_KERN_STEAL_H

#include <stdatomic.h>

/* steal.c: how much of its time each worker's kernel thread waits for a
 * CPU the host gives to others, sampled by the clock thread. */
void ult__steal_init(void);
void ult__steal_fini(void);
void ult__steal_tick(void);
/* sysctl ult.steal: 1 (the default) marks workers the host keeps waiting;
 * 0 never marks one (the clock thread's own setting; tests use it). */
extern atomic_int ult__steal_on;

#endif
