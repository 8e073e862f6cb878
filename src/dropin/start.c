/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Starting the drop-in (DESIGN.md section 14): the runtime comes up at
 * the first interposed call or, at the latest, when libc is about to call
 * the program's main, which then runs as a uthread.  ult-run passes its
 * options in the environment (ULT_POLICY, ULT_NCPU, ULT_RUN_STATS).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dropin.h"
#include "os/linux/os.h"

int ult__dropin_ready;
static int _Atomic up_state; /* 0 down, 1 starting, 2 up */
/* The kernel thread that is starting the runtime (while up_state is 1). */
static long _Atomic starter;

void
ult__dropin_fatal(const char *what, const char *why)
{
	/* No stdio: it may be what failed, or be locked. */
	const char *part[] = {"ult-run: ", what, ": ", why, "\n"};

	/* Not write(): that is the drop-in's stand-in. */
	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++)
		if (syscall(SYS_write, STDERR_FILENO, part[i],
			strlen(part[i])) < 0)
			break;
	_exit(127);
}

/* The stack a thread gets when its attributes do not say: glibc's
 * default, which is RLIMIT_STACK, 2 MiB when unlimited (ult's largest
 * above that, its smallest below). */
size_t
ult__dropin_default_stack(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return (2u << 20);
	if (rl.rlim_cur > ULT_STACK_MAX)
		return (ULT_STACK_MAX);
	return (
	    rl.rlim_cur < ULT_STACK_MIN ? ULT_STACK_MIN : (size_t)rl.rlim_cur);
}

/* main's: natively it grows up to RLIMIT_STACK, or without bound when
 * unlimited; here as far as ult's largest stack (address space only:
 * what is touched costs memory). */
size_t
ult__dropin_main_stack(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_STACK, &rl) != 0)
		return (8u << 20);
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > ULT_STACK_MAX)
		return (ULT_STACK_MAX);
	return (
	    rl.rlim_cur < ULT_STACK_MIN ? ULT_STACK_MIN : (size_t)rl.rlim_cur);
}

static pid_t stats_pid;

static void
print_stats(void)
{
	int n = ult_ncpu();

	/* The figures are the program's process's, not a fork child's. */
	if (ult__dropin_forked || getpid() != stats_pid)
		return;
	fprintf(stderr, "ult-run: %s, %d workers, %lu threads created\n",
	    ult_sched_name(), n, ult__dropin_nthreads());
	fprintf(stderr, "ult-run: %6s %10s %8s %8s %8s %8s %7s\n", "worker",
	    "switches", "steals", "preempt", "parks", "handoff", "idle%");
	for (int i = 0; i < n; i++) {
		struct ult_cpu_info ci;
		double all;

		if (ult_cpu_info(i, &ci) != 0)
			continue;
		all = (double)ci.idle_ns + (double)ci.busy_ns;
		fprintf(stderr,
		    "ult-run: %6d %10llu %8llu %8llu %8llu %8llu %7.1f\n", i,
		    (unsigned long long)ci.switches,
		    (unsigned long long)ci.steals,
		    (unsigned long long)ci.preemptions,
		    (unsigned long long)ci.parks,
		    (unsigned long long)ci.handoffs,
		    all > 0 ? 100.0 * (double)ci.idle_ns / all : 0.0);
	}
}

static int
rt_init(void)
{
	struct ult_config cfg = {0};

	if (getenv("ULT_STACK_SIZE") == NULL)
		cfg.stack_size = ult__dropin_default_stack();
	return (ult_init(&cfg));
}

int
ult__dropin_restart(void)
{
	long tls = 0;
	int err;

	if ((err = rt_init()) != 0)
		return (err);
	if (ult_sysctl("ult.tls", &tls, NULL) != 0 || tls != 1) {
		(void)ult_shutdown();
		return (ENOTSUP);
	}
	return (0);
}

static void
start(void)
{
	long tls = 0;
	int err;

	ult__dropin_idle_masks();
	ult__dropin_trap_setup();
	if ((err = rt_init()) != 0)
		ult__dropin_fatal("cannot start the runtime", strerror(err));
	if (ult_sysctl("ult.tls", &tls, NULL) != 0 || tls != 1)
		ult__dropin_fatal("per-uthread TLS is off (the line above says "
				  "why)",
		    "the program's threads would share errno and __thread "
		    "variables; not running it");
	ult__dropin_fork_hooks();
	ult__dropin_ready = 1;
	if (getenv("ULT_RUN_STATS") != NULL) {
		stats_pid = getpid();
		atexit(print_stats);
	}
}

