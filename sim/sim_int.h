/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What sim.c and its sub-tick engine (sim_fine.c) share.
 */
#ifndef ULT_SIM_INT_H
#define ULT_SIM_INT_H

#include "sim.h"

extern struct sim
    *ult__sim; /* the one simulation (machine.h has no argument) */
#define S ult__sim
extern struct mtx ult__sim_sleep_lock;

/* The thread on cpu gives up the CPU (its lock held): policy switch. */
void ult__sim_switch(struct sim *s, int cpu, int flags);
/* The thread on cpu blocks until sim_wake() (wake_at: never). */
void ult__sim_block(struct sim *s, int cpu);
/* cpu's "return to user mode" checks: IPIs, owed preemptions, ASTs. */
void ult__sim_userret(struct sim *s, int cpu);
/* cpu's idle loop, once. */
void ult__sim_idle(struct sim *s, int cpu);
/* Run the yielders up to end_ns (sim_fine.c). */
void ult__sim_fine_run(struct sim *s, int64_t end_ns);
void ult__sim_fine_free(struct sim *s);
/* A yielder's first step: pick its event's mutex. */
void ult__sim_yielder_start(struct sim *s, struct sim_thread *t);

#endif
