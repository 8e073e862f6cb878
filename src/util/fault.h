/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fault injection for the tests (debug builds): ULT_FAULT=kind:N[,kind:N]
 * makes the Nth allocation of that kind since the process started fail,
 * once, as if the system had run out.  Kinds: mmap (anonymous mappings:
 * stacks, thread and turnstile slabs, signal stacks), malloc (the
 * runtime's heap allocations) and thread (kernel threads: workers and the
 * clock).  Every allocation site goes through a wrapper that asks
 * ult__fault(); release builds compile the question away.
 */
#ifndef ULT_UTIL_FAULT_H
#define ULT_UTIL_FAULT_H

enum {
	ULT__FAULT_MMAP,
	ULT__FAULT_MALLOC,
	ULT__FAULT_THREAD,
	ULT__FAULT_NKINDS
};

#ifdef ULT_INVARIANTS
/* 1 if this allocation of `kind' must fail (fault.c). */
int ult__fault(int kind);
#else
#define ult__fault(kind) 0
#endif

/* fault.c: read ULT_FAULT (once; EINVAL if malformed), and how many
 * failures it has injected so far.  Debug builds only; elsewhere 0. */
int ult__fault_setup(void);
long ult__fault_injected(void);

#endif