/*
 * While the runtime starts, every interposed call goes through as in a
 * thread that is not a uthread, which needs no runtime (the sync
 * objects' foreign path, the kernel's sleeps and I/O): the start itself
 * allocates, and a malloc that takes a pthread mutex (jemalloc's) comes
 * back here from the starter, or from the thread that probes TLS, which
 * the starter waits for.  Only what needs the runtime (pthread_create,
 * main) waits for it, in ult__dropin_up_wait.
 */
void
ult__dropin_up_slow(void)
{
	int s = 0;

	if (ULT_PCAS_ACQREL_ACQ(&up_state, &s, 1)) {
		ULT_PST(&starter, syscall(SYS_gettid));
		start();
		ULT_PST_REL(&up_state, 2);
		ULT_PST(&starter, 0);
		/* A failed start exits the process (ult__dropin_fatal), so
		 * this is the only end to wake the waiters for. */
		ult__futex_wake((atomic_uint *)(void *)&up_state, INT_MAX);
	}
}

int
ult__dropin_up_wait(void)
{
	ult__dropin_up();
	if (ULT_PLD_ACQ(&ult__dropin_ready))
		return (0);
	/* The starter itself (a malloc of the start creating a thread)
	 * cannot wait for the start. */
	if (ULT_PLD(&starter) == syscall(SYS_gettid))
		return (EAGAIN);
	/* Asleep on the state word, not in a yield loop: the start takes
	 * milliseconds, and a waiter that keeps a CPU may be keeping it
	 * from the starter. */
	while (!ULT_PLD_ACQ(&ult__dropin_ready)) {
		if (ULT_PLD_ACQ(&up_state) == 2)
			return (ULT_PLD_ACQ(&ult__dropin_ready) ? 0 : EAGAIN);
		(void)ult__futex_wait((atomic_uint *)(void *)&up_state, 1, 0);
	}
	return (0);
}

/*
 * libc's _start calls this with the program's main; it calls libc's own
 * with ours, which runs main as a uthread and exits with its status from
 * there, as libc would (atexit handlers, stdio flushed).
 */
typedef int (*main_fn)(int, char **, char **);
static main_fn program_main;

static int
main_as_uthread(int argc, char **argv, char **envp)
{
	if (ult__dropin_up_wait() != 0)
		ult__dropin_fatal("main", "the runtime is not up");
	ult__dropin_run_main(program_main, argc, argv, envp);
	/* Not reached: the main uthread exits the process. */
	return (127);
}

/* glibc's entry from _start; no header declares it. */
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
    void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

int
__libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
    void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	static void *_Atomic slot;
	int (*real)(main_fn, int, char **, void (*)(void), void (*)(void),
	    void (*)(void), void *) = (int (*)(main_fn, int, char **,
	    void (*)(void), void (*)(void), void (*)(void),
	    void *))ult__dropin_next("__libc_start_main", &slot);

	program_main = main;
	return (real(main_as_uthread, argc, argv, init, fini, rtld_fini,
	    stack_end));
}

/* Timeouts. */

static uint64_t
ts_ns(const struct timespec *ts)
{
	return ((uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec);
}

static int
valid(const struct timespec *ts)
{
	return (ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000);
}

int
ult__dropin_deadline(clockid_t clock, const struct timespec *abs,
    uint64_t *deadline)
{
	struct timespec now;
	uint64_t when, t;

	if (abs == NULL || !valid(abs))
		return (EINVAL);
	if (clock == CLOCK_MONOTONIC) {
		*deadline = abs->tv_sec < 0 ? 0 : ts_ns(abs);
		return (0);
	}
	if (clock != CLOCK_REALTIME || clock_gettime(clock, &now) != 0)
		return (EINVAL);
	/* A realtime deadline is turned into a monotonic one now: a later
	 * step of the wall clock does not move it. */
	t = ult__now();
	if (abs->tv_sec < 0 || ts_ns(abs) <= ts_ns(&now)) {
		*deadline = t ? t : 1;
		return (0);
	}
	when = ts_ns(abs) - ts_ns(&now);
	*deadline = when > UINT64_MAX - t ? UINT64_MAX : t + when;
	return (0);
}

int
ult__dropin_after(const struct timespec *rel, uint64_t *deadline)
{
	uint64_t t = ult__now(), d;

	if (rel == NULL || !valid(rel) || rel->tv_sec < 0)
		return (EINVAL);
	d = ts_ns(rel);
	*deadline = d > UINT64_MAX - t ? UINT64_MAX : t + d;
	return (0);
}
