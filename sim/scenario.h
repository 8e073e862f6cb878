/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ultsim's scenarios: the file format (docs/ULTSIM.md), the thread groups
 * it declares, and the behaviours that play them on the simulator.
 */
#ifndef ULTSIM_SCENARIO_H
#define ULTSIM_SCENARIO_H

#include <stdint.h>

#include "sim.h"

#define SC_MAXGROUPS 64
#define SC_MAXEXPECT 64
#define SC_MAXSETS 32
#define SC_NAMELEN 32
#define SC_MAX_THREADS 100000
#define SC_MAX_MS 1e9 /* a duration, about 11.6 days */

/* A duration in ms, drawn per burst. */
struct dist {
	int kind; /* D_FIXED a, D_UNIFORM a..b, D_EXP mean a */
	double a, b;
};
enum {
	D_NONE,
	D_FIXED,
	D_UNIFORM,
	D_EXP
};

enum {
	G_HOG,
	G_SLEEPER,
	G_YIELDER,
	G_FORKJOIN,
	G_DAG,
	G_LOCKER
};

struct group {
	char name[SC_NAMELEN];
	int kind, count, nice, cpu; /* cpu >= 0: bound there */
	int cls, rtprio;	    /* PRI_TIMESHARE, PRI_FIFO, ...; 0..31 */
	int64_t start_ms;
	struct dist run, sleep, cs;
	int yields, locks;	/* yielder */
	int depth, fanout;	/* forkjoin */
	int jobs, width, deps;	/* dag: jobs, at most width at once
				   (0: the CPU count) */
	struct sim_yielders yw; /* yielder */
	struct sim_umtx lock;	/* locker: shared by the group */
	int roots;		/* forkjoin: trees not finished */
	int64_t done_ns;	/* forkjoin and dag: finished (0: not) */
	double bound_ms;	/* dag: lower bound on the makespan */
	int line;
};

enum {
	X_LT,
	X_LE,
	X_GT,
	X_GE,
	X_IN
};

struct expect {
	char group[SC_NAMELEN]; /* "" for the whole machine */
	char metric[SC_NAMELEN];
	int op;
	double lo, hi;
	char policy[8]; /* "": always; else only under this policy */
	int line;
};

struct scenario {
	char name[64];
	const char *file;
	int ncpu;
	char policy[8];	       /* "ule" or "4bsd" */
	int for_ule, for_4bsd; /* the policies it is meant for (policies) */
	int smt, l2, l3;       /* topology: group sizes, 0 for none */
	int64_t duration_ms, warmup_ms;
	uint64_t seed;
	int nsets;
	char set_name[SC_MAXSETS][64];
	long set_val[SC_MAXSETS];
	unsigned cost_set; /* bit i: field i of cost was given */
	struct sim_cost cost;
	int ngroups;
	struct group g[SC_MAXGROUPS];
	int nexpect;
	struct expect x[SC_MAXEXPECT];
};

/* Parse file into sc; 0, or -1 after a message naming file and line. */
int sc_parse(const char *file, struct scenario *sc);
/* A duration with its unit, into ms (0 or -1); a seed (0 or -1). */
int sc_parse_ms(const char *v, double *out);
int sc_parse_seed(const char *v, uint64_t *out);
/* Threads the scenario creates in all. */
double sc_threads(const struct scenario *sc);
/* Parse one "name=value" tunable or "--topology" spec (0 or -1). */
int sc_set(struct scenario *sc, const char *nv);
int sc_topology(struct scenario *sc, const char *spec);
/* Start group g's threads on s (at its start time). */
void sc_start_group(struct scenario *sc, struct sim *s, int g);
/* Free what the groups allocated. */
void sc_free(struct scenario *sc);
/* A duration drawn from d with the random state *r, in whole ms. */
int sc_draw(const struct dist *d, uint64_t *r);
uint64_t sc_random(uint64_t *r);

#endif
