/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's run queues (sys/kern/kern_switch.c). */
/*
 * The 64-queue run queue with a status bitmap (kern_switch.c's runq),
 * shared by sched_ule and sched_4bsd.  Queue i holds priorities
 * i*RQ_PPQ .. i*RQ_PPQ+3; each queue is FIFO.  The functions keep
 * kern_switch.c's names, which already carry the runq_ prefix, so that is
 * also their name at link time.  A runq has no lock of its own: its owner
 * holds the lock that covers it (ULE: the tdq's; 4BSD: bsd_sched_lock).
 */
#ifndef ULT_SCHED_RUNQ_H
#define ULT_SCHED_RUNQ_H

#include <stdint.h>

#include "thread.h"

#define RQ_NQS 64
#define RQ_PPQ 4

struct runq {
	uint64_t rq_status; /* bit i set iff rq_queues[i] is not empty */
	struct ult__list rq_queues[RQ_NQS];
};

void runq_init(struct runq *rq);
/* Queue by td_priority; SRQ_PREEMPTED puts td at the head. */
void runq_add(struct runq *rq, struct thread *td, int flags);
/* Queue on an explicit index (the ULE calendar). */
void runq_add_pri(struct runq *rq, struct thread *td, int idx, int flags);
void runq_remove(struct runq *rq, struct thread *td);
/* Remove; if td's queue empties and *idx names it, advance *idx. */
void runq_remove_idx(struct runq *rq, struct thread *td, uint8_t *idx);
/* Head of the best non-empty queue, or NULL. */
struct thread *runq_choose(const struct runq *rq);
/* Head of the first non-empty queue at or after idx, wrapping once. */
struct thread *runq_choose_from(const struct runq *rq, int idx);
void runq_dump(const char *name, const struct runq *rq,
    void (*out)(void *, const char *), void *arg);

static inline int
runq_empty(const struct runq *rq)
{
	return (rq->rq_status == 0);
}

static inline struct thread *
runq_thread(struct ult__list *n)
{
	return (ULT_CONTAINER_OF(n, struct thread, td_runq));
}

/* First non-empty queue index at or after start (no wrap), or -1. */
static inline int
runq_findbit_from(const struct runq *rq, int start)
{
	uint64_t bits;

	if (start >= RQ_NQS)
		return (-1);
	bits = rq->rq_status & (~(uint64_t)0 << start);
	return (bits == 0 ? -1 : __builtin_ctzll(bits));
}

#endif
