/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Building the first frame of an AArch64 uthread.
 */
#include <stdint.h>
#include <string.h>

#include "../context.h"

void ult__ctx_trampoline(void);

void
ult__ctx_init(struct ult__ctx *ctx, void *stack_lo, size_t size,
    void (*fn)(void *), void *arg)
{
	uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
	uint64_t *frame = (uint64_t *)(top - ULT_CTX_FRAME);

	/* FPCR 0 is the reset state Linux gives a new process: round to
	 * nearest, no flush-to-zero, no traps.  A new thread must not
	 * inherit its creator's rounding mode by accident. */
	memset(frame, 0, ULT_CTX_FRAME);
	frame[ULT_CTX_SLOT_X19] = (uint64_t)(uintptr_t)fn;
	frame[ULT_CTX_SLOT_X20] = (uint64_t)(uintptr_t)arg;
	frame[ULT_CTX_SLOT_LR] = (uint64_t)(uintptr_t)ult__ctx_trampoline;
	ctx->sp = frame;
}
