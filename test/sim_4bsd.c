/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sched_4bsd on the simulator: estcpu charged per stat tick and decayed
 * once a second through the load average, as docs/ULE.md section 9
 * gives; sleepers catching up at wakeup; nice shares
 * against a small independent model of the same formulas; bound threads
 * and the global queue on several CPUs.
 */
#include <math.h>
#include <string.h>

#include "sched/sched.h"
#include "sim.h"
#include "test.h"

#define CEXP0 1884
#define IEW1 8 /* INVERSE_ESTCPU_WEIGHT on one CPU */

static int
decay(int ldavg, int e)
{
	int loadfac = 2 * ldavg;

	return ((int)(((long long)loadfac * e) / (loadfac + FSCALE)));
}

static int
loadav(int ldavg, int nrun)
{
	return ((int)(((long long)CEXP0 * ldavg +
			  (long long)nrun * FSCALE * (FSCALE - CEXP0)) >>
	    FSHIFT));
}

/* A hog's estcpu rises by one per stat tick until the first decay. */
void
test_bsd_estcpu_growth(void)
{
	struct sim *s = sim_create_policy(1, NULL, &ult__sched_4bsd);
	struct sim_thread *t = sim_spawn(s, 0, -1, 0, -1);
	int e;

	s->check_every = 97;
	sim_run(s, 500);
	e = ult__4bsd_estcpu(&t->td);
	/* 500 ms at stathz 127: 63 or 64 stat ticks. */
	CHECK(e >= 62 && e <= 64);
	CHECK(s->check_failed == NULL);
	sim_destroy(s);
}

/*
 * Ten seconds of one hog, against the formulas run independently: +1 per
 * stat tick (capped at 37 * IEW - 1), the load average sampled every 5 s,
 * estcpu scaled by 2L / (2L + 1) every second.
 */
void
test_bsd_estcpu_decay(void)
{
	struct sim *s = sim_create_policy(1, NULL, &ult__sched_4bsd);
	struct sim_thread *t = sim_spawn(s, 0, -1, 0, -1);
	int model = 0, ldavg = 0, acc = 0, got;

	for (int ms = 1; ms <= 10000; ms++) {
		acc += 127;
		if (acc >= 1000) {
			acc -= 1000;
			if (ms % 5000 == 0)
				ldavg = loadav(ldavg, 1);
			if (ms % 1000 == 0)
				model = decay(ldavg, model);
			model = model + 1 < 37 * IEW1 - 1 ? model + 1
							  : 37 * IEW1 - 1;
		}
	}
	sim_run(s, 10000);
	got = ult__4bsd_estcpu(&t->td);
	fprintf(stderr, "estcpu after 10 s: %d, model %d; ldavg %d, model %d\n",
	    got, model, ult__4bsd_ldavg(), ldavg);
	CHECK(abs(ult__4bsd_ldavg() - ldavg) <= ldavg / 20 + 2);
	CHECK(abs(got - model) <= model / 5 + 3);
	CHECK(got > 0 && got < 37 * IEW1);
	sim_destroy(s);
}

/* A sleeper's estcpu decays for the seconds it slept (updatepri). */
void
test_bsd_sleeper_decay(void)
{
	struct sim *s = sim_create_policy(1, NULL, &ult__sched_4bsd);
	struct sim_thread *bg = sim_spawn(s, 0, -1, 0, -1);
	struct sim_thread *t;
	int before, after;

	(void)bg;
	sim_run(s, 12000); /* a load average above zero */
	t = sim_spawn(s, -20, 3000, 6000, -1);
	sim_run(s, 2990);
	before = ult__4bsd_estcpu(&t->td);
	sim_run(s, 6100); /* asleep 6 s, then woken */
	after = ult__4bsd_estcpu(&t->td);
	fprintf(stderr, "sleeper estcpu %d before, %d after 6 s asleep\n",
	    before, after);
	CHECK(before > 50);
	CHECK(after < before / 2);
	sim_destroy(s);
}

/*
 * Nice shares: two hogs at nice 0 and +n on one CPU, against a model of
 * the same rules: the better priority runs; the running one is charged a
 * stat tick; priority = PUSER + estcpu / IEW + (nice + 20); a 12-tick
 * slice round-robins equals; per-second decay via the load average.
 */
