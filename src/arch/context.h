/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Machine context of a uthread: what a cooperative switch saves.  The
 * backend is chosen at configure time (ULT_CONTEXT_ASM or
 * ULT_CONTEXT_UCONTEXT); both offer the same three calls.
 */
#ifndef ULT_ARCH_CONTEXT_H
#define ULT_ARCH_CONTEXT_H

#include <stddef.h>

#if defined(ULT_CONTEXT_ASM) && defined(__x86_64__)
#include "x86_64/context.h"
#elif defined(ULT_CONTEXT_ASM) && defined(__aarch64__)
#include "aarch64/context.h"
#else
#include "generic/context.h"
#endif

/*
 * Prepare ctx so that the first switch to it calls fn(arg) on the stack
 * [stack_lo, stack_lo + size).  fn must never return.
 */
void ult__ctx_init(struct ult__ctx *ctx, void *stack_lo, size_t size,
    void (*fn)(void *), void *arg);

/*
 * Save the caller's callee-saved state in *from and resume *to.  Returns
 * when something switches back to *from, possibly on another kernel
 * thread: callers must not keep TLS addresses across it.
 */
void ult__ctx_switch(struct ult__ctx *from, struct ult__ctx *to);

/*
 * The same, but between saving *from and loading *to, call mid(arg) on
 * the stack that ends at scratch_top (16-byte aligned).  mid runs when no
 * uthread stack is in use, so it may publish *from to other kernel
 * threads (which may resume it at once) and then wait for *to to become
 * loadable.  This is the ordering of FreeBSD's cpu_switch.
 */
void ult__ctx_switch_via(struct ult__ctx *from, struct ult__ctx *to,
    void *scratch_top, void (*mid)(void *), void *arg);

#endif
