/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The few CPU-specific one-liners the portable code needs.
 */
#ifndef ULT_ARCH_CPU_H
#define ULT_ARCH_CPU_H

#include <stdint.h>
#include <ucontext.h>

/* Spin-wait hint: lets the sibling hyperthread run and saves power.  On
 * AArch64 `yield' (what Linux's cpu_relax uses) is a no-op on most cores
 * without SMT; `isb' would pause longer but was not measured on hardware
 * (the port was tested under qemu-user only), so the hint stays the
 * architectural one. */
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
 * A system call that syscall user dispatch turned into SIGSYS: its
 * number, its arguments 0-5, and where its result goes.
 */
static inline long
ult__uc_sysno(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uc->uc_mcontext.gregs[REG_RAX]);
#elif defined(__aarch64__)
	return ((long)uc->uc_mcontext.regs[8]);
#else
	(void)uc;
	return (-1);
#endif
}

static inline long
ult__uc_sysarg(const ucontext_t *uc, int i)
{
#if defined(__x86_64__)
	static const int reg[6] = {REG_RDI, REG_RSI, REG_RDX, REG_R10, REG_R8,
	    REG_R9};

	return (uc->uc_mcontext.gregs[reg[i]]);
#elif defined(__aarch64__)
	return ((long)uc->uc_mcontext.regs[i]);
#else
	(void)uc;
	(void)i;
	return (0);
#endif
}

static inline void
ult__uc_set_sysret(ucontext_t *uc, long r)
{
#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RAX] = r;
#elif defined(__aarch64__)
	uc->uc_mcontext.regs[0] = (unsigned long)r;
#else
	(void)uc;
	(void)r;
#endif
}

/*
 * A cheap cycle counter for the runtime's fast clock: returns 1 and the
 * count when the CPU has one the runtime trusts, 0 otherwise.
 * ULT_CPU_CYCLES_CONSTANT: the counter ticks at a constant rate by
 * definition (else the OS layer asks the CPU's flags).
 *
 * AArch64: the generic timer's virtual count, readable from EL0 under
 * Linux and constant-rate by the architecture (cntfrq_el0 Hz, 1 GHz from
 * Armv8.6, often 25-100 MHz before: 10-40 ns a tick, enough for run-time
 * accounting).  No `isb' before it: a read taken a few instructions early
 * costs the accounting nothing, and the vDSO's clock_gettime reads the
 * same counter with the barrier and a call on top.
 */
#if defined(__aarch64__)
#define ULT_CPU_CYCLES_CONSTANT 1
#endif

static inline int
ult__cpu_cycles(uint64_t *c)
{
#if defined(__x86_64__)
	*c = __builtin_ia32_rdtsc();
	return (1);
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	*c = v;
	return (1);
#else
	*c = 0;
	return (0);
#endif
}

#endif
