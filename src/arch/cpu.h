/*
 * The few CPU-specific one-liners the portable code needs.
 */
#ifndef ULT_ARCH_CPU_H
#define ULT_ARCH_CPU_H

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
