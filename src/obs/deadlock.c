/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Deadlocks: a uthread blocked on a lock names the lock's owner
 * (ult_thread_info's wait_owner_id, from the turnstile), so a cycle of
 * owners is a set of uthreads that will never run again.  Found on
 * demand, from a snapshot (ULT_STATS's report); ult-top and the gdb
 * extension walk the same edges themselves.
 */
#include <stdlib.h>
#include <string.h>

#include "../kern/runtime.h"
#include "../kern/uthread.h"
#include "deadlock.h"

#define DL_MAX 4096 /* uthreads looked at, at most */

struct dl_node {
	struct ult_thread *ut;
	uint64_t id, owner;
	const void *obj;
	char name[32], wchan[16];
	int owner_ix, stamp;
};

struct dl_snap {
	struct dl_node *n;
	int count;
};

static void
collect(struct ult_thread *ut, void *arg)
{
	struct dl_snap *s = arg;

	if (s->count < DL_MAX && ULT_LD(&ut->lstate) == UT_ALIVE) {
		s->n[s->count].ut = ut;
		s->n[s->count++].id = ut->id;
	}
}

static int
index_of(const struct dl_snap *s, uint64_t id)
{
	for (int i = 0; i < s->count; i++)
		if (s->n[i].id == id)
			return (i);
	return (-1);
}

static void
print_cycle(FILE *f, const char *prefix, const struct dl_snap *s, int start)
{
	int i = start;

	fprintf(f, "%sdeadlock: a cycle of uthreads waiting for each other:\n",
	    prefix);
	do {
		const struct dl_node *a = &s->n[i], *b = &s->n[a->owner_ix];

		fprintf(f,
		    "%s  uthread %llu \"%s\" waits for %s %p, owned by "
		    "uthread %llu \"%s\"\n",
		    prefix, (unsigned long long)a->id, a->name, a->wchan,
		    a->obj, (unsigned long long)b->id, b->name);
		i = a->owner_ix;
	} while (i != start);
}

int
ult__deadlock_report(FILE *f, const char *prefix)
{
	struct dl_snap s = {.n = calloc(DL_MAX, sizeof(struct dl_node))};
	int ncycles = 0, w = 0, stamp = 0;

	if (s.n == NULL)
		return (0);
	ult__thread_foreach(collect, &s, 0);
	/* Keep the lock waiters whose owner is known. */
	for (int i = 0; i < s.count; i++) {
		struct ult_thread_info in;

		if (ult_thread_info(s.n[i].ut, &in) != 0 ||
		    in.id != s.n[i].id || in.state != ULT_STATE_SLEEPING ||
		    in.wait_owner_id == 0)
			continue;
		s.n[w] = s.n[i];
		s.n[w].owner = in.wait_owner_id;
		s.n[w].obj = in.wait_obj;
		memcpy(s.n[w].name, in.name, sizeof(s.n[w].name));
		memcpy(s.n[w].wchan, in.wchan, sizeof(s.n[w].wchan));
		s.n[w].stamp = 0;
		w++;
	}
	s.count = w;
	for (int i = 0; i < s.count; i++)
		s.n[i].owner_ix = index_of(&s, s.n[i].owner);
	/* Follow owners from each waiter; a walk that meets itself found a
	 * cycle, one that meets an earlier walk or a runnable owner did
	 * not. */
	for (int i = 0; i < s.count; i++) {
		int j = i;

		if (s.n[i].stamp != 0)
			continue;
		stamp++;
		while (j >= 0 && s.n[j].stamp == 0) {
			s.n[j].stamp = stamp;
			j = s.n[j].owner_ix;
		}
		if (j >= 0 && s.n[j].stamp == stamp) {
			print_cycle(f, prefix, &s, j);
			ncycles++;
		}
	}
	free(s.n);
	return (ncycles);
}
