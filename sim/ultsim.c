/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ultsim: run a scenario (docs/ULTSIM.md) on the simulator, which drives
 * the runtime's own policy code on 1 to 1,024 virtual CPUs in virtual
 * time, and report what each thread group got.  Same file, options and
 * seed: the same output, byte for byte.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: ultsim SCENARIO [--policy ule|4bsd] [--ncpu N]\n"
	    "              [--topology flat|smt=N,l2=N,l3=N] [--seed S]\n"
	    "              [--set tunable=value]... [--duration T]\n"
	    "              [--svg out.svg] [--cpus] [--threads]\n"
	    "Runs SCENARIO on simulated CPUs and prints, per thread group,\n"
	    "CPU share, wakeup-to-run delay and migrations; then checks the\n"
	    "scenario's expect lines (exit 3 if one fails; 4 if the file is\n"
	    "not meant for the policy).\n");
}

/* The costs of the sub-tick model, fitted to bench/threads on the
 * development machine (docs/ULTSIM.md, "Lock-cost model"). */
static const struct sim_cost default_cost = {
    .lock_ns = 12,
    .xfer_ns = 115,
    .switch_ns = 32,
    .yield_ns = 55,
    .umtx_ns = 8,
    .block_ns = 150,
    .wake_ns = 500,
    .park_ns = 8000,
};

static int
apply_cost(struct scenario *sc, struct sim *s)
{
	const int64_t *from = &sc->cost.lock_ns;
	int64_t *to = &s->cost.lock_ns;

	s->cost = default_cost;
	for (size_t i = 0; i < sizeof(s->cost) / sizeof(int64_t); i++)
		if (sc->cost_set & (1u << i))
			to[i] = from[i];
	return (0);
}

static int
apply_sets(struct scenario *sc, struct sim *s)
{
	for (int i = 0; i < sc->nsets; i++) {
		const struct sched_tunable *t = s->sched->tunables;
		long v = sc->set_val[i];

		while (t->name != NULL && strcmp(t->name, sc->set_name[i]) != 0)
			t++;
		if (t->name == NULL) {
			fprintf(stderr, "ultsim: %s has no tunable %s\n",
			    s->sched->name, sc->set_name[i]);
			return (-1);
		}
		if (t->var != NULL && v >= t->min && v <= t->max) {
			atomic_store(t->var, (int)v);
		} else if (t->var != NULL || t->set == NULL || t->set(v) != 0) {
			fprintf(stderr, "ultsim: %s=%ld: %s\n", t->name, v,
			    t->var != NULL || t->set != NULL ? "out of range"
							     : "read-only");
			return (-1);
		}
	}
	return (0);
}

struct opts {
	const char *svg;
	int cpus, threads;
};

static int
parse_args(int argc, char **argv, struct scenario *sc, struct opts *o)
{
	const char *file = NULL;
	struct scenario over;
	int ncpu = 0, have_seed = 0, have_topo = 0;
	const char *policy = NULL;
	int64_t duration = 0;
	char *end;

	memset(&over, 0, sizeof(over));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(a, "--cpus") == 0 || strcmp(a, "--threads") == 0) {
			*(a[2] == 'c' ? &o->cpus : &o->threads) = 1;
			continue;
		}
		if (a[0] != '-') {
			if (file != NULL)
				goto bad;
			file = a;
			continue;
		}
		if (v == NULL)
			goto bad;
		i++;
		if (strcmp(a, "--policy") == 0 &&
		    (strcmp(v, "ule") == 0 || strcmp(v, "4bsd") == 0)) {
			policy = v;
		} else if (strcmp(a, "--ncpu") == 0) {
			long n;

			errno = 0;
			n = strtol(v, &end, 10);
			ncpu = n >= 1 && n <= SIM_MAXCPU ? (int)n : 0;
			if (*end != '\0' || end == v || errno != 0 ||
			    ncpu == 0) {
				fprintf(stderr, "ultsim: --ncpu: 1 to %d\n",
				    SIM_MAXCPU);
				return (-1);
			}
		} else if (strcmp(a, "--topology") == 0) {
			if (sc_topology(&over, v) != 0)
				goto bad;
			have_topo = 1;
		} else if (strcmp(a, "--seed") == 0) {
			if (sc_parse_seed(v, &over.seed) != 0)
				goto bad;
			have_seed = 1;
		} else if (strcmp(a, "--set") == 0) {
			if (sc_set(&over, v) != 0)
				goto bad;
		} else if (strcmp(a, "--duration") == 0) {
			double ms;

			if (sc_parse_ms(v, &ms) != 0 || ms < 1)
				goto bad;
			duration = (int64_t)ms;
		} else if (strcmp(a, "--svg") == 0) {
			o->svg = v;
		} else {
			goto bad;
		}
	}
	if (file == NULL)
		goto bad;
	if (sc_parse(file, sc) != 0)
		return (-1);
	if (ncpu)
		sc->ncpu = ncpu;
	if (policy)
		snprintf(sc->policy, sizeof(sc->policy), "%s", policy);
	if (have_topo) {
		sc->smt = over.smt;
		sc->l2 = over.l2;
		sc->l3 = over.l3;
	}
	if (have_seed)
		sc->seed = over.seed;
	if (duration) {
		sc->duration_ms = duration;
		if (sc->warmup_ms >= duration)
			sc->warmup_ms = duration / 10;
	}
	for (int k = 0; k < over.nsets && sc->nsets < SC_MAXSETS; k++) {
		snprintf(sc->set_name[sc->nsets], sizeof(sc->set_name[0]), "%s",
		    over.set_name[k]);
		sc->set_val[sc->nsets++] = over.set_val[k];
	}
	return (0);
