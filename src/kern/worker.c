/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Workers: one kernel thread per CPU, each running its CPU's idle thread
 * (sched_idletd) on its own stack and switching to uthreads from there.
 *
 * Parking: an idle worker sleeps on a futex in three states (EMPTY,
 * NOTIFIED, PARKED), after a short spin, because waking a sleeping kernel
 * thread costs tens of microseconds against a fraction of one for a
 * spinning one.  The policy's idle_enter()/tdq_notify() pair decides when
 * to park and when to wake (see DESIGN.md, "The idle handshake").
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../arch/cpu.h"
#include "io.h"
#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "switch.h"
#include "clock.h"
#include "host_nice.h"
#include "stack.h"
#include "signals.h"
#include "sigmask.h"
#include "tls.h"
#include "subsys.h"

void (*ult__worker_start_hook)(void);

enum {
	PARK_EMPTY = 0,
	PARK_NOTIFIED = 1,
	PARK_PARKED = 2
};

/*
 * Idle spinning.  An idle worker spins before it parks, because a worker
 * that spins sees new work for the price of a cache miss while waking a
 * parked one costs a system call and the host's wakeup latency.  At most
 * ult__rt.max_spinning workers spin at once (half of them, as Go bounds
 * its spinning Ms), each for SPIN_NS, or SPIN_BUSY_NS when the policy
 * says the CPU switches fast; the others, and a spinner whose budget is
 * spent, park.  While it spins the worker polls the policy every POLL_NS,
 * which may then take a thread another worker has left waiting that long.
 *
 * A spin pays only while the host lets the worker run: a CPU the host
 * gives to other threads is better given back than spun on.  A worker
 * does not spin while the clock finds that its kernel thread waits for a
 * CPU (steal.c), nor for NOSPIN_NS after a spin found its own clock jump
 * by SPIN_GAP_NS between two reads a few hundred nanoseconds apart: the
 * host descheduled it in the middle (its run time fell behind the wall
 * time), and that spin ends at once.
 */
#define SPIN_NS 10000u
#define SPIN_BUSY_NS 50000u
#define POLL_NS 4000u
#define SPIN_GAP_NS 20000u
#define NOSPIN_NS 10000000u

/*
 * While uthreads wait on descriptors, one parked worker sleeps in the
 * poller rather than on its futex (io.h): park_io is set before the
 * parked state is published, so an unparker that sees PARK_PARKED knows
 * which of the two to wake.  A poller park ends at any event, NOTIFIED
 * or not; the idle loop then looks for work again.
 */
static void
park(struct ult__worker *w)
{
	unsigned expect = PARK_EMPTY;
	/* The spare out of service is no poller: it would run nothing an
	 * event wakes. */
	int io;

	ULT_KASSERT(w == ult__tls_worker, "park: a worker parks only itself");
	io = !ULT_LD(&w->offline) && ult__io_park_begin(w);

	/* seq_cst: park_io is stored before PARK_PARKED is published, and
	 * the claim pairs with ult__worker_unpark's exchange: an unparker
	 * that finds PARK_PARKED reads this park_io. */
	if (io)
		ULT_ST_SC(&w->park_io, 1);
	if (!ULT_CAS_SC(&w->park, &expect, PARK_PARKED)) {
		ULT_ST(&w->park, PARK_EMPTY); /* was NOTIFIED */
	} else {
		ULT_ST(&w->nparks, ULT_LD(&w->nparks) + 1);
		if (io && ULT_LD_ACQ(&w->park) == PARK_PARKED)
			ult__io_park_wait(w);
		while (!io && ULT_LD_ACQ(&w->park) == PARK_PARKED)
			ult__futex_wait(&w->park, PARK_PARKED, 0);
		ULT_ST(&w->park, PARK_EMPTY);
	}
	if (io) {
		ULT_ST_SC(&w->park_io, 0); /* as above */
		ult__io_park_end(w);
	}
}

static int
spin_claim(struct ult__worker *w)
{
	int n = ULT_LD(&ult__rt.nspinning);

	while (n < ult__rt.max_spinning) {
		/* seq_cst: pairs with spin_release's decrement, and with
		 * the wakers that read nspinning (mach_idle_spinning). */
		if (ULT_CASW_SC(&ult__rt.nspinning, &n, n + 1)) {
			ULT_ST(&w->state, MACH_CPU_SPINNING);
			return (1);
		}
	}
	return (0);
}

/* The read-modify-write is the full fence mach_idle_spinning() promises:
 * the caller looks at its queue again after it (idle_poll, idle_enter). */
