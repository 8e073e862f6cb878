/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A worker blocked in the kernel.  A uthread that makes a blocking system
 * call the I/O layer does not cover (a raw read(), a contended pthread
 * mutex, page faults on a slow disk) takes its worker's kernel thread
 * with it, and the uthreads queued behind it would wait for as long.  The
 * clock thread looks at every busy worker at each stat tick: one that has
 * not switched for ult.handoff_us, whose kernel thread the kernel reports
 * asleep (state S or D in /proc/self/task/TID/stat) at two ticks in a row
 * and has had no CPU time in between (schedstat) is marked blocked.  The policy
 * then hands the threads queued there that may migrate to the other CPUs, and
 * treats the CPU as unavailable when it places threads (mach_cpu_state says
 * MACH_CPU_BLOCKED), until the worker switches again or runs: it rejoins by
 * itself.  This is the spirit of scheduler activations and of Go's handoff of a
 * P in a syscall: the other workers take the work.  Cost: nothing on the
 * worker; for the clock, one read of a procfs file per tick for each worker
 * that has run one uthread for the whole interval (a CPU hog looks the same
 * until the kernel says it runs).
 *
 * When every worker is blocked there is no other worker, so the runtime
 * keeps one spare (ULT_SPARE=0: none): a worker started with the others as
 * CPU ult_ncpu(), a reserve CPU to the policy (machine.h), parked and out
 * of service.  The clock brings it into service when it finds every
 * worker blocked and hands it their queues; it leaves service, its queue
 * and its running thread going back to the others, at the first tick that
 * finds a worker back.  A parked spare costs one kernel thread's memory.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "worker.h"
#include "handoff.h"
#include "subsys.h"

atomic_int ult__handoff_us = 1000;
static atomic_long spare_runs; /* times the spare came into service */

/* Clock thread only. */
static struct {
	uint64_t nswitch; /* the worker's switch count when last looked at */
	uint64_t since;	  /* when that count was first seen */
	uint64_t oncpu;	  /* its kernel thread's CPU time then, ns */
	uint64_t at;	  /* when that was read */
	int sampled;	  /* oncpu holds a sample taken at this count */
	int fd[2];	  /* its stat and schedstat files + 1, or 0 */
} hw[ULT_MAXCPU];

/*
 * The workers' procfs files are opened once, as the clock starts: opened
 * later they would take the lowest free descriptor number, perhaps one
 * the program has just closed and a uthread still names.
 */
void
ult__handoff_init(void)
{
	static const char *const name[2] = {"stat", "schedstat"};

	for (int cpu = 0; cpu < ult__rt.nworkers; cpu++) {
		for (int k = 0; k < 2; k++) {
			char path[64];
			int fd;

			snprintf(path, sizeof(path), "/proc/self/task/%d/%s",
			    ULT_LD(&ult__rt.workers[cpu].tid), name[k]);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			hw[cpu].fd[k] = fd >= 0 ? fd + 1 : 0;
		}
	}
}

/* Read one of the worker's procfs files into buf; 0 on failure. */
static ssize_t
read_task(int cpu, int which, char *buf, size_t len)
{
	ssize_t n;

	if (hw[cpu].fd[which] == 0)
		return (0);
	n = pread(hw[cpu].fd[which] - 1, buf, len - 1, 0);
	if (n <= 0)
		return (0);
	buf[n] = '\0';
	return (n);
}

/*
 * 1 if the kernel says the worker's thread sleeps now and did at the
 * previous look at this switch count, and it has had almost no CPU time
 * in between (signal handlers run on a blocked thread: a preemption owed
 * to it is retried at every tick): a sleep of a moment (a futex inside a
 * lock, a page fault) that one sample can catch does not count.  Without
 * schedstat, two sleeping samples in a row.
 */
