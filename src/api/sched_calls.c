/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The per-thread calls that act through the scheduling policy: yield,
 * nice, bind and class (FreeBSD keeps their counterparts in
 * kern_resource.c and kern_cpuset.c, beside kern_thread.c's lifecycle).
 * Each resolves its handle under the thread lock.
 */
#include <errno.h>
#include <sched.h>

#include "../kern/runtime.h"
#include "../kern/worker.h"
#include "../kern/uthread.h"
#include "../kern/switch.h"
#include "sched_calls.h"
#include "../kern/subsys.h"

/* ult's classes as FreeBSD's: a class and, outside timeshare, a fixed
 * user priority in its band (td locked). */
void
ult__class_apply(struct thread *td, int cls, int prio)
{
	switch (cls) {
	case ULT_CLASS_REALTIME:
		sched_class_apply(ult__rt.sched, td, PRI_FIFO,
		    PRI_MIN_REALTIME + prio);
		break;
	case ULT_CLASS_REALTIME_RR:
		sched_class_apply(ult__rt.sched, td, PRI_REALTIME,
		    PRI_MIN_REALTIME + prio);
		break;
	case ULT_CLASS_IDLE:
		sched_class_apply(ult__rt.sched, td, PRI_IDLE,
		    PRI_MIN_IDLE + prio);
		break;
	default:
		sched_class_apply(ult__rt.sched, td, PRI_TIMESHARE, 0);
		break;
	}
}

void
ult_yield(void)
{
	struct ult__worker *w = ult__worker_self();
	struct ult_thread *ut;
	struct thread *td;

	if (w == NULL || (ut = w->curthread) == &w->idle) {
		sched_yield();
		return;
	}
	td = &ut->td;
	/* A pending AST (slice end, better thread queued) does the switch
	 * itself, as it would on the way back to user mode. */
	if ((ULT_LD(&td->td_ast) & TDA_SCHED) || ULT_LD(&td->td_owepreempt) ||
	    ULT_LD(&w->ipi)) {
		ult__userret();
		return;
	}
	thread_lock(td);
	ult__mi_switch(ut, SW_VOL | SWT_RELINQUISH, NULL);
	ult__userret();
}

/*
 * ult.chaos_migrate, for tests: every voluntary switch of a uthread moves
 * it to the next worker (at 2, every involuntary one too, but a
 * child-first one), so that a test meets a migration wherever one can
 * happen.  The move is a binding that the switch carries out, as for
 * ult_bind, dropped at the first switch after the tunable goes back to
 * 0.  A thread the program bound, or one a preemption pinned (unless
 * ult.preempt_migrate), is left where it is.
 */
atomic_int ult__chaos_migrate;

void
ult__chaos_switching(struct ult_thread *ut, int flags)
{
	const struct sched_ops *s = ult__rt.sched;
	struct ult__worker *w = ult__worker_self();
	int level = ULT_LD(&ult__chaos_migrate);

	THREAD_LOCK_ASSERT(&ut->td);
	if (ut == &w->idle)
		return;
	if (level == 0 || ult__rt.ncpu < 2) {
		if (ut->chaos_bound)
			s->unbind(&ut->td);
		ut->chaos_bound = 0;
		return;
	}
	if ((!(flags & SW_VOL) &&
		(level < 2 || (flags & SW_TYPE_MASK) == SWT_CHILDFIRST)) ||
	    ut->bind_pending || ut->preempt_pinned ||
	    (!ut->chaos_bound && s->is_bound(&ut->td)))
		return;
	s->bind(&ut->td, (w->id + 1) % ult__rt.ncpu);
	ut->chaos_bound = 1;
}

/* Resolve t (NULL: the caller) and lock it; ESRCH if it is gone. */
int
ult__thread_lock_handle(ult_thread_t **t, int alive_only)
{
	struct mtx *m;

	if (!ult__running())
		return (ENXIO);
	if (*t == NULL && (*t = ult__self_ut()) == NULL)
		return (EINVAL);
	/*
	 * A free struct may be being set up for a new thread, whose lock
	 * moves without the one we took (sched_fork; thread.c,
	 * thread_setup): leave by the lock we took.  Once UT_ALIVE is seen,
	 * the move is seen too; if it moved, take the new lock.
	 */
	for (;;) {
		m = thread_lock(&(*t)->td);
		if (ULT_LD_ACQ(&(*t)->lstate) == UT_FREE ||
		    (alive_only && ULT_LD(&(*t)->lstate) != UT_ALIVE)) {
			mtx_unlock_spin(m);
			return (ESRCH);
		}
		if (ULT_LD(&(*t)->td.td_lock) == m)
			return (0);
		mtx_unlock_spin(m);
	}
}

int
ult_setnice(ult_thread_t *t, int nice)
{
	int err;

	if (nice < PRIO_MIN || nice > PRIO_MAX)
		return (ult__running() ? EINVAL : ENXIO);
	if ((err = ult__thread_lock_handle(&t, 1)) != 0)
		return (err);
	ult__rt.sched->nice(&t->td, nice);
	thread_unlock(&t->td);
	if (t == ult__self_ut())
		ult__userret();
	return (0);
}

int
ult_getnice(ult_thread_t *t, int *nice)
{
	int err;

	if (nice == NULL)
		return (ult__running() ? EINVAL : ENXIO);
	if ((err = ult__thread_lock_handle(&t, 0)) != 0)
		return (err);
	*nice = t->td.td_nice;
	thread_unlock(&t->td);
	return (0);
}

int
ult_bind(ult_thread_t *t, int cpu)
{
	struct ult_thread *self = ult__self_ut();
	int err, move;

	if (cpu < -1 || (ult__running() && cpu >= ult__rt.ncpu))
		return (ult__running() ? EINVAL : ENXIO);
	if ((err = ult__thread_lock_handle(&t, 1)) != 0)
		return (err);
	t->bind_pending = 0;
	t->chaos_bound = 0; /* the program's binding replaces chaos's */
	if (cpu < 0) {
		ult__rt.sched->unbind(&t->td);
		thread_unlock(&t->td);
		return (0);
	}
	if (t != self && (TD_IS_RUNNING(&t->td) || t->preempt_pinned)) {
		/*
		 * Only a thread's own switch may move it while it runs (the
		 * policy keeps a running thread's queue where it runs): record
		 * the binding for t's next switch.  A preempted t, running or
		 * queued, may hold its worker's TLS addresses (the migration
		 * rule in preempt.c), so for it that switch must be a voluntary
		 * one.  Without asynchronous preemption, ask for a switch at
		 * t's next runtime exit.
		 */
		t->bind_pending = cpu + 1;
		if (!t->preempt_pinned && ult__rt.preempt <= 0)
			mach_ast(&t->td, t->td.td_oncpu);
		thread_unlock(&t->td);
		return (0);
	}
	move = ult__rt.sched->bind(&t->td, cpu);
	if (move && t == self) {
		/* sched_bind: switch now; we come back on `cpu'. */
		ult__mi_switch(self, SW_VOL | SWT_BIND, NULL);
		ult__userret();
		return (0);
	}
	thread_unlock(&t->td);
	return (0);
}

int
ult_setclass(ult_thread_t *t, int cls, int prio)
{
	int err;

	if (cls < ULT_CLASS_TIMESHARE || cls > ULT_CLASS_IDLE ||
	    prio < RTP_PRIO_MIN || prio > RTP_PRIO_MAX)
		return (ult__running() ? EINVAL : ENXIO);
	if ((err = ult__thread_lock_handle(&t, 1)) != 0)
		return (err);
	ult__class_apply(&t->td, cls, prio);
	thread_unlock(&t->td);
	if (t == ult__self_ut())
		ult__userret();
	return (0);
}

int
ult_getclass(ult_thread_t *t, int *cls, int *prio)
{
	int err, pc;

	if (cls == NULL || prio == NULL)
		return (ult__running() ? EINVAL : ENXIO);
	if ((err = ult__thread_lock_handle(&t, 0)) != 0)
		return (err);
	pc = t->td.td_pri_class;
	if (pc == PRI_FIFO || PRI_BASE(pc) == PRI_REALTIME) {
		*cls =
		    pc == PRI_FIFO ? ULT_CLASS_REALTIME : ULT_CLASS_REALTIME_RR;
		*prio = t->td.td_base_user_pri - PRI_MIN_REALTIME;
	} else if (pc == PRI_IDLE) {
		*cls = ULT_CLASS_IDLE;
		*prio = t->td.td_base_user_pri - PRI_MIN_IDLE;
	} else {
		*cls = ULT_CLASS_TIMESHARE;
		*prio = 0;
	}
	thread_unlock(&t->td);
	return (0);
}

static const struct sched_tunable chaos_tunables[] = {
    {"ult.chaos_migrate", &ult__chaos_migrate, 0, 2, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

const struct ult__subsys ult__chaos_subsys = {.name = "chaos",
    .tunables = chaos_tunables};
