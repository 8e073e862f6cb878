/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The x86-64 thread pointer: the FS segment base, which glibc points at
 * the running thread's descriptor (TLS variant II: static TLS lies below
 * it).  With per-uthread TLS the switch path writes it (kern/tls.h).
 *
 * rdfsbase/wrfsbase are user instructions only where the CPU has
 * FSGSBASE and the kernel enabled it (Linux 5.9+, AT_HWCAP2 bit 1);
 * elsewhere they fault, so callers check first (kern/tls.c).  The thread
 * pointer itself is also the descriptor's first word, readable anywhere.
 */
#ifndef ULT_ARCH_X86_64_FSBASE_H
#define ULT_ARCH_X86_64_FSBASE_H

#define ULT_HWCAP2_FSGSBASE (1ul << 1)

/* The thread pointer, from the descriptor's self-pointer: works without
 * FSGSBASE.  Volatile, because a switch may change it under the caller. */
static inline void *
ult__tp(void)
{
	void *tp;

	__asm__ volatile("movq %%fs:0, %0" : "=r"(tp));
	return (tp);
}

static inline void *
ult__rdfsbase(void)
{
	void *tp;

	__asm__ volatile("rdfsbase %0" : "=r"(tp));
	return (tp);
}

/* Every TLS access after this one uses tp; the clobber keeps the compiler
 * from moving one across it. */
static inline void
ult__wrfsbase(void *tp)
{
	__asm__ volatile("wrfsbase %0" : : "r"(tp) : "memory");
}

#endif