static int
kernel_blocked(int cpu, uint64_t now)
{
	char buf[512], *p;
	uint64_t oncpu = 0;
	int asleep, stuck, was = hw[cpu].sampled;

	if (read_task(cpu, 0, buf, sizeof(buf)) == 0)
		return (0);
	/* "tid (comm) S ...": comm may hold anything, ')' included. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return (0);
	asleep = p[2] == 'S' || p[2] == 'D';
	if (read_task(cpu, 1, buf, sizeof(buf)) != 0)
		oncpu = strtoull(buf, NULL, 10) + 1;
	stuck = asleep && was && oncpu >= hw[cpu].oncpu &&
	    oncpu - hw[cpu].oncpu < (now - hw[cpu].at) / 8;
	hw[cpu].sampled = asleep;
	hw[cpu].oncpu = oncpu;
	hw[cpu].at = now;
	return (stuck);
}

/* The clock sets the mark; it and the worker's next switch clear it. */
void
ult__handoff_set(struct ult__worker *w, int on)
{
	ULT_KASSERT(on == 0 || on == 1, "ult__handoff_set: a mark is 0 or 1");
	/* seq_cst: the clock and the worker's switch both clear the mark;
	 * the exchange lets one of them count the change, and orders it
	 * before the evacuation's queue locks as the policy reads it. */
	if (ULT_LD(&w->blocked) == on || ULT_XCHG_SC(&w->blocked, on) == on)
		return;
	ULT_ADD_SC(&ult__rt.nblocked, on ? 1 : -1);
	ULT_KASSERT(ULT_LD(&ult__rt.nblocked) >= 0 &&
		ULT_LD(&ult__rt.nblocked) <= ult__rt.nworkers,
	    "ult__handoff_set: blocked workers out of range");
	if (on) {
		ULT_ADD(&w->nhandoffs, 1);
		ULT_TRACE(TEV_HANDOFF, handoff, 0, w->id, 0, 0, 0);
	}
}

void
ult__handoff_tick(int cpu)
{
	struct ult__worker *w = &ult__rt.workers[cpu];
	uint64_t sw = ULT_LD(&w->nswitch), now = ult__now();
	uint64_t limit = (uint64_t)ULT_LD(&ult__handoff_us) * 1000u;
	int act = ult__tls_actcpu;

	ULT_KASSERT(cpu >= 0 && cpu < ult__rt.nworkers &&
		ult__tls_worker == NULL,
	    "ult__handoff_tick: the clock thread looks at a worker");
	if (sw != hw[cpu].nswitch || !ULT_LD(&w->busy) || limit == 0) {
		hw[cpu].nswitch = sw;
		hw[cpu].since = now;
		hw[cpu].sampled = 0;
		ult__handoff_set(w, 0);
		return;
	}
	if (now - hw[cpu].since < limit)
		return;
	if (!kernel_blocked(cpu, now) || ULT_LD(&w->nswitch) != sw) {
		ult__handoff_set(w, 0);
		return;
	}
	ult__handoff_set(w, 1);
	/* The spare's queue has nowhere to go while it is needed, and an
	 * evacuation would signal its blocked thread (handoff_spare). */
	if (cpu >= ult__rt.ncpu)
		return;
	/* Moving threads is nobody's CPU's business: no IPI to self. */
	ult__tls_actcpu = -1;
	ult__rt.sched->evacuate(cpu);
	ult__tls_actcpu = act;
}

static int
all_blocked(void)
{
	for (int c = 0; c < ult__rt.ncpu; c++)
		if (!ULT_LD(&ult__rt.workers[c].blocked))
			return (0);
	return (1);
}

/*
 * After each round of stat ticks, and while the clock idles (clock thread
 * only).  Out of service, the spare is still asked to give back what it
 * has at every tick it runs something: a thread preempted there is pinned
 * to it until its next voluntary switch, and a thread that was in a
 * blocking call when the spare left comes back to it.  Not while its own
 * thread is blocked in the kernel: the request is a signal, and it would
 * interrupt that call.
 */
void
ult__handoff_spare(void)
{
	struct ult__worker *s = &ult__rt.workers[ult__rt.ncpu];
	int act = ult__tls_actcpu, all;

	if (ult__rt.nworkers == ult__rt.ncpu)
		return;
	all = all_blocked();
	ult__tls_actcpu = -1;
	if (ULT_LD(&s->offline) && all) {
		/* seq_cst: the policy reads it through mach_cpu_state before
		 * it moves a thread there (under the queue locks). */
		ULT_ST_SC(&s->offline, 0);
		ULT_ADD(&spare_runs, 1); /* a count for ult.spare_runs */
		for (int c = 0; c < ult__rt.ncpu; c++)
			ult__rt.sched->evacuate(c);
	} else if (!all) {
		if (!ULT_LD(&s->offline))
			ULT_ST_SC(&s->offline, 1); /* as above */
		if (ULT_LD(&s->busy) && !ULT_LD(&s->blocked))
			ult__rt.sched->evacuate(ult__rt.ncpu);
	}
	ult__tls_actcpu = act;
}

long
ult__handoff_spare_runs(void)
{
	return (ULT_LD(&spare_runs));
}

long
ult__handoff_has_spare(void)
{
	return (ult__running() && ult__rt.nworkers > ult__rt.ncpu);
}

void
ult__handoff_fini(void)
{
	for (int i = 0; i < ULT_MAXCPU; i++) {
		for (int k = 0; k < 2; k++) {
			if (hw[i].fd[k] != 0)
				close(hw[i].fd[k] - 1);
			hw[i].fd[k] = 0;
		}
		hw[i].sampled = 0;
		hw[i].nswitch = 0;
		hw[i].since = 0;
	}
}

static const struct sched_tunable handoff_tunables[] = {
    {"ult.handoff_us", &ult__handoff_us, 0, 1000000, NULL, NULL},
    {"ult.spare", NULL, 0, 0, ult__handoff_has_spare, NULL},
    {"ult.spare_runs", NULL, 0, 0, ult__handoff_spare_runs, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

/* Driven by the clock thread (clock.c); here for its tunables. */
const struct ult__subsys ult__handoff_subsys = {.name = "handoff",
    .tunables = handoff_tunables};
