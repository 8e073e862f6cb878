/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The few CPU-specific one-liners the portable code needs.
 */
#ifndef ULT_ARCH_CPU_H
#define ULT_ARCH_CPU_H

#include <stdint.h>

/* Spin-wait hint: lets the sibling hyperthread run and saves power. */
static inline void
ult__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* The interrupted PC and SP in a signal handler's ucontext. */
#include <ucontext.h>

static inline uintptr_t
ult__uc_pc(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return ((uintptr_t)uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
	return ((uintptr_t)uc->uc_mcontext.pc);
#else
	(void)uc;
	return (0); /* unknown: never preemptible */
#endif
}

static inline uintptr_t
ult__uc_sp(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return ((uintptr_t)uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
	return ((uintptr_t)uc->uc_mcontext.sp);
#else
	(void)uc;
	return (0);
#endif
}

/*
 * A cheap cycle counter for the runtime's fast clock: returns 1 and the
 * count when the CPU has one the runtime trusts, 0 otherwise.
 */
#include <stdint.h>

static inline int
ult__cpu_cycles(uint64_t *c)
{
#if defined(__x86_64__)
	*c = __builtin_ia32_rdtsc();
	return (1);
#else
	*c = 0;
	return (0);
#endif
}

#endif
