/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The clock thread: plays FreeBSD's statclock and callout hardware.
 *
 * While any worker runs a uthread it wakes every 1/stathz seconds and
 * calls the policy's clock for each busy CPU (and for CPU 0, which drives
 * the balancer), passing how many stat ticks passed if it overslept.  It
 * also expires timers exactly at their deadlines.  With every worker idle
 * and no timer pending it sleeps on a futex until a worker becomes busy or
 * a timer is added: an idle runtime uses no CPU.
 *
 * Why one thread rather than per-worker POSIX timers: the clock only
 * samples and updates scheduler state, which lives under the run-queue
 * locks anyway; one sleeping thread costs nothing per worker, never wakes
 * an idle worker, and needs no signals (which ThreadSanitizer defers).
 * Acting on a slice end by interrupting a worker is the preemption
 * mechanism's job; here a slice end is an AST seen at the thread's next
 * runtime entry.
 */
#include <pthread.h>
#include <sys/prctl.h>

#include "runtime.h"
#include "worker.h"
#include "clock.h"
#include "handoff.h"
#include "steal.h"
#include "preempt.h"
#include "io.h"
#include "subsys.h"

#define STAT_PERIOD_NS (1000000000ull / ULT_STATHZ)
/* How long a worker may run one interactive uthread, with uthreads
 * waiting on descriptors, before the clock thread waits in the poller
 * for it (io_watch_after). */
#define IO_WATCH_NS 1000000ull
/* How often to look again while idle workers spin. */
#define IO_SPIN_LOOK_NS 100000ull

static struct {
	pthread_t thread;
	atomic_uint seq;	 /* futex word: bumped by every kick */
	_Atomic uint64_t target; /* when the clock thread wakes next */
	atomic_int idle_mode;	 /* sleeping because no worker is busy */
	atomic_int in_epoll;	 /* sleeping in epoll: kick its eventfd */
	atomic_int stop;
} clk;

static int
any_busy(void)
{
	for (int i = 0; i < ult__rt.nworkers; i++)
		if (ULT_LD(&ult__rt.workers[i].busy))
			return (1);
	return (0);
}

/*
 * 0 if the clock thread should wait in the poller now, else when to look
 * again; the caller has seen that uthreads wait on descriptors and that no
 * worker is parked in the poller.
 *
 * A worker that switches polls by itself (ult__userret, every
 * ULT_IO_POLL_GAP_NS at most), and an idle worker that spins polls as it
 * spins: both take what is ready onto their queue where they would choose
 * among it anyway.  The clock thread is needed for a busy worker that
 * runs a CPU-bound uthread, which an I/O wakee must preempt at once; for
 * one the host keeps off its CPU (`stolen', steal.c), whose events would
 * otherwise wait while the host runs something else, where the clock
 * thread's wakeup also gives the CPU back to that worker sooner; and for
 * one that has run an interactive uthread for IO_WATCH_NS, which a wakee
 * would not preempt but must not wait behind without bound.  Left in the
 * poller all along, the clock thread was woken at most readinesses, and on
 * a host CPU shared with a worker each of its wakeups took the CPU from
 * that worker (DESIGN.md 7.2).
 */
static uint64_t
io_watch_after(int busy)
{
	uint64_t now = ult__fastclock_now(), next = UINT64_MAX;

	/* A spinner that stops parks in the poller or finds work. */
	if (!busy)
		return (
		    ULT_LD(&ult__rt.nspinning) > 0 ? now + IO_SPIN_LOOK_NS : 0);
	for (int i = 0; i < ult__rt.nworkers; i++) {
		struct ult__worker *w = &ult__rt.workers[i];
		uint64_t t = ULT_LD(&w->last_switch_ns) + IO_WATCH_NS;

		if (!ULT_LD(&w->busy))
			continue;
		if (ULT_LD(&w->run_bg) || ULT_LD(&w->stolen) || t <= now)
			return (0);
		if (t < next)
			next = t;
	}
	return (next == UINT64_MAX ? 0 : next);
}

static void
stat_ticks(int cnt)
{
	for (int i = 0; i < ult__rt.nworkers; i++) {
		struct ult__worker *w = &ult__rt.workers[i];

		if (i == 0 || ULT_LD(&w->busy)) {
			ult__tls_actcpu = i;
			ult__rt.sched->clock(i, cnt);
			/* The look at the kernel thread first: a signal sent
			 * now would run its handler on a blocked thread as it
			 * is sampled.  A blocked worker cannot act on one. */
			ult__handoff_tick(i);
			if (!ULT_LD(&w->blocked))
				ult__preempt_retry(i);
		} else if (ULT_LD(&w->blocked)) {
			ult__handoff_set(w, 0); /* idle: blocked no more */
		}
	}
	ult__tls_actcpu = -1;
	ult__handoff_spare();
	ult__steal_tick();
}

