/*
 * Waiter identity and the foreign-thread half of blocking (see waiter.h).
 */
#include <errno.h>

#include "../core/runtime.h"
#include "waiter.h"

/* Only its address matters; aligned so the id's flag bits are free. */
static __thread _Alignas(8) char foreign_token;

uintptr_t
ult__sync_self_id(void)
{
	struct ult_thread *ut = ult__self_ut();

	if (ut != NULL)
		return ((uintptr_t)ut);
	return ((uintptr_t)&foreign_token | SYNC_ID_FOREIGN);
}

uintptr_t
ult__waiter_self(struct ult__waiter *w)
{
	w->ut = ult__self_ut();
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

int
ult__waiter_park_foreign(struct ult__waiter *w, uint64_t deadline)
{
	while (ULT_LD_ACQ(&w->futex) == 0) {
		if (ult__futex_wait(&w->futex, 0, deadline) == ETIMEDOUT &&
		    ULT_LD_ACQ(&w->futex) == 0)
			return (ETIMEDOUT);
	}
	return (0);
}

/*
 * After the release store the waiter may return and its stack frame (where
 * w lives) may be gone, so the wake call uses only the address.  A futex
 * wake on a dead address is harmless: at worst a spurious wakeup of an
 * unrelated futex waiter, which always re-checks its word.
 */
void
ult__waiter_wake_foreign(struct ult__waiter *w)
{
	atomic_uint *f = &w->futex;

	ULT_ST_REL(f, 1);
	ult__futex_wake(f, 1);
}
