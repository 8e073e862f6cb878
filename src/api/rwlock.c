/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reader-writer locks on turnstiles: writers wait on the exclusive queue,
 * readers on the shared one, and the write owner receives priority
 * propagation like a mutex owner (readers are not tracked, as in FreeBSD).
 *
 * The state word holds the reader count and three flags.  Whenever a
 * queue is non-empty its flag is set (waiters set it under the turnstile
 * chain lock before blocking), and a release that finds a flag set hands
 * the lock over under that chain lock instead of freeing it: a writer's
 * unlock admits every waiting reader, or else the next writer; the last
 * reader's unlock admits the next writer.  New readers wait while a writer
 * waits.  No waiter is ever woken to retry, so nobody is overtaken.
 */
#include <errno.h>

#include "sync.h"

#define RW_WRITE 1u /* write-locked */
#define RW_WWAIT 2u /* writers wait */
#define RW_RWAIT 4u /* readers wait */
#define RW_ONE 8u   /* one reader */
#define RW_READERS(v) ((v) >> 3)
#define RW_HELD(v) (((v)&RW_WRITE) || RW_READERS(v) != 0)

int
ult_rwlock_init(ult_rwlock_t *rw)
{
	if (rw == NULL)
		return (EINVAL);
	ULT_PST(&rw->_state, 0);
	ULT_PST(&rw->_owner, 0);
	rw->_spare = 0;
	rw->_spare2[0] = rw->_spare2[1] = 0;
	return (0);
}

static int
rw_destroy(ult_rwlock_t *rw)
{
	if (rw == NULL)
		return (EINVAL);
	return (ULT_PLD_ACQ(&rw->_state) != 0 ? EBUSY : 0);
}

static int
rw_tryrdlock(ult_rwlock_t *rw)
{
	unsigned v;

	if (rw == NULL)
		return (EINVAL);
	v = ULT_PLD(&rw->_state);
	while (!(v & (RW_WRITE | RW_WWAIT)))
		if (ULT_PCAS_ACQ(&rw->_state, &v, v + RW_ONE))
			return (0);
	return (EBUSY);
}

/* A read lock while others hold it for reading, writers waiting or not:
 * glibc's default kind prefers readers so (the pthread drop-in). */
int
ult__rwlock_tryrdlock_shared(ult_rwlock_t *rw)
{
	unsigned v = ULT_PLD(&rw->_state);

	while (!(v & RW_WRITE) && RW_READERS(v) != 0)
		if (ULT_PCAS_ACQ(&rw->_state, &v, v + RW_ONE))
			return (0);
	return (EBUSY);
}

static int
rw_trywrlock(ult_rwlock_t *rw)
{
	unsigned v = 0;

	if (rw == NULL)
		return (EINVAL);
	if (!ULT_PCAS_ACQ(&rw->_state, &v, RW_WRITE))
		return (EBUSY);
	ULT_PST_REL(&rw->_owner, ult__sync_self_id());
	return (0);
}

/* Could a reader / writer take the lock in state v right now? */
static int
rw_open(unsigned v, int queue)
{
	if (queue == TS_SHARED_QUEUE)
		return (!(v & (RW_WRITE | RW_WWAIT)));
	return (!RW_HELD(v));
}

/*
 * Chain locked (ts: rw's turnstile, or NULL): a waiter has left a queue
 * without a grant (its lock wait was interrupted, ult__ts_interrupt), so
 * a flag may name a queue that is now empty.  Clear it; readers that
 * waited only for departed writers are admitted now.  Unlocks.
 */
static void
flags_settle(ult_rwlock_t *rw, struct ult__turnstile *ts)
{
	int nw = ts != NULL ? ult__ts_count(ts, TS_EXCLUSIVE_QUEUE) : 0;
	int nr = ts != NULL ? ult__ts_count(ts, TS_SHARED_QUEUE) : 0;
	unsigned v = ULT_PLD(&rw->_state), n;

	do {
		n = v & ~((nw ? 0 : RW_WWAIT) | (nr ? 0 : RW_RWAIT));
		if (nr != 0 && !(n & (RW_WRITE | RW_WWAIT)))
			n = (n & ~RW_RWAIT) + (unsigned)nr * RW_ONE;
	} while (n != v && !ULT_PCAS(&rw->_state, &v, n));
	if (nr != 0 && !(n & RW_RWAIT)) {
		ult__ts_broadcast(ts, TS_SHARED_QUEUE, SYNC_GRANTED);
		ult__ts_unpend(rw, ts, 0);
		return;
	}
	ult__ts_release(rw, ts);
}

/*
 * Block on rw's turnstile in queue, whose flag is `flag'.  Returns 1 once
 * the lock was granted, 0 to retry, or an errno.
 */
