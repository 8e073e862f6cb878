/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the drop-in may call inside the runtime, beyond ult.h: the list
 * below is exact, and test/layering.sh fails when the drop-in's objects
 * reference a runtime symbol that is not on it (or the list names one
 * they no longer use).  A new entry point is added here first, with the
 * reason; the headers that declare them follow.
 *
 * The worker and the uthread on it (kern/worker.h, uthread.h):
 *   ult__worker_self ult__tls_worker ult__rt ult__spawn_on
 *   ult__worker_start_hook
 * A fork child's thread as its main uthread (kern/uthread.h):
 *   ult__thread_adopt
 * Sleeping and waking on sleep queues (kern/sleepq.h, waiter.h):
 *   ult__sleepq_lock ult__sleepq_add ult__sleepq_wait ult__sleepq_signal
 *   ult__sleepq_release ult__sleepq_interrupt ult__waiter_self
 *   ult__sync_self_id ult__foreign_intr
 * A mutex's owner: wait morphing's test, a fork child's unlock of
 * what the forking uthread held, and another thread's unlock of a
 * normal mutex, which glibc allows (api/sync.h):
 *   ult__mutex_owned ult__mutex_unlock_locked ult__mutex_owner
 *   ult__mutex_flush_deferred
 * Lock and barrier waits where a signal handler runs and the wait then
 * resumes, as POSIX asks (api/sync.h):
 *   ult__rwlock_tryrdlock_shared ult__barrier_wait_intr
 * A process-shared condition or barrier wait, whose helper must not
 * queue behind other waits (api/blocking.h):
 *   ult__blocking_unbounded
 * Whether the lock checker is on: a mutex's blocking call, which it
 * checks for order, is then not tried first (kern/witness.h):
 *   ult__witness_on
 * Signal masks, delivery at safe points (kern/signals.h, preempt.h,
 * os/linux/os.h):
 *   ult__sigmask_set ult__os_sigmask ult__os_sigmask_get
 *   ult__os_block_async_signals ult__preempt_sig_hook
 *   ult__preempt_safe_point ult__preempt_owe ult__preempt_kick
 *   ult__preempt_kick_thread ult__preempt_frame_fix ult__preempt_hook_due
 *   ult__preempt_hook_run
 * The spin locks and their assertions (util/lock.h, util/kassert.h):
 *   ult__mtx_lock_slow ult__mtx_wake ult__mtx_self ult__assert_fail
 * epoll_wait, which tries the set itself and then sleeps on the poller
 * without the extra poll(2) of ult_wait_fd (kern/io.h):
 *   ult__io_peek ult__io_ref ult__io_await
 * Threads that arrive while the drop-in starts the runtime sleep on
 * the start's state word (os/linux/os.h):
 *   ult__futex_wait ult__futex_wake
 * The clock, read as the runtime reads it: ult_now() is the program's
 * read, and a preemption may land in its vDSO code, which would switch
 * out a uthread holding a futex bucket's lock (os/linux/os.h):
 *   ult__now
 */
#ifndef ULT_DROPIN_RUNTIME_H
#define ULT_DROPIN_RUNTIME_H

#include "api/blocking.h"
#include "api/sync.h"
#include "kern/io.h"
#include "kern/preempt.h"
#include "kern/runtime.h"
#include "kern/sigmask.h"
#include "kern/signals.h"
#include "kern/sleepq.h"
#include "kern/uthread.h"
#include "kern/waiter.h"
#include "kern/witness.h"
#include "kern/worker.h"

#endif
