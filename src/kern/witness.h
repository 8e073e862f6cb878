/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the idea of FreeBSD's sys/kern/subr_witness.c. */
/*
 * The lock checker (witness.c, DESIGN.md "The lock checker"): on in debug
 * builds and with ULT_WITNESS=1, off otherwise, where each hook costs one
 * test of ult__witness_on.  It reports, once each, a uthread that waits
 * (a voluntary switch) while it holds a lock taken through libc, and a
 * reversal of the order in which ult mutexes and rwlocks were taken.
 */
#ifndef ULT_KERN_WITNESS_H
#define ULT_KERN_WITNESS_H

#include <stdint.h>

struct ult_thread;

/* Lock kinds, for the reports. */
enum {
	WIT_PTHREAD_MUTEX = 1, /* also C11 mtx_t and C++ std::mutex */
	WIT_PTHREAD_RWLOCK,
	WIT_PTHREAD_SPIN,
	WIT_FILE, /* flockfile */
	WIT_ULT_MUTEX,
	WIT_ULT_RWLOCK
};

#define WIT_NLIBC 4 /* locks held through libc a uthread names */
#define WIT_NHELD 8 /* ult locks a uthread's order checks see */

struct ult__wit_lock {
	const void *lock;
	const void *site; /* return address of the locking call, or NULL */
	int kind;
};

/* A uthread's part (struct ult_thread's; all (s)).  The counts go on past
 * the arrays: the locks beyond are not named or checked. */
struct ult__witness_part {
	int wit_nlibc, wit_nheld;
	struct ult__wit_lock wit_libc[WIT_NLIBC];
	struct ult__wit_lock wit_held[WIT_NHELD];
};

/* Set once by ult_init (before any uthread runs), read by every hook;
 * read-only sysctl ult.witness. */
extern int ult__witness_on __attribute__((visibility("hidden")));

void ult__witness_thread_init(struct ult_thread *ut);
/* preempt_shim.c, ut not NULL: before an acquisition through libc / after
 * its release or failure. */
void ult__witness_libc_hold(struct ult_thread *ut, int kind, const void *lock);
void ult__witness_libc_drop(struct ult_thread *ut, const void *lock);
/* switch.c, thread locked: ut switches away voluntarily (flags SW_*). */
void ult__witness_switch(struct ult_thread *ut, int flags);
/* src/api: the caller is about to wait for an ult lock (the order check,
 * before the wait, so that a deadlock is reported before it happens) /
 * took / released / destroyed one. */
void ult__witness_order(int kind, const void *lock, const void *site);
void ult__witness_acquired(int kind, const void *lock, const void *site);
void ult__witness_released(const void *lock);
void ult__witness_destroyed(const void *lock);
/* Reports so far (tests). */
uint64_t ult__witness_nreports(void);

#endif