static void
spin_release(struct ult__worker *w)
{
	ULT_ST(&w->state, MACH_CPU_PARKED);
	(void)atomic_fetch_sub_explicit(&ult__rt.nspinning, 1,
	    memory_order_seq_cst);
}

/* Spin until `until', work for this CPU or a notification.  Returns 1
 * if the host descheduled the worker meanwhile. */
static int
spin_wait(struct ult__worker *w, uint64_t until)
{
	const struct sched_ops *s = ult__rt.sched;
	uint64_t last = ult__now();

	for (unsigned i = 1;; i++) {
		if (s->load(w->id) || ULT_LD(&ult__rt.stopping))
			return (0);
		/* Acquire: the idle loop then looks for the enqueue stored
		 * before the notifier's exchange (x86-64 orders it anyway). */
		if (ULT_LD_ACQ(&w->park) == PARK_NOTIFIED) {
			ULT_ST(&w->park, PARK_EMPTY);
			return (0);
		}
		if ((i & 31) == 0) {
			uint64_t now = ult__now();

			if (now - last > SPIN_GAP_NS)
				return (1);
			if (now >= until)
				return (0);
			last = now;
		}
		ult__cpu_relax();
	}
}

void
ult__worker_unpark(struct ult__worker *w)
{
	/* seq_cst: after the caller's enqueue, which the parked worker must
	 * see once woken; pairs with park()'s claim of PARK_PARKED. */
	if (ULT_XCHG_SC(&w->park, PARK_NOTIFIED) != PARK_PARKED)
		return;
	/* It parked at its idle thread's host nice (host_nice.c). */
	if (ULT_UNLIKELY(ULT_LD(&ult__host_nice)))
		ult__host_nice_restore(w);
	if (ULT_LD_SC(&w->park_io)) /* stored before PARK_PARKED (park) */
		ult__io_park_unpark(w);
	else
		ult__wake_counted(&w->park);
}

int
ult__worker_stranded(int cpu)
{
	struct ult__worker *w = &ult__rt.workers[cpu];

	return (
	    ULT_LD(&w->park) == PARK_PARKED && ult__rt.sched->load(cpu) > 0);
}

void
ult__worker_became_busy(struct ult__worker *w)
{
	ULT_ST(&w->busy, 1);
	ult__clock_kick(0);
}

static void
idle_loop(struct ult__worker *w)
{
	const struct sched_ops *s = ult__rt.sched;
	struct sched_idle *st = &w->idle_state;
	uint64_t until = 0, now, nospin_until = 0;
	int spinning = 0;

	st->oldswitchcnt = -1;
	st->victim = -1;
	for (;;) {
		int r, offline;

		/* A worker that has run no uthread since the drop-in asked
		 * for idle masks has not switched to its idle thread yet. */
		ult__sigmask_load(w, &w->idle);
		r = s->idle_poll(w->id, st);

		if (r == SCHED_IDLE_RUN) {
			if (spinning)
				spin_release(w);
			spinning = 0;
			until = 0;
			ULT_ST(&w->state, MACH_CPU_RUNNING);
			/* Work: leave the idle thread's host nice before
			 * taking the queue's lock (host_nice.c). */
			if (ULT_UNLIKELY(ULT_LD(&ult__host_nice)))
				ult__host_nice_restore(w);
			thread_lock(&w->idle.td);
			ult__mi_switch(&w->idle, SW_VOL | SWT_IDLE, NULL);
			ULT_ST(&w->state, MACH_CPU_PARKED);
			continue;
		}
		if (ULT_LD(&ult__rt.stopping))
			break;
		now = ult__now();
		/* Nor does it spin: a spinner is counted on to take work. */
		offline = ULT_LD(&w->offline);
		if (ULT_UNLIKELY(offline) && until > now)
			until = now;
		if (until == 0) {
			spinning = !offline && !ULT_LD(&w->stolen) &&
			    now >= nospin_until && spin_claim(w);
			until = now +
			    (!spinning			   ? 0
				    : r == SCHED_IDLE_SPIN ? SPIN_BUSY_NS
							   : SPIN_NS);
		}
		if (now < until) {
			/* The clock thread may leave the poller to the
			 * workers (clock.c): a spinner looks too. */
			if (ULT_LD(&ult__io_nwaiting) > 0 &&
			    ult__io_poll_now() > 0)
				continue;
			if (spin_wait(w,
				now + POLL_NS < until ? now + POLL_NS
						      : until)) {
				until = now; /* stop: see the top */
				nospin_until = now + NOSPIN_NS;
			}
			continue;
		}
		if (spinning)
			spin_release(w);
		spinning = 0;
		/* Before sleeping, take what the poller has (Go's findrunnable
		 * polls the network the same way): a wakeup it makes may be
		 * for this CPU. */
		if (ULT_LD(&ult__io_nwaiting) > 0 && ult__io_poll_now() > 0) {
			until = 0;
			continue;
		}
		if (s->idle_enter(w->id, st))
			continue;
		if (ULT_LD(&ult__rt.stopping)) {
			s->idle_exit(w->id, st);
			break;
		}
		park(w);
		s->idle_exit(w->id, st);
		until = 0;
	}
	if (spinning)
		spin_release(w);
}

