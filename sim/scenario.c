/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ultsim's scenario files and the behaviours of their thread groups.
 * Every random draw comes from a per-thread splitmix64 stream seeded by
 * the scenario's seed, the group and the thread's index, so that a run
 * depends on nothing but the file and the command line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

/* ---- random draws ---- */

uint64_t
sc_random(uint64_t *r)
{
	uint64_t z = (*r += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (z ^ (z >> 31));
}

static double
unit(uint64_t *r)
{
	return ((double)(sc_random(r) >> 11) / 9007199254740992.0);
}

int
sc_draw(const struct dist *d, uint64_t *r)
{
	double v;

	switch (d->kind) {
	case D_UNIFORM:
		v = d->a + (d->b - d->a) * unit(r);
		break;
	case D_EXP:
		v = -d->a * log(1.0 - unit(r));
		break;
	case D_FIXED:
		v = d->a;
		break;
	default:
		return (0);
	}
	v = floor(v + 0.5);
	return (v < 1 ? 1 : v > 1e9 ? 1000000000 : (int)v);
}

/* ---- parsing ---- */

/* Copy src into dst[n]; -1 if it does not fit. */
static int
copy(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);

	if (len >= n)
		return (-1);
	memcpy(dst, src, len + 1);
	return (0);
}

/* Names go into the SVG and the tables: letters, digits, - _ . only. */
static int
good_name(const char *s)
{
	if (*s == '\0')
		return (0);
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr("-_.+", *s) == NULL)
			return (0);
	return (1);
}

struct pstate {
	const char *file;
	int line;
};

static int
perr(const struct pstate *p, const char *fmt, const char *what)
{
	fprintf(stderr, "ultsim: %s:%d: ", p->file, p->line);
	fprintf(stderr, fmt, what);
	fputc('\n', stderr);
	return (-1);
}

/* "250us", "3ms", "2s", "40ns" or a bare number of ms, into ms; at most
 * SC_MAX_MS. */
int
sc_parse_ms(const char *v, double *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (end == v || errno != 0 || !isfinite(x) || x < 0)
		return (-1);
	if (strcmp(end, "ns") == 0)
		x /= 1e6;
	else if (strcmp(end, "us") == 0)
		x /= 1e3;
	else if (strcmp(end, "s") == 0)
		x *= 1e3;
	else if (*end != '\0' && strcmp(end, "ms") != 0)
		return (-1);
	if (x > SC_MAX_MS)
		return (-1);
	*out = x;
	return (0);
}

static int
parse_dist(const char *v, struct dist *d)
{
	char buf[64], *dots;

	if (strncmp(v, "exp:", 4) == 0) {
		d->kind = D_EXP;
		return (sc_parse_ms(v + 4, &d->a) || d->a <= 0 ? -1 : 0);
	}
	if (strncmp(v, "uniform:", 8) == 0) {
		snprintf(buf, sizeof(buf), "%s", v + 8);
		if ((dots = strstr(buf, "..")) == NULL)
			return (-1);
		*dots = '\0';
		d->kind = D_UNIFORM;
		return (sc_parse_ms(buf, &d->a) ||
			    sc_parse_ms(dots + 2, &d->b) || d->b < d->a
			? -1
			: 0);
	}
	d->kind = D_FIXED;
	return (sc_parse_ms(v, &d->a));
}

/* A finite number, all of v. */
static int
parse_num(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return (end == v || *end != '\0' || errno != 0 || !isfinite(*out));
}

static int
parse_int(const char *v, int lo, int hi, int *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (end == v || *end != '\0' || errno != 0 || x < lo || x > hi)
		return (-1);
	*out = (int)x;
	return (0);
}

static int
parse_i64ms(const char *v, int64_t *out)
{
	double ms;

	if (sc_parse_ms(v, &ms) != 0)
		return (-1);
	*out = (int64_t)(ms + 0.5);
	return (0);
}

/* A cost: a bare number is in ns, else a duration with its unit. */
static int
parse_ns(const char *v, int64_t *out)
{
	size_t n = strlen(v);
	double ms;

	if (n > 0 && isdigit((unsigned char)v[n - 1])) {
		char buf[64];

		if (n + 3 > sizeof(buf))
			return (-1);
		snprintf(buf, sizeof(buf), "%sns", v);
		return (parse_ns(buf, out));
	}
	if (sc_parse_ms(v, &ms) != 0)
		return (-1);
	*out = (int64_t)(ms * 1e6 + 0.5);
	return (0);
}

static const char *kinds[] = {"hog", "sleeper", "yielder", "forkjoin", "dag",
    "locker", NULL};

