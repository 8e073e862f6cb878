/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-uthread TLS, the runtime's side (DESIGN.md section 10): every
 * uthread runs on a thread block of its own (os/linux/glibc_tls.c), so
 * errno, __thread variables and libc's per-thread state follow it from
 * worker to worker.  A worker's idle loop runs on the worker's own
 * descriptor.  ult__rt.tls says whether this is in force; otherwise all
 * uthreads of a worker share its TLS, as before.
 */
#ifndef ULT_KERN_TLS_H
#define ULT_KERN_TLS_H

#include "ult.h"

struct ult__worker;
struct ult_thread;

#include "../arch/tp.h"
#if defined(ULT_CONTEXT_ASM) && defined(ULT_ARCH_TP)
#define ULT_TLS_SWITCH 1
#endif

/* A uthread's TLS state (struct ult_thread's part). */
struct ult__tls_part {
	void *tls;	 /* (c) its thread block, or NULL; for an idle thread,
			    its worker's own descriptor */
	int tls_exiting; /* (s) its TLS destructors have started */
	struct ult__worker *tls_w; /* (s) the worker that last loaded its
				      block, whose words it holds */
};

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

#endif
