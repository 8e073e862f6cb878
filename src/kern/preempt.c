/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Asynchronous preemption (DESIGN.md section 6.1).  When the policy
 * wants a running uthread off its CPU (a slice end, a better thread queued
 * there, a remote preemption request) and that CPU's worker is not the
 * caller, the worker gets SIGURG.  The handler runs on the uthread's own
 * stack and, if it is safe to switch right there, does the ordinary
 * return-to-user checks (ult__userret), which switch away.  The kernel's
 * signal frame stays on the uthread's stack with every register, FP and
 * vector state; when the uthread is resumed the handler returns and
 * rt_sigreturn restores it all.
 *
 * It is safe to switch only when all of these hold, checked in order:
 *  - the worker runs a uthread (not its idle loop);
 *  - the interrupted PC is in preemptible text: the main executable or a
 *    library registered with ult_preempt_allow_library(), and not the
 *    runtime itself, which lives in its own section (ult_text, made by
 *    objcopy at build time), nor the PLT stubs through which the runtime,
 *    linked into the program, calls libc (a rare hang came from a signal
 *    landing on one while a worker spun in the switch path).  Runtime
 *    code, libc (malloc's per-thread caches, stdio's recursive locks) and
 *    the handler itself are thereby excluded; the last makes SA_NODEFER
 *    re-entry harmless;
 *  - the uthread holds no lock taken through libc's API (see
 *    preempt_shim.c) and is not inside ult_schedctl_start/stop beyond the
 *    deferral bound;
 *  - enough stack is left for the switch path and one more signal frame.
 * Otherwise the preemption is owed: the policy's flags stay set, so the
 * next runtime exit takes it, and the clock thread signals again at the
 * next tick.
 *
 * Migration rule: a preempted uthread is pinned to its worker until it
 * next switches out voluntarily (yield, block, sleep), so code that keeps
 * what belongs to the kernel thread across an arbitrary instruction (its
 * id, a pthread mutex's owner; with per-worker TLS, &errno or another TLS
 * address) never finds itself on another kernel thread.  The cost is
 * balancing: a CPU hog that never enters the runtime stays where it is.
 * ult.preempt_migrate=1 lifts the pin for programs that keep none.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "../arch/cpu.h"
#include "preempt_shim.h"
#include "runtime.h"
#include "worker.h"
#include "uthread.h"
#include "switch.h"
#include "host_nice.h"
#include "preempt.h"
#include "signals.h"
#include "subsys.h"

#define PREEMPT_SIGNAL SIGURG
/*
 * Stack a switch from the handler needs below the handler's own frame,
 * besides room for one more signal frame (see stack_room): the switch
 * path down to the context switch (about 400 bytes measured, the rest is
 * on the worker's scratch stack), and the few frames of a nested handler
 * that defers.  Four times what was measured, for debug builds and the
 * ucontext backend.
 */
#define SWITCH_RESERVE (2u * 1024)

extern const char __start_ult_text[]
    __attribute__((weak, visibility("hidden")));
extern const char __stop_ult_text[] __attribute__((weak, visibility("hidden")));

static struct sigaction old_urg;
static int handler_installed;

/*
 * The preemption signal is queued with this siginfo (SI_QUEUE, the
 * cookie's address as value), which no raise(), kill() or pthread_kill()
 * of the program produces: those are SIGURGs of its own and go to the
 * handler it installed before ult_init.  pid is refreshed in a fork child.
 */
static char preempt_cookie;
static siginfo_t preempt_si;
static atomic_int preempt_pid;
static int atfork_registered;

atomic_int ult__preempt_migrate;
atomic_int ult__schedctl_bound_us;

/* Preemptible: outside the runtime's own text, inside the table of
 * preemptible text (os/linux/text.c). */
static int
pc_preemptible(uintptr_t pc)
{
	if ((uintptr_t)__start_ult_text <= pc &&
	    pc < (uintptr_t)__stop_ult_text)
		return (0);
	return (ult__text_preemptible(pc));
}

int
ult_preempt_allow_library(const char *name)
{
	int err;

	if (name == NULL || name[0] == '\0')
		return (EINVAL);
	if ((err = ult__text_allow(name)) == 0 && ult__rt.preempt > 0 &&
	    ult__running())
		err = ult__text_build();
	return (err);
}

