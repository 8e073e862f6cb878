/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Barriers and once, on sleep queues.  A barrier's fields change only
 * under its chain lock; its waiters are woken only by the round's last
 * arrival, so a woken waiter returns without touching the barrier again
 * (the serial thread may destroy it at once).
 */
#include <errno.h>

#include "sync.h"

int
ult_barrier_init(ult_barrier_t *b, unsigned count)
{
	if (b == NULL || count == 0)
		return (EINVAL);
	ult__sleepq_lock(b);
	b->_count = count;
	b->_waiting = 0;
	b->_round = 0;
	b->_spare = 0;
	ult__sleepq_release(b);
	return (0);
}

int
ult_barrier_destroy(ult_barrier_t *b)
{
	int busy;

	if (b == NULL)
		return (EINVAL);
	ult__sleepq_lock(b);
	/* _spare: arrivals out running a signal handler (the drop-in's
	 * waits), which will look at the barrier again. */
	busy = b->_waiting != 0 || b->_spare != 0;
	if (!busy)
		b->_count = 0;
	ult__sleepq_release(b);
	return (busy ? EBUSY : 0);
}

/*
 * Arrive at b, its chain lock held.  Either the barrier is destroyed
 * (EINVAL) or this is the round's last arrival, which ends the round and
 * wakes the others (ULT_BARRIER_SERIAL_THREAD): the lock is released; or
 * 0, the lock still held: the caller waits for the round to end.
 */
static int
barrier_arrive(ult_barrier_t *b)
{
	if (b->_count == 0) {
		ult__sleepq_release(b);
		return (EINVAL);
	}
	if (++b->_waiting == b->_count) {
		b->_waiting = 0;
		b->_round++;
		ult__sleepq_broadcast(b);
		ult__sleepq_release(b);
		ult__sync_done();
		return (ULT_BARRIER_SERIAL_THREAD);
	}
	return (0);
}

int
ult_barrier_wait(ult_barrier_t *b)
{
	struct ult__waiter w;
	unsigned round;
	int err;

	if (b == NULL)
		return (EINVAL);
	ult__waiter_self(&w);
	ult__sleepq_lock(b);
	if ((err = barrier_arrive(b)) != 0)
		return (err);
	round = b->_round;
	ult__sleepq_add(b, &w, "barrier");
	/* Interrupted (only the drop-in's waits are, for a signal handler
	 * to run): as if this thread had not arrived, unless the round has
	 * ended since; the caller arrives again. */
	if (ult__sleepq_wait(b, &w, 0) == EINTR) {
		ult__sleepq_lock(b);
		if (b->_round == round) {
			b->_waiting--;
			ult__sleepq_release(b);
			ult__sync_done();
			return (EINTR);
		}
		ult__sleepq_release(b);
	}
	ult__sync_done();
	return (0);
}

/*
 * The pthread drop-in's wait, where a signal handler runs during the wait
 * and the wait then resumes, as POSIX asks: interrupted (EINTR) the
 * caller stays counted as arrived, and calls again with again set and
 * the *round it was given, which returns at once if the round ended
 * meanwhile.  While it is away the barrier cannot be destroyed (EBUSY).
 */
int
ult__barrier_wait_intr(ult_barrier_t *b, unsigned *round, int again)
{
	struct ult__waiter w;
	int err;

	ult__waiter_self(&w);
	ult__sleepq_lock(b);
	if (again) {
		b->_spare--;
		if (b->_round != *round) {
			ult__sleepq_release(b);
			return (0);
		}
	} else {
		if ((err = barrier_arrive(b)) != 0)
			return (err);
		*round = b->_round;
	}
	ult__sleepq_add(b, &w, "barrier");
	if (ult__sleepq_wait(b, &w, 0) == EINTR) {
		ult__sleepq_lock(b);
		if (b->_round == *round) {
			b->_spare++;
			ult__sleepq_release(b);
			ult__sync_done();
			return (EINTR);
		}
		ult__sleepq_release(b);
	}
	ult__sync_done();
	return (0);
}

/* ult_once_t._state */
enum {
	ONCE_NEW = 0,
	ONCE_RUNNING,
	ONCE_WAITED, /* running, and somebody waits */
	ONCE_DONE
};

int
ult_once(ult_once_t *o, void (*fn)(void))
{
	struct ult__waiter w;
	unsigned v = ONCE_NEW;

	if (o == NULL || fn == NULL)
		return (EINVAL);
	if (ULT_PLD_ACQ(&o->_state) == ONCE_DONE)
		return (0);
	if (ULT_PCAS_ACQ(&o->_state, &v, ONCE_RUNNING)) {
		fn();
		v = ULT_PXCHG_ACQREL(&o->_state, ONCE_DONE);
		if (v == ONCE_WAITED) {
			ult__sleepq_lock(o);
			ult__sleepq_broadcast(o);
			ult__sleepq_release(o);
		}
		return (0);
	}
	ult__waiter_self(&w);
	ult__sleepq_lock(o);
	for (;;) {
		v = ULT_PLD_ACQ(&o->_state);
		if (v == ONCE_DONE)
			break;
		if (v == ONCE_RUNNING && !ULT_PCAS(&o->_state, &v, ONCE_WAITED))
			continue;
		ult__sleepq_add(o, &w, "once");
		ult__sleepq_wait(o, &w, 0);
		ult__sleepq_lock(o);
	}
	ult__sleepq_release(o);
	ult__sync_done();
	return (0);
}