static int
rw_block(ult_rwlock_t *rw, int queue, unsigned flag)
{
	struct ult__waiter w;
	struct ult__turnstile *ts;
	unsigned v;
	uintptr_t owner;
	int r;

	if (ult__ts_prepare() != 0) {
		unsigned b = 0;

		ult__spin_backoff(&b);
		return (0);
	}
	ult__waiter_self(&w);
	ts = ult__ts_lookup(rw);
	v = ULT_PLD(&rw->_state);
	if (rw_open(v, queue)) {
		ult__ts_release(rw, ts);
		return (0);
	}
	if (!(v & flag) && !ULT_PCAS(&rw->_state, &v, v | flag)) {
		ult__ts_release(rw, ts);
		return (0);
	}
	/* Acquire: the waiter touches the owner's thread (set_owner). */
	owner = (v & RW_WRITE) ? ULT_PLD_ACQ(&rw->_owner) : 0;
	r = ult__ts_wait(rw, ts, owner, queue, &w, 0, "rwlock");
	if (r == SYNC_GRANTED)
		return (1); /* the wakeup ordered us after the releaser */
	if (r == EINTR)
		flags_settle(rw, ult__ts_lookup(rw));
	return (r);
}

static int
rdlock_slow(ult_rwlock_t *rw)
{
	uintptr_t self = ult__sync_self_id();

	for (;;) {
		unsigned v = ULT_PLD(&rw->_state);
		int r;

		if (!(v & (RW_WRITE | RW_WWAIT))) {
			if (ULT_PCAS_ACQ(&rw->_state, &v, v + RW_ONE))
				return (0);
			continue;
		}
		if ((v & RW_WRITE) && ULT_PLD(&rw->_owner) == self)
			return (EDEADLK);
		r = rw_block(rw, TS_SHARED_QUEUE, RW_RWAIT);
		if (r == 1)
			return (0);
		if (r != 0)
			return (r);
	}
}

static int
rw_rdlock(ult_rwlock_t *rw)
{
	int r;

	if (rw_tryrdlock(rw) == 0)
		return (0);
	if (rw == NULL)
		return (EINVAL);
	r = rdlock_slow(rw);
	ult__sync_done();
	return (r);
}

static int
wrlock_slow(ult_rwlock_t *rw, uintptr_t self)
{
	for (;;) {
		unsigned v = ULT_PLD(&rw->_state);
		int r;

		if (!RW_HELD(v)) {
			if (ULT_PCAS_ACQ(&rw->_state, &v, v | RW_WRITE)) {
				ULT_PST_REL(&rw->_owner, self);
				return (0);
			}
			continue;
		}
		if ((v & RW_WRITE) && ULT_PLD(&rw->_owner) == self)
			return (EDEADLK);
		r = rw_block(rw, TS_EXCLUSIVE_QUEUE, RW_WWAIT);
		if (r == 1)
			return (0);
		if (r != 0)
			return (r);
	}
}

static int
rw_wrlock(ult_rwlock_t *rw)
{
	uintptr_t self;
	unsigned v = 0;
	int r;

	if (rw == NULL)
		return (EINVAL);
	self = ult__sync_self_id();
	if (ULT_PCAS_ACQ(&rw->_state, &v, RW_WRITE)) {
		ULT_PST_REL(&rw->_owner, self);
		return (0);
	}
	r = wrlock_slow(rw, self);
	ult__sync_done();
	return (r);
}

/* Chain and ts locked, writers waiting: the head writer gets the lock. */
static void
grant_writer(ult_rwlock_t *rw, struct ult__turnstile *ts, unsigned keep)
{
	struct ult__waiter *w = ult__ts_head(ts, TS_EXCLUSIVE_QUEUE);
	uintptr_t id = w->id;
	unsigned more =
	    ult__ts_count(ts, TS_EXCLUSIVE_QUEUE) > 1 ? RW_WWAIT : 0;

	ult__ts_signal(ts, TS_EXCLUSIVE_QUEUE, SYNC_GRANTED);
	ULT_PST_REL(&rw->_owner, id);
	ULT_PST_REL(&rw->_state, RW_WRITE | more | keep);
	ult__ts_unpend(rw, ts, id);
}

