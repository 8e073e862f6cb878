/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult.host_nice (ULT_HOST_NICE=1): a worker's kernel thread takes the nice
 * value of the uthread it runs, so that a uthread at nice +10 competes with
 * the host's other processes as a nice +10 process would, and not at the
 * worker's nice 0.  Off by default, because it needs the right to lower a
 * nice value again (CAP_SYS_NICE, or RLIMIT_NICE down to the process's own
 * nice), which an ordinary process lacks; asked for without it, ult_init
 * and the sysctl fail with EPERM.
 *
 * The worker sets its own nice after each switch, from the thread chosen
 * (kept in hn_want): a uthread of nice n > 0 gets base + n (at most 19),
 * an idle-class one 19, everything else the process's nice when the
 * runtime started (base).  The idle loop's
 * thread is idle-class too, so a worker spins idle at nice 19: it takes a
 * CPU only when no other host thread wants it.  Anyone who gives a worker
 * something better to run first puts it back at base: a preemption
 * (ult__preempt_kick), an unpark, the idle loop finding work; so the
 * better thread does not wait for the host to give a niced thread its
 * turn, and the queue's lock is not taken at nice 19.  Each change is one
 * setpriority() system call: two per run of a niced thread, none while
 * every thread runs at nice 0 and no worker idles.
 *
 * A niced worker may still enter the runtime (a hog that yields) and be
 * descheduled there by the host holding a lock; the runtime's spins
 * already bound their wait for a descheduled holder (lock.h).
 *
 * No lock: only the worker raises its nice, others only restore base.  The
 * worker stores hn_now before its system call and checks it after: a
 * restore that came in between is done again, so a restore is never lost.
 * A raise that lost such a race leaves the worker at base, more favourable
 * than asked, until its next switch or preemption signal.
 */
#include <errno.h>

#include "runtime.h"
#include "worker.h"
#include "host_nice.h"
#include "subsys.h"

atomic_int ult__host_nice;
static int base; /* ult_init's caller's nice: every worker's to begin with */

/* ult_init: ULT_HOST_NICE unset, 0 or 1; 1 without the right: EPERM. */
int
ult__host_nice_configure(int want)
{
	base = ult__os_nice_get();
	if (want && !ult__os_may_renice(base))
		return (EPERM);
	ULT_ST(&ult__host_nice, want);
	return (0);
}

void
ult__host_nice_start(struct ult__worker *w)
{
	ULT_ST(&w->hn_now, base);
	w->hn_want = base;
}

/* The host nice for td, which is being switched to.  Its fields are read
 * without its lock (ULT_PLD): a change that races is followed at the
 * thread's next switch. */
int
ult__host_nice_of(const struct thread *td)
{
	int cls = PRI_BASE(ULT_PLD(&td->td_pri_class)), n;

	if (cls == PRI_IDLE)
		return (19);
	n = ULT_PLD(&td->td_nice);
	if (cls != PRI_TIMESHARE || n <= 0)
		return (base);
	n += base;
	return (n < 19 ? n : 19);
}

static void
set_nice(struct ult__worker *w, int nice)
{
	int tid = ULT_LD(&w->tid);

	if (tid != 0)
		ult__os_nice_set(tid, nice);
}

/* The worker itself, with no lock held: take hn_want. */
void
ult__host_nice_apply(struct ult__worker *w)
{
	int want = w->hn_want;

	if (ULT_LD(&w->hn_now) == want)
		return;
	/* seq_cst: pairs with ult__host_nice_restore's exchange; whichever
	 * comes second sees the other and base wins. */
	ULT_ST_SC(&w->hn_now, want);
	set_nice(w, want);
	if (want != base && ULT_LD_SC(&w->hn_now) != want)
		set_nice(w, base);
}

/* Any thread: w's kernel thread back at base. */
void
ult__host_nice_restore(struct ult__worker *w)
{
	if (ULT_LD(&w->hn_now) != base &&
	    /* seq_cst: pairs with ult__host_nice_apply's store and load. */
	    ULT_XCHG_SC(&w->hn_now, base) != base)
		set_nice(w, base);
}

/* sysctl ult.host_nice */
long
ult__host_nice_get(void)
{
	return (ULT_LD(&ult__host_nice));
}

int
ult__host_nice_set(long v)
{
	if (v != 0 && v != 1)
		return (EINVAL);
	if (v == 1 && !ult__os_may_renice(base))
		return (EPERM);
	ULT_ST(&ult__host_nice, (int)v);
	if (v == 0)
		for (int i = 0; i < ult__rt.nworkers; i++)
			ult__host_nice_restore(&ult__rt.workers[i]);
	return (0);
}

/* ULT_HOST_NICE=1 turns it on (off by default). */
static int
host_nice_configure(const struct ult_config *cfg)
{
	long v;
	int r;

	(void)cfg;
	if ((r = ult__env_long("ULT_HOST_NICE", &v)) < 0 ||
	    (r == 0 && v != 0 && v != 1))
		return (EINVAL);
	return (ult__host_nice_configure(r == 0 && v == 1));
}

static const struct sched_tunable host_nice_tunables[] = {
    {"ult.host_nice", NULL, 0, 0, ult__host_nice_get, ult__host_nice_set},
    {NULL, NULL, 0, 0, NULL, NULL},
};

const struct ult__subsys ult__host_nice_subsys = {.name = "host_nice",
    .configure = host_nice_configure,
    .tunables = host_nice_tunables};
