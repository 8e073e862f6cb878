/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Waiter identity and the foreign-thread half of blocking (see waiter.h).
 */
#include <errno.h>

#include "../arch/cpu.h"
#include "runtime.h"
#include "worker.h"
#include "waiter.h"

/* Only its address matters; aligned so the id's flag bits are free. */
static __thread _Alignas(8) char foreign_token;

uintptr_t
ult__sync_self_id(void)
{
	/* No switch here: the worker may be read directly. */
	struct ult__worker *k = ult__tls_worker;

	if (k != NULL && k->curthread != &k->idle)
		return ((uintptr_t)k->curthread);
	return ((uintptr_t)&foreign_token | SYNC_ID_FOREIGN);
}

uintptr_t
ult__waiter_self(struct ult__waiter *w)
{
	/* No switch here: the worker may be read directly. */
	struct ult__worker *k = ult__tls_worker;

	w->ut = k != NULL && k->curthread != &k->idle ? k->curthread : NULL;
	w->id = w->ut != NULL ? (uintptr_t)w->ut
			      : ((uintptr_t)&foreign_token | SYNC_ID_FOREIGN);
	w->pri =
	    w->ut != NULL ? ULT_PLD(&w->ut->td.td_priority) : SYNC_PRI_FOREIGN;
	w->flags = 0;
	w->result = 0;
	w->ts = NULL;
	w->mutex = NULL;
	w->next = NULL;
	atomic_init(&w->futex, 0);
	ult__list_init(&w->link);
	return (w->id);
}

/*
 * A foreign waiter's word: WAITING (spinning or about to sleep), SLEEPING
 * (in the kernel: the waker must make a system call), WOKEN.  The waiter
 * spins first, because most waits on ult objects end within microseconds
 * (a uthread runs the little the waiter waits for) and a sleep and its
 * wakeup cost several; then it sleeps.
 */
enum {
	FW_WAITING = 0,
	FW_WOKEN = 1,
	FW_SLEEPING = 2
};

__thread int ult__foreign_intr;

/* How long a foreign waiter spins before it sleeps in the kernel. */
#define FOREIGN_SPIN_NS 20000u

int
ult__waiter_park_foreign(struct ult__waiter *w, uint64_t deadline)
{
	uint64_t until = ult__now() + FOREIGN_SPIN_NS;
	unsigned v = FW_WAITING;

	for (unsigned i = 1; ULT_LD_ACQ(&w->futex) != FW_WOKEN; i++) {
		if ((i & 63) == 0 && ult__now() >= until)
			break;
		ult__cpu_relax();
	}
	/* Announce the sleep; a woken word (or a second park after a
	 * timeout, already announced) says where we stand. */
	/* Pairs with ult__waiter_wake_foreign's exchange to FW_WOKEN: two
	 * read-modify-writes of one word, so either the waker finds
	 * FW_SLEEPING and wakes the futex or this finds FW_WOKEN.  seq_cst,
	 * as before the explicit form; acq_rel would do. */
	if (!ULT_CAS_SC(&w->futex, &v, FW_SLEEPING) && v == FW_WOKEN)
		return (0);
	while (ULT_LD_ACQ(&w->futex) == FW_SLEEPING) {
		int e = ult__futex_wait(&w->futex, FW_SLEEPING, deadline);

		if (ULT_LD_ACQ(&w->futex) != FW_SLEEPING)
			break;
		if (e == ETIMEDOUT || (e == EINTR && ult__foreign_intr))
			return (e);
	}
	return (0);
}

/*
 * Once the word says WOKEN the waiter may return and its stack frame
 * (where w lives) may be gone, so the wake call uses only the address,
 * and only when the waiter sleeps in the kernel.  A futex wake on a dead
 * address is harmless: at worst a spurious wakeup of an unrelated futex
 * waiter, which always re-checks its word.
 */
void
ult__waiter_wake_foreign(struct ult__waiter *w)
{
	atomic_uint *f = &w->futex;

	if (atomic_exchange_explicit(f, FW_WOKEN, memory_order_acq_rel) ==
	    FW_SLEEPING)
		ult__wake_counted(f);
}