static int
group_kv(struct group *g, const char *k, const char *v)
{
	if (strcmp(k, "kind") == 0) {
		for (int i = 0; kinds[i] != NULL; i++)
			if (strcmp(v, kinds[i]) == 0) {
				g->kind = i;
				return (0);
			}
		return (-1);
	}
	if (strcmp(k, "class") == 0) {
		static const struct {
			const char *name;
			int cls;
		} cl[] = {{"timeshare", PRI_TIMESHARE}, {"realtime", PRI_FIFO},
		    {"rr", PRI_REALTIME}, {"idle", PRI_IDLE}};

		for (unsigned i = 0; i < sizeof(cl) / sizeof(cl[0]); i++)
			if (strcmp(v, cl[i].name) == 0) {
				g->cls = cl[i].cls;
				return (0);
			}
		return (-1);
	}
	if (strcmp(k, "rtprio") == 0)
		return (parse_int(v, 0, RTP_PRIO_MAX, &g->rtprio));
	if (strcmp(k, "count") == 0)
		return (parse_int(v, 1, 100000, &g->count));
	if (strcmp(k, "nice") == 0)
		return (parse_int(v, -20, 20, &g->nice));
	if (strcmp(k, "cpu") == 0)
		return (parse_int(v, 0, SIM_MAXCPU - 1, &g->cpu));
	if (strcmp(k, "start") == 0)
		return (parse_i64ms(v, &g->start_ms));
	if (strcmp(k, "run") == 0)
		return (parse_dist(v, &g->run));
	if (strcmp(k, "sleep") == 0)
		return (parse_dist(v, &g->sleep));
	if (strcmp(k, "cs") == 0)
		return (parse_dist(v, &g->cs));
	if (strcmp(k, "yields") == 0)
		return (parse_int(v, 1, 1000000000, &g->yields));
	if (strcmp(k, "locks") == 0)
		return (parse_int(v, 1, 4096, &g->locks));
	if (strcmp(k, "depth") == 0)
		return (parse_int(v, 0, 16, &g->depth));
	if (strcmp(k, "fanout") == 0)
		return (parse_int(v, 1, 64, &g->fanout));
	if (strcmp(k, "jobs") == 0)
		return (parse_int(v, 1, 100000, &g->jobs));
	if (strcmp(k, "width") == 0)
		return (parse_int(v, 1, 100000, &g->width));
	if (strcmp(k, "deps") == 0)
		return (parse_int(v, 0, 64, &g->deps));
	return (-1);
}

/* Every group kind needs its own fields; say which one is missing. */
static const char *
group_missing(const struct group *g)
{
	switch (g->kind) {
	case G_SLEEPER:
		return (g->run.kind == D_NONE	  ? "run="
			: g->sleep.kind == D_NONE ? "sleep="
						  : NULL);
	case G_FORKJOIN:
	case G_DAG:
		return (g->run.kind == D_NONE ? "run=" : NULL);
	case G_LOCKER:
		return (g->run.kind == D_NONE  ? "run="
			: g->cs.kind == D_NONE ? "cs="
					       : NULL);
	default:
		return (NULL);
	}
}

static int
parse_group(struct scenario *sc, struct pstate *p, char *rest)
{
	struct group *g;
	char *tok, *save = NULL;
	const char *miss;

	if (sc->ngroups == SC_MAXGROUPS)
		return (perr(p, "more than %s groups", "64"));
	g = &sc->g[sc->ngroups];
	memset(g, 0, sizeof(*g));
	g->count = 1;
	g->cpu = -1;
	g->cls = PRI_TIMESHARE;
	g->yields = 1000;
	g->locks = 8;
	g->depth = 3;
	g->fanout = 2;
	g->jobs = 100;
	g->deps = 2;
	g->line = p->line;
	if ((tok = strtok_r(rest, " \t", &save)) == NULL || !good_name(tok) ||
	    copy(g->name, sizeof(g->name), tok) != 0)
		return (perr(p, "group needs a name (letters, digits, -_.+)%s",
		    ""));
	for (int i = 0; i < sc->ngroups; i++)
		if (strcmp(sc->g[i].name, g->name) == 0)
			return (perr(p, "group %s declared twice", g->name));
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
		char *eq = strchr(tok, '=');

		if (eq == NULL)
			return (perr(p, "expected key=value, got '%s'", tok));
		*eq = '\0';
		if (group_kv(g, tok, eq + 1) != 0) {
			*eq = '=';
			return (perr(p, "bad group setting '%s'", tok));
		}
	}
	if ((miss = group_missing(g)) != NULL)
		return (perr(p, "this kind of group needs %s", miss));
	sc->ngroups++;
	return (0);
}

