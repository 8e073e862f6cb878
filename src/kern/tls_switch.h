/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The switch's side of per-uthread TLS (tls.h): what a switch-in writes
 * into the incoming thread's block and when it moves the thread pointer.
 */
#ifndef ULT_KERN_TLS_SWITCH_H
#define ULT_KERN_TLS_SWITCH_H

#include "tls.h"
#include "uthread.h"
#include "worker.h"

/*
 * The switch-in: what belongs to the kernel thread is written into the
 * incoming block, then the thread pointer moves to it.  Only once `to'
 * has been released by the worker that ran it last: until then that
 * worker may still run on the block (signal handlers included).
 */
static inline void
ult__tls_load(struct ult__worker *w, struct ult_thread *to)
{
#ifdef ULT_TLS_SWITCH
	char *tp = to->tls;

	/* The block holds this worker's words already if this worker loaded
	 * it last: a uthread that stays put (the common case) pays only the
	 * thread pointer write. */
	if (to != &w->idle && to->tls_w != w) {
		to->tls_w = w;
		*(int *)(tp + ult__tls_off.tid) = ULT_LD(&w->tid);
		*(struct ult__worker **)(tp + ult__tls_off.worker) = w;
		if (ult__tls_off.tcache != 0) {
			*(void **)(tp + ult__tls_off.tcache) = w->tls_tcache;
			*(void **)(tp + ult__tls_off.arena) = w->tls_arena;
		}
	}
	ult__tp_write(tp);
#else
	(void)w;
	(void)to;
#endif
}

/*
 * switch_mid, before it releases the outgoing thread: after the release
 * another worker may run that thread, so this kernel thread's thread
 * pointer must name another block by then.  Usually the incoming thread
 * has sat in a run queue and is released already: load it now, one write
 * of the thread pointer (returns 1).  Otherwise move to the worker's own
 * descriptor until it is released (the caller loads it then).
 */
static inline int
ult__tls_mid_early(struct ult__worker *w)
{
	struct ult_thread *to = w->curthread;

	if (ULT_LD_ACQ(&to->td.td_lock) != &blocked_lock) {
		ult__tls_load(w, to);
		return (1);
	}
#ifdef ULT_TLS_SWITCH
	if (w->sw_prev != &w->idle)
		ult__tp_write(w->tls_tp);
#endif
	return (0);
}

#endif
