/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The AArch64 thread pointer: tpidr_el0, which glibc points at the
 * running thread's TCB (TLS variant I: two words, the dtv and a spare,
 * with static TLS above them and glibc's struct pthread below).  Unlike
 * x86-64's FS base it is an ordinary system register that user code may
 * read and write on every CPU and kernel, and the kernel saves it per
 * kernel thread; with per-uthread TLS the switch path writes it
 * (kern/tls_switch.h).
 *
 * GCC reads tpidr_el0 once per function and keeps it in a register for
 * every TLS access of that function, across calls (x86-64 addresses TLS
 * through %fs on each access instead).  A function that writes the
 * thread pointer must therefore touch no TLS after the write, and with
 * per-worker TLS a function that spans a switch must not touch TLS on
 * both sides (DESIGN.md section 17.1).
 */
#ifndef ULT_ARCH_AARCH64_TP_H
#define ULT_ARCH_AARCH64_TP_H

#define ULT_TLS_VARIANT 1
#define ULT_TLS_TCB_SIZE 16 /* the dtv pointer and a reserved word */

/* Volatile: a switch may change it under the caller. */
static inline void *
ult__tp(void)
{
	void *tp;

	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
	return (tp);
}

static inline void *
ult__tp_read(void)
{
	return (ult__tp());
}

/* The memory clobber keeps the compiler from moving a store into the
 * block across it. */
static inline void
ult__tp_write(void *tp)
{
	__asm__ volatile("msr tpidr_el0, %0" : : "r"(tp) : "memory");
}

/*
 * var (a __thread variable of initial-exec model, named plainly) through
 * a thread pointer read now, not the one GCC read at the start of the
 * function.  Its offset from tp, the same in every block, comes from the
 * GOT as GCC's initial-exec code gets it; computing it in C from &var
 * and __builtin_thread_pointer() would mix a cached pointer with a fresh
 * one.
 */
#define ULT_TLS_TP_CACHED 1
#define ULT_TLS_FRESH(var) \
	(*(__typeof__(&(var)))(void *)((char *)ult__tp() + ult__tprel_##var()))
/* For each variable read so: its offset, and nothing else. */
#define ULT_TLS_FRESH_DECLARE(var)                               \
	static inline long ult__tprel_##var(void)                \
	{                                                        \
		long off;                                        \
                                                                 \
		__asm__("adrp %0, :gottprel:" #var "\n\t"        \
			"ldr %0, [%0, #:gottprel_lo12:" #var "]" \
			: "=r"(off));                            \
		return (off);                                    \
	}

/* Always writable from user mode. */
static inline const char *
ult__tp_unwritable(void)
{
	return (0);
}

#endif
