/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The waiter abstraction shared by sleep queues and turnstiles.  Anything
 * that blocks in ult is either a uthread, which sleeps through the
 * scheduler (its worker runs something else), or a foreign pthread, which
 * blocks in the kernel on a futex word inside its waiter.  Wakers never
 * need to know which: they unlink the waiter under the queue's lock, set
 * its result and call resume.
 *
 * Lock owners are named by an id: a uthread's struct pointer, or, for a
 * foreign thread, the address of a thread-local token with SYNC_ID_FOREIGN
 * set.  Both are stable for the thread's life, and ids are aligned, so the
 * low bits of a lock word are free for flags.
 */
#ifndef ULT_SYNC_WAITER_H
#define ULT_SYNC_WAITER_H

#include <stdint.h>

#include "../util/atomic.h"
#include "../util/list.h"

struct ult_thread;
struct ult__turnstile;

#define SYNC_ID_FOREIGN ((uintptr_t)2)
#define SYNC_ID_FLAGS ((uintptr_t)7)

/* Waiter result: the waker made the caller the lock's owner. */
#define SYNC_GRANTED (-1)

/* w_flags */
#define WF_REQUEUED 0x1 /* woken once, lost the lock to a running thread */

struct ult__waiter {
	struct ult__list link;	   /* on a sleep queue or turnstile */
	const void *wchan;	   /* sleep queue channel or lock object */
	struct ult_thread *ut;	   /* NULL: a foreign thread */
	uintptr_t id;		   /* SYNC_ID of the waiting thread */
	atomic_uint futex;	   /* foreign: 0 waiting, 1 resumed */
	int result;		   /* 0, SYNC_GRANTED or ETIMEDOUT */
	int pri;		   /* turnstile order: priority when queued */
	int flags;		   /* WF_* */
	struct ult__turnstile *ts; /* the turnstile it blocks on */
	struct ult__turnstile *spare; /* turnstile given / given back */
	const void *mutex;	      /* a cond waiter's mutex, to relock */
	struct ult__waiter *next;     /* on a mutex's deferred wakeups */
};

/*
 * Fill in the identity of the calling thread (uthread or foreign) and
 * return its lock-owner id.
 */
uintptr_t ult__waiter_self(struct ult__waiter *w);

/* The lock-owner id of the caller, without a waiter. */
uintptr_t ult__sync_self_id(void);

/* The uthread an id names, or NULL for a foreign thread. */
static inline struct ult_thread *
ult__sync_id_thread(uintptr_t id)
{
	return ((id & SYNC_ID_FOREIGN) ? NULL : (struct ult_thread *)id);
}

/* Priority a foreign waiter queues with: the middle of the timeshare band,
 * since it has no policy priority of its own. */
#define SYNC_PRI_FOREIGN 155

/* A foreign waiter blocks until resumed or the deadline (0: none); returns
 * 0 when resumed, ETIMEDOUT when the deadline passed first, and EINTR
 * when a signal handler ended its sleep in the kernel while the thread's
 * ult__foreign_intr was set (the kernel restarts an untimed wait after a
 * handler with SA_RESTART, as it restarts a native sem_wait). */
int ult__waiter_park_foreign(struct ult__waiter *w, uint64_t deadline_ns);
/* Set by a foreign thread around a wait that a handler ends with EINTR
 * (the drop-in's sem_wait in a fork child that has no runtime yet). */
extern __thread int ult__foreign_intr;

/* Mark w resumed; a uthread waiter must be made runnable by the caller. */
void ult__waiter_wake_foreign(struct ult__waiter *w);

#endif
