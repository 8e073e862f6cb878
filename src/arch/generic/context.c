/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ucontext backend.  makecontext passes only int arguments, so the entry
 * function and its argument travel as 32-bit halves.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../context.h"

static void
ctx_entry(unsigned fhi, unsigned flo, unsigned ahi, unsigned alo)
{
	void (*fn)(void *) =
	    (void (*)(void *))(((uintptr_t)fhi << 16 << 16) | (uintptr_t)flo);
	void *arg = (void *)(((uintptr_t)ahi << 16 << 16) | (uintptr_t)alo);

	fn(arg);
	abort();
}

void
ult__ctx_init(struct ult__ctx *ctx, void *stack_lo, size_t size,
    void (*fn)(void *), void *arg)
{
	uintptr_t f = (uintptr_t)fn, a = (uintptr_t)arg;

	if (getcontext(&ctx->uc) != 0)
		abort();
	ctx->uc.uc_stack.ss_sp = stack_lo;
	ctx->uc.uc_stack.ss_size = size;
	ctx->uc.uc_link = NULL;
	makecontext(&ctx->uc, (void (*)(void))ctx_entry, 4,
	    (unsigned)(f >> 16 >> 16), (unsigned)f, (unsigned)(a >> 16 >> 16),
	    (unsigned)a);
}

void
ult__ctx_switch(struct ult__ctx *from, struct ult__ctx *to)
{
	if (swapcontext(&from->uc, &to->uc) != 0)
		abort();
}

/* The middle step runs on a throwaway context over the scratch stack. */
static __thread struct {
	ucontext_t uc;
	struct ult__ctx *to;
	void (*mid)(void *);
	void *arg;
} via;

static void
via_entry(void)
{
	via.mid(via.arg);
	setcontext(&via.to->uc);
	abort();
}

void
ult__ctx_switch_via(struct ult__ctx *from, struct ult__ctx *to,
    void *scratch_top, void (*mid)(void *), void *arg)
{
	size_t size = 16384;

	if (getcontext(&via.uc) != 0)
		abort();
	via.uc.uc_stack.ss_sp = (char *)scratch_top - size;
	via.uc.uc_stack.ss_size = size;
	via.uc.uc_link = NULL;
	via.to = to;
	via.mid = mid;
	via.arg = arg;
	makecontext(&via.uc, via_entry, 0);
	if (swapcontext(&from->uc, &via.uc) != 0)
		abort();
}
