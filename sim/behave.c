/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The behaviours of ultsim's thread groups, as struct sim_behaviour
 * callbacks: sleepers, fork-join trees, a make-like DAG, and lockers
 * that hold a user mutex for a critical section.  Hogs and yielders need
 * no callback (sim_spawn, sim_make_yielder).
 */
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

struct dag {
	int n, ready_n, running, done, width;
	int *dur;   /* ms */
	int *left;  /* dependencies not finished */
	int **succ; /* dependents */
	int *nsucc;
	int *ready; /* a stack of runnable jobs */
	struct sim_thread *driver;
};

struct targ {
	struct group *g;
	uint64_t rng;
	int phase;
	int depth, pending; /* forkjoin */
	struct targ *up;
	struct sim_thread *self;
	int job; /* dag */
	struct dag *dag;
	struct targ *next; /* every targ, to free */
};

static struct targ *all_args;
static struct dag *all_dags[SC_MAXGROUPS];

static struct targ *
targ_new(struct group *g, uint64_t seed, int idx)
{
	struct targ *a = calloc(1, sizeof(*a));

	if (a == NULL)
		abort();
	a->g = g;
	a->rng = seed ^ ((uint64_t)g->line << 40) ^ (uint64_t)idx * 0x9e37;
	(void)sc_random(&a->rng);
	a->next = all_args;
	all_args = a;
	return (a);
}

static struct targ *
arg_of(struct sim_thread *t)
{
	return (t->arg);
}

/* ---- sleepers: run, sleep, repeat ---- */

static int
sleeper_woken(struct sim *s, struct sim_thread *t)
{
	(void)s;
	return (sc_draw(&arg_of(t)->g->run, &arg_of(t)->rng));
}

static int
sleeper_end(struct sim *s, struct sim_thread *t, int *ms)
{
	(void)s;
	*ms = sc_draw(&arg_of(t)->g->sleep, &arg_of(t)->rng);
	return (SIM_ACT_SLEEP);
}

static const struct sim_behaviour sleeper = {sleeper_end, sleeper_woken, NULL};

/* ---- fork-join trees: a node forks `fanout' children and joins them;
 * leaves run `run' and exit ---- */

enum {
	FJ_WORK,
	FJ_JOIN,
	FJ_POST
};

static const struct sim_behaviour forkjoin;

static int
fj_woken(struct sim *s, struct sim_thread *t)
{
	struct targ *a = arg_of(t);

	(void)s;
	if (a->phase == FJ_JOIN) {
		a->phase = FJ_POST;
		return (1);
	}
	return (a->depth == 0 ? sc_draw(&a->g->run, &a->rng) : 1);
}

static int
fj_end(struct sim *s, struct sim_thread *t, int *ms)
{
	struct targ *a = arg_of(t);

	(void)ms;
	if (a->depth == 0 || a->phase == FJ_POST)
		return (SIM_ACT_EXIT);
	a->phase = FJ_JOIN;
	a->pending = a->g->fanout;
	for (int i = 0; i < a->g->fanout; i++) {
		struct targ *c = targ_new(a->g, a->rng, i + 1);
		struct sim_thread *ct;

		c->rng = sc_random(&a->rng);
		c->depth = a->depth - 1;
		c->up = a;
		ct = sim_fork_beh(s, t, &forkjoin, c);
		c->self = ct;
		ct->group = t->group;
	}
	return (SIM_ACT_WAIT);
}

static void
fj_exited(struct sim *s, struct sim_thread *t)
{
	struct targ *a = arg_of(t);

	if (a->up == NULL) {
		if (--a->g->roots == 0)
			a->g->done_ns = sim_now_ns(s);
		return;
	}
	if (--a->up->pending == 0)
		sim_wake(s, a->up->self, s->curcpu);
}

static const struct sim_behaviour forkjoin = {fj_end, fj_woken, fj_exited};

/* ---- a make-like DAG: a driver starts ready jobs, at most `width' at
 * once, and sleeps until one finishes ---- */

static const struct sim_behaviour dag_job;

static int
driver_woken(struct sim *s, struct sim_thread *t)
{
	(void)s;
	(void)t;
	return (1); /* make reads the exit status and scans for work */
}

