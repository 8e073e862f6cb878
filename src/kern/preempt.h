/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Preemption (preempt.c, DESIGN.md section 6): the clock's signal to a
 * worker whose uthread has run its slice, honoured at safe points, and
 * the schedctl hints that defer it.
 */
#ifndef ULT_KERN_PREEMPT_H
#define ULT_KERN_PREEMPT_H

#include <stdint.h>

#include "../util/atomic.h"

struct ult_thread;

/* A uthread's preemption state (struct ult_thread's part): (s, a), plain
 * loads and stores in effect; atomic because reports and tests read them. */
struct ult__preempt_part {
	atomic_int nopreempt; /* locks held through libc (preempt_shim.c) */
	atomic_int sc_nest;   /* ult_schedctl_start depth */
	atomic_int sc_owed;   /* a preemption was deferred by schedctl */
	atomic_uint_fast64_t sc_since; /* first deferral of this region */
	atomic_uint_fast64_t sc_deferred, sc_forced;
	int preempt_pinned; /* (t) td_pinned holds one for a preemption */
};

int ult__preempt_init(void);
void ult__preempt_fini(void);
void ult__preempt_kick(int cpu);
/* The drop-in's asynchronous cancellation (async.c): is one due for the
 * current uthread, and act on it at a safe point (may not return). */
extern int (*ult__preempt_hook_due)(void);
extern void (*ult__preempt_hook_run)(void);
void ult__preempt_retry(int cpu);
void ult__preempt_switching(struct ult_thread *ut, int flags);
/* Program signals at preemption's safe points (preempt.c; the drop-in's):
 * the hook says, with a NULL context, whether ut has any due, and runs
 * them given the interrupted one. */
extern int (*_Atomic ult__preempt_sig_hook)(struct ult_thread *, void *);
int ult__preempt_safe_point(void *uc);
void ult__preempt_owe(void);
void ult__preempt_kick_thread(struct ult_thread *ut);
void ult__preempt_frame_fix(void *uc);
extern atomic_int ult__preempt_migrate;
extern atomic_int ult__schedctl_bound_us;

#endif
