/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counting semaphores.  One 64-bit word holds the value (low half) and the
 * number of registered waiters (high half), so the compare-and-swap that
 * posts also tells the poster whether anyone must be woken, and a post
 * touches the semaphore's memory only in that one operation (the wakeup
 * goes by address), which lets a waiter destroy it as soon as it returns.
 *
 * A waiter registers under the sleep-queue chain lock, then re-checks the
 * value.  A post that sees no registered waiter increments the value; one
 * that sees some takes the chain lock and hands its unit to the first
 * sleeper directly: it removes the sleeper's registration, leaves the value
 * alone and wakes it, and the woken waiter returns without touching the
 * semaphore again.  A wake-then-compete semaphore would have the woken
 * thread take the chain lock and retry, and perhaps sleep again when a
 * running thread took the count first; the handoff saves that round trip
 * on every pass (a thread ring is nothing else) and serves waiters in
 * order.  A registered waiter that is not queued (it timed out, or is
 * being interrupted, and will drop its registration itself) takes no
 * unit: the post then increments the value.
 */
#include <errno.h>

#include "sync.h"

#define SEM_W1 ((uint64_t)1 << 32)
#define SEM_VALUE(v) ((uint32_t)(v))
#define SEM_WAITERS(v) ((uint32_t)((v) >> 32))

int
ult_sem_init(ult_sem_t *s, unsigned value)
{
	if (s == NULL || value > ULT_SEM_VALUE_MAX)
		return (EINVAL);
	ULT_PST(&s->_word, (uint64_t)value);
	s->_spare = 0;
	return (0);
}

int
ult_sem_destroy(ult_sem_t *s)
{
	if (s == NULL)
		return (EINVAL);
	return (SEM_WAITERS(ULT_PLD_ACQ(&s->_word)) != 0 ? EBUSY : 0);
}

int
ult_sem_getvalue(ult_sem_t *s, int *value)
{
	if (s == NULL || value == NULL)
		return (EINVAL);
	*value = (int)SEM_VALUE(ULT_PLD(&s->_word));
	return (0);
}

int
ult_sem_trywait(ult_sem_t *s)
{
	uint64_t v;

	if (s == NULL)
		return (EINVAL);
	v = ULT_PLD(&s->_word);
	while (SEM_VALUE(v) > 0)
		if (ULT_PCAS_ACQ(&s->_word, &v, v - 1))
			return (0);
	return (EAGAIN);
}

static int
sem_wait_slow(ult_sem_t *s, uint64_t deadline)
{
	struct ult__waiter w;
	uint64_t v;
	int r;

	ult__waiter_self(&w);
	ult__sleepq_lock(s);
	/* seq_cst: the waiter count is raised before the value is read;
	 * pairs with ult_sem_post's add of a unit and its read of the
	 * count: either the post sees this waiter or this sees the unit. */
	v = ULT_PADD_FETCH_SC(&s->_word, SEM_W1);
	while (SEM_VALUE(v) > 0) {
		if (ULT_PCAS(&s->_word, &v, v - 1 - SEM_W1)) {
			ult__sleepq_release(s);
			return (0);
		}
	}
	ult__sleepq_add(s, &w, "sem");
	r = ult__sleepq_wait(s, &w, deadline);
	/* 0: a post handed its unit over and dropped our registration. */
	if (r != 0) /* seq_cst: as above */
		ULT_PFETCH_SUB_SC(&s->_word, SEM_W1);
	return (r);
}

static int
sem_sleep(ult_sem_t *s, uint64_t deadline)
{
	int r;

	if (ult_sem_trywait(s) == 0)
		return (0);
	if (s == NULL)
		return (EINVAL);
	r = sem_wait_slow(s, deadline);
	ult__sync_done();
	return (r);
}

int
ult_sem_wait(ult_sem_t *s)
{
	return (sem_sleep(s, 0));
}

int
ult_sem_timedwait(ult_sem_t *s, uint64_t deadline)
{
	return (sem_sleep(s, ult__sync_deadline(deadline)));
}

int
ult_sem_post(ult_sem_t *s)
{
	struct ult__waiter *w;
	uint64_t v;

	if (s == NULL)
		return (EINVAL);
	v = ULT_PLD(&s->_word);
	while (SEM_WAITERS(v) == 0) {
		if (SEM_VALUE(v) >= ULT_SEM_VALUE_MAX)
			return (EOVERFLOW);
		if (ULT_PCAS(&s->_word, &v, v + 1))
			return (0);
	}
	/* Registrations change under the chain lock only (a timed-out
	 * waiter's drop aside, which never adds one). */
	ult__sleepq_lock(s);
	if ((w = ult__sleepq_take(s, 1)) != NULL) {
		ULT_PFETCH_SUB_SC(&s->_word, SEM_W1);
		ult__sleepq_resume(s, w);
	} else {
		v = ULT_PLD(&s->_word);
		do {
			if (SEM_VALUE(v) >= ULT_SEM_VALUE_MAX) {
				ult__sleepq_release(s);
				return (EOVERFLOW);
			}
		} while (!ULT_PCAS(&s->_word, &v, v + 1));
	}
	ult__sleepq_release(s);
	ult__sync_done();
	return (0);
}
