/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by the lock tests of rt_preempt_locks.c and rt_preempt_c11.c,
 * and by the static executable's tests (static_link.c). */
#ifndef ULT_TEST_RT_PREEMPT_LOCKS_H
#define ULT_TEST_RT_PREEMPT_LOCKS_H

enum {
	HOLD_RWLOCK,
	HOLD_SPIN,
	HOLD_STDIO,
	HOLD_C11
};

/* The calling uthread's count of locks held through libc. */
int lock_count(void);
/* Every wrapper, its count, success and failure; needs the runtime. */
void lock_count_checks(void);
/* Uthreads holding one kind of lock under preemption, on 1 then 2
 * workers; starts and stops the runtime. */
void hold_under_preemption(int kind);

/* rt_preempt_c11.c */
void c11_lock_init(void);
void c11_lock_hold(int on); /* from a foreign thread */
void c11_failed_attempts(void);
void c11_lock_checks(void);
void c11_hold(void (*fn)(void));

#endif
