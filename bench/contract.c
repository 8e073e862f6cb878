/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The contract every benchmark program follows; see contract.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"

const char *bw_prog = "bench";
int bw_quick;
const char *bw_data;

static const char *const *const *groups_given; /* bw_args()'s groups */
static char **words;			       /* the names given */
static int nwords;

_Noreturn void
bw_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", bw_prog);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

void
bw_emit(const char *cs, const char *rt, const char *metric, int prec, double v)
{
	printf("R\t%s\t%s\t%s\t%s\t%.*f\n", bw_prog, cs, rt, metric, prec, v);
	fflush(stdout);
}

static _Noreturn void
usage(const struct bw_opt *opts, int status)
{
	fprintf(stderr, "usage: %s [--quick] [--data DIR]", bw_prog);
	for (const struct bw_opt *o = opts; o != NULL && o->name != NULL; o++)
		if (o->kind == BW_FLAG)
			fprintf(stderr, " [%s]", o->name);
		else
			fprintf(stderr, " [%s %s]", o->name, o->arg);
	if (groups_given != NULL && groups_given[0] != NULL) {
		const char *sep = " [";

		for (int g = 0; groups_given[g] != NULL; g++)
			for (int k = 0; groups_given[g][k] != NULL; k++) {
				fprintf(stderr, "%s%s", sep,
				    groups_given[g][k]);
				sep = "|";
			}
		fprintf(stderr, " ...]");
	}
	fprintf(stderr, "\n");
	exit(status);
}

/* The group that holds name, or -1. */
static int
group_of(const char *name)
{
	for (int g = 0; groups_given != NULL && groups_given[g] != NULL; g++)
		for (int k = 0; groups_given[g][k] != NULL; k++)
			if (strcmp(groups_given[g][k], name) == 0)
				return (g);
	return (-1);
}

/* The value of option o from s; 0 if it is no number in range. */
static int
set_value(const struct bw_opt *o, const char *s)
{
	char *end;
	double d;

	errno = 0;
	d = o->kind == BW_INT ? (double)strtol(s, &end, 10) : strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || d < o->min || d > o->max)
		return (0);
	if (o->kind == BW_INT)
		*(int *)o->val = (int)d;
	else
		*(double *)o->val = d;
	return (1);
}

void
bw_args(const char *prog, int argc, char **argv, const struct bw_opt *opts,
    const char *const *const *groups)
{
	bw_prog = prog;
	groups_given = groups;
	if ((words = calloc((size_t)argc + 1, sizeof(*words))) == NULL)
		bw_die("out of memory");
	for (int i = 1; i < argc; i++) {
		const struct bw_opt *o = opts;
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0)
			usage(opts, 0);
		if (strcmp(a, "--quick") == 0) {
			bw_quick = 1;
			continue;
		}
		if (strcmp(a, "--data") == 0 && i + 1 < argc) {
			bw_data = argv[++i];
			continue;
		}
		while (o != NULL && o->name != NULL && strcmp(a, o->name) != 0)
			o++;
		if (o != NULL && o->name != NULL) {
			if (o->kind == BW_FLAG)
				*(int *)o->val = 1;
			else if (i + 1 >= argc || !set_value(o, argv[++i])) {
				fprintf(stderr,
				    "%s: %s wants a number from %g to %g\n",
				    prog, o->name, o->min, o->max);
				usage(opts, 2);
			}
			continue;
		}
		if (group_of(a) < 0)
			usage(opts, 2);
		words[nwords++] = argv[i];
	}
}

int
bw_selected(const char *name)
{
	int g = group_of(name), any = 0;

	if (g < 0)
		return (1);
	for (int i = 0; i < nwords; i++)
		if (group_of(words[i]) == g) {
			any = 1;
			if (strcmp(words[i], name) == 0)
				return (1);
		}
	return (!any);
}
