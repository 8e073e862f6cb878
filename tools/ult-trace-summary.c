/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult-trace-summary: what a ULT_TRACE file says, per uthread and per
 * worker, in the manner of FreeBSD's schedgraph: runs, time on a CPU,
 * and how long each wakeup waited before its thread ran.
 *
 *   ult-trace-summary [--counts] TRACE
 *   ult-trace-summary --help
 *
 * --counts prints only the number of events of each kind (tests use it).
 * It reads the files ult writes (one event per line, keys in a fixed
 * order); it is not a general JSON reader.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
die(const char *what)
{
	fprintf(stderr, "ult-trace-summary: %s\n", what);
	exit(2);
}

static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL)
		die("out of memory");
	return (p);
}

/* ---- an open-addressing index over an array's positions ---- */

#define EMPTY ((size_t)-1)

struct index {
	size_t *slot, cap; /* kept at most half full */
};

static size_t
hash_slot(uint64_t h, size_t cap)
{
	return ((size_t)(h * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1));
}

/*
 * The slot of the element (of n) that is(pos, key) names, or the empty
 * slot where the caller puts position n for it.  hash_of(pos) is the
 * hash of the element at pos, for when the index grows.
 */
static size_t *
index_find(struct index *ix, size_t n, uint64_t h, uint64_t (*hash_of)(size_t),
    int (*is)(size_t, const void *), const void *key)
{
	size_t i;

	if (2 * (n + 1) > ix->cap) {
		size_t ncap = ix->cap ? 2 * ix->cap : 1024;
		size_t *ns = xrealloc(NULL, ncap * sizeof(*ns));

		memset(ns, 0xff, ncap * sizeof(*ns));
		for (size_t p = 0; p < n; p++) {
			i = hash_slot(hash_of(p), ncap);
			while (ns[i] != EMPTY)
				i = (i + 1) & (ncap - 1);
			ns[i] = p;
		}
		free(ix->slot);
		ix->slot = ns;
		ix->cap = ncap;
	}
	for (i = hash_slot(h, ix->cap); ix->slot[i] != EMPTY;
	     i = (i + 1) & (ix->cap - 1))
		if (is(ix->slot[i], key))
			break;
	return (&ix->slot[i]);
}

/* ---- per uthread ---- */

struct uthread {
	uint64_t id;
	char name[64];
	uint64_t runs, preempted, migrations;
	double run_us;
	double *delay; /* wakeup to run, us */
	size_t ndelay, cap;
};

static struct uthread *uts;
static size_t nuts, cuts;
static struct index ut_index;

static uint64_t
ut_hash(size_t p)
{
	return (uts[p].id);
}

static int
ut_is(size_t p, const void *key)
{
	return (uts[p].id == *(const uint64_t *)key);
}

static struct uthread *
ut_get(uint64_t id)
{
	size_t *s = index_find(&ut_index, nuts, id, ut_hash, ut_is, &id);

	if (*s != EMPTY)
		return (&uts[*s]);
	if (nuts == cuts) {
		cuts = cuts ? 2 * cuts : 256;
		uts = xrealloc(uts, cuts * sizeof(*uts));
	}
	memset(&uts[nuts], 0, sizeof(uts[nuts]));
	uts[nuts].id = id;
	snprintf(uts[nuts].name, sizeof(uts[nuts].name), "ut %" PRIu64, id);
	*s = nuts;
	return (&uts[nuts++]);
}

/* ---- flows: a wakeup's start and its end, by flow id ---- */

struct flow {
	uint64_t ut;
	uint32_t k;
	double s, f; /* -1: not seen */
};

static struct flow *flows;
static size_t nflows, cflows;
static struct index flow_index;

static uint64_t
flow_hash(size_t p)
{
	return (flows[p].ut * 1000003u + flows[p].k);
}

static int
flow_is(size_t p, const void *key)
{
	const struct flow *k = key;

	return (flows[p].ut == k->ut && flows[p].k == k->k);
}

static struct flow *
flow_get(uint64_t ut, uint32_t k)
{
	struct flow key = {ut, k, -1, -1};
	size_t *s = index_find(&flow_index, nflows, ut * 1000003u + k,
	    flow_hash, flow_is, &key);

	if (*s != EMPTY)
		return (&flows[*s]);
	if (nflows == cflows) {
		cflows = cflows ? 2 * cflows : 4096;
		flows = xrealloc(flows, cflows * sizeof(*flows));
	}
	flows[nflows] = key;
	*s = nflows;
	return (&flows[nflows++]);
}

/* ---- per track (worker or other thread) ---- */

