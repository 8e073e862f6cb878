/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * x86-64 SysV context: only the stack pointer is stored in the struct;
 * ult__ctx_switch pushes the callee-saved registers, MXCSR and the x87
 * control word on the stack it leaves.  The frame at ctx.sp is, in 8-byte
 * slots: [0] MXCSR (low 4 bytes) and x87 CW (bytes 4-5), [1] r15, [2] r14,
 * [3] r13, [4] r12, [5] rbx, [6] rbp, [7] return address.
 */
#ifndef ULT_ARCH_X86_64_CONTEXT_H
#define ULT_ARCH_X86_64_CONTEXT_H

#define ULT_CTX_SP 0	   /* offsetof(struct ult__ctx, sp) */
#define ULT_CTX_FRAME 64   /* bytes pushed by the switch */
#define ULT_CTX_SLOT_CSR 0 /* MXCSR and x87 CW */
#define ULT_CTX_SLOT_R13 3 /* arg for the trampoline */
#define ULT_CTX_SLOT_R12 4 /* entry function for the trampoline */
#define ULT_CTX_SLOT_RBP 6
#define ULT_CTX_SLOT_RIP 7

#ifndef __ASSEMBLER__
#include <stddef.h>

struct ult__ctx {
	void *sp;
};

_Static_assert(offsetof(struct ult__ctx, sp) == ULT_CTX_SP,
    "switch.S reads ctx->sp at ULT_CTX_SP");
_Static_assert(ULT_CTX_FRAME == 8 * (ULT_CTX_SLOT_RIP + 1),
    "switch frame is 7 saved slots plus the return address");
_Static_assert(ULT_CTX_FRAME % 16 == 0,
    "the stack is 16-byte aligned once the frame is popped");
#endif

#endif
