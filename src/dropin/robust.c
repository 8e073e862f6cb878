/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Robust and priority-ceiling mutexes of one process (DESIGN.md section
 * 14, "Robust and priority-ceiling mutexes").  glibc's robust mutexes
 * rest on the kernel's robust list, which it walks when a kernel thread
 * ends; a uthread ends without its worker ending, so the drop-in keeps
 * the list itself: each thread links the robust mutexes it takes through
 * the mutexes (struct dp_mutex's rnext), and as it ends it marks each
 * one's owner dead and unlocks it.  The next owner then gets EOWNERDEAD
 * and the mutex is inconsistent until pthread_mutex_consistent; unlocked
 * inconsistent, it is not recoverable (ENOTRECOVERABLE for ever after),
 * as POSIX says.
 *
 * A priority ceiling is kept where glibc keeps it, in the kind's upper
 * bits, and the getter and setter work on it; the thread that holds the
 * mutex is not raised to it (ult's mutexes lend the priority of their
 * waiters instead, which is PTHREAD_PRIO_INHERIT's protection).
 */
#include <errno.h>
#include <sched.h>

#include "dropin.h"
#include "runtime.h"

/* The kind for a process-private mutex with these attributes. */
int
ult__dropin_mutex_attrs(const pthread_mutexattr_t *a, int *kind)
{
	int t = PTHREAD_MUTEX_DEFAULT, v;

	if (a == NULL) {
		*kind = t;
		return (0);
	}
	if (pthread_mutexattr_gettype(a, &t) != 0)
		return (EINVAL);
	if (pthread_mutexattr_getrobust(a, &v) == 0 &&
	    v == PTHREAD_MUTEX_ROBUST)
		t |= DP_GL_ROBUST;
	if (pthread_mutexattr_getprotocol(a, &v) == 0 &&
	    v == PTHREAD_PRIO_PROTECT) {
		if (pthread_mutexattr_getprioceiling(a, &v) != 0)
			return (EINVAL);
		if (v < sched_get_priority_min(SCHED_FIFO))
			v = sched_get_priority_min(SCHED_FIFO);
		t |= DP_GL_PP | (int)((unsigned)v << DP_GL_CEILING_SHIFT);
	}
	*kind = t;
	return (0);
}

int
ult__dropin_robust_taken(struct dp_mutex *m)
{
	struct dp_thread *dp = ult__dropin_self();
	int err = 0;

	switch (m->rstate) {
	case DP_ROBUST_NOTRECOV:
		ult_mutex_unlock(&m->m);
		return (ENOTRECOVERABLE);
	case DP_ROBUST_DEAD:
		m->rstate = DP_ROBUST_INCONS;
		err = EOWNERDEAD;
		break;
	default:
		break;
	}
	if (dp != NULL) {
		m->rnext = dp->robust;
		dp->robust = m;
	}
	return (err);
}

void
ult__dropin_robust_release(struct dp_mutex *m)
{
	struct dp_thread *dp = ult__dropin_self();

	if (m->rstate == DP_ROBUST_INCONS)
		m->rstate = DP_ROBUST_NOTRECOV;
	if (dp == NULL)
		return;
	for (struct dp_mutex **p = (struct dp_mutex **)&dp->robust; *p != NULL;
	     p = &(*p)->rnext) {
		if (*p == m) {
			*p = m->rnext;
			break;
		}
	}
	m->rnext = NULL;
}

int
ult__dropin_robust_consistent(struct dp_mutex *m)
{
	if ((m->kind & DP_GL_ROBUST) == 0 || m->rstate != DP_ROBUST_INCONS ||
	    !ult__mutex_owned(&m->m, ult__sync_self_id()))
		return (EINVAL);
	m->rstate = DP_ROBUST_OK;
	return (0);
}

void
ult__dropin_owner_exit(struct dp_thread *dp)
{
	struct dp_mutex *m;

	while ((m = dp->robust) != NULL) {
		dp->robust = m->rnext;
		m->rnext = NULL;
		m->rstate = DP_ROBUST_DEAD;
		m->depth = 0;
		ult_mutex_unlock(&m->m);
	}
	ult__dropin_held_free(dp);
}

/* Priority ceilings. */

int
pthread_mutex_getprioceiling(const pthread_mutex_t *pm, int *ceiling)
{
	const struct dp_mutex *m = (const void *)pm;

	if ((m->kind & DP_GL_PP) == 0 || (m->kind & DP_GL_PSHARED) != 0)
		return (EINVAL);
	*ceiling = (int)(((unsigned)m->kind & DP_GL_CEILING_MASK) >>
	    DP_GL_CEILING_SHIFT);
	return (0);
}

int
pthread_mutex_setprioceiling(pthread_mutex_t *pm, int ceiling, int *old)
{
	struct dp_mutex *m = (void *)pm;
	int err, mine;

	ult__dropin_up();
	if (ceiling < sched_get_priority_min(SCHED_FIFO) ||
	    ceiling > sched_get_priority_max(SCHED_FIFO) ||
	    ((unsigned)ceiling << DP_GL_CEILING_SHIFT >> DP_GL_CEILING_SHIFT) !=
		(unsigned)ceiling)
		return (EINVAL);
	if ((m->kind & DP_GL_PP) == 0 || (m->kind & DP_GL_PSHARED) != 0)
		return (EINVAL);
	/* POSIX: it locks the mutex, unless the caller holds it. */
	mine = ult__mutex_owned(&m->m, ult__sync_self_id());
	if (!mine && (err = ult_mutex_lock(&m->m)) != 0)
		return (err);
	*old = (int)(((unsigned)m->kind & DP_GL_CEILING_MASK) >>
	    DP_GL_CEILING_SHIFT);
	m->kind = (int)(((unsigned)m->kind & ~DP_GL_CEILING_MASK) |
	    ((unsigned)ceiling << DP_GL_CEILING_SHIFT));
	if (!mine)
		ult_mutex_unlock(&m->m);
	return (0);
}
