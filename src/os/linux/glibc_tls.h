/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glibc's side of per-uthread TLS (DESIGN.md section 10): a thread block
 * per uthread, the static TLS of every module and a struct pthread that
 * glibc accepts as THREAD_SELF, made from ld.so's own allocator and set up
 * by hand.  What a block needs from glibc is private to glibc, so
 * ult__glibc_tls_probe checks all of it before anything is used and says
 * why not when it does not hold.  A block is named by its thread pointer
 * (tp: the descriptor; its static TLS lies below it).
 */
#ifndef ULT_OS_LINUX_GLIBC_TLS_H
#define ULT_OS_LINUX_GLIBC_TLS_H

#include <stddef.h>

/* Word offsets from the thread pointer, valid once the probe succeeded. */
struct ult__glibc_tls {
	long tid;    /* the descriptor's kernel thread id (pid_t) */
	long tcache; /* libc's malloc words, 0 when malloc is not glibc's */
	long arena;  /* (nothing to mirror then) */
};
extern struct ult__glibc_tls ult__glibc_tls;

/*
 * Check the glibc version, its private entry points, the descriptor layout
 * (against glibc's own description for libthread_db and offsets measured
 * on a fresh thread) and locate malloc's per-thread words; NULL when all
 * holds, else a static string saying what does not.  Call once, from a
 * thread that is not a worker; it starts and joins a thread of its own.
 */
const char *ult__glibc_tls_probe(void);

/* A new block, its descriptor set up; NULL when out of memory. */
void *ult__glibc_tls_alloc(void);
/* What a block tells about the uthread about to start in it. */
void ult__glibc_tls_start(void *tp, void *stack, size_t size,
    void *(*fn)(void *), void *arg);
/* First code of a uthread, on its block: what glibc's start_thread does. */
void ult__glibc_tls_enter(void);
/* Last code of a uthread, on its block: C++ thread_local destructors,
 * pthread key destructors, dlerror state.  May run user code (which may
 * block). */
void ult__glibc_tls_exit(void);
/* A dead block (nothing runs on it) made like new for the pool: dynamic
 * TLS and libc's per-thread buffers freed, static TLS images copied. */
void ult__glibc_tls_reset(void *tp);
void ult__glibc_tls_free(void *tp);
/* After a dlopen: a module given static TLS since gets its image in every
 * block, now and at each reset. */
void ult__glibc_tls_dlopened(void);
/* Unregister the calling kernel thread's rseq area, the one in the
 * descriptor tp (a fork child's, which glibc no longer counts as live). */
void ult__glibc_rseq_forget(void *tp);
/* In a fork child: forget the parent's slabs, whose lock may be held. */
void ult__glibc_tls_fork_child(void);
/* malloc's per-thread words of the thread whose descriptor is tp. */
void ult__glibc_tls_malloc_words(void *tp, void **tcache, void **arena);

/*
 * glibc's SIGSETXID handler (setuid and friends signal every thread it
 * knows) clears a flag in THREAD_SELF: on a block that is not the
 * worker's descriptor, which glibc waits on forever.  wrap puts a handler
 * in front that runs glibc's on ult__tls_host_tp(); 0 or an errno.
 */
int ult__glibc_setxid_wrap(void);
void ult__glibc_setxid_unwrap(void);

/* Provided by the host: the descriptor of the worker whose kernel thread
 * calls (from any block it runs), NULL on other threads. */
void *ult__tls_host_tp(void);

#endif