/*
 * The drop-in's hook (its asynchronous cancellation, src/dropin/async.c):
 * due() says the running uthread has something to run at a safe point
 * although no switch may be wanted; run() is called there, on the
 * uthread's stack inside this handler, and need not return.  The kicker
 * sends the signal; an unsafe point owes it, and the clock sends it again.
 */
int (*ult__preempt_hook_due)(void);
void (*ult__preempt_hook_run)(void);

static int
hook_due(void)
{
	int (*due)(void) = ult__preempt_hook_due;

	return (ULT_UNLIKELY(due != NULL) && due());
}

/* Is something pending that a switch would honour? */
static int
wanted(struct ult__worker *w, struct thread *td)
{
	return (ULT_LD(&w->ipi) || ULT_LD(&td->td_owepreempt) ||
	    (ULT_LD(&td->td_ast) & TDA_SCHED));
}

static void
owe(struct ult__worker *w)
{
	ULT_ST(&w->owed, 1);
	ULT_ST(&w->nowed, ULT_LD(&w->nowed) + 1);
	ULT_TRACE(TEV_OWED, preempt_owed, 0, w->curthread->id, 0, 0, 0);
}

/* Within ult_schedctl_start/stop: defer up to the bound, then force. */
static int
schedctl_defers(struct ult_thread *ut)
{
	uint64_t now, since;

	if (ULT_LD(&ut->sc_nest) == 0)
		return (0);
	now = ult__fastclock_now();
	since = ULT_LD(&ut->sc_since);
	if (since == 0) {
		ULT_ST(&ut->sc_since, now);
		since = now;
	}
	if (now - since < (uint64_t)ULT_LD(&ult__schedctl_bound_us) * 1000u) {
		ULT_ST(&ut->sc_owed, 1);
		ULT_ST(&ut->sc_deferred, ULT_LD(&ut->sc_deferred) + 1);
		ULT_TRACE(TEV_DEFERRED, preempt_deferred, now, ut->id, 0, 0, 0);
		return (1);
	}
	ULT_ST(&ut->sc_forced, ULT_LD(&ut->sc_forced) + 1);
	ULT_TRACE(TEV_FORCED, preempt_forced, now, ut->id, 0, 0, 0);
	ULT_ST(&ut->sc_since, 0);
	ULT_ST(&ut->sc_owed, 0);
	return (0);
}

/* Pin the preempted thread to its worker (see the top of the file). */
static void
pin(struct ult_thread *ut)
{
	if (ut->preempt_pinned || ULT_LD(&ult__preempt_migrate))
		return;
	thread_lock(&ut->td);
	ut->td.td_pinned++;
	ut->preempt_pinned = 1;
	thread_unlock(&ut->td);
}

static int
ours(const siginfo_t *si)
{
	return (si->si_code == SI_QUEUE &&
	    si->si_value.sival_ptr == (void *)&preempt_cookie &&
	    si->si_pid == ULT_LD(&preempt_pid));
}

/* The program's own SIGURG goes to the handler it had before ult_init. */
static void
forward(int sig, siginfo_t *si, void *ucv)
{
	struct ult__worker *w = ult__tls_worker;

	(void)ult__sig_chain(&old_urg, sig, si, ucv);
	/* Only one SIGURG can be pending per thread: a kick that came
	 * while this one was pending (raise() blocks signals around its
	 * tgkill) was dropped.  Let the clock kick again. */
	if (w != NULL && ULT_LD(&w->kicked)) {
		ULT_ST(&w->kicked, 0);
		ULT_ST(&w->owed, 1);
	}
}

/*
 * Is there room on the uthread's stack to switch from here?  The kernel's
 * frame lies between the interrupted sp and this handler's frame, so its
 * size is measured, not guessed (it grows with the CPU's vector state:
 * about 3 KiB here, over 11 KiB with AMX).  SA_NODEFER lets another
 * SIGURG land anywhere in the switch path, and it needs a frame as large
 * again.  Below the handler's frame there must therefore be one such
 * frame plus SWITCH_RESERVE.
 */
static int
stack_room(struct ult_thread *ut, uintptr_t sp)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	uintptr_t lo = (uintptr_t)ut->san.stack_lo;

	if (sp <= here || here <= lo || sp > lo + ut->san.stack_size)
		return (0); /* not on its own stack: never switch */
	return (here - lo >= (sp - here) + SWITCH_RESERVE);
}

