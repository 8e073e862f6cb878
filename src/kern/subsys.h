/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A subsystem of the runtime, as ult_init and ult_shutdown see it
 * (src/api/init.c walks them): its name, how it reads ult_config and the
 * environment, how it comes up and goes down, and its ult.* tunables,
 * which ult_sysctl finds through it.  Each subsystem defines its
 * descriptor in its own file, beside its variables.
 *
 * ult_init calls every configure first (nothing allocated yet), then
 * every init in the table's order; when an init fails, the fini of each
 * subsystem already up runs in reverse order and ult_init returns that
 * error.  ult_shutdown runs every fini in reverse order, and a fork
 * child every fork_child (DESIGN.md section 10.1).  Any op may be NULL.
 */
#ifndef ULT_KERN_SUBSYS_H
#define ULT_KERN_SUBSYS_H

#include "ult.h"

#include "../sched/sched.h"

struct ult__subsys {
	const char *name;
	/* cfg may be NULL; 0 or EINVAL (a bad field or variable). */
	int (*configure)(const struct ult_config *cfg);
	/* 0, or an errno with nothing of the subsystem left behind. */
	int (*init)(void);
	void (*fini)(void);
	/* In a fork child of a process whose runtime was up (its only thread,
	 * single-threaded): forget what the parent's threads held, as if
	 * fini had run, without waiting for them, so that init may run
	 * again.  Memory is leaked, never freed: it may be mid-update, and
	 * an interposed malloc's own child handler may not have run yet
	 * (its locks are still held: jemalloc's are). */
	void (*fork_child)(void);
	/* ult.* names, ended by a NULL name; or NULL. */
	const struct sched_tunable *tunables;
};

int ult__subsys_configure(const struct ult__subsys *const *s, int n,
    const struct ult_config *cfg);
int ult__subsys_start(const struct ult__subsys *const *s, int n);
void ult__subsys_stop(const struct ult__subsys *const *s, int n);
/* Every fork_child, in reverse order. */
void ult__subsys_fork_child(const struct ult__subsys *const *s, int n);
/* The tunable called name in any of the n subsystems, or NULL. */
const struct sched_tunable *ult__subsys_tunable(
    const struct ult__subsys *const *s, int n, const char *name);
/* The same, in one table ended by a NULL name. */
const struct sched_tunable *ult__tunable_find(const struct sched_tunable *t,
    const char *name);

/* A decimal environment value: 1 if absent or empty, 0 if good (in
 * *out), -1 if malformed. */
int ult__env_long(const char *var, long *out);

/* The kernel's subsystems, in the order they come up. */
extern const struct ult__subsys ult__machine_subsys; /* init.c */
extern const struct ult__subsys ult__host_nice_subsys;
extern const struct ult__subsys ult__threads_subsys;
extern const struct ult__subsys ult__stacks_subsys;
extern const struct ult__subsys ult__timers_subsys;
extern const struct ult__subsys ult__io_subsys;
extern const struct ult__subsys ult__signals_subsys;
extern const struct ult__subsys ult__preempt_subsys;
extern const struct ult__subsys ult__policy_subsys; /* init.c */
extern const struct ult__subsys ult__tls_subsys;
extern const struct ult__subsys ult__workers_subsys;
extern const struct ult__subsys ult__clock_subsys;
extern const struct ult__subsys ult__handoff_subsys;
extern const struct ult__subsys ult__witness_subsys;

#endif
