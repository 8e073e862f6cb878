/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ultsim's statistics: collected by the simulator's hooks from the end of
 * the warm-up on, printed as plain tables in a fixed order so that the
 * same scenario and seed give the same bytes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void
on_segment(void *arg, int cpu, const struct sim_thread *t, int64_t a, int64_t b)
{
	struct stats *st = arg;

	if (st->svg != NULL)
		svg_segment(st->svg, cpu, t->group, a, b);
}

static void
add_lat(struct gstats *g, int64_t lat)
{
	if (g->nlat == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->lat = realloc(g->lat, sizeof(*g->lat) * (size_t)g->cap);
		if (g->lat == NULL)
			abort();
	}
	g->lat[g->nlat++] = lat;
}

static void
on_run(void *arg, int cpu, const struct sim_thread *t, int64_t lat)
{
	struct stats *st = arg;

	(void)cpu;
	if (st->measuring && t->group >= 0)
		add_lat(&st->g[t->group], lat);
}

/* Every start of a run: migrations, and those across an L3 group. */
static void
on_place(void *arg, int cpu, const struct sim_thread *t, int from)
{
	struct stats *st = arg;
	struct gstats *g;

	if (!st->measuring || t->group < 0)
		return;
	g = &st->g[t->group];
	g->runs++;
	if (from >= 0 && from != cpu) {
		g->migr++;
		if (st->l3_of != NULL && st->l3_of[from] != st->l3_of[cpu])
			g->xl3++;
	}
}

void
st_init(struct stats *st, struct scenario *sc, struct sim *s)
{
	memset(st, 0, sizeof(*st));
	st->sc = sc;
	st->s = s;
	if (sc->l3 > 0) {
		st->l3_of = calloc((size_t)s->ncpu, sizeof(*st->l3_of));
		if (st->l3_of == NULL)
			abort();
		for (int c = 0; c < s->ncpu; c++)
			st->l3_of[c] = c / sc->l3;
	}
	st->switches0 = calloc((size_t)s->ncpu, sizeof(int64_t));
	st->steals0 = calloc((size_t)s->ncpu, sizeof(int64_t));
	if (st->switches0 == NULL || st->steals0 == NULL)
		abort();
	s->hooks.segment = on_segment;
	s->hooks.run = on_run;
	s->hooks.place = on_place;
	s->hooks.arg = st;
}

static int64_t
steals(struct sim *s, int cpu)
{
	struct sched_cpu_stats cs;

	memset(&cs, 0, sizeof(cs));
	s->sched->cpu_stats(cpu, &cs);
	return ((int64_t)cs.steals);
}

void
st_begin(struct stats *st)
{
	struct sim *s = st->s;

	sim_reset_stats(s);
	st->measuring = 1;
	st->t0 = sim_now_ns(s);
	for (int c = 0; c < s->ncpu; c++) {
		st->switches0[c] = s->cpu[c].switches;
		st->steals0[c] = steals(s, c);
	}
	for (int g = 0; g < st->sc->ngroups; g++) {
		st->g[g].events0 = st->sc->g[g].yw.events;
		st->g[g].yields0 = st->sc->g[g].yw.nyields;
	}
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return ((x > y) - (x < y));
}

/* The q-quantile of g's delays, in ms (nearest rank). */
static double
lat_q(struct gstats *g, double q)
{
	int64_t k;

	if (g->nlat == 0)
		return (0);
	k = (int64_t)ceil(q * (double)g->nlat) - 1;
	if (k < 0)
		k = 0;
	return ((double)g->lat[k] / 1e6);
}

static double
span_s(struct stats *st)
{
	return ((double)(sim_now_ns(st->s) - st->t0) / 1e9);
}

/* t's longest wait in a run queue, counted whole, a wait that lasts to
 * the end (starvation) included. */
static int64_t
wait_ns(const struct sim *s, const struct sim_thread *t)
{
	int64_t w = t->max_wait_ns;

	if (t->state == SIM_RUNNABLE && sim_now_ns(s) - t->queued_ns > w)
		w = sim_now_ns(s) - t->queued_ns;
	return (w);
}