bad:
	usage(stderr);
	return (-1);
}

static int
by_start(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return ((x > y) - (x < y));
}

/* Run to the end: groups start at their times, counting at the warm-up's
 * end. */
static void
run(struct scenario *sc, struct sim *s, struct stats *st)
{
	int64_t times[SC_MAXGROUPS + 1], now = 0;
	int n = 0;

	for (int g = 0; g < sc->ngroups; g++)
		times[n++] = sc->g[g].start_ms;
	times[n++] = sc->warmup_ms;
	qsort(times, (size_t)n, sizeof(times[0]), by_start);
	for (int k = 0; k < n; k++) {
		if (times[k] > sc->duration_ms)
			break;
		if (k > 0 && times[k] == times[k - 1])
			continue;
		sim_run(s, times[k] - now);
		now = times[k];
		for (int g = 0; g < sc->ngroups; g++)
			if (sc->g[g].start_ms == now)
				sc_start_group(sc, s, g);
		if (now == sc->warmup_ms)
			st_begin(st);
	}
	sim_run(s, sc->duration_ms - now);
}

int
main(int argc, char **argv)
{
	static struct scenario sc;
	struct opts o = {0};
	struct topo_cpu *desc = NULL;
	struct stats st;
	struct sim *s;
	int failed;

	if (parse_args(argc, argv, &sc, &o) != 0)
		return (1);
	if (!(strcmp(sc.policy, "ule") == 0 ? sc.for_ule : sc.for_4bsd)) {
		fprintf(stderr, "ultsim: %s is not meant for %s (policies)\n",
		    sc.file, sc.policy);
		return (4);
	}
	for (int g = 0; g < sc.ngroups; g++)
		if (sc.g[g].cpu >= sc.ncpu) {
			fprintf(stderr, "ultsim: group %s: cpu %d of %d\n",
			    sc.g[g].name, sc.g[g].cpu, sc.ncpu);
			return (1);
		}
	if (sc.smt || sc.l2 || sc.l3) {
		desc = calloc((size_t)sc.ncpu, sizeof(*desc));
		if (desc == NULL)
			return (1);
		sim_topo_desc(desc, sc.ncpu, sc.l3, sc.l2, sc.smt);
	}
	s = sim_create_policy(sc.ncpu, desc,
	    strcmp(sc.policy, "4bsd") == 0 ? &ult__sched_4bsd
					   : &ult__sched_ule);
	free(desc);
	s->no_ran_on = 1; /* the tool's figures come from its hooks */
	if (apply_sets(&sc, s) != 0 || apply_cost(&sc, s) != 0)
		return (1);
	s->check_every = 997;
	st_init(&st, &sc, s);
	if (o.svg != NULL)
		st.svg = svg_new(sc.ncpu, 0, sc.duration_ms * SIM_TICK_NS,
		    sc.ngroups);
	run(&sc, s, &st);
	if (s->check_failed != NULL) {
		fprintf(stderr, "ultsim: the policy's invariants failed: %s\n",
		    s->check_failed);
		return (2);
	}
	printf("ultsim (simulated): %s, %s on %d CPUs",
	    sc.name[0] ? sc.name : sc.file, s->sched->name, sc.ncpu);
	if (sc.smt || sc.l2 || sc.l3)
		printf(" (smt %d, l2 %d, l3 %d)", sc.smt, sc.l2, sc.l3);
	printf(", seed %llu, %lld ms measured after %lld ms\n",
	    (unsigned long long)sc.seed,
	    (long long)(sc.duration_ms - sc.warmup_ms),
	    (long long)sc.warmup_ms);
	st_print(&st, stdout, o.cpus, o.threads);
	failed = st_check(&st, stdout);
	if (o.svg != NULL && svg_write(st.svg, o.svg, &sc) != 0) {
		fprintf(stderr, "ultsim: %s: %s\n", o.svg, strerror(errno));
		failed = -1;
	}
	svg_free(st.svg);
	st_free(&st);
	sim_destroy(s);
	sc_free(&sc);
	return (failed < 0 ? 1 : failed > 0 ? 3 : 0);
}