static int
parse_expect(struct scenario *sc, struct pstate *p, char *rest)
{
	struct expect *x;
	char what[80], op[8], v1[32], kw[8] = "", pol[16] = "";
	char *dot, *dots;
	int n;

	if (sc->nexpect == SC_MAXEXPECT)
		return (perr(p, "more than %s expectations", "64"));
	x = &sc->x[sc->nexpect];
	memset(x, 0, sizeof(*x));
	x->line = p->line;
	n = sscanf(rest, "%79s %7s %31s %7s %15s", what, op, v1, kw, pol);
	if (n != 3 &&
	    !(n == 5 && strcmp(kw, "if") == 0 &&
		(strcmp(pol, "ule") == 0 || strcmp(pol, "4bsd") == 0)))
		return (perr(p,
		    "expect [GROUP.]METRIC OP VALUE [if ule|4bsd]%s", ""));
	memcpy(x->policy, pol, sizeof(x->policy) - 1);
	/* The metric follows the group's name at its last dot. */
	if ((dot = strrchr(what, '.')) != NULL)
		*dot = '\0';
	if ((dot != NULL && copy(x->group, sizeof(x->group), what) != 0) ||
	    copy(x->metric, sizeof(x->metric), dot ? dot + 1 : what) != 0)
		return (perr(p, "name too long in '%s'", rest));
	if (strcmp(op, "in") == 0) {
		if ((dots = strstr(v1, "..")) == NULL)
			return (perr(p, "expected LO..HI, got '%s'", v1));
		*dots = '\0';
		x->op = X_IN;
		if (parse_num(v1, &x->lo) || parse_num(dots + 2, &x->hi) ||
		    x->hi < x->lo)
			return (perr(p, "expected LO..HI, got '%s'", rest));
	} else {
		static const char *ops[] = {"<", "<=", ">", ">="};
		int k = -1;

		for (int i = 0; i < 4; i++)
			if (strcmp(op, ops[i]) == 0)
				k = i;
		if (k < 0)
			return (perr(p, "unknown operator '%s'", op));
		x->op = k;
		if (parse_num(v1, &x->lo))
			return (perr(p, "not a number: '%s'", v1));
	}
	sc->nexpect++;
	return (0);
}

static int
parse_cost(struct scenario *sc, struct pstate *p, char *rest)
{
	static const char *names[] = {"lock", "xfer", "switch", "yield", "umtx",
	    "block", "wake", "park"};
	int64_t *fields[] = {&sc->cost.lock_ns, &sc->cost.xfer_ns,
	    &sc->cost.switch_ns, &sc->cost.yield_ns, &sc->cost.umtx_ns,
	    &sc->cost.block_ns, &sc->cost.wake_ns, &sc->cost.park_ns};
	char *tok, *save = NULL;

	for (tok = strtok_r(rest, " \t", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		int k = -1;

		if (eq != NULL) {
			*eq = '\0';
			for (int i = 0; i < 8; i++)
				if (strcmp(tok, names[i]) == 0)
					k = i;
		}
		if (k < 0 || parse_ns(eq + 1, fields[k]) != 0) {
			char buf[72];

			snprintf(buf, sizeof(buf), "%s%s%s", tok, eq ? "=" : "",
			    eq ? eq + 1 : "");
			return (perr(p, "bad cost '%s'", buf));
		}
		sc->cost_set |= 1u << k;
	}
	return (0);
}

int
sc_parse_seed(const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 0);
	return (end == v || *end != '\0' || errno != 0 || *v == '-' ? -1 : 0);
}

int
sc_set(struct scenario *sc, const char *nv)
{
	const char *eq = strchr(nv, '=');
	char *end;
	long v;

	if (eq == NULL || eq == nv || sc->nsets == SC_MAXSETS)
		return (-1);
	errno = 0;
	v = strtol(eq + 1, &end, 10);
	if (*end != '\0' || end == eq + 1 || errno != 0)
		return (-1);
	snprintf(sc->set_name[sc->nsets], sizeof(sc->set_name[0]), "%s%.*s",
	    strncmp(nv, "kern.", 5) == 0 ? "" : "kern.sched.", (int)(eq - nv),
	    nv);
	sc->set_val[sc->nsets++] = v;
	return (0);
}

/* "flat", or comma-separated smt=N, l2=N, l3=N (CPUs per group). */
int
sc_topology(struct scenario *sc, const char *spec)
{
	char buf[128], *tok, *save = NULL;

	sc->smt = sc->l2 = sc->l3 = 0;
	if (strcmp(spec, "flat") == 0)
		return (0);
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		int *f = strncmp(tok, "smt=", 4) == 0 ? &sc->smt
		    : strncmp(tok, "l2=", 3) == 0     ? &sc->l2
		    : strncmp(tok, "l3=", 3) == 0     ? &sc->l3
						      : NULL;

		if (f == NULL ||
		    parse_int(strchr(tok, '=') + 1, 1, SIM_MAXCPU, f) != 0)
			return (-1);
	}
	return (0);
}

