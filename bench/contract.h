/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The contract every benchmark program follows (bench/README.md): its
 * command line, its result lines on stdout, and how it fails.
 */
#ifndef BENCH_CONTRACT_H
#define BENCH_CONTRACT_H

#include <string.h>

/* The program's name: the experiment column of its result lines and the
 * prefix of its messages.  bw_args() sets it. */
extern const char *bw_prog;
extern int bw_quick;	    /* --quick: the smoke size */
extern const char *bw_data; /* --data DIR: plot data goes there; or NULL */

/* "<prog>: <message>" on stderr, exit 1: a failed check or call. */
_Noreturn void bw_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* A call that returned err (0 or an errno value) must have succeeded. */
static inline void
bw_must(int err, const char *what)
{
	if (err != 0)
		bw_die("%s: %s", what, strerror(err));
}

/*
 * One result line, R<TAB>experiment<TAB>case<TAB>runtime<TAB>metric<TAB>
 * value, with prec decimals, flushed at once so that a later failure
 * cannot lose it.
 */
void bw_emit(const char *cs, const char *rt, const char *metric, int prec,
    double v);

/* The kinds of a program's own options. */
enum {
	BW_FLAG,  /* no value; the int it points to becomes 1 */
	BW_INT,	  /* an int in [min, max] */
	BW_DOUBLE /* a double in [min, max] */
};

struct bw_opt {
	const char *name; /* "--rounds" */
	int kind;
	void *val; /* int * or double *; untouched unless given */
	double min, max;
	const char *arg; /* the value in the usage line: "K" */
};

/*
 * The command line: --quick and --data DIR, which every program takes,
 * the program's own options (opts, ended by a NULL name; may be NULL),
 * and names from the NULL-ended lists in groups (NULL-ended itself; may
 * be NULL), which pick what runs: see bw_selected().  Anything else is a
 * usage message and exit 2; --help is the same message and exit 0.
 */
void bw_args(const char *prog, int argc, char **argv, const struct bw_opt *opts,
    const char *const *const *groups);

/*
 * Whether the case or runtime called name is to run: yes if the command
 * line named it, or named nothing of its group (so "make j4 ult" runs one
 * case on one runtime).  A name in no group always runs.
 */
int bw_selected(const char *name);

#endif /* !BENCH_CONTRACT_H */
