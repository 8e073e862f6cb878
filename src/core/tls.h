/*
 * Per-uthread TLS, the runtime's side (DESIGN.md section 10): every
 * uthread runs on a thread block of its own (os/linux/glibc_tls.c), so
 * errno, __thread variables and libc's per-thread state follow it from
 * worker to worker.  A worker's idle loop runs on the worker's own
 * descriptor.  ult__rt.tls says whether this is in force; otherwise all
 * uthreads of a worker share its TLS, as before.
 */
#ifndef ULT_CORE_TLS_H
#define ULT_CORE_TLS_H

#include "runtime.h"

#if defined(ULT_CONTEXT_ASM) && defined(__x86_64__)
#define ULT_TLS_SWITCH 1
#include "../arch/x86_64/fsbase.h"
#endif

/* In fork's child, before anything else (init.c). */
void ult__tls_fork_child(void);

/* Offsets from the thread pointer of the words a switch-in refreshes. */
struct ult__tls_off {
	long tid;	    /* the descriptor's thread id: the worker's */
	long worker;	    /* ult__tls_worker */
	long tcache, arena; /* malloc's per-thread words; 0: not mirrored */
};
extern struct ult__tls_off ult__tls_off;

/* ult_config.tls / ULT_TLS: what the program asks for (EINVAL: ULT_TLS
 * is neither "uthread" nor "worker"). */
int ult__tls_configure(const struct ult_config *cfg);
/* Decide the mode for this runtime, before the workers start: probe (once
 * per process), say why per-uthread TLS is off if it must be. */
void ult__tls_start(void);
/* After the workers have stopped: free the pooled blocks. */
void ult__tls_fini(void);
/* On the worker's kernel thread, before its idle loop. */
void ult__tls_worker_init(struct ult__worker *w);
/* A block for ut (whose stack is set), from w's cache if w is not NULL;
 * 0 or EAGAIN.  Nothing to do without per-uthread TLS. */
int ult__tls_get(struct ult__worker *w, struct ult_thread *ut,
    void *(*fn)(void *), void *arg);
/* ut is dead and nothing runs on its block: back to w's cache. */
void ult__tls_put(struct ult__worker *w, struct ult_thread *ut);
/* In ut's own context: the first and the last thing it runs. */
void ult__tls_enter(struct ult_thread *ut);
void ult__tls_exit(struct ult_thread *ut);

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
	 * FS write. */
	if (to != &w->idle && to->tls_w != w) {
		to->tls_w = w;
		*(int *)(tp + ult__tls_off.tid) = ULT_LD(&w->tid);
		*(struct ult__worker **)(tp + ult__tls_off.worker) = w;
		if (ult__tls_off.tcache != 0) {
			*(void **)(tp + ult__tls_off.tcache) = w->tls_tcache;
			*(void **)(tp + ult__tls_off.arena) = w->tls_arena;
		}
	}
	ult__wrfsbase(tp);
#else
	(void)w;
	(void)to;
#endif
}

/*
 * switch_mid, before it releases the outgoing thread: after the release
 * another worker may run that thread, so this kernel thread's FS base
 * must name another block by then.  Usually the incoming thread has sat
 * in a run queue and is released already: load it now, one write of FS
 * (returns 1).  Otherwise move to the worker's own descriptor until it
 * is released (the caller loads it then).
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
		ult__wrfsbase(w->tls_tp);
#endif
	return (0);
}

#endif
