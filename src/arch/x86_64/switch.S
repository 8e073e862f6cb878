/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Cooperative context switch for x86-64 SysV.  Saves exactly what the ABI
 * says a callee must preserve: rbx, rbp, r12-r15, the MXCSR control bits
 * and the x87 control word; everything else is caller-saved, so the C
 * caller has already spilled what it needs.
 */
#include "context.h"

/* Push the callee-saved state; the frame layout is in context.h. */
.macro	SAVE_FRAME
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
.endm

/*
 * Pop it from the stack rsp now points at, and return into that context.
 * Loading MXCSR or the x87 control word waits for the FP pipeline, about
 * ten nanoseconds for the pair, and the two almost never differ between
 * uthreads: each is loaded only when the saved value is not the one in
 * force (read into the red zone, below the frame).
 */
.macro	LOAD_FRAME
	movl	(%rsp), %eax
	stmxcsr	-8(%rsp)
	cmpl	-8(%rsp), %eax
	je	1f
	ldmxcsr	(%rsp)
1:
	movzwl	4(%rsp), %eax
	fnstcw	-8(%rsp)
	cmpw	-8(%rsp), %ax
	je	2f
	fldcw	4(%rsp)
2:
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
.endm

	.text
	.globl	ult__ctx_switch
	.hidden	ult__ctx_switch
	.type	ult__ctx_switch, @function
	.p2align 4
/* void ult__ctx_switch(struct ult__ctx *from, struct ult__ctx *to) */
ult__ctx_switch:
	.cfi_startproc
	SAVE_FRAME
	movq	%rsp, ULT_CTX_SP(%rdi)
	movq	ULT_CTX_SP(%rsi), %rsp
	LOAD_FRAME
	.cfi_endproc
	.size	ult__ctx_switch, .-ult__ctx_switch

/*
 * void ult__ctx_switch_via(struct ult__ctx *from, struct ult__ctx *to,
 *     void *scratch_top, void (*mid)(void *), void *arg)
 * Like ult__ctx_switch, with mid(arg) called on the scratch stack after
 * *from is saved.  `to' waits in r12, which mid preserves.
 */
	.globl	ult__ctx_switch_via
	.hidden	ult__ctx_switch_via
	.type	ult__ctx_switch_via, @function
	.p2align 4
ult__ctx_switch_via:
	.cfi_startproc
	SAVE_FRAME
	movq	%rsp, ULT_CTX_SP(%rdi)
	movq	%rsi, %r12
	movq	%rdx, %rsp
	movq	%r8, %rdi
	callq	*%rcx
	movq	ULT_CTX_SP(%r12), %rsp
	LOAD_FRAME
	.cfi_endproc
	.size	ult__ctx_switch_via, .-ult__ctx_switch_via

/*
 * First code a new uthread runs: the initial frame built by ult__ctx_init
 * "returns" here with the entry function in r12 and its argument in r13.
 * rip is undefined in the CFI so debuggers stop unwinding here.
 */
	.globl	ult__ctx_trampoline
	.hidden	ult__ctx_trampoline
	.type	ult__ctx_trampoline, @function
	.p2align 4
ult__ctx_trampoline:
	.cfi_startproc
	.cfi_undefined rip
	xorl	%ebp, %ebp
	movq	%r13, %rdi
	callq	*%r12
	ud2
	.cfi_endproc
	.size	ult__ctx_trampoline, .-ult__ctx_trampoline

	.section .note.GNU-stack, "", @progbits
