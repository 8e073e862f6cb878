/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Building the first frame of an x86-64 uthread.
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
	uint32_t csr[2];

	/* The power-on defaults: all exceptions masked, round to nearest,
	 * 64-bit x87 precision.  A new thread must not inherit its creator's
	 * rounding mode by accident. */
	csr[0] = 0x1f80;
	csr[1] = 0x037f;
	memset(frame, 0, ULT_CTX_FRAME);
	memcpy(&frame[ULT_CTX_SLOT_CSR], csr, sizeof(uint64_t));
	frame[ULT_CTX_SLOT_R12] = (uint64_t)(uintptr_t)fn;
	frame[ULT_CTX_SLOT_R13] = (uint64_t)(uintptr_t)arg;
	frame[ULT_CTX_SLOT_RIP] = (uint64_t)(uintptr_t)ult__ctx_trampoline;
	ctx->sp = frame;
}