/*
 * Program signals under the drop-in (DESIGN.md section 14): its handlers
 * run only where a preemption could switch, never inside the runtime or
 * libc; one that arrived elsewhere is queued on the uthread, and the
 * worker owes a preemption, whose signal runs the hook here.
 */
int (*_Atomic ult__preempt_sig_hook)(struct ult_thread *, void *);

static void
sig_due(struct ult__worker *w, struct ult_thread *ut, void *uc, uintptr_t pc,
    uintptr_t sp)
{
	int (*hook)(struct ult_thread *, void *) =
	    ULT_LD(&ult__preempt_sig_hook);
	int e;

	if (hook == NULL || !hook(ut, NULL))
		return;
	if (!pc_preemptible(pc) || ULT_LD(&ut->nopreempt) != 0 ||
	    !stack_room(ut, sp)) {
		owe(w);
		return;
	}
	e = errno;
	hook(ut, uc);
	ult__preempt_frame_fix(uc);
	errno = e;
}

/* A handler that switched may have resumed on another worker: its frame
 * would reinstall the old worker's alternate stack on this one. */
void
ult__preempt_frame_fix(void *ucv)
{
	ucontext_t *uc = ucv;
	struct ult__worker *w = ult__worker_self();

	if (w == NULL)
		return;
	uc->uc_stack.ss_sp = w->altstack;
	uc->uc_stack.ss_size = w->altstack != NULL ? ULT__ALTSTACK_SIZE : 0;
	uc->uc_stack.ss_flags = w->altstack != NULL ? 0 : SS_DISABLE;
}

int
ult__preempt_safe_point(void *ucv)
{
	struct ult__worker *w = ult__tls_worker;
	struct ult_thread *ut;

	if (w == NULL || (ut = w->curthread) == &w->idle)
		return (0);
	/* Preemption off: no table of preemptible text, and no preemption
	 * to take a handler later; outside the runtime is the best there is. */
	if (ult__rt.preempt <= 0)
		return (!((uintptr_t)__start_ult_text <= ult__uc_pc(ucv) &&
			    ult__uc_pc(ucv) < (uintptr_t)__stop_ult_text) &&
		    ULT_LD(&ut->nopreempt) == 0 &&
		    stack_room(ut, ult__uc_sp(ucv)));
	return (pc_preemptible(ult__uc_pc(ucv)) &&
	    ULT_LD(&ut->nopreempt) == 0 && stack_room(ut, ult__uc_sp(ucv)));
}

void
ult__preempt_owe(void)
{
	struct ult__worker *w = ult__tls_worker;

	if (w != NULL && w->curthread != &w->idle)
		owe(w);
}

/* ut, if it runs now, is to take the hook's signals soon. */
void
ult__preempt_kick_thread(struct ult_thread *ut)
{
	int cpu = ULT_PLD(&ut->last_cpu);

	if (ULT_LD(&ut->oncpu) && cpu >= 0 && cpu < ult__rt.ncpu)
		ult__preempt_kick(cpu);
}

static void
preempt_handle(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	struct ult__worker *w = ult__tls_worker;
	struct ult_thread *ut;
	uintptr_t pc, sp;
	int e;

	if (w == NULL || !ours(si)) {
		forward(sig, si, ucv);
		return;
	}
	ULT_ST(&w->kicked, 0);
	ut = w->curthread;
	if (ut == &w->idle)
		return;
	pc = ult__uc_pc(uc);
	sp = ult__uc_sp(uc);
	if (!wanted(w, &ut->td) && !hook_due()) {
		sig_due(w, ut, uc, pc, sp);
		return;
	}
	if (!pc_preemptible(pc) || ULT_LD(&ut->nopreempt) != 0 ||
	    !stack_room(ut, sp)) {
		owe(w);
		return;
	}
	/* The drop-in's asynchronous cancel (async.c) acts here, at a safe
	 * point; it does not return when it does. */
	if (hook_due()) {
		ult__preempt_hook_run();
		if (!wanted(w, &ut->td)) {
			sig_due(w, ut, uc, pc, sp);
			return;
		}
	}
	if (schedctl_defers(ut)) {
		owe(w);
		return;
	}
	e = errno;
	ULT_ST(&w->npreempt, ULT_LD(&w->npreempt) + 1);
	ULT_TRACE(TEV_PREEMPT, preempt, 0, ut->id, 0, 0, 0);
	pin(ut);
	ult__userret();
	if (hook_due())
		ult__preempt_hook_run();
	/* Maybe on another worker now (ult.preempt_migrate): the frame
	 * would reinstall the old worker's alternate stack on this one. */
	w = ult__worker_self();
	uc->uc_stack.ss_sp = w->altstack;
	uc->uc_stack.ss_size = w->altstack != NULL ? ULT__ALTSTACK_SIZE : 0;
	uc->uc_stack.ss_flags = w->altstack != NULL ? 0 : SS_DISABLE;
	errno = e;
	/* Back at the same safe point: what was queued for it meanwhile,
	 * when nobody could kick it. */
	sig_due(w, ut, uc, pc, sp);
}

