/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AArch64 (AAPCS64) context: as on x86-64, only the stack pointer is
 * stored in the struct; ult__ctx_switch stores the callee-saved registers
 * and FPCR in a frame on the stack it leaves.  The frame at ctx.sp is,
 * in 8-byte slots: [0..9] x19-x28, [10] x29 (fp), [11] x30 (the return
 * address), [12..19] d8-d15 (the low halves of v8-v15, all the ABI
 * preserves), [20] FPCR, [21] padding (sp stays 16-byte aligned).
 */
#ifndef ULT_ARCH_AARCH64_CONTEXT_H
#define ULT_ARCH_AARCH64_CONTEXT_H

#define ULT_CTX_SP 0	   /* offsetof(struct ult__ctx, sp) */
#define ULT_CTX_FRAME 176  /* bytes stored by the switch */
#define ULT_CTX_SLOT_X19 0 /* entry function for the trampoline */
#define ULT_CTX_SLOT_X20 1 /* its argument */
#define ULT_CTX_SLOT_FP 10 /* x29 */
#define ULT_CTX_SLOT_LR 11 /* x30: where the switch returns to */
#define ULT_CTX_SLOT_D8 12 /* d8-d15 */
#define ULT_CTX_SLOT_FPCR 20
#define ULT_CTX_OFF_FP (8 * ULT_CTX_SLOT_FP)
#define ULT_CTX_OFF_D8 (8 * ULT_CTX_SLOT_D8)
#define ULT_CTX_OFF_FPCR (8 * ULT_CTX_SLOT_FPCR)

#ifndef __ASSEMBLER__
#include <stddef.h>

struct ult__ctx {
	void *sp;
};

_Static_assert(offsetof(struct ult__ctx, sp) == ULT_CTX_SP,
    "switch.S reads ctx->sp at ULT_CTX_SP");
_Static_assert(ULT_CTX_FRAME == 8 * (ULT_CTX_SLOT_FPCR + 2),
    "21 saved slots and one of padding");
_Static_assert(ULT_CTX_FRAME % 16 == 0, "sp must stay 16-byte aligned");
#endif

#endif
