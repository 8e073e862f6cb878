/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Condition variables on a sleep queue (the wait channel is the cond).
 * _waiters counts threads queued or about to queue; wakers decrement it
 * for the threads they wake, so a waker never touches the object after
 * the wakeup and a cond may be destroyed as soon as nobody waits.  It
 * changes only under the cond's chain lock (a timed-out waiter takes that
 * lock to count itself out), so plain stores do, and a signal with no
 * waiter reads it without the lock.  A
 * waiter whose mutex the waker owns is woken at that mutex's unlock
 * instead (wait morphing, mutex.c).
 */
#include <errno.h>
#include <limits.h>

#include "sync.h"

int
ult_cond_init(ult_cond_t *c)
{
	if (c == NULL)
		return (EINVAL);
	ULT_PST(&c->_waiters, 0);
	c->_spare = 0;
	c->_spare2 = 0;
	return (0);
}

int
ult_cond_destroy(ult_cond_t *c)
{
	if (c == NULL)
		return (EINVAL);
	return (ULT_PLD_ACQ(&c->_waiters) != 0 ? EBUSY : 0);
}

static int
cond_wait(ult_cond_t *c, ult_mutex_t *m, uint64_t deadline)
{
	struct ult__waiter w;
	uintptr_t self;
	int r;

	if (c == NULL || m == NULL)
		return (EINVAL);
	self = ult__waiter_self(&w);
	if (!ult__mutex_owned(m, self))
		return (EPERM);
	/* Wakeups this thread deferred to m's unlock happen now: the unlock
	 * below runs under our chain lock, which theirs may not nest in. */
	ult__mutex_flush_deferred(m, self);
	/* Queue before releasing m: a signal after our unlock finds us. */
	ult__sleepq_lock(c);
	ULT_PST(&c->_waiters, ULT_PLD(&c->_waiters) + 1);
	ult__sleepq_add(c, &w, "cond");
	w.mutex = m;
	ult__mutex_unlock_locked(m, self);
	r = ult__sleepq_wait(c, &w, deadline);
	if (r != 0) { /* a timeout removed us; nobody counted us out */
		ult__sleepq_lock(c);
		ULT_PST_REL(&c->_waiters, ULT_PLD(&c->_waiters) - 1);
		ult__sleepq_release(c);
	}
	ult__mutex_relock(m);
	return (r);
}

int
ult_cond_wait(ult_cond_t *c, ult_mutex_t *m)
{
	return (cond_wait(c, m, 0));
}

int
ult_cond_timedwait(ult_cond_t *c, ult_mutex_t *m, uint64_t deadline)
{
	return (cond_wait(c, m, ult__sync_deadline(deadline)));
}

static int
cond_wake(ult_cond_t *c, int all)
{
	struct ult__waiter *w, *first;
	uintptr_t self;
	unsigned n = 0;

	if (c == NULL)
		return (EINVAL);
	if (ULT_PLD_ACQ(&c->_waiters) == 0)
		return (0);
	self = ult__sync_self_id();
	ult__sleepq_lock(c);
	/* Taken off the queue, they cannot run until resumed: count them
	 * out first, since a woken waiter may destroy the cond at once. */
	first = ult__sleepq_take(c, all ? INT_MAX : 1);
	for (w = first; w != NULL; w = w->next)
		n++;
	if (n != 0)
		ULT_PST_REL(&c->_waiters, ULT_PLD(&c->_waiters) - n);
	for (w = first; w != NULL;) {
		struct ult__waiter *next = w->next;
		ult_mutex_t *m = (ult_mutex_t *)(uintptr_t)w->mutex;

		if (m != NULL && ult__mutex_owned(m, self))
			ult__mutex_defer(m, w);
		else
			ult__sleepq_resume(c, w);
		w = next;
	}
	ult__sleepq_release(c);
	ult__sync_done();
	return (0);
}

int
ult_cond_signal(ult_cond_t *c)
{
	return (cond_wake(c, 0));
}

int
ult_cond_broadcast(ult_cond_t *c)
{
	return (cond_wake(c, 1));
}