static int
driver_end(struct sim *s, struct sim_thread *t, int *ms)
{
	struct targ *a = arg_of(t);
	struct dag *d = a->dag;

	(void)ms;
	while (d->running < d->width && d->ready_n > 0) {
		struct targ *j = targ_new(a->g, a->rng, d->done + d->running);
		struct sim_thread *jt;

		j->dag = d;
		j->job = d->ready[--d->ready_n];
		d->running++;
		jt = sim_fork_beh(s, t, &dag_job, j);
		jt->group = t->group;
	}
	if (d->done == d->n) {
		a->g->done_ns = sim_now_ns(s);
		return (SIM_ACT_EXIT);
	}
	return (SIM_ACT_WAIT);
}

static const struct sim_behaviour dag_driver = {driver_end, driver_woken, NULL};

static int
job_woken(struct sim *s, struct sim_thread *t)
{
	(void)s;
	return (arg_of(t)->dag->dur[arg_of(t)->job]);
}

static int
job_end(struct sim *s, struct sim_thread *t, int *ms)
{
	(void)s;
	(void)t;
	(void)ms;
	return (SIM_ACT_EXIT);
}

static void
job_exited(struct sim *s, struct sim_thread *t)
{
	struct targ *a = arg_of(t);
	struct dag *d = a->dag;

	d->running--;
	d->done++;
	for (int k = 0; k < d->nsucc[a->job]; k++) {
		int j = d->succ[a->job][k];

		if (--d->left[j] == 0)
			d->ready[d->ready_n++] = j;
	}
	if (d->driver->state == SIM_SLEEPING)
		sim_wake(s, d->driver, s->curcpu);
}

static const struct sim_behaviour dag_job = {job_end, job_woken, job_exited};

static void *
xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (p == NULL)
		abort();
	return (p);
}

/* Jobs depend on up to `deps' earlier jobs, drawn at random; the bound is
 * the larger of the work over the CPUs and the critical path. */
static struct dag *
dag_new(struct group *g, int ncpu, uint64_t *r)
{
	struct dag *d = xcalloc(1, sizeof(*d));
	double *finish = xcalloc((size_t)g->jobs, sizeof(*finish));
	double work = 0, path = 0;

	d->n = g->jobs;
	d->width = g->width > 0 ? g->width : ncpu;
	d->dur = xcalloc((size_t)d->n, sizeof(*d->dur));
	d->left = xcalloc((size_t)d->n, sizeof(*d->left));
	d->succ = xcalloc((size_t)d->n, sizeof(*d->succ));
	d->nsucc = xcalloc((size_t)d->n, sizeof(*d->nsucc));
	d->ready = xcalloc((size_t)d->n, sizeof(*d->ready));
	for (int i = 0; i < d->n; i++) {
		int k =
		    i == 0 ? 0 : (int)(sc_random(r) % (uint64_t)(g->deps + 1));
		double start = 0;

		d->dur[i] = sc_draw(&g->run, r);
		for (int e = 0; e < k; e++) {
			int j = (int)(sc_random(r) % (uint64_t)i), dup = 0;

			for (int q = 0; q < d->nsucc[j]; q++)
				dup |= d->succ[j][q] == i;
			if (dup)
				continue;
			d->succ[j] = realloc(d->succ[j],
			    sizeof(int) * (size_t)(d->nsucc[j] + 1));
			if (d->succ[j] == NULL)
				abort();
			d->succ[j][d->nsucc[j]++] = i;
			d->left[i]++;
			if (finish[j] > start)
				start = finish[j];
		}
		finish[i] = start + d->dur[i];
		work += d->dur[i];
		if (finish[i] > path)
			path = finish[i];
	}
	/* Ready jobs are started from the stack's top: push in reverse so
	 * that the lowest-numbered (the oldest) start first. */
	for (int i = d->n - 1; i >= 0; i--)
		if (d->left[i] == 0)
			d->ready[d->ready_n++] = i;
	g->bound_ms = work / d->width > path ? work / d->width : path;
	free(finish);
	return (d);
}

/* ---- lockers: outside work, then a critical section under the group's
 * mutex, handed to the first waiter at release ---- */

enum {
	L_OUT,
	L_WAIT,
	L_CS
};

static int
locker_woken(struct sim *s, struct sim_thread *t)
{
	struct targ *a = arg_of(t);

	(void)s;
	if (a->phase == L_WAIT) {
		a->phase = L_CS;
		return (sc_draw(&a->g->cs, &a->rng));
	}
	a->phase = L_OUT;
	return (sc_draw(&a->g->run, &a->rng));
}