static void *
worker_main(void *arg)
{
	struct ult__worker *w = arg;
	pthread_attr_t attr;
	void *lo = NULL;
	size_t size = 0;
	char name[16];

	ult__tls_worker = w;
	ult__host_nice_start(w);
	ULT_ST(&w->tid, (int)gettid());
	/* Its creator's mask, which ult__os_thread kept from it until now. */
	ult__os_sigmask(w->sigmask);
	ult__tls_worker_init(w);
	if (w->id < ult__rt.ncpu)
		snprintf(name, sizeof(name), "ult-w%hu", (unsigned short)w->id);
	else
		strcpy(name, "ult-spare");
	ult__os_set_name(name);
	if (w->oscpu >= 0)
		ult__os_pin(w->oscpu);
	ult__altstack_install(w);
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstack(&attr, &lo, &size);
		pthread_attr_destroy(&attr);
	}
	ult__san_adopt_current(&w->idle.san, lo, size);
	ult__san_scratch_create(&w->scratch_san);
	ULT_ST(&w->last_switch_ns, ult__fastclock_now());
	ult__io_worker_init(w);
	if (ult__worker_start_hook != NULL)
		ult__worker_start_hook();
	ULT_ST_REL(&w->ready, 1);
	idle_loop(w);
	ult__io_worker_fini(w);
	ult__san_destroy(&w->scratch_san);
	ult__altstack_uninstall();
	ult__tls_worker = NULL;
	return (NULL);
}

int
ult__workers_start(void)
{
	int started = 0, err = 0;

	for (int i = 0; i < ult__rt.nworkers; i++) {
		struct ult__worker *w = &ult__rt.workers[i];
		struct ult_thread *idle = &w->idle;

		memset(&idle->td, 0, sizeof(idle->td));
		ult__list_init(&idle->td.td_runq);
		ult__rt.sched->idle_init(&idle->td, i);
		idle->stack = NULL;
		idle->last_cpu = i;
		idle->id = 0;
		strcpy(idle->name, "idle");
		if ((err = ult__trace_worker_init(w)) != 0)
			return (err);
		atomic_init(&idle->lstate, UT_ALIVE);
		w->curthread = idle;
		ULT_ST(&w->state, MACH_CPU_PARKED);
	}
	for (int i = 0; i < ult__rt.nworkers; i++) {
		if ((err = ult__altstack_setup(&ult__rt.workers[i])) != 0)
			break;
		ult__rt.workers[i].sigmask = ult__os_sigmask_get();
		err = ult__os_thread(&ult__rt.workers[i].pthread, worker_main,
		    &ult__rt.workers[i]);
		if (err != 0)
			break;
		started++;
	}
	for (int i = 0; i < started; i++) {
		unsigned spins = 0;

		while (!ULT_LD_ACQ(&ult__rt.workers[i].ready))
			ult__spin_backoff(&spins);
	}
	if (err != 0) {
		ULT_ST(&ult__rt.stopping, 1);
		for (int i = 0; i < started; i++) {
			ult__worker_unpark(&ult__rt.workers[i]);
			pthread_join(ult__rt.workers[i].pthread, NULL);
		}
		for (int i = 0; i < ult__rt.nworkers; i++)
			ult__altstack_teardown(&ult__rt.workers[i]);
		return (err);
	}
	return (0);
}

void
ult__workers_stop(void)
{
	ULT_ST(&ult__rt.stopping, 1);
	for (int i = 0; i < ult__rt.nworkers; i++)
		ult__worker_unpark(&ult__rt.workers[i]);
	for (int i = 0; i < ult__rt.nworkers; i++) {
		pthread_join(ult__rt.workers[i].pthread, NULL);
		ult__stack_cache_drain(&ult__rt.workers[i]);
		ult__altstack_teardown(&ult__rt.workers[i]);
	}
}

const struct ult__subsys ult__workers_subsys = {.name = "workers",
    .init = ult__workers_start,
    .fini = ult__workers_stop};
