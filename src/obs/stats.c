/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ULT_STATS=1: at ult_shutdown, or at process exit while the runtime is
 * up, one table of the workers and one of the uthreads on stderr.
 *
 * A uthread's row is taken when it exits (its struct is reused after
 * that) or, for the ones still alive, when the report is made.  The
 * first ROWS_MAX uthreads get a row each; later ones are summed into one
 * row per name (GROUPS_MAX names, then "(others)"), so that a program
 * that makes millions of uthreads gets a report of bounded size.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kern/runtime.h"
#include "../kern/uthread.h"
#include "../kern/worker.h"
#include "deadlock.h"
#include "stats.h"
#include "../kern/subsys.h"

#define ROWS_MAX 1000
#define GROUPS_MAX 256

int ult__stats_on;

struct row {
	char name[32];
	uint64_t id; /* 0: a group of count uthreads */
	uint64_t count;
	uint64_t runtime_ns, nvcsw, nivcsw, nmigrations;
	uint64_t rqd_n, rqd_sum, rqd_max;
	uint32_t hist[STATS_HIST_BUCKETS];
};

/* Guards everything below; taken by exiting uthreads (runtime code, not
 * preempted) and the reporter, briefly. */
static pthread_mutex_t rows_lock = PTHREAD_MUTEX_INITIALIZER;
static struct row *rows;
static int nrows, ngroups, reported;
static struct row *groups;

void
ult__stats_hist_add(uint32_t *h, uint64_t ns)
{
	unsigned i;

	if (ns < 4) {
		i = (unsigned)ns;
	} else {
		int k = 63 - __builtin_clzll(ns); /* 2..63 */

		i = 4 + 4 * (unsigned)(k - 2) + (unsigned)((ns >> (k - 2)) & 3);
	}
	h[i]++;
}

/* The upper end of bucket i, in ns. */
static uint64_t
bucket_top(unsigned i)
{
	unsigned k, sub;

	if (i < 4)
		return (i);
	k = (i - 4) / 4 + 2;
	sub = (i - 4) % 4;
	return (((uint64_t)(5 + sub) << (k - 2)) - 1);
}

/* The delay below which a share q of the runs waited, rounded up to its
 * bucket's end (at most 25% high). */
static uint64_t
percentile(const uint32_t *h, double q)
{
	uint64_t n = 0, seen = 0, want;

	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++)
		n += h[i];
	if (n == 0)
		return (0);
	want = (uint64_t)(q * (double)n + 0.999999);
	if (want == 0)
		want = 1;
	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		seen += h[i];
		if (seen >= want)
			return (bucket_top(i));
	}
	return (bucket_top(STATS_HIST_BUCKETS - 1));
}

int
ult__stats_configure(void)
{
	const char *s = getenv("ULT_STATS");

	ult__stats_on = 0;
	if (s == NULL || *s == '\0' || strcmp(s, "0") == 0)
		return (0);
	if (strcmp(s, "1") != 0)
		return (EINVAL);
	pthread_mutex_lock(&rows_lock);
	if (rows == NULL)
		rows = calloc(ROWS_MAX, sizeof(*rows));
	if (groups == NULL)
		groups = calloc(GROUPS_MAX + 1, sizeof(*groups));
	nrows = ngroups = reported = 0;
	if (groups != NULL)
		memset(groups, 0, (GROUPS_MAX + 1) * sizeof(*groups));
	pthread_mutex_unlock(&rows_lock);
	if (rows == NULL || groups == NULL)
		return (ENOMEM);
	ult__stats_on = 1;
	return (0);
}

void
ult__stats_thread_init(struct ult_thread *ut)
{
	atomic_init(&ut->rqd_sum, 0);
	atomic_init(&ut->rqd_n, 0);
	atomic_init(&ut->rqd_max, 0);
	if (!ult__stats_on)
		return;
	if (ut->rqd_hist == NULL)
		ut->rqd_hist = calloc(STATS_HIST_BUCKETS, sizeof(uint32_t));
	else
		memset(ut->rqd_hist, 0, STATS_HIST_BUCKETS * sizeof(uint32_t));
}

void
ult__stats_thread_free(struct ult_thread *ut)
{
	free(ut->rqd_hist);
	ut->rqd_hist = NULL;
}

static void
row_add(struct row *r, struct ult_thread *ut)
{
	r->count++;
	r->runtime_ns += ULT_LD(&ut->runtime_ns);
	r->nvcsw += ULT_LD(&ut->nvcsw);
	r->nivcsw += ULT_LD(&ut->nivcsw);
	r->nmigrations += ULT_LD(&ut->nmigrations);
	r->rqd_n += ULT_LD(&ut->rqd_n);
	r->rqd_sum += ULT_LD(&ut->rqd_sum);
	if (ULT_LD(&ut->rqd_max) > r->rqd_max)
		r->rqd_max = ULT_LD(&ut->rqd_max);
	if (ut->rqd_hist != NULL)
		for (int i = 0; i < STATS_HIST_BUCKETS; i++)
			r->hist[i] += ut->rqd_hist[i];
}

/* rows_lock held. */
static void
record(struct ult_thread *ut)
{
	struct row *r;
	int i;