struct track {
	unsigned tid;
	char name[64];
	double busy_us;
	uint64_t runs;
};

static struct track tracks[1100];
static size_t ntracks;

static struct track *
track_get(unsigned tid)
{
	for (size_t i = 0; i < ntracks; i++)
		if (tracks[i].tid == tid)
			return (&tracks[i]);
	if (ntracks == sizeof(tracks) / sizeof(tracks[0]))
		die("too many tracks");
	tracks[ntracks].tid = tid;
	snprintf(tracks[ntracks].name, sizeof(tracks[ntracks].name), "track %u",
	    tid);
	return (&tracks[ntracks++]);
}

/* ---- the event kinds counted ---- */

static const char *const kinds[] = {"run", "wakeup", "woken", "spawn", "exit",
    "sleep", "migrate", "steal", "push", "preempt sent", "preempt taken",
    "preempt owed", "preempt deferred", "preempt forced", "lock contended",
    "handoff"};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
static uint64_t counts[NKINDS], dropped;
static char policy[16] = "?";
static int ncpu;
static double tmin = -1, tmax;

static void
count(const char *k)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (strcmp(kinds[i], k) == 0) {
			counts[i]++;
			return;
		}
}

/* The text of "key": up to the next quote, or the number after it. */
static const char *
field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return (p != NULL ? p + strlen(key) : NULL);
}

static int
str_field(const char *line, const char *key, char *out, size_t n)
{
	const char *p = field(line, key);
	size_t i = 0;

	if (p == NULL)
		return (0);
	while (*p != '\0' && *p != '"' && i + 1 < n)
		out[i++] = *p++;
	out[i] = '\0';
	return (1);
}

static void
line_meta(const char *l)
{
	char name[64], v[64];
	const char *p;

	if (!str_field(l, "\"name\":\"", name, sizeof(name)))
		return;
	if (strcmp(name, "thread_name") == 0 &&
	    (p = field(l, "\"tid\":")) != NULL &&
	    str_field(l, "\"args\":{\"name\":\"", v, sizeof(v)))
		snprintf(track_get((unsigned)strtoul(p, NULL, 10))->name,
		    sizeof(tracks[0].name), "%s", v);
	else if (strcmp(name, "ult_dropped_events") == 0 &&
	    (p = field(l, "\"dropped\":")) != NULL)
		dropped = strtoull(p, NULL, 10);
}

static void
line_event(const char *l, char ph)
{
	const char *pts = field(l, "\"ts\":"), *ptid = field(l, "\"tid\":");
	char name[64], cat[16], fid[48];
	double ts;

	if (pts == NULL || ptid == NULL ||
	    !str_field(l, "\"name\":\"", name, sizeof(name)))
		return;
	ts = strtod(pts, NULL);
	if (tmin < 0 || ts < tmin)
		tmin = ts;
	if (ts > tmax)
		tmax = ts;
	if (ph == 'X' && str_field(l, "\"cat\":\"", cat, sizeof(cat)) &&
	    strcmp(cat, "run") == 0) {
		const char *pd = field(l, "\"dur\":"),
			   *pid = field(l, "\"id\":");
		char out[24] = "";
		struct uthread *u;
		double dur;

		if (pd == NULL || pid == NULL)
			return;
		dur = strtod(pd, NULL);
		u = ut_get(strtoull(pid, NULL, 10));
		snprintf(u->name, sizeof(u->name), "%s", name);
		u->runs++;
		u->run_us += dur;
		str_field(l, "\"out\":\"", out, sizeof(out));
		if (strstr(out, "preempt") != NULL ||
		    strcmp(out, "needresched") == 0)
			u->preempted++;
		track_get((unsigned)strtoul(ptid, NULL, 10))->busy_us += dur;
		track_get((unsigned)strtoul(ptid, NULL, 10))->runs++;
		if (ts + dur > tmax)
			tmax = ts + dur;
		count("run");
		return;
	}
	if ((ph == 's' || ph == 'f') &&
	    str_field(l, "\"id\":\"", fid, sizeof(fid))) {
		uint64_t ut = strtoull(fid, NULL, 10);
		const char *dot = strchr(fid, '.');
		struct flow *f;

		if (dot == NULL)
			return;
		f = flow_get(ut, (uint32_t)strtoul(dot + 1, NULL, 10));
		if (ph == 's')
			f->s = ts;
		else
			f->f = ts;
		if (strcmp(name, "wakeup") == 0)
			count(ph == 's' ? "wakeup" : "woken");
		return;
	}
	if (ph == 'i') {
		const char *pid = field(l, "\"args\":{\"id\":");

		count(name);
		if (pid != NULL && strcmp(name, "migrate") == 0)
			ut_get(strtoull(pid, NULL, 10))->migrations++;
	}
}

