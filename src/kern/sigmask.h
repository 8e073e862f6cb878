/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef ULT_KERN_SIGMASK_H
#define ULT_KERN_SIGMASK_H

#include "runtime.h"
#include "worker.h"

/*
 * Signal masks per uthread.  A uthread starts with its creator's (a
 * foreign creator's: ult__rt.sigmask0), and only the pthread drop-in
 * changes one (ult__sigmask_set, on the caller: how is SIG_BLOCK,
 * SIG_UNBLOCK or SIG_SETMASK, set may be NULL; the runtime's preemption
 * signal and glibc's two internal ones are never blocked).  The switch-in
 * gives the worker the incoming uthread's mask when it differs: one
 * compare per switch while all masks are equal.  The idle loop keeps
 * whatever mask it finds, unless sigmask_idle (the drop-in) asks it to
 * block the program's signals: otherwise the mask of a uthread that has
 * exited could let a signal in that every live one blocks (a system call
 * each way between idle and a uthread, then).
 */
#define ULT_SIGMASK_IDLE (~ULT_SIGMASK_KEEP & ~(1ull << (SIGURG - 1)))
static inline uint64_t
ult__sigmask_of(struct ult__worker *w, struct ult_thread *to)
{
	if (to != &w->idle)
		return (to->sigmask);
	return (ult__rt.sigmask_idle ? ULT_SIGMASK_IDLE : w->sigmask);
}

/* In two steps around the move of the thread pointer, so that no signal
 * either thread blocks runs a handler on the other's block: what the
 * incoming thread blocks is blocked before (pre), what it does not is
 * unblocked after. */
static inline void
ult__sigmask_pre(struct ult__worker *w, struct ult_thread *to)
{
	uint64_t m = ult__sigmask_of(w, to);

	if (__builtin_expect((m & ~w->sigmask) != 0, 0)) {
		w->sigmask |= m;
		ult__os_sigmask(w->sigmask);
	}
}

static inline void
ult__sigmask_load(struct ult__worker *w, struct ult_thread *to)
{
	uint64_t m = ult__sigmask_of(w, to);

	if (__builtin_expect(m != w->sigmask, 0)) {
		w->sigmask = m;
		ult__os_sigmask(m);
	}
}

#endif
