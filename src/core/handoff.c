/*
 * A worker blocked in the kernel.  A uthread that makes a blocking system
 * call the I/O layer does not cover (a raw read(), a contended pthread
 * mutex, page faults on a slow disk) takes its worker's kernel thread
 * with it, and the uthreads queued behind it would wait for as long.  The
 * clock thread looks at every busy worker at each stat tick: one that has
 * not switched for ult.handoff_us and whose kernel thread the kernel
 * reports asleep (state S or D in /proc/self/task/TID/stat) is marked
 * blocked.  The policy then hands the threads queued there that may
 * migrate to the other CPUs, and treats the CPU as unavailable when it
 * places threads (mach_cpu_state says MACH_CPU_BLOCKED), until the
 * worker switches again or runs: it rejoins by itself.  This is the
 * spirit of scheduler activations and of Go's handoff of a P in a
 * syscall, without a spare kernel thread: the other workers take the
 * work.  Cost: nothing on the worker; for the clock, one read of a procfs
 * file per tick for each worker that has run one uthread for the whole
 * interval (a CPU hog looks the same until the kernel says it runs).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

atomic_int ult__handoff_us = 1000;

/* Clock thread only. */
static struct {
	uint64_t nswitch; /* the worker's switch count when last looked at */
	uint64_t since;	  /* when that count was first seen */
	int fd;		  /* its stat file + 1, or 0 */
} hw[ULT_MAXCPU];

/* 1 if the kernel says the worker's thread sleeps; 0 if it runs or is
 * runnable, or cannot tell. */
static int
kernel_asleep(struct ult__worker *w, int cpu)
{
	char buf[512], *p;
	ssize_t n;

	if (hw[cpu].fd == 0) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/self/task/%d/stat",
		    ULT_LD(&w->tid));
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return (0);
		hw[cpu].fd = fd + 1;
	}
	n = pread(hw[cpu].fd - 1, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return (0);
	buf[n] = '\0';
	/* "tid (comm) S ...": comm may hold anything, ')' included. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return (0);
	return (p[2] == 'S' || p[2] == 'D');
}

/* The clock sets the mark; it and the worker's next switch clear it. */
void
ult__handoff_set(struct ult__worker *w, int on)
{
	if (ULT_LD(&w->blocked) == on || atomic_exchange(&w->blocked, on) == on)
		return;
	atomic_fetch_add(&ult__rt.nblocked, on ? 1 : -1);
	if (on)
		ULT_ADD(&w->nhandoffs, 1);
}

void
ult__handoff_tick(int cpu)
{
	struct ult__worker *w = &ult__rt.workers[cpu];
	uint64_t sw = ULT_LD(&w->nswitch), now = ult__now();
	uint64_t limit = (uint64_t)ULT_LD(&ult__handoff_us) * 1000u;
	int act = ult__tls_actcpu;

	if (sw != hw[cpu].nswitch || !ULT_LD(&w->busy) || limit == 0) {
		hw[cpu].nswitch = sw;
		hw[cpu].since = now;
		ult__handoff_set(w, 0);
		return;
	}
	if (now - hw[cpu].since < limit)
		return;
	if (!kernel_asleep(w, cpu)) {
		ult__handoff_set(w, 0);
		return;
	}
	ult__handoff_set(w, 1);
	/* Moving threads is nobody's CPU's business: no IPI to self. */
	ult__tls_actcpu = -1;
	ult__rt.sched->evacuate(cpu);
	ult__tls_actcpu = act;
}

void
ult__handoff_fini(void)
{
	for (int i = 0; i < ULT_MAXCPU; i++) {
		if (hw[i].fd != 0)
			close(hw[i].fd - 1);
		hw[i].fd = 0;
		hw[i].nswitch = 0;
		hw[i].since = 0;
	}
}