/*
 * The kicker put the worker back at its base host nice (host_nice.c); when
 * the signal ends in no switch, the thread it still runs may want more.
 */
static void
preempt_handler(int sig, siginfo_t *si, void *ucv)
{
	preempt_handle(sig, si, ucv);
	if (ULT_UNLIKELY(ULT_LD(&ult__host_nice)) && ult__tls_worker != NULL)
		ult__host_nice_apply(ult__tls_worker);
}

/*
 * Ask the worker of cpu to switch now.  The calling worker itself needs no
 * signal: it is in the runtime and checks on the way out.  Coalesced: one
 * signal in flight per worker.
 */
void
ult__preempt_kick(int cpu)
{
	struct ult__worker *w = &ult__rt.workers[cpu];

	if (ult__tls_worker == w || ULT_LD(&w->tid) == 0)
		return;
	/* A better thread waits for w: give w its full host weight now. */
	if (ULT_UNLIKELY(ULT_LD(&ult__host_nice)))
		ult__host_nice_restore(w);
	if (ult__rt.preempt <= 0)
		return;
	/* seq_cst, as before the explicit form: one signal in flight;
	 * the handler's store of 0 (relaxed) reopens it. */
	if (ULT_XCHG_SC(&w->kicked, 1) != 0)
		return;
	ULT_TRACE(TEV_PREEMPT_SENT, preempt_sent, 0, cpu, 0, 0, 0);
	/* One system call: the pid is cached, the siginfo prepared. */
	syscall(SYS_rt_tgsigqueueinfo, ULT_LD(&preempt_pid), ULT_LD(&w->tid),
	    PREEMPT_SIGNAL, &preempt_si);
}

/* Clock tick: signal again any worker that owes a preemption. */
void
ult__preempt_retry(int cpu)
{
	struct ult__worker *w = &ult__rt.workers[cpu];

	if (ULT_LD(&w->owed)) {
		ULT_ST(&w->owed, 0);
		ult__preempt_kick(cpu);
	}
}

/*
 * ut (locked, the current thread) is about to switch with `flags': a
 * voluntary switch ends the pin a preemption put on it, and a binding
 * asked for by another thread while ut was running is applied by any
 * switch that leaves ut free to move; the switch then moves it.
 */
void
ult__preempt_switching(struct ult_thread *ut, int flags)
{
	THREAD_LOCK_ASSERT(&ut->td);
	if ((flags & SW_VOL) && ut->preempt_pinned) {
		ut->preempt_pinned = 0;
		ut->td.td_pinned--;
	}
	if (ut->bind_pending && !ut->preempt_pinned) {
		ult__rt.sched->bind(&ut->td, ut->bind_pending - 1);
		ut->bind_pending = 0;
	}
}

/* The last lock the thread held through libc is released (preempt_shim.c):
 * take what the handler owed meanwhile, as the handler would have taken
 * it, pinned.  Not inside a schedctl region: that keeps its own books. */
void
ult__preempt_released(struct ult_thread *ut)
{
	struct ult__worker *w = ult__worker_self();

	if (ult__rt.preempt <= 0 || w == NULL || w->curthread != ut ||
	    ULT_LD(&ut->sc_nest) != 0 || !wanted(w, &ut->td))
		return;
	pin(ut);
	ult__userret();
}

void
ult_schedctl_start(void)
{
	struct ult_thread *ut = ult__self_ut();

	if (ut != NULL)
		ULT_ST(&ut->sc_nest, ULT_LD(&ut->sc_nest) + 1);
}

