/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Portable fallback context on ucontext.  swapcontext saves the signal
 * mask with a system call on every switch, so this is ~100 times slower
 * than the assembly backends; it exists for architectures without one.
 */
#ifndef ULT_ARCH_GENERIC_CONTEXT_H
#define ULT_ARCH_GENERIC_CONTEXT_H

#include <ucontext.h>

struct ult__ctx {
	ucontext_t uc;
};

#endif
