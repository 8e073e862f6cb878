/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Asynchronous cancellation (DESIGN.md section 14, "Cancellation").  A
 * uthread with PTHREAD_CANCEL_ASYNCHRONOUS may be computing and never
 * enter the drop-in, so pthread_cancel sends its worker the runtime's
 * preemption signal, and the preemption handler, at a point where it
 * could switch (user text, no libc lock held, stack to spare), calls
 * the hook here, which exits the thread with PTHREAD_CANCELED as glibc's
 * own SIGCANCEL handler does: the unwinder walks out of the handler
 * through the kernel's signal frame, running the cleanup handlers.  A
 * point that is not safe owes the signal and the clock sends it again; a
 * thread that was preempted and waits for its worker acts as it resumes
 * in the handler.  Without preemption (ult.preempt 0) the cancel waits
 * for the next cancellation point, as a deferred one does.
 */
#include <dlfcn.h>

#include "runtime.h"
#include "dropin.h"

static int
due(void)
{
	struct dp_thread *dp = ult__dropin_self();

	return (dp != NULL && dp->cancel_async && !dp->cancel_off &&
	    !dp->exiting && ULT_PLD_ACQ(&dp->cancel_pending) != 0);
}

static void
run(void)
{
	pthread_exit(PTHREAD_CANCELED);
}

void
ult__dropin_async_now(void)
{
	if (due())
		run();
}

void
ult__dropin_async_cancel(struct dp_thread *dp)
{
	ult_thread_t *ut;

	if (!ULT_PLD(&dp->cancel_async) || ULT_PLD(&dp->cancel_off))
		return;
	if (ult__preempt_hook_run == NULL) {
		/* glibc's unwinder lives in libgcc_s, which glibc loads on
		 * the first unwind: here, not inside the handler (glibc's
		 * pthread_cancel does the same before its signal). */
		(void)dlopen("libgcc_s.so.1", RTLD_NOW);
		ult__preempt_hook_run = run;
		ULT_PST_REL(&ult__preempt_hook_due, due);
	}
	if ((ut = ULT_PLD_ACQ(&dp->ut)) == NULL)
		return;
	/* Running: its worker's handler acts.  Queued after a preemption:
	 * it acts as it resumes in the handler. */
	for (int cpu = 0; cpu < ult__rt.nworkers; cpu++)
		if (ULT_PLD_ACQ(&ult__rt.workers[cpu].curthread) == ut)
			ult__preempt_kick(cpu);
}
