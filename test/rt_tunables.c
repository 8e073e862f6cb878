/*
 * nice and the kern.sched.* tunables through the public API.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "test.h"
#include "ult.h"

static atomic_int hogs_stop;

static void *
hog(void *arg)
{
	(void)arg;
	while (!atomic_load(&hogs_stop)) {
		for (volatile int i = 0; i < 50000; i++)
			;
		ult_yield();
	}
	return (NULL);
}

/* Every ULE tunable that makes sense in user space, by FreeBSD name,
 * with its default (DESIGN.md section 14). */
static const struct {
	const char *name;
	long value;
} defaults[] = {
    {"kern.sched.quantum", 94488},
    {"kern.sched.slice", 12},
    {"kern.sched.interact", 30},
    {"kern.sched.preempt_thresh", 48},
    {"kern.sched.static_boost", 136},
    {"kern.sched.idlespins", 10000},
    {"kern.sched.idlespinthresh", 157},
    {"kern.sched.affinity", 1},
    {"kern.sched.balance", 1},
    {"kern.sched.balance_interval", 127},
    {"kern.sched.steal_idle", 1},
    {"kern.sched.steal_thresh", 2},
    {"kern.sched.trysteal_limit", 2},
    {"kern.sched.always_steal", 0},
    {"kern.sched.preemption", 1},
    {"kern.ccpu", 0},
    {"ult.child_runs_first", 1},
};

void
test_nice_and_sysctl(void)
{
	struct ult_config cfg = {0};
	struct ult_thread_info a, b;
	ult_thread_t *t[2];
	long v, nv;
	int nice;

	cfg.ncpu = 1;
	CHECK_EQ(ult_init(&cfg), 0);

	/* FreeBSD's defaults at hz 1000, stathz 127. */
	for (unsigned i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		CHECK_EQ(ult_sysctl(defaults[i].name, &v, NULL), 0);
		if (v != defaults[i].value) {
			fprintf(stderr, "%s = %ld\n", defaults[i].name, v);
			CHECK(0);
		}
	}

	/* Set and read back; quantum recomputes the slice. */
	nv = 6;
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, &nv), 0);
	CHECK_EQ(v, 12);
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, NULL), 0);
	CHECK_EQ(v, 6);
	nv = 50000;
	CHECK_EQ(ult_sysctl("kern.sched.quantum", NULL, &nv), 0);
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, NULL), 0);
	CHECK_EQ(v, 6); /* 50000 us / 7874 us per tick, rounded */
	nv = 94488;
	CHECK_EQ(ult_sysctl("kern.sched.quantum", NULL, &nv), 0);
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, NULL), 0);
	CHECK_EQ(v, 12);

	/* Errors. */
	CHECK_EQ(ult_sysctl("kern.sched.nonesuch", &v, NULL), ENOENT);
	CHECK_EQ(ult_sysctl(NULL, &v, NULL), EINVAL);
	nv = -1;
	CHECK_EQ(ult_sysctl("kern.sched.slice", NULL, &nv), EINVAL);
	CHECK_EQ(ult_sysctl("kern.sched.quantum", NULL, &nv), EINVAL);
	nv = 101;
	CHECK_EQ(ult_sysctl("kern.sched.interact", NULL, &nv), EINVAL);
	nv = 2;
	CHECK_EQ(ult_sysctl("kern.sched.balance", NULL, &nv), EINVAL);
	nv = 0;
	CHECK_EQ(ult_sysctl("kern.sched.preemption", NULL, &nv), EPERM);
	CHECK_EQ(ult_sysctl("kern.sched.interact", &v, NULL), 0);
	CHECK_EQ(v, 30); /* failed writes change nothing */

	/*
	 * nice: two yielding hogs on one worker.  Both are batch threads,
	 * and nice adds to the batch priority, so the +20 one sits at least
	 * 20 levels above the best batch priority.  (How the CPU splits
	 * between yielding hogs varies from run to run, as yielders reinsert
	 * ahead in the calendar while their priority climbs; the shares of
	 * CPU hogs are checked exactly in the simulator.)
	 */
	atomic_store(&hogs_stop, 0);
	CHECK_EQ(ult_spawn(&t[0], NULL, hog, NULL), 0);
	CHECK_EQ(ult_spawn(&t[1], NULL, hog, NULL), 0);
	CHECK_EQ(ult_setnice(t[1], 20), 0);
	CHECK_EQ(ult_getnice(t[1], &nice), 0);
	CHECK_EQ(nice, 20);
	CHECK_EQ(ult_getnice(t[0], &nice), 0);
	CHECK_EQ(nice, 0);
	ult_sleep_ns(1000000000);
	CHECK_EQ(ult_thread_info(t[0], &a), 0);
	CHECK_EQ(ult_thread_info(t[1], &b), 0);
	CHECK_EQ(b.nice, 20);
	CHECK(a.priority >= 156 && b.priority >= 156 + 20);
	CHECK_EQ(ult_setnice(t[1], -20), 0);
	CHECK_EQ(ult_getnice(t[1], &nice), 0);
	CHECK_EQ(nice, -20);
	atomic_store(&hogs_stop, 1);
	CHECK_EQ(ult_join(t[0], NULL), 0);
	CHECK_EQ(ult_join(t[1], NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}
