/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inline futex system calls (DESIGN.md section 14, "Inline futex system
 * calls").  libgomp waits and wakes with `syscall' instructions of its
 * own, which no interposition sees: each OpenMP thread waiting at a
 * barrier would take its worker into the kernel, and a team larger than
 * the workers plus the spare would strand the thread that releases it.
 *
 * Syscall user dispatch in its inclusive mode (PR_SYS_DISPATCH_INCLUSIVE_ON,
 * Linux 6.17) makes every system call issued from one range of addresses
 * raise SIGSYS instead: the range is libgomp's text, and it is armed on
 * the workers only (each arms itself as it starts; the setting is per
 * kernel thread, and neither fork, clone nor exec passes it on, so an
 * exec'd child or a thread libc starts itself never sees the trap).  The
 * handler gives a futex call to the drop-in's emulation, which sleeps the
 * uthread on a ult sleep queue, and any other call to libc's syscall();
 * the result goes in the interrupted rax.  The uthread is pinned to its
 * worker while it sleeps in the handler: the signal frame's return
 * restores the worker's alternate signal stack, which another worker
 * must not take.  Where the kernel lacks the mode, or libgomp is not
 * loaded when the runtime starts, nothing is armed and such waits block
 * the worker as before (the handoff and the spare of section 7.2).
 * ULT_SYSCALL_TRAP=0 turns it off.
 */
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "arch/cpu.h"
#include "runtime.h"
#include "dropin.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#endif
#define DISPATCH_OFF 0
#define DISPATCH_INCLUSIVE_ON 2
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif

static uintptr_t trap_lo, trap_len; /* libgomp's text */
static struct sigaction old_sigsys;

static int
find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_name == NULL ||
	    strstr(info->dlpi_name, "/libgomp.so") == NULL)
		return (0);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			trap_lo = info->dlpi_addr + ph->p_vaddr;
			trap_len = ph->p_memsz;
			return (1);
		}
	}
	return (0);
}

/* A SIGSYS that is not ours goes where the program sent it. */
static void
pass_on(int sig, siginfo_t *si, void *ctx)
{
	if (old_sigsys.sa_flags & SA_SIGINFO) {
		old_sigsys.sa_sigaction(sig, si, ctx);
	} else if (old_sigsys.sa_handler == SIG_DFL) {
		signal(SIGSYS, SIG_DFL);
		raise(SIGSYS);
	} else if (old_sigsys.sa_handler != SIG_IGN) {
		old_sigsys.sa_handler(sig);
	}
}

static void
on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	long nr = ult__uc_sysno(uc);
	struct ult_thread *ut;
	int saved = errno;
	long r;

	if (si->si_code != SYS_USER_DISPATCH) {
		pass_on(sig, si, ctx);
		return;
	}
	if (nr == SYS_futex) {
		if ((ut = ult__self_ut()) != NULL)
			ut->td.td_pinned++;
		r = ult__dropin_futex((uint32_t *)ult__uc_sysarg(uc, 0),
		    (int)ult__uc_sysarg(uc, 1), (uint32_t)ult__uc_sysarg(uc, 2),
		    (const struct timespec *)ult__uc_sysarg(uc, 3),
		    (uint32_t *)ult__uc_sysarg(uc, 4),
		    (uint32_t)ult__uc_sysarg(uc, 5));
		if (ut != NULL)
			ut->td.td_pinned--;
	} else {
		r = ult__libc_syscall(nr, ult__uc_sysarg(uc, 0),
		    ult__uc_sysarg(uc, 1), ult__uc_sysarg(uc, 2),
		    ult__uc_sysarg(uc, 3), ult__uc_sysarg(uc, 4),
		    ult__uc_sysarg(uc, 5));
	}
	ult__uc_set_sysret(uc, r == -1 ? -errno : r);
	errno = saved;
}

/* On each worker as it starts. */
static void
arm(void)
{
	prctl(PR_SET_SYSCALL_USER_DISPATCH, DISPATCH_INCLUSIVE_ON, trap_lo,
	    trap_len, 0);
}

void
ult__dropin_trap_setup(void)
{
	const char *e = getenv("ULT_SYSCALL_TRAP");
	struct sigaction sa;

	if ((e != NULL && strcmp(e, "0") == 0) ||
	    dl_iterate_phdr(find_text, NULL) == 0)
		return;
	/* The kernel knows the mode if it takes it here (then off again:
	 * this thread runs no uthread). */
	if (prctl(PR_SET_SYSCALL_USER_DISPATCH, DISPATCH_INCLUSIVE_ON, trap_lo,
		trap_len, 0) != 0)
		return;
	prctl(PR_SET_SYSCALL_USER_DISPATCH, DISPATCH_OFF, 0, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	/* On the uthread's stack, and not blocked while it runs: the handler
	 * may sleep, and other uthreads of the worker may trap meanwhile. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, &old_sigsys) != 0)
		return;
	ult__worker_start_hook = arm;
}
