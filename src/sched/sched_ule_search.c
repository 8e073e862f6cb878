/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's sys/kern/sched_ule.c. */
/*
 * ULE's topology searches (cpu_search_lowest and cpu_search_highest in
 * FreeBSD): the least loaded CPU that would run a thread of a given
 * priority, and the busiest CPU with work to give, walked over the
 * cpu_group tree.  Loads are read without locks; callers re-check under
 * the queue locks before anything moves (sched_ule_smp.c).
 */
#include <limits.h>

#include "sched_ule.h"

/*
 * ult (kern.sched.wake_local): an idle CPU's score is lowered below any
 * busy CPU's, more for one that spins than for one parked in the host, so
 * the search takes a spinning CPU first (it sees new work at once, for
 * nothing), a parked one next (a system call and the host's wakeup
 * latency), a busy one last; FreeBSD's random tie-break and preference
 * for the thread's own CPU still order CPUs of one kind.
 */
static int
idle_cost(int cpu)
{
	return (mach_cpu_state(cpu) == MACH_CPU_SPINNING ? -1024 : -512);
}

struct cpu_search {
	const cpuset_t *cs_mask;
	int cs_prefer;	/* cpu to favour */
	int cs_running; /* the thread runs on cs_prefer now */
	int cs_pri;	/* lowest: acceptable if tdq_lowpri > cs_pri */
	int cs_load;	/* lowest: max load; highest: min load */
	int cs_trans;	/* highest: min transferable */
};

struct cpu_search_res {
	int csr_cpu;
	int csr_load;
};

/*
 * Least loaded acceptable CPU under cg.  Each CPU scores 256 * load minus
 * a random 0..127 to break ties, minus 128 for the preferred CPU (so we
 * stay put unless another CPU is clearly better).  Groups compare by
 * their total load.  When balancing a running thread, a loaded preferred
 * CPU loses its bonus so equally loaded CPUs take turns.
 */
static int
cpu_search_lowest(const struct cpu_group *cg, const struct cpu_search *s,
    struct cpu_search_res *r)
{
	struct cpu_search_res lr;
	int c, bload = INT_MAX, l, load, p, total = 0;

	r->csr_cpu = -1;
	r->csr_load = INT_MAX;
	if (cg->cg_children > 0) {
		for (c = cg->cg_children - 1; c >= 0; c--) {
			load = cpu_search_lowest(&cg->cg_child[c], s, &lr);
			total += load;
			if (s->cs_running &&
			    (cg->cg_child[c].cg_flags & CG_FLAG_THREAD) &&
			    load >= 128 && (load & 128) != 0)
				load += 128;
			if (lr.csr_cpu >= 0 &&
			    (load < bload ||
				(load == bload && lr.csr_load < r->csr_load))) {
				bload = load;
				r->csr_cpu = lr.csr_cpu;
				r->csr_load = lr.csr_load;
			}
		}
		return (total);
	}
	for (c = cg->cg_last; c >= cg->cg_first; c--) {
		struct tdq *tdq;

		if (!CS_ISSET(c, &cg->cg_mask))
			continue;
		tdq = TDQ_CPU(c);
		l = TDQ_LOAD(tdq);
		if (c == s->cs_prefer) {
			if (s->cs_running)
				l--;
			p = 128;
		} else
			p = 0;
		load = l * 256;
		total += load - p;
		/* A running thread's own priority is in its CPU's lowpri,
		 * so the priority test does not apply to that CPU. */
		if (l > s->cs_load ||
		    (TDQ_LOWPRI(tdq) <= s->cs_pri &&
			(!s->cs_running || c != s->cs_prefer)) ||
		    !CS_ISSET(c, s->cs_mask))
			continue;
		if (s->cs_running && l > 0)
			p = 0;
		load -= (int)(ule_random() % 128);
		if (l == 0 && TUN(ule_tun.wake_local) &&
		    ULT_LD(&tdq->tdq_curthread) == tdq->tdq_idlethread)
			load += idle_cost(c);
		if (bload > load - p) {
			bload = load - p;
			r->csr_cpu = c;
			r->csr_load = load;
		}
	}
	return (total);
}

/* Most loaded CPU under cg with at least cs_load threads and cs_trans
 * transferable ones. */
static int
cpu_search_highest(const struct cpu_group *cg, const struct cpu_search *s,
    struct cpu_search_res *r)
{
	struct cpu_search_res lr;
	int c, bload = INT_MIN, l, load, total = 0;

	r->csr_cpu = -1;
	r->csr_load = INT_MIN;
	if (cg->cg_children > 0) {
		for (c = cg->cg_children - 1; c >= 0; c--) {
			load = cpu_search_highest(&cg->cg_child[c], s, &lr);
			total += load;
			if (lr.csr_cpu >= 0 &&
			    (load > bload ||
				(load == bload && lr.csr_load > r->csr_load))) {
				bload = load;
				r->csr_cpu = lr.csr_cpu;
				r->csr_load = lr.csr_load;
			}
		}
		return (total);
	}
	for (c = cg->cg_last; c >= cg->cg_first; c--) {
		struct tdq *tdq;

		if (!CS_ISSET(c, &cg->cg_mask))
			continue;
		tdq = TDQ_CPU(c);
		l = TDQ_LOAD(tdq);
		load = l * 256;
		total += load;
		if (l < s->cs_load || TDQ_TRANSFERABLE(tdq) < s->cs_trans ||
		    !CS_ISSET(c, s->cs_mask))
			continue;
		load -= (int)(ule_random() % 256);
		if (load > bload) {
			bload = load;
			r->csr_cpu = c;
		}
	}
	r->csr_load = bload;
	return (total);
}

int
ule_sched_lowest(const struct cpu_group *cg, const cpuset_t *mask, int pri,
    int maxload, int prefer, int running)
{
	struct cpu_search s = {mask, prefer, running, pri, maxload, 0};
	struct cpu_search_res r;

	cpu_search_lowest(cg, &s, &r);
	return (r.csr_cpu);
}

int
ule_sched_highest(const struct cpu_group *cg, const cpuset_t *mask, int minload,
    int mintrans)
{
	struct cpu_search s = {mask, -1, 0, 0, minload, mintrans};
	struct cpu_search_res r;

	cpu_search_highest(cg, &s, &r);
	return (r.csr_cpu);
}