static int
group_metric(struct stats *st, int gi, const char *name, double *v)
{
	struct sim *s = st->s;
	struct group *g = &st->sc->g[gi];
	struct gstats *gs = &st->g[gi];
	double span = span_s(st), min = 1e300, max = 0, sum = 0, wait = 0;
	int n = 0;

	for (int i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];
		double share, w;

		if (t->group != gi)
			continue;
		share = 100.0 * (double)t->cpu_ns / (span * 1e9);
		w = (double)wait_ns(s, t);
		wait = w > wait ? w : wait;
		sum += share;
		min = share < min ? share : min;
		max = share > max ? share : max;
		n++;
	}
	if (strcmp(name, "threads") == 0)
		*v = n;
	else if (strcmp(name, "cpu") == 0)
		*v = sum / s->ncpu;
	else if (strcmp(name, "share_min") == 0)
		*v = n ? min : 0;
	else if (strcmp(name, "share_max") == 0)
		*v = max;
	else if (strcmp(name, "share_avg") == 0)
		*v = n ? sum / n : 0;
	else if (strcmp(name, "lat_p50") == 0)
		*v = lat_q(gs, 0.50);
	else if (strcmp(name, "lat_p99") == 0)
		*v = lat_q(gs, 0.99);
	else if (strcmp(name, "lat_max") == 0)
		*v = lat_q(gs, 1.0);
	else if (strcmp(name, "wait_max") == 0)
		*v = wait / 1e6;
	else if (strcmp(name, "migr") == 0)
		*v = n ? (double)gs->migr / span / n : 0;
	else if (strcmp(name, "xl3") == 0)
		*v = gs->runs ? 100.0 * (double)gs->xl3 / (double)gs->runs : 0;
	else if (strcmp(name, "events") == 0)
		*v = (double)(g->yw.events - gs->events0) / span;
	else if (strcmp(name, "yields") == 0)
		*v = (double)(g->yw.nyields - gs->yields0) / span;
	else if (strcmp(name, "makespan") == 0)
		*v = g->done_ns ? (double)g->done_ns / 1e6 - (double)g->start_ms
				: -1;
	else if (strcmp(name, "efficiency") == 0) {
		double ms = g->done_ns
		    ? (double)g->done_ns / 1e6 - (double)g->start_ms
		    : 0;
		*v = ms > 0 ? 100.0 * g->bound_ms / ms : 0;
	} else
		return (-1);
	return (0);
}

static int
machine_metric(struct stats *st, const char *name, double *v)
{
	struct sim *s = st->s;
	double span = span_s(st), idle = 0, sw = 0, stl = 0;

	for (int c = 0; c < s->ncpu; c++) {
		idle += (double)s->cpu[c].idle.cpu_ns;
		sw += (double)(s->cpu[c].switches - st->switches0[c]);
		stl += (double)(steals(s, c) - st->steals0[c]);
	}
	if (strcmp(name, "idle") == 0)
		*v = 100.0 * idle / (span * 1e9 * s->ncpu);
	else if (strcmp(name, "switches") == 0)
		*v = sw / span / s->ncpu;
	else if (strcmp(name, "steals") == 0)
		*v = stl / span;
	else if (strcmp(name, "lockwait") == 0) {
		/* A wait in a long queue for a lock is counted whole, and
		 * may end past the run's end: cap the share at 100. */
		*v = 100.0 * (double)s->lock_wait_ns / (span * 1e9 * s->ncpu);
		*v = *v > 100 ? 100 : *v;
	} else
		return (-1);
	return (0);
}

int
st_metric(struct stats *st, int g, const char *name, double *v)
{
	return (
	    g < 0 ? machine_metric(st, name, v) : group_metric(st, g, name, v));
}

static double
m(struct stats *st, int g, const char *name)
{
	double v = 0;

	(void)st_metric(st, g, name, &v);
	return (v);
}

static const char *kind_names[] = {"hog", "sleeper", "yielder", "forkjoin",
    "dag", "locker"};

/* One line per thread that ran or waited in the measured period. */
static void
print_threads(struct stats *st, FILE *f)
{
	struct sim *s = st->s;
	double span = span_s(st);

	fprintf(f, "%-7s %-14s %8s %10s %9s %9s\n", "thread", "group", "share%",
	    "bursts", "maxwait", "migr");
	for (int i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];
		double w = (double)wait_ns(s, t);

		if (t->group < 0 || (t->cpu_ns == 0 && t->state == SIM_DONE))
			continue;
		fprintf(f, "%-7d %-14s %8.2f %10lld %9.1f %9d\n", t->id,
		    st->sc->g[t->group].name,
		    100.0 * (double)t->cpu_ns / (span * 1e9),
		    (long long)t->bursts, w / 1e6, t->migrations);
	}
}