void
ult_schedctl_stop(void)
{
	struct ult_thread *ut = ult__self_ut();
	int n;

	if (ut == NULL || (n = ULT_LD(&ut->sc_nest)) == 0)
		return;
	ULT_ST(&ut->sc_nest, n - 1);
	if (n > 1)
		return;
	ULT_ST(&ut->sc_since, 0);
	if (ULT_LD(&ut->sc_owed)) {
		ULT_ST(&ut->sc_owed, 0);
		ult_yield();
	}
}

static void
preempt_atfork_child(void)
{
	pid_t pid = getpid();

	ULT_ST(&preempt_pid, (int)pid);
	preempt_si.si_pid = pid;
}

int
ult__preempt_init(void)
{
	struct sigaction sa;
	int err;

	ult__preempt_shim_link();
	if (ult__rt.preempt <= 0)
		return (0);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	/* TSan defers signal handlers to its own safe points, where a
	 * context switch inside the handler is not possible; ASan's fiber
	 * bookkeeping was seen to trip ("fiber switch while in fiber
	 * switch") on switches made from the handler.  Both sanitizers run
	 * everything else with preemption off. */
	ult__rt.preempt = -1;
	return (0);
#endif
	if (ult__os_static_binary()) {
		static const char msg[] =
		    "ult: static executable: libc is part of the program text, "
		    "so asynchronous preemption cannot be made safe; it is "
		    "off\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			(void)0;
		ult__rt.preempt = -1;
		return (0);
	}
	/* Default deferral bound: one minimum slice. */
	if (ULT_LD(&ult__schedctl_bound_us) == 0)
		ULT_ST(&ult__schedctl_bound_us, ult__rt.sched->slice_min_us());
	if ((err = ult__text_build()) == ENOEXEC) {
		static const char msg[] =
		    "ult: cannot read the program's section headers to find "
		    "its PLT; asynchronous preemption is off\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			(void)0;
		ult__rt.preempt = -1;
		return (0);
	}
	if (err != 0)
		return (err);
	ULT_ST(&preempt_pid, (int)getpid());
	if (!atfork_registered) {
		if ((err = pthread_atfork(NULL, NULL, preempt_atfork_child)) !=
		    0)
			return (err);
		atfork_registered = 1;
	}
	memset(&preempt_si, 0, sizeof(preempt_si));
	preempt_si.si_signo = PREEMPT_SIGNAL;
	preempt_si.si_code = SI_QUEUE;
	preempt_si.si_pid = getpid();
	preempt_si.si_uid = getuid();
	preempt_si.si_value.sival_ptr = &preempt_cookie;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = preempt_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(PREEMPT_SIGNAL, &sa, &old_urg) != 0)
		return (errno);
	handler_installed = 1;
	return (0);
}

void
ult__preempt_fini(void)
{
	if (handler_installed) {
		sigaction(PREEMPT_SIGNAL, &old_urg, NULL);
		handler_installed = 0;
	}
	/* Workers are gone: no handler can be reading a table. */
	ult__text_free();
}

/* The handler goes as at fini; the text table is leaked and built
 * again (subsys.h: no free in a fork child). */
static void
preempt_fork_child(void)
{
	if (handler_installed) {
		sigaction(PREEMPT_SIGNAL, &old_urg, NULL);
		handler_installed = 0;
	}
}

/* ult_config.preempt, else ULT_PREEMPT: on unless it says 0. */
static int
preempt_configure(const struct ult_config *cfg)
{
	long v;
	int r;

	ult__rt.preempt = cfg != NULL ? cfg->preempt : 0;
	if (ult__rt.preempt == 0) {
		if ((r = ult__env_long("ULT_PREEMPT", &v)) < 0)
			return (EINVAL);
		ult__rt.preempt = (r == 0 && v == 0) ? -1 : 1;
	}
	return (0);
}

/* Whether asynchronous preemption is in force (it may have been refused:
 * sanitizer builds, static executables). */
static long
preempt_get(void)
{
	return (ult__rt.preempt > 0);
}

static const struct sched_tunable preempt_tunables[] = {
    {"ult.preempt", NULL, 0, 0, preempt_get, NULL},
    {"ult.preempt_migrate", &ult__preempt_migrate, 0, 1, NULL, NULL},
    {"ult.schedctl_bound_us", &ult__schedctl_bound_us, 0, 10000000, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

const struct ult__subsys ult__preempt_subsys = {.name = "preempt",
    .configure = preempt_configure,
    .init = ult__preempt_init,
    .fini = ult__preempt_fini,
    .fork_child = preempt_fork_child,
    .tunables = preempt_tunables};
