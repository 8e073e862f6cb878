/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ultsim's measurements: what the simulator's hooks collect after the
 * warm-up, the metrics computed from them, the tables and the checks of
 * a scenario's expectations.
 */
#ifndef ULTSIM_REPORT_H
#define ULTSIM_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "scenario.h"

struct gstats {
	int64_t *lat; /* wakeup-to-run delays, ns */
	int64_t nlat, cap;
	int64_t runs, migr, xl3;
	int64_t events0, yields0; /* yielders, at the warm-up's end */
};

struct stats {
	struct scenario *sc;
	struct sim *s;
	int measuring;
	int64_t t0; /* ns at the warm-up's end */
	int *l3_of; /* cpu -> its L3 group, or NULL */
	struct gstats g[SC_MAXGROUPS];
	int64_t *switches0, *steals0; /* per CPU, at the warm-up's end */
	struct svg *svg;	      /* NULL without --svg */
};

void st_init(struct stats *st, struct scenario *sc, struct sim *s);
/* The warm-up ended: counting starts. */
void st_begin(struct stats *st);
/* A metric by name for group g (-1: the machine); 0 if known. */
int st_metric(struct stats *st, int g, const char *name, double *v);
/* The tables: groups, the machine, and on request every CPU and every
 * thread. */
void st_print(struct stats *st, FILE *f, int cpus, int threads);
/* Check the scenario's expectations; the number that failed. */
int st_check(struct stats *st, FILE *f);
void st_free(struct stats *st);

/* The timeline (svg.c). */
struct svg *svg_new(int ncpu, int64_t t0, int64_t t1, int ngroups);
void svg_segment(struct svg *v, int cpu, int group, int64_t a, int64_t b);
int svg_write(struct svg *v, const char *path, const struct scenario *sc);
void svg_free(struct svg *v);

#endif