void
st_print(struct stats *st, FILE *f, int cpus, int threads)
{
	struct scenario *sc = st->sc;
	struct sim *s = st->s;

	sim_flush(s);
	for (int g = 0; g < sc->ngroups; g++) {
		struct gstats *gs = &st->g[g];

		if (gs->nlat > 0) /* a group that never woke has no array */
			qsort(gs->lat, (size_t)gs->nlat, sizeof(*gs->lat),
			    cmp_i64);
	}
	fprintf(f, "%-14s %-8s %7s %6s %20s %24s %9s %7s %5s\n", "group",
	    "kind", "threads", "cpu%", "share% min/avg/max",
	    "wakeup ms p50/p99/max", "maxwait", "migr/s", "xL3%");
	for (int g = 0; g < sc->ngroups; g++) {
		char share[40], lat[40];

		snprintf(share, sizeof(share), "%.1f/%.1f/%.1f",
		    m(st, g, "share_min"), m(st, g, "share_avg"),
		    m(st, g, "share_max"));
		snprintf(lat, sizeof(lat), "%.3f/%.3f/%.3f",
		    m(st, g, "lat_p50"), m(st, g, "lat_p99"),
		    m(st, g, "lat_max"));
		fprintf(f,
		    "%-14s %-8s %7.0f %6.1f %20s %24s %9.1f %7.2f %5.1f\n",
		    sc->g[g].name, kind_names[sc->g[g].kind],
		    m(st, g, "threads"), m(st, g, "cpu"), share, lat,
		    m(st, g, "wait_max"), m(st, g, "migr"), m(st, g, "xl3"));
	}
	for (int g = 0; g < sc->ngroups; g++) {
		if (sc->g[g].kind == G_YIELDER)
			fprintf(f, "%s: %.0f events/s, %.0f yields/s\n",
			    sc->g[g].name, m(st, g, "events"),
			    m(st, g, "yields"));
		if (sc->g[g].kind == G_DAG || sc->g[g].kind == G_FORKJOIN) {
			fprintf(f, "%s: makespan ", sc->g[g].name);
			if (sc->g[g].done_ns == 0)
				fprintf(f, "(not finished)");
			else
				fprintf(f, "%.0f ms", m(st, g, "makespan"));
			if (sc->g[g].kind == G_DAG)
				fprintf(f,
				    ", lower bound %.0f ms, efficiency %.1f%%",
				    sc->g[g].bound_ms, m(st, g, "efficiency"));
			fputc('\n', f);
		}
	}
	fprintf(f,
	    "machine: idle %.2f%%, %.0f switches/s per CPU, %.1f steals/s, "
	    "%.3f%% of CPU time waiting on scheduler locks\n",
	    m(st, -1, "idle"), m(st, -1, "switches"), m(st, -1, "steals"),
	    m(st, -1, "lockwait"));
	if (threads)
		print_threads(st, f);
	if (!cpus)
		return;
	fprintf(f, "%-5s %7s %12s %10s\n", "cpu", "idle%", "switches/s",
	    "steals");
	for (int c = 0; c < s->ncpu; c++) {
		double span = span_s(st);

		fprintf(f, "%-5d %7.2f %12.0f %10lld\n", c,
		    100.0 * (double)s->cpu[c].idle.cpu_ns / (span * 1e9),
		    (double)(s->cpu[c].switches - st->switches0[c]) / span,
		    (long long)(steals(s, c) - st->steals0[c]));
	}
}

static const char *op_names[] = {"<", "<=", ">", ">=", "in"};

int
st_check(struct stats *st, FILE *f)
{
	struct scenario *sc = st->sc;
	int failed = 0;

	for (int i = 0; i < sc->nexpect; i++) {
		struct expect *x = &sc->x[i];
		int g = -1, ok;
		double v;

		if (x->policy[0] != '\0' && strcmp(x->policy, sc->policy) != 0)
			continue;
		for (int k = 0; x->group[0] != '\0' && k < sc->ngroups; k++)
			if (strcmp(sc->g[k].name, x->group) == 0)
				g = k;
		if ((x->group[0] != '\0' && g < 0) ||
		    st_metric(st, g, x->metric, &v) != 0) {
			fprintf(f, "expect at line %d: no metric %s%s%s\n",
			    x->line, x->group, x->group[0] ? "." : "",
			    x->metric);
			failed++;
			continue;
		}
		switch (x->op) {
		case X_LT:
			ok = v < x->lo;
			break;
		case X_LE:
			ok = v <= x->lo;
			break;
		case X_GT:
			ok = v > x->lo;
			break;
		case X_GE:
			ok = v >= x->lo;
			break;
		default:
			ok = v >= x->lo && v <= x->hi;
			break;
		}
		if (x->op == X_IN)
			fprintf(f, "expect %s%s%s in %g..%g: %.3f %s\n",
			    x->group, x->group[0] ? "." : "", x->metric, x->lo,
			    x->hi, v, ok ? "ok" : "FAILED");
		else
			fprintf(f, "expect %s%s%s %s %g: %.3f %s\n", x->group,
			    x->group[0] ? "." : "", x->metric, op_names[x->op],
			    x->lo, v, ok ? "ok" : "FAILED");
		failed += !ok;
	}
	return (failed);
}

void
st_free(struct stats *st)
{
	for (int g = 0; g < SC_MAXGROUPS; g++)
		free(st->g[g].lat);
	free(st->l3_of);
	free(st->switches0);
	free(st->steals0);
}