static double
model_share(int nice1, int secs)
{
	int e[2] = {0, 0}, nice[2] = {0, nice1}, pri[2], ldavg = 0, cur = 0;
	int slice = 12, acc = 0;
	long ran[2] = {0, 0}, total = 0;

	for (int ms = 1; ms <= secs * 1000; ms++) {
		acc += 127;
		if (acc < 1000)
			continue;
		acc -= 1000;
		if (ms % 5000 == 0)
			ldavg = loadav(ldavg, 2);
		if (ms % 1000 == 0)
			for (int i = 0; i < 2; i++)
				e[i] = decay(ldavg, e[i]);
		for (int i = 0; i < 2; i++)
			pri[i] = 88 + e[i] / IEW1 + nice[i] + 20;
		if (pri[!cur] < pri[cur] ||
		    (pri[!cur] == pri[cur] && slice <= 0)) {
			cur = !cur;
			slice = 12;
		}
		if (ms > 20000) {
			ran[cur]++;
			total++;
		}
		e[cur] =
		    e[cur] + 1 < 37 * IEW1 - 1 ? e[cur] + 1 : 37 * IEW1 - 1;
		slice--;
	}
	return (100.0 * (double)ran[0] / (double)total);
}

void
test_bsd_nice_shares(void)
{
	static const int nices[] = {4, 10, 20};

	for (unsigned k = 0; k < sizeof(nices) / sizeof(nices[0]); k++) {
		struct sim *s = sim_create_policy(1, NULL, &ult__sched_4bsd);
		struct sim_thread *a = sim_spawn(s, 0, -1, 0, -1);
		struct sim_thread *b = sim_spawn(s, nices[k], -1, 0, -1);
		double got, want = model_share(nices[k], 120);

		s->check_every = 997;
		sim_run(s, 20000);
		sim_reset_stats(s);
		sim_run(s, 100000);
		got = sim_share(s, a);
		fprintf(stderr, "nice 0 vs %d: %.1f%% / %.1f%%, model %.1f%%\n",
		    nices[k], got, sim_share(s, b), want);
		CHECK(got > 50.0); /* the direction */
		CHECK(fabs(got - want) <= 5.0);
		CHECK(s->check_failed == NULL);
		sim_destroy(s);
	}
}

/*
 * 4BSD has no minimum slice; it reports ULE's figure for the same
 * kern.sched.slice, slice / 6 stat ticks and at least one, so that the
 * host's deferral bound does not depend on the policy.
 */
void
test_bsd_slice_min(void)
{
	const struct sched_ops *ops = &ult__sched_4bsd;
	atomic_int *slice = NULL;

	for (const struct sched_tunable *t = ops->tunables; t->name; t++)
		if (strcmp(t->name, "kern.sched.slice") == 0)
			slice = t->var;
	CHECK(slice != NULL);
	CHECK_EQ(ULT_LD(slice), 12);
	CHECK_EQ(ops->slice_min_us(), 2 * 1000000 / ULT_STATHZ);
	ULT_ST(slice, 30);
	CHECK_EQ(ops->slice_min_us(), 5 * 1000000 / ULT_STATHZ);
	ULT_ST(slice, 5);
	CHECK_EQ(ops->slice_min_us(), 1000000 / ULT_STATHZ);
	ULT_ST(slice, 12);
}

/* A bound thread runs only on its CPU; unbound ones use every CPU. */
void
test_bsd_bound_and_global(void)
{
	struct sim *s = sim_create_policy(4, NULL, &ult__sched_4bsd);
	struct sim_thread *bound = sim_spawn(s, 0, 3, 2, 2);
	struct sim_thread *h[12];

	s->check_every = 97;
	for (int i = 0; i < 12; i++)
		h[i] = sim_spawn(s, 0, -1, 0, -1);
	sim_run(s, 20000);
	for (int c = 0; c < 4; c++)
		if (c != 2)
			CHECK_EQ(bound->ran_on[c], 0);
	CHECK(bound->ran_on[2] > 0);
	/* Every CPU takes from the one global queue: with more hogs than
	 * CPUs, each hog runs on several CPUs and each CPU is busy. */
	for (int i = 0; i < 12; i++) {
		int cpus = 0;

		for (int c = 0; c < 4; c++)
			cpus += h[i]->ran_on[c] > 0;
		CHECK(cpus >= 2);
	}
	for (int c = 0; c < 4; c++)
		CHECK(s->cpu[c].switches > 0);
	CHECK(s->check_failed == NULL);
	sim_destroy(s);
}
