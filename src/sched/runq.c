/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's run queues (sys/kern/kern_switch.c). */
/*
 * Run queue operations.  O(1): a bitmap finds the best non-empty queue
 * with one count-trailing-zeros instruction.
 */
#include <stdio.h>

#include "runq.h"

#if defined(__SANITIZE_THREAD__)
atomic_int ult__tsan_fence;
#endif
#include "sched.h"

void
runq_init(struct runq *rq)
{
	rq->rq_status = 0;
	for (int i = 0; i < RQ_NQS; i++)
		ult__list_init(&rq->rq_queues[i]);
}

void
runq_add_pri(struct runq *rq, struct thread *td, int idx, int flags)
{
	struct ult__list *q = &rq->rq_queues[idx];

	MPASS(idx >= 0 && idx < RQ_NQS && !ult__list_linked(&td->td_runq));
	td->td_rqindex = idx;
	rq->rq_status |= (uint64_t)1 << idx;
	if (flags & SRQ_PREEMPTED)
		ult__list_insert_head(q, &td->td_runq);
	else
		ult__list_insert_tail(q, &td->td_runq);
}

void
runq_add(struct runq *rq, struct thread *td, int flags)
{
	runq_add_pri(rq, td, td->td_priority / RQ_PPQ, flags);
}

void
runq_remove_idx(struct runq *rq, struct thread *td, uint8_t *idx)
{
	int q = td->td_rqindex;

	MPASS(q >= 0 && q < RQ_NQS && ult__list_linked(&td->td_runq));
	MPASS((rq->rq_status >> q) & 1);
	ult__list_remove(&td->td_runq);
	if (ult__list_empty(&rq->rq_queues[q])) {
		rq->rq_status &= ~((uint64_t)1 << q);
		if (idx != NULL && *idx == q)
			*idx = (uint8_t)((q + 1) % RQ_NQS);
	}
}

void
runq_remove(struct runq *rq, struct thread *td)
{
	runq_remove_idx(rq, td, NULL);
}

struct thread *
runq_choose(const struct runq *rq)
{
	int q;

	if (rq->rq_status == 0)
		return (NULL);
	q = __builtin_ctzll(rq->rq_status);
	return (runq_thread(rq->rq_queues[q].next));
}

/* For hang reports: one line per queued thread, at most 256; no lock. */
void
runq_dump(const char *name, const struct runq *rq,
    void (*out)(void *, const char *), void *arg)
{
	char line[160];
	int shown = 0;

	for (int q = 0; q < RQ_NQS; q++) {
		const struct ult__list *h = &rq->rq_queues[q], *n;

		for (n = h->next; n != h && shown < 256; n = n->next, shown++) {
			struct thread *td = runq_thread((struct ult__list *)n);

			snprintf(line, sizeof(line),
			    "  %s[%d]: td %p pri %d state %d pinned %d", name,
			    q, (void *)td, td->td_priority, td->td_state,
			    td->td_pinned);
			out(arg, line);
		}
	}
}

struct thread *
runq_choose_from(const struct runq *rq, int idx)
{
	int q = runq_findbit_from(rq, idx);

	if (q < 0 && idx != 0)
		q = runq_findbit_from(rq, 0);
	if (q < 0)
		return (NULL);
	return (runq_thread(rq->rq_queues[q].next));
}