static int
parse_line(struct scenario *sc, struct pstate *p, char *line)
{
	char *rest, *key = line;

	while (isspace((unsigned char)*key))
		key++;
	if (*key == '\0' || *key == '#')
		return (0);
	for (rest = key; *rest != '\0' && !isspace((unsigned char)*rest);
	     rest++)
		;
	if (*rest != '\0')
		*rest++ = '\0';
	while (isspace((unsigned char)*rest))
		rest++;
	if (strcmp(key, "group") == 0)
		return (parse_group(sc, p, rest));
	if (strcmp(key, "expect") == 0)
		return (parse_expect(sc, p, rest));
	if (strcmp(key, "cost") == 0)
		return (parse_cost(sc, p, rest));
	if (strcmp(key, "scenario") == 0)
		return (
		    !good_name(rest) || copy(sc->name, sizeof(sc->name), rest)
			? perr(p,
			      "scenario: a name (letters, digits, "
			      "-_.+), got '%s'",
			      rest)
			: 0);
	if (strcmp(key, "cpus") == 0)
		return (parse_int(rest, 1, SIM_MAXCPU, &sc->ncpu)
			? perr(p, "cpus: 1 to 1024, got '%s'", rest)
			: 0);
	if (strcmp(key, "policy") == 0) {
		if (strcmp(rest, "ule") != 0 && strcmp(rest, "4bsd") != 0)
			return (perr(p, "policy: ule or 4bsd, got '%s'", rest));
		return (copy(sc->policy, sizeof(sc->policy), rest));
	}
	if (strcmp(key, "policies") == 0) {
		char *tok, *save = NULL;

		sc->for_ule = sc->for_4bsd = 0;
		for (tok = strtok_r(rest, " \t", &save); tok != NULL;
		     tok = strtok_r(NULL, " \t", &save)) {
			if (strcmp(tok, "ule") == 0)
				sc->for_ule = 1;
			else if (strcmp(tok, "4bsd") == 0)
				sc->for_4bsd = 1;
			else
				return (perr(p, "policies: ule, 4bsd, got '%s'",
				    tok));
		}
		return (0);
	}
	if (strcmp(key, "topology") == 0)
		return (sc_topology(sc, rest)
			? perr(p, "bad topology '%s'", rest)
			: 0);
	if (strcmp(key, "duration") == 0 || strcmp(key, "warmup") == 0) {
		int64_t *f = key[0] == 'd' ? &sc->duration_ms : &sc->warmup_ms;

		return (
		    parse_i64ms(rest, f) ? perr(p, "bad time '%s'", rest) : 0);
	}
	if (strcmp(key, "seed") == 0)
		return (sc_parse_seed(rest, &sc->seed)
			? perr(p, "seed: a number, got '%s'", rest)
			: 0);
	if (strcmp(key, "set") == 0)
		return (
		    sc_set(sc, rest) ? perr(p, "bad setting '%s'", rest) : 0);
	return (perr(p, "unknown keyword '%s'", key));
}

/* Threads the groups create over the whole run (forkjoin trees and DAG
 * jobs included), saturating: the bound keeps memory to a few GiB. */
double
sc_threads(const struct scenario *sc)
{
	double n = 0;

	for (int i = 0; i < sc->ngroups; i++) {
		const struct group *g = &sc->g[i];
		double per = 1, level = 1;

		if (g->kind == G_FORKJOIN)
			for (int d = 0; d < g->depth; d++) {
				level *= g->fanout;
				per += level;
			}
		n += g->kind == G_DAG ? g->jobs + 1 : per * g->count;
	}
	return (n);
}

int
sc_parse(const char *file, struct scenario *sc)
{
	struct pstate p = {file, 0};
	char line[1024];
	FILE *f = fopen(file, "r");
	int rc = 0;

	if (f == NULL) {
		fprintf(stderr, "ultsim: %s: %s\n", file, strerror(errno));
		return (-1);
	}
	memset(sc, 0, sizeof(*sc));
	sc->file = file;
	sc->ncpu = 1;
	snprintf(sc->policy, sizeof(sc->policy), "ule");
	sc->duration_ms = 10000;
	sc->seed = 1;
	sc->for_ule = sc->for_4bsd = 1;
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		p.line++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			rc = perr(&p, "line longer than %s characters", "1022");
			break;
		}
		line[strcspn(line, "\r\n")] = '\0';
		rc = parse_line(sc, &p, line);
	}
	fclose(f);
	if (rc == 0 && sc->ngroups == 0)
		rc = perr(&p, "no group in %s", file);
	if (rc == 0 && sc_threads(sc) > SC_MAX_THREADS)
		rc = perr(&p, "more than %s threads in all", "100000");
	if (rc == 0 && sc->warmup_ms >= sc->duration_ms)
		rc = perr(&p, "warmup must be shorter than duration%s", "");
	return (rc);
}