/* The write owner releases with waiters (their flags are set). */
static void
wrunlock_slow(ult_rwlock_t *rw)
{
	struct ult__turnstile *ts = ult__ts_lookup(rw);
	int nr, nw;

	if (ts == NULL) { /* cannot happen: flags imply waiters */
		ULT_PST_REL(&rw->_state, 0);
		ult__ts_release(rw, NULL);
		return;
	}
	nr = ult__ts_count(ts, TS_SHARED_QUEUE);
	nw = ult__ts_count(ts, TS_EXCLUSIVE_QUEUE);
	if (nr == 0) {
		grant_writer(rw, ts, 0);
		return;
	}
	ult__ts_broadcast(ts, TS_SHARED_QUEUE, SYNC_GRANTED);
	ULT_PST_REL(&rw->_state, (unsigned)nr * RW_ONE | (nw ? RW_WWAIT : 0));
	ult__ts_unpend(rw, ts, 0);
}

/* The last reader leaves while a writer waits.  Returns 0 if the state
 * changed under us and the caller must retry. */
static int
rdunlock_slow(ult_rwlock_t *rw)
{
	struct ult__turnstile *ts = ult__ts_lookup(rw);
	unsigned v = ULT_PLD(&rw->_state);
	struct ult__waiter *w;
	uintptr_t id;

	if (RW_READERS(v) != 1 || !(v & RW_WWAIT)) {
		ult__ts_release(rw, ts);
		return (0);
	}
	/* The writers that set the flag left without the lock. */
	if (ts == NULL || ult__ts_count(ts, TS_EXCLUSIVE_QUEUE) == 0) {
		flags_settle(rw, ts);
		return (0);
	}
	/* From v only: a reader the drop-in's reader preference lets in
	 * (ult__rwlock_tryrdlock_shared) may have come meanwhile, and then
	 * this is not the last one. */
	w = ult__ts_head(ts, TS_EXCLUSIVE_QUEUE);
	if (!ULT_PCAS(&rw->_state, &v,
		RW_WRITE |
		    (ult__ts_count(ts, TS_EXCLUSIVE_QUEUE) > 1 ? RW_WWAIT : 0) |
		    (v & RW_RWAIT))) {
		ult__ts_release(rw, ts);
		return (0);
	}
	id = w->id;
	ULT_PST_REL(&rw->_owner, id);
	ult__ts_signal(ts, TS_EXCLUSIVE_QUEUE, SYNC_GRANTED);
	ult__ts_unpend(rw, ts, id);
	return (1);
}

static int
rw_unlock(ult_rwlock_t *rw)
{
	unsigned v;

	if (rw == NULL)
		return (EINVAL);
	v = ULT_PLD(&rw->_state);
	if (v & RW_WRITE) {
		if (ULT_PLD(&rw->_owner) != ult__sync_self_id())
			return (EPERM);
		ULT_PST(&rw->_owner, 0);
		if (v == RW_WRITE && ULT_PCAS_REL(&rw->_state, &v, 0))
			return (0);
		wrunlock_slow(rw);
		ult__sync_done();
		return (0);
	}
	for (;;) {
		if (RW_READERS(v) == 0)
			return (EPERM);
		if (RW_READERS(v) > 1 || !(v & RW_WWAIT)) {
			if (ULT_PCAS_REL(&rw->_state, &v, v - RW_ONE))
				return (0);
			continue;
		}
		if (rdunlock_slow(rw)) {
			ult__sync_done();
			return (0);
		}
		v = ULT_PLD(&rw->_state);
	}
}

/* The public calls: with the lock checker on, its hooks around them. */
static int __attribute__((noinline)) witness_lock(ult_rwlock_t *rw,
    int (*op)(ult_rwlock_t *), int blocking, const void *site)
{
	int r;

	if (blocking)
		ult__witness_order(WIT_ULT_RWLOCK, rw, site);
	if ((r = op(rw)) == 0)
		ult__witness_acquired(WIT_ULT_RWLOCK, rw, site);
	return (r);
}

#define RW_TAKE(op, blocking)                                       \
	int ult_rwlock_##op(ult_rwlock_t *rw)                       \
	{                                                           \
		if (ULT_UNLIKELY(ult__witness_on))                  \
			return (witness_lock(rw, rw_##op, blocking, \
			    __builtin_return_address(0)));          \
		return (rw_##op(rw));                               \
	}
RW_TAKE(tryrdlock, 0)
RW_TAKE(trywrlock, 0)
RW_TAKE(rdlock, 1)
RW_TAKE(wrlock, 1)

int
ult_rwlock_unlock(ult_rwlock_t *rw)
{
	int r = rw_unlock(rw);

	if (ULT_UNLIKELY(ult__witness_on) && r == 0)
		ult__witness_released(rw);
	return (r);
}

int
ult_rwlock_destroy(ult_rwlock_t *rw)
{
	int r = rw_destroy(rw);

	if (ULT_UNLIKELY(ult__witness_on) && r == 0)
		ult__witness_destroyed(rw);
	return (r);
}
