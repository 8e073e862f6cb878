/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cooperative context switch for AArch64 (AAPCS64).  Saves exactly what
 * the ABI says a callee must preserve: x19-x28, the frame pointer x29,
 * the link register x30, the low 64 bits of v8-v15 (d8-d15) and FPCR
 * (rounding mode, flush-to-zero, trap enables: a uthread keeps its own,
 * as C11's fesetround promises a thread).  FPSR (the sticky exception
 * flags) is not saved, as on x86-64 (MXCSR's flags are not either).  The
 * thread pointer (tpidr_el0) is not touched here: with per-uthread TLS
 * the switch's middle step moves it (kern/tls_switch.h).
 */
#include "context.h"

/* Store the callee-saved state below sp; the layout is in context.h. */
.macro	SAVE_FRAME
	sub	sp, sp, #ULT_CTX_FRAME
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #ULT_CTX_OFF_FP]
	stp	d8, d9, [sp, #ULT_CTX_OFF_D8]
	stp	d10, d11, [sp, #ULT_CTX_OFF_D8 + 16]
	stp	d12, d13, [sp, #ULT_CTX_OFF_D8 + 32]
	stp	d14, d15, [sp, #ULT_CTX_OFF_D8 + 48]
	mrs	x9, fpcr
	str	x9, [sp, #ULT_CTX_OFF_FPCR]
.endm

/*
 * Load it from the frame sp now points at and return into that context.
 * A write of FPCR may synchronise the FP pipeline on some cores, and the
 * value almost never differs between uthreads: written only when it does.
 */
.macro	LOAD_FRAME
	ldr	x9, [sp, #ULT_CTX_OFF_FPCR]
	mrs	x10, fpcr
	cmp	x9, x10
	b.eq	1f
	msr	fpcr, x9
1:
	ldp	d8, d9, [sp, #ULT_CTX_OFF_D8]
	ldp	d10, d11, [sp, #ULT_CTX_OFF_D8 + 16]
	ldp	d12, d13, [sp, #ULT_CTX_OFF_D8 + 32]
	ldp	d14, d15, [sp, #ULT_CTX_OFF_D8 + 48]
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #ULT_CTX_OFF_FP]
	add	sp, sp, #ULT_CTX_FRAME
	ret
.endm

	.text
	.globl	ult__ctx_switch
	.hidden	ult__ctx_switch
	.type	ult__ctx_switch, %function
	.p2align 4
/* void ult__ctx_switch(struct ult__ctx *from, struct ult__ctx *to) */
ult__ctx_switch:
	.cfi_startproc
	SAVE_FRAME
	mov	x9, sp
	str	x9, [x0, #ULT_CTX_SP]
	ldr	x9, [x1, #ULT_CTX_SP]
	mov	sp, x9
	LOAD_FRAME
	.cfi_endproc
	.size	ult__ctx_switch, .-ult__ctx_switch

/*
 * void ult__ctx_switch_via(struct ult__ctx *from, struct ult__ctx *to,
 *     void *scratch_top, void (*mid)(void *), void *arg)
 * Like ult__ctx_switch, with mid(arg) called on the scratch stack after
 * *from is saved.  `to' waits in x19, which mid preserves.  Publishing
 * *from (mid's release of the outgoing thread's lock) is a store-release
 * in C, ordered after the stores above by the release itself.
 */
	.globl	ult__ctx_switch_via
	.hidden	ult__ctx_switch_via
	.type	ult__ctx_switch_via, %function
	.p2align 4
ult__ctx_switch_via:
	.cfi_startproc
	SAVE_FRAME
	mov	x9, sp
	str	x9, [x0, #ULT_CTX_SP]
	mov	x19, x1
	mov	sp, x2
	mov	x0, x4
	blr	x3
	ldr	x9, [x19, #ULT_CTX_SP]
	mov	sp, x9
	LOAD_FRAME
	.cfi_endproc
	.size	ult__ctx_switch_via, .-ult__ctx_switch_via

/*
 * First code a new uthread runs: the initial frame built by ult__ctx_init
 * "returns" here with the entry function in x19 and its argument in x20.
 * The return address is undefined in the CFI, and the frame pointer is
 * zero, so debuggers and unwinders stop here.
 */
	.globl	ult__ctx_trampoline
	.hidden	ult__ctx_trampoline
	.type	ult__ctx_trampoline, %function
	.p2align 4
ult__ctx_trampoline:
	.cfi_startproc
	.cfi_undefined x30
	mov	x29, #0
	mov	x30, #0
	mov	x0, x20
	blr	x19
	brk	#0x1
	.cfi_endproc
	.size	ult__ctx_trampoline, .-ult__ctx_trampoline

	.section .note.GNU-stack, "", %progbits
