/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hang report: every worker, its CPU's queues as the policy sees them,
 * and every uthread's scheduling state, written with write(2) so that it
 * can be called from a watchdog while the runtime is stuck.  Nothing here
 * waits for a lock: what is printed is read as it is, possibly mid-change.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../kern/sleepq.h"
#include "../kern/turnstile.h"
#include "../kern/runtime.h"
#include "../kern/worker.h"
#include "../kern/uthread.h"
#include "debug.h"

static void
put(void *arg, const char *line)
{
	int fd = (int)(intptr_t)arg;
	size_t n = strlen(line);

	if (write(fd, line, n) < 0 || write(fd, "\n", 1) < 0)
		(void)0;
}

__attribute__((format(printf, 2, 3))) static void
putf(int fd, const char *fmt, ...)
{
	char line[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	put((void *)(intptr_t)fd, line);
}

static const char *
lock_name(struct mtx *m)
{
	return (m != NULL && m->mtx_name != NULL ? m->mtx_name : "?");
}

/* sched.h's SWT_* reasons, by number. */
static const char *
swt_name(int swt)
{
	static const char *const names[] = {"none", "preempt", "owepreempt",
	    "turnstile", "sleepq", "?", "yield", "needresched", "idle", "?",
	    "?", "remotepreempt", "?", "bind", "childfirst"};

	return (swt >= 0 && swt < (int)(sizeof(names) / sizeof(names[0]))
		? names[swt]
		: "?");
}

static void
dump_thread(struct ult_thread *ut, void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct thread *td = &ut->td;
	struct mtx *m = ULT_LD(&td->td_lock);

	/* Not the policy's thread_stats: it updates the %CPU window, which
	 * is the thread lock's to change. */
	putf(fd,
	    "  td %p id %llu '%s' lstate %d state %d inhib %#x flags %#x "
	    "pri %d base %d user %d class %d nice %d pinned %d oncpu %d "
	    "lastcpu %d lock %s %p ast %d owepreempt %d "
	    "bind_pending %d preempt_pinned %d nopreempt %d wchan %p "
	    "turnstile %p switches %llu/%llu, last: %s",
	    (void *)td, (unsigned long long)ut->id, ut->name,
	    ULT_LD(&ut->lstate), td->td_state, (unsigned)td->td_inhibitors,
	    (unsigned)td->td_flags, ULT_PLD(&td->td_priority), td->td_base_pri,
	    td->td_user_pri, td->td_pri_class, td->td_nice, td->td_pinned,
	    td->td_oncpu, td->td_lastcpu, lock_name(m), (void *)m,
	    ULT_LD(&td->td_ast), ULT_LD(&td->td_owepreempt), ut->bind_pending,
	    ut->preempt_pinned, ULT_LD(&ut->nopreempt), ULT_LD(&ut->wchan),
	    (void *)ut->ts_blocked, (unsigned long long)ULT_LD(&ut->nvcsw),
	    (unsigned long long)ULT_LD(&ut->nivcsw), swt_name(ut->last_swt));
	/* A lock's waiter: the lock and its owner, for finding the cycle or
	 * the holder that never lets go (a racy read: reports only). */
	{
		uint64_t owner;
		const void *obj = ult__ts_blocked_on(ut, &owner);

		if (obj != NULL && owner != 0)
			putf(fd, "    waits for lock %p owned by uthread %llu",
			    obj, (unsigned long long)owner);
		else if (obj != NULL)
			putf(fd,
			    "    waits for lock %p owned by no uthread (a "
			    "foreign thread, or being released)",
			    obj);
	}
}

void
ult__debug_dump(int fd)
{
	uint64_t next = ult__timers_next(), now = ult__now();

	if (ult__rt.workers == NULL || ult__rt.sched == NULL) {
		putf(fd, "ult: hang report: the runtime is not running");
		return;
	}
	putf(fd,
	    "ult: hang report: %s, %d workers and %d spare, %llu uthreads "
	    "alive",
	    ult__rt.sched->name, ult__rt.ncpu, ult__rt.nworkers - ult__rt.ncpu,
	    (unsigned long long)ult__live_threads());
	if (next == UINT64_MAX)
		putf(fd, "timers: none pending");
	else
		putf(fd, "timers: next in %lld us",
		    (long long)((int64_t)(next - now) / 1000));
	for (int i = 0; i < ult__rt.nworkers; i++) {
		struct ult__worker *w = &ult__rt.workers[i];
		struct ult_thread *cur = w->curthread;

		putf(fd,
		    "worker %d tid %d busy %d park %u ipi %d kicked %d owed %d "
		    "cur %p%s switches %llu preemptions %llu owed %llu",
		    i, ULT_LD(&w->tid), ULT_LD(&w->busy), ULT_LD(&w->park),
		    ULT_LD(&w->ipi), ULT_LD(&w->kicked), ULT_LD(&w->owed),
		    (void *)&cur->td, cur == &w->idle ? " (idle)" : "",
		    (unsigned long long)ULT_LD(&w->nswitch),
		    (unsigned long long)ULT_LD(&w->npreempt),
		    (unsigned long long)ULT_LD(&w->nowed));
		ult__rt.sched->dump(i, put, (void *)(intptr_t)fd);
	}
	putf(fd, "uthreads:");
	ult__thread_foreach(dump_thread, (void *)(intptr_t)fd, 1);
	putf(fd, "ult: end of hang report");
}