static int
locker_end(struct sim *s, struct sim_thread *t, int *ms)
{
	struct targ *a = arg_of(t);
	struct sim_umtx *m = &a->g->lock;
	struct sim_thread *next;

	if (a->phase == L_OUT) {
		if (m->owner != NULL) {
			a->phase = L_WAIT;
			sim_umtx_wait(m, t);
			return (SIM_ACT_WAIT);
		}
		m->owner = t;
		a->phase = L_CS;
		*ms = sc_draw(&a->g->cs, &a->rng);
		return (SIM_ACT_RUN);
	}
	m->owner = next = sim_umtx_next(m);
	if (next != NULL)
		sim_wake(s, next, s->curcpu);
	a->phase = L_OUT;
	if (a->g->sleep.kind != D_NONE) {
		*ms = sc_draw(&a->g->sleep, &a->rng);
		return (SIM_ACT_SLEEP);
	}
	*ms = sc_draw(&a->g->run, &a->rng);
	return (SIM_ACT_RUN);
}

static const struct sim_behaviour locker = {locker_end, locker_woken, NULL};

/* ---- starting a group ---- */

/* Outside timeshare a thread takes its class's band at rtprio. */
static void
set_class(struct sim *s, const struct group *g, struct sim_thread *t)
{
	if (g->cls == PRI_TIMESHARE)
		return;
	sim_set_class(s, t, g->cls,
	    (g->cls == PRI_IDLE ? PRI_MIN_IDLE : PRI_MIN_REALTIME) + g->rtprio);
}

void
sc_start_group(struct scenario *sc, struct sim *s, int gi)
{
	struct group *g = &sc->g[gi];
	uint64_t r = sc->seed ^ (uint64_t)(gi + 1) * 0x51ed27;

	if (g->kind == G_DAG) {
		struct targ *a = targ_new(g, sc->seed, 0);

		a->dag = all_dags[gi] = dag_new(g, s->ncpu, &r);
		a->self = a->dag->driver =
		    sim_spawn_beh(s, g->nice, g->cpu, &dag_driver, a);
		a->self->group = gi;
		set_class(s, g, a->self);
		return;
	}
	if (g->kind == G_YIELDER) {
		g->yw.yields = g->yields;
		g->yw.nlocks = g->locks;
		g->yw.mtx = xcalloc((size_t)g->locks, sizeof(*g->yw.mtx));
	}
	g->roots = g->count;
	for (int i = 0; i < g->count; i++) {
		struct targ *a = targ_new(g, sc->seed, i);
		struct sim_thread *t;

		switch (g->kind) {
		case G_SLEEPER:
			t = sim_spawn_beh(s, g->nice, g->cpu, &sleeper, a);
			break;
		case G_FORKJOIN:
			a->depth = g->depth;
			t = sim_spawn_beh(s, g->nice, g->cpu, &forkjoin, a);
			break;
		case G_LOCKER:
			t = sim_spawn_beh(s, g->nice, g->cpu, &locker, a);
			break;
		default: /* hogs and yielders */
			t = sim_spawn(s, g->nice, -1, 0, g->cpu);
			if (g->kind == G_YIELDER)
				sim_make_yielder(s, t, &g->yw);
			break;
		}
		a->self = t;
		t->group = gi;
		set_class(s, g, t);
	}
}

void
sc_free(struct scenario *sc)
{
	while (all_args != NULL) {
		struct targ *a = all_args;

		all_args = a->next;
		free(a);
	}
	for (int gi = 0; gi < sc->ngroups; gi++) {
		struct dag *d = all_dags[gi];

		struct sim_yielders *w = &sc->g[gi].yw;

		for (int k = 0; w->mtx != NULL && k < w->nlocks; k++)
			free(w->mtx[k].waiters);
		free(w->mtx);
		free(sc->g[gi].lock.waiters);
		if (d == NULL)
			continue;
		for (int i = 0; i < d->n; i++)
			free(d->succ[i]);
		free(d->succ);
		free(d->nsucc);
		free(d->dur);
		free(d->left);
		free(d->ready);
		free(d);
		all_dags[gi] = NULL;
	}
}
