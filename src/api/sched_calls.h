/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef ULT_API_SCHED_CALLS_H
#define ULT_API_SCHED_CALLS_H

#include "ult.h"

#include "../util/atomic.h"

struct thread;
struct ult_thread;

/* sched_calls.c: a class and, outside timeshare, a fixed priority for
 * td (locked); resolve t (NULL: the caller) and lock it (ENXIO, EINVAL
 * for NULL outside a uthread, ESRCH gone or, with alive_only, exited). */
void ult__class_apply(struct thread *td, int cls, int prio);
int ult__thread_lock_handle(ult_thread_t **t, int alive_only);
/* sched_calls.c: ult.chaos_migrate (tests): ut (locked, current) is
 * about to switch with `flags'; a voluntary switch moves it to the next
 * worker. */
extern atomic_int ult__chaos_migrate;
void ult__chaos_switching(struct ult_thread *ut, int flags);

struct ult__subsys;
extern const struct ult__subsys ult__chaos_subsys;

#endif