static void
line_other(const char *l)
{
	const char *p;

	if ((p = field(l, "\"otherData\":{\"policy\":\"")) != NULL)
		sscanf(p, "%15[^\"]", policy);
	if ((p = field(l, "\"ncpu\":")) != NULL)
		ncpu = atoi(p);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

static double
pct(const double *v, size_t n, double q)
{
	size_t i;

	if (n == 0)
		return (0);
	i = (size_t)(q * (double)(n - 1) + 0.5);
	return (v[i]);
}

static void
report(void)
{
	double span = tmax - (tmin > 0 ? tmin : 0);

	for (size_t i = 0; i < nflows; i++) {
		struct uthread *u;

		if (flows[i].s < 0 || flows[i].f < 0)
			continue;
		u = ut_get(flows[i].ut);
		if (u->ndelay == u->cap) {
			u->cap = u->cap ? 2 * u->cap : 16;
			u->delay = xrealloc(u->delay, u->cap * sizeof(double));
		}
		u->delay[u->ndelay++] =
		    flows[i].f > flows[i].s ? flows[i].f - flows[i].s : 0;
	}
	printf("policy %s, %d workers, %.3f ms traced, %" PRIu64
	       " events dropped\n\n",
	    policy, ncpu, span / 1e3, dropped);
	printf("%-28s %10s %8s\n", "track", "runs", "busy%");
	for (size_t i = 0; i < ntracks; i++)
		if (tracks[i].runs != 0)
			printf("%-28s %10" PRIu64 " %8.1f\n", tracks[i].name,
			    tracks[i].runs,
			    span > 0 ? 100.0 * tracks[i].busy_us / span : 0.0);
	printf("\n%-10s %-20s %9s %11s %9s %8s %6s %8s %10s %10s %10s %10s\n",
	    "id", "name", "runs", "cpu_ms", "mean_us", "preempt", "migr",
	    "wakeups", "wait_p50", "wait_p90", "wait_p99", "wait_max");
	for (size_t i = 0; i < nuts; i++) {
		struct uthread *u = &uts[i];

		qsort(u->delay, u->ndelay, sizeof(double), cmp_double);
		printf("%-10" PRIu64 " %-20.20s %9" PRIu64
		       " %11.3f %9.2f %8" PRIu64 " %6" PRIu64
		       " %8zu %10.2f %10.2f %10.2f %10.2f\n",
		    u->id, u->name, u->runs, u->run_us / 1e3,
		    u->runs ? u->run_us / (double)u->runs : 0.0, u->preempted,
		    u->migrations, u->ndelay, pct(u->delay, u->ndelay, 0.5),
		    pct(u->delay, u->ndelay, 0.9),
		    pct(u->delay, u->ndelay, 0.99),
		    u->ndelay ? u->delay[u->ndelay - 1] : 0.0);
	}
	printf(
	    "\nwait: from a wakeup (or spawn) to the thread's next run, us\n");
}

int
main(int argc, char **argv)
{
	int only_counts = 0, events = 0;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (argc >= 2 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf(
		    "usage: ult-trace-summary [--counts] TRACE\n"
		    "Summarises a trace written by ULT_TRACE: runs, time on "
		    "a CPU and wakeup\n"
		    "waits per uthread and per worker.  --counts prints only "
		    "the number of\n"
		    "events of each kind.\n");
		return (0);
	}
	if (argc == 3 && strcmp(argv[1], "--counts") == 0)
		only_counts = 1;
	else if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: ult-trace-summary [--counts] TRACE\n");
		return (2);
	}
	if ((f = fopen(argv[argc - 1], "r")) == NULL) {
		fprintf(stderr, "ult-trace-summary: %s: %s\n", argv[argc - 1],
		    strerror(errno));
		return (2);
	}
	while (getline(&line, &cap, f) > 0) {
		const char *ph = field(line, "{\"ph\":\"");

		if (ph == NULL) {
			line_other(line);
			continue;
		}
		events++;
		if (*ph == 'M')
			line_meta(line);
		else
			line_event(line, *ph);
	}
	free(line);
	fclose(f);
	if (events == 0)
		die("no events: not a trace written by ult?");
	if (only_counts) {
		for (size_t i = 0; i < NKINDS; i++)
			printf("%s\t%" PRIu64 "\n", kinds[i], counts[i]);
		printf("dropped\t%" PRIu64 "\n", dropped);
		printf("uthreads\t%zu\n", nuts);
		return (0);
	}
	report();
	return (0);
}