static void *
clock_main(void *arg)
{
	uint64_t next_stat = 0;

	(void)arg;
	ult__os_set_name("ult-clock");
	/* The program's signals go to its own threads, not to this one. */
	ult__os_block_async_signals();
	/* Timer slack would add ~50 us to every deadline. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (;;) {
		unsigned seq = ULT_LD_ACQ(&clk.seq);
		uint64_t now, next, target, watch;
		int busy;

		if (ULT_LD(&clk.stop))
			break;
		ult__fastclock_update();
		now = ult__now();
		busy = any_busy();
		if (!busy) {
			next_stat = 0;
			ult__handoff_spare(); /* nobody is blocked now */
		} else if (next_stat == 0) {
			next_stat = now + STAT_PERIOD_NS;
		} else if (now >= next_stat) {
			uint64_t cnt = (now - next_stat) / STAT_PERIOD_NS + 1;

			next_stat += cnt * STAT_PERIOD_NS;
			stat_ticks((int)cnt);
		}
		next = ult__timers_run(now);
		target = busy && next_stat < next ? next_stat : next;
		ULT_ST(&clk.idle_mode, !busy);
		ULT_ST(&clk.target, target);
		/* Pairs with the fence in ult__clock_kick(). */
		ULT_FENCE();
		if ((!busy && any_busy()) || ult__timers_next() < target)
			continue;
		if (target != UINT64_MAX && target <= ult__now())
			continue;
		/* A worker parked in the poller sees its events itself. */
		if (!ULT_LD(&ult__io_armed) || ult__io_park_busy()) {
			ult__futex_wait(&clk.seq, seq,
			    target == UINT64_MAX ? 0 : target);
			continue;
		}
		if ((watch = io_watch_after(busy)) != 0) {
			ult__futex_wait(&clk.seq, seq,
			    watch < target ? watch : target);
			continue;
		}
		/* Pairs with wake(): it bumps seq, then looks at in_epoll. */
		ULT_ST(&clk.in_epoll, 1);
		ULT_FENCE();
		if (ULT_LD(&clk.seq) == seq)
			ult__io_clock_wait(target);
		ULT_ST(&clk.in_epoll, 0);
	}
	return (NULL);
}

static void
wake(void)
{
	/* seq_cst, the Dekker pair with the clock thread's loop: it stores
	 * in_epoll, fences and reads seq; this bumps seq and reads in_epoll. */
	ULT_ADD_SC(&clk.seq, 1);
	if (ULT_LD_SC(&clk.in_epoll))
		ult__io_kick();
	else
		ult__futex_wake(&clk.seq, 1);
}

void
ult__clock_rearm(void)
{
	wake();
}

void
ult__clock_kick(uint64_t deadline)
{
	ULT_FENCE();
	if (deadline == 0 ? ULT_LD(&clk.idle_mode) != 0
			  : deadline < ULT_LD(&clk.target))
		wake();
}

int
ult__clock_start(void)
{
	int err;

	atomic_init(&clk.seq, 0);
	atomic_init(&clk.target, 0);
	atomic_init(&clk.idle_mode, 0);
	atomic_init(&clk.in_epoll, 0);
	atomic_init(&clk.stop, 0);
	ult__handoff_init();
	ult__steal_init();
	if ((err = ult__os_thread(&clk.thread, clock_main, NULL)) != 0) {
		ult__steal_fini();
		ult__handoff_fini();
	}
	return (err);
}

void
ult__clock_stop(void)
{
	ULT_ST(&clk.stop, 1);
	wake();
	pthread_join(clk.thread, NULL);
	ult__steal_fini();
	ult__handoff_fini();
}

static const struct sched_tunable clock_tunables[] = {
    {"ult.steal", &ult__steal_on, 0, 1, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

const struct ult__subsys ult__clock_subsys = {.name = "clock",
    .tunables = clock_tunables,
    .init = ult__clock_start,
    .fini = ult__clock_stop,
    .fork_child = ult__handoff_fini}; /* its fds name the parent's tasks */
