/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nice: the shares of the `model' runtime: an independent model of ULE-C's
 * timeshare calendar (docs/ULE.md section 10), written from the algorithm,
 * not from the port.
 *
 * One CPU, hz 1000, stathz 127, every thread always runnable.  Each
 * millisecond charges the running thread; each stat tick advances the
 * calendar, updates %CPU and the interactivity history, recomputes the
 * user priority and, at the end of the slice, requeues the thread in the
 * batch calendar at a slot given by its priority and takes the first
 * thread from the dequeue index on.
 */
#include <stdlib.h>
#include <string.h>

#include "nice_model.h"

#define M_HZ 1000
#define M_STATHZ 127
#define M_SHIFT 10
#define M_PMIN_TS 88
#define M_PMAX_TS 223
#define M_NRESV 40
#define M_INTER ((M_PMAX_TS - M_PMIN_TS + 1 - M_NRESV) / 2)
#define M_PMIN_B (M_PMIN_TS + M_INTER)
#define M_PMAX_B M_PMAX_TS
#define M_BRANGE (M_PMAX_TS - M_PMIN_TS + 1 - M_INTER)
#define M_SPMIN (M_PMIN_B + M_NRESV / 2)
#define M_SPMAX (M_PMAX_B - M_NRESV / 2)
#define M_SPR (M_SPMAX - M_SPMIN + 1)
#define M_NQ 64
#define M_TARG (10 * M_HZ)
#define M_TMAX (11 * M_HZ)
#define M_MAXT 32

struct mthr {
	int nice, prio, upri, rqidx;
	long ticks, ltick, ftick, runtime, slptime, slice;
};

struct mstate {
	struct mthr th[M_MAXT];
	int q[M_NQ][M_MAXT], qn[M_NQ];
	int idx, ridx;
};

static long
lmax(long a, long b)
{
	return (a > b ? a : b);
}

static long
lmin(long a, long b)
{
	return (a < b ? a : b);
}

/* sched_pctcpu_update */
static void
m_pctcpu(struct mthr *x, int run, long t)
{
	if (t - x->ltick >= M_TARG) {
		x->ticks = 0;
		x->ftick = t - M_TARG;
	} else if (t - x->ftick >= M_TMAX) {
		x->ticks = (x->ticks / lmax(x->ltick - x->ftick, 1)) *
		    (x->ltick - (t - M_TARG));
		x->ftick = t - M_TARG;
	}
	if (run)
		x->ticks += (t - x->ltick) << M_SHIFT;
	x->ltick = t;
}

/* sched_interact_score, with sched_interact (30) <= half (50) */
static long
m_score(const struct mthr *x)
{
	long d;

	if (x->runtime >= x->slptime)
		return (50);
	if (x->runtime > x->slptime) {
		d = lmax(1, x->runtime / 50);
		return (50 + (50 - x->slptime / d));
	}
	if (x->slptime > x->runtime) {
		d = lmax(1, x->slptime / 50);
		return (x->runtime / d);
	}
	return (x->runtime ? 50 : 0);
}

/* sched_priority */
static int
m_priority(const struct mthr *x)
{
	long sc = lmax(0, m_score(x) + x->nice), p;

	if (sc < 30)
		return ((int)(M_PMIN_TS + M_INTER * sc / 30));
	p = M_SPMIN;
	if (x->ticks) {
		long tot = lmax(x->ltick - x->ftick, M_HZ);
		long per = ((tot + M_SPR - 1) / M_SPR * M_SPR) / M_SPR;

		p += lmin((x->ticks >> M_SHIFT) / per, M_SPR - 1);
	}
	return ((int)(p + x->nice));
}

/* sched_interact_update */
static void
m_interact_update(struct mthr *x)
{
	long max = ((long)M_HZ * 5) << M_SHIFT, s = x->runtime + x->slptime;

	if (s < max)
		return;
	if (s > max * 2) {
		if (x->runtime > x->slptime) {
			x->runtime = max;
			x->slptime = 1;
		} else {
			x->slptime = max;
			x->runtime = 1;
		}
		return;
	}
	if (s > (max / 5) * 6) {
		x->runtime /= 2;
		x->slptime /= 2;
		return;
	}
	x->runtime = (x->runtime / 5) * 4;
	x->slptime = (x->slptime / 5) * 4;
}

/* tdq_runq_add for a batch thread, not preempted: a calendar slot. */
static void
m_runq_add(struct mstate *m, int k)
{
	struct mthr *x = &m->th[k];
	int i;

	if (x->prio < M_PMIN_B || x->prio > M_PMAX_B)
		abort();
	i = M_NQ * (x->prio - M_PMIN_B) / M_BRANGE;
	i = (i + m->idx) % M_NQ;
	if (m->ridx != m->idx && i == m->ridx)
		i = (i - 1 + M_NQ) % M_NQ;
	x->rqidx = i;
	m->q[i][m->qn[i]++] = k;
}

static void
m_runq_rem(struct mstate *m, int k)
{
	int i = m->th[k].rqidx, j;

	for (j = 0; m->q[i][j] != k; j++)
		;
	memmove(&m->q[i][j], &m->q[i][j + 1],
	    (size_t)(m->qn[i] - j - 1) * sizeof(int));
	m->qn[i]--;
	if (m->idx != m->ridx && m->qn[i] == 0 && m->ridx == i)
		m->ridx = (i + 1) % M_NQ;
}

static int
m_choose(const struct mstate *m)
{
	for (int k = 0; k < M_NQ; k++) {
		int i = (m->ridx + k) % M_NQ;

		if (m->qn[i] > 0)
			return (m->q[i][0]);
	}
	return (-1);
}

/* Run n always-runnable threads for `seconds', counting CPU from `warm'
 * seconds on; share[] gets each thread's percentage. */
