/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Only in libult.a, and linked only when the link names ult__static_libc
 * (-Wl,-u,ult__static_libc, which pkg-config --static --libs ult adds).
 * Its strong references to glibc's internal names of the lock functions
 * that preempt_shim.c wraps pull the libc.a members that implement them
 * into a static executable; the wrappers, which replace libc's public
 * names there, reach that code through those names.  Nothing else is
 * sure to pull it in: a weak reference does not.  For static executables
 * only: a dynamic link cannot bind these names.
 */
#include "preempt_shim.h"

#define DECLARE(pub, internal) extern void internal(void);
ULT__LIBC_LOCKS(DECLARE)
#undef DECLARE

/* And dlopen's and dlmopen's, for tls_dlopen.c. */
extern void __dlopen(void);
extern void __dlmopen(void);

#define REF(pub, internal) internal,
extern void (*const ult__static_libc[])(void);
void (*const ult__static_libc[])(
    void) = {ULT__LIBC_LOCKS(REF) __dlopen, __dlmopen};
#undef REF
