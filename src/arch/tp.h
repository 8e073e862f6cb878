/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The thread pointer, which the runtime moves for per-uthread TLS
 * (kern/tls.h, with the assembly switch): ULT_ARCH_TP is defined on the
 * architectures the port knows.  Each offers
 *   ult__tp()            the thread pointer, from user mode, always;
 *   ult__tp_read/write() the register itself (the switch path);
 *   ult__tp_unwritable() NULL, or why user mode cannot write it here;
 *   ULT_TLS_VARIANT      glibc's TLS layout: 2 (x86-64: the descriptor at
 *                        tp, static TLS below) or 1 (AArch64: a 16-byte
 *                        TCB at tp, static TLS above, the descriptor
 *                        below the TCB);
 *   ULT_TLS_FRESH(var)   a __thread variable as seen by the thread pointer
 *                        of this instant, where the compiler may keep a
 *                        copy of it across calls (ULT_TLS_TP_CACHED);
 *                        ULT_TLS_FRESH_DECLARE(var) after var's extern
 *                        declaration makes it usable.
 */
#ifndef ULT_ARCH_TP_H
#define ULT_ARCH_TP_H

#if defined(__x86_64__)
#include <sys/auxv.h>

#include "x86_64/fsbase.h"
#define ULT_ARCH_TP 1
#define ULT_TLS_VARIANT 2

static inline void *
ult__tp_read(void)
{
	return (ult__rdfsbase());
}

static inline void
ult__tp_write(void *tp)
{
	ult__wrfsbase(tp);
}

static inline const char *
ult__tp_unwritable(void)
{
	if (!(getauxval(AT_HWCAP2) & ULT_HWCAP2_FSGSBASE))
		return ("no FS base writes from user mode (FSGSBASE)");
	return (0);
}
#elif defined(__aarch64__)
#include "aarch64/tp.h"
#define ULT_ARCH_TP 1
#endif

#ifndef ULT_TLS_FRESH
#define ULT_TLS_FRESH(var) (var) /* x86-64: %fs is read on every access */
#define ULT_TLS_FRESH_DECLARE(var)
#endif

#endif