void
model_run(const int *nv, int n, long seconds, long warm, double *out)
{
	static struct mstate m;
	long cputime[M_MAXT] = {0}, statacc = 0, tot = 0;
	long slice = M_STATHZ / 10, slice_min = slice / 6, sl;
	long tickincr = ((long)M_HZ << M_SHIFT) / M_STATHZ;
	int cur = 0;

	memset(&m, 0, sizeof(m));
	for (int k = 0; k < n; k++) {
		m.th[k].nice = nv[k];
		m.th[k].prio = m.th[k].upri = m_priority(&m.th[k]);
	}
	for (int k = 1; k < n; k++)
		m_runq_add(&m, k);
	/* The classic rule: a load of six or more gets the minimum slice. */
	sl = n - 1 >= 6	 ? slice_min
	    : n - 1 <= 1 ? slice
			 : lmax(slice_min, slice / (n - 1));
	for (long t = 1; t <= seconds * M_HZ; t++) {
		struct mthr *c = &m.th[cur];

		if (t > warm * M_HZ)
			cputime[cur]++;
		statacc += M_STATHZ;
		if (statacc < M_HZ)
			continue;
		statacc -= M_HZ;
		/* sched_clock: advance the calendar's insert index. */
		if (m.idx == m.ridx) {
			m.idx = (m.idx + 1) % M_NQ;
			if (m.qn[m.ridx] == 0)
				m.ridx = m.idx;
		}
		m_pctcpu(c, 1, t);
		c->runtime += tickincr;
		m_interact_update(c);
		c->upri = m_priority(c);
		if (++c->slice >= sl) {
			int nt;

			c->slice = 0;
			c->prio = c->upri;
			m_pctcpu(c, 1, t);
			m_runq_add(&m, cur);
			nt = m_choose(&m);
			m_runq_rem(&m, nt);
			m_pctcpu(&m.th[nt], 0, t);
			m.th[nt].prio = m.th[nt].upri;
			cur = nt;
		}
	}
	for (int k = 0; k < n; k++)
		tot += cputime[k];
	for (int k = 0; k < n; k++)
		out[k] = tot ? 100.0 * (double)cputime[k] / (double)tot : 0.0;
}
