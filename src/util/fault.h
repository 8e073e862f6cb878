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
/* Provided by the host: 1 if this allocation of `kind' must fail. */
int ult__fault(int kind);
#else
#define ult__fault(kind) 0
#endif

#endif
