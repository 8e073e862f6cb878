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

#endif