	if (nrows < ROWS_MAX) {
		r = &rows[nrows++];
		memset(r, 0, sizeof(*r));
		memcpy(r->name, ut->name, sizeof(r->name));
		r->id = ut->id;
		row_add(r, ut);
		return;
	}
	for (i = 0; i < ngroups; i++)
		if (strcmp(groups[i].name, ut->name) == 0)
			break;
	if (i == ngroups) {
		if (ngroups == GROUPS_MAX) {
			i = GROUPS_MAX; /* "(others)" */
			if (groups[i].name[0] == '\0')
				strcpy(groups[i].name, "(others)");
		} else {
			memset(&groups[i], 0, sizeof(groups[i]));
			memcpy(groups[i].name, ut->name, sizeof(ut->name));
			ngroups++;
		}
	}
	row_add(&groups[i], ut);
}

void
ult__stats_exit(struct ult_thread *ut)
{
	pthread_mutex_lock(&rows_lock);
	if (rows != NULL && !reported)
		record(ut);
	pthread_mutex_unlock(&rows_lock);
}

static void
record_live(struct ult_thread *ut, void *arg)
{
	(void)arg;
	if (ULT_LD(&ut->lstate) == UT_ALIVE)
		record(ut);
}

/* A percentile, at most the largest delay seen (a bucket's end can lie
 * above it). */
static uint64_t
pct_capped(const struct row *r, double q)
{
	uint64_t v = percentile(r->hist, q);

	return (v < r->rqd_max ? v : r->rqd_max);
}

static void
print_row(FILE *f, const struct row *r)
{
	char who[64];

	if (r->id != 0)
		snprintf(who, sizeof(who), "%llu %s", (unsigned long long)r->id,
		    r->name[0] != '\0' ? r->name : "-");
	else
		snprintf(who, sizeof(who), "%llux %s",
		    (unsigned long long)r->count,
		    r->name[0] != '\0' ? r->name : "(unnamed)");
	fprintf(f,
	    "%-28s %12.3f %9llu %9llu %6llu %9llu %10.1f %10.1f %10.1f\n", who,
	    (double)r->runtime_ns / 1e6, (unsigned long long)r->nvcsw,
	    (unsigned long long)r->nivcsw, (unsigned long long)r->nmigrations,
	    (unsigned long long)r->rqd_n, (double)pct_capped(r, 0.5) / 1e3,
	    (double)pct_capped(r, 0.99) / 1e3, (double)r->rqd_max / 1e3);
}

static void
print_workers(FILE *f)
{
	fprintf(f,
	    "ult stats: policy %s, %d workers\n"
	    "%-6s %12s %7s %8s %8s %8s %8s %8s %8s\n",
	    ult__rt.sched->name, ult__rt.ncpu, "worker", "switches", "idle%",
	    "steals", "preempt", "owed", "parks", "futexwk", "handoff");
	for (int i = 0; i < ult__rt.ncpu; i++) {
		struct ult_cpu_info ci;
		double busy, idle;

		if (ult_cpu_info(i, &ci) != 0)
			continue;
		busy = (double)ci.busy_ns;
		idle = (double)ci.idle_ns;
		fprintf(f,
		    "%-6d %12llu %7.1f %8llu %8llu %8llu %8llu %8llu %8llu\n",
		    i, (unsigned long long)ci.switches,
		    busy + idle > 0 ? 100.0 * idle / (busy + idle) : 0.0,
		    (unsigned long long)ci.steals,
		    (unsigned long long)ci.preemptions,
		    (unsigned long long)ci.owed, (unsigned long long)ci.parks,
		    (unsigned long long)ci.futex_wakes,
		    (unsigned long long)ci.handoffs);
	}
}

void
ult__stats_report(void)
{
	FILE *f = stderr;

	if (!ult__stats_on)
		return;
	pthread_mutex_lock(&rows_lock);
	if (reported || rows == NULL) {
		pthread_mutex_unlock(&rows_lock);
		return;
	}
	ult__thread_foreach(record_live, NULL, 0);
	reported = 1;
	flockfile(f);
	print_workers(f);
	fprintf(f, "%-28s %12s %9s %9s %6s %9s %10s %10s %10s\n", "uthread",
	    "runtime_ms", "vol_sw", "invol_sw", "migr", "runs", "rq_p50_us",
	    "rq_p99_us", "rq_max_us");
	for (int i = 0; i < nrows; i++)
		print_row(f, &rows[i]);
	for (int i = 0; i <= GROUPS_MAX; i++)
		if (groups[i].count != 0)
			print_row(f, &groups[i]);
	funlockfile(f);
	fflush(f);
	pthread_mutex_unlock(&rows_lock);
	(void)ult__deadlock_report(f, "ult stats: ");
}

static int
stats_configure(const struct ult_config *cfg)
{
	(void)cfg;
	return (ult__stats_configure());
}

/* The rows are the parent's to report. */
static void
stats_fork_child(void)
{
	pthread_mutex_init(&rows_lock, NULL);
	rows = groups = NULL;
	nrows = ngroups = reported = 0;
}

const struct ult__subsys ult__stats_subsys = {.name = "stats",
    .configure = stats_configure,
    .fork_child = stats_fork_child};
