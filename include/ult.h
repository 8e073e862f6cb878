/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult: user-level threads on per-CPU workers, scheduled by a port of
 * FreeBSD's ULE scheduler.
 *
 * Conventions (the whole API follows them):
 * - Functions that can fail return 0 or a positive errno value, like
 *   pthreads.  They never report through errno, and they preserve errno.
 * - ENXIO from any function means "the runtime is not running": it was
 *   never initialised, ult_shutdown() has stopped it, or this process is
 *   the child of a fork() made while it ran.  In such a child the runtime
 *   is down: every call returns ENXIO at once, and the child's only
 *   thread is a foreign thread (even if it forked from a uthread), until
 *   ult_init starts a runtime of the child's own.  (Under ult-run the
 *   child's first pthread_create does that, and the forking thread
 *   becomes the child's main uthread.)  A fork that interrupted ult_init
 *   or ult_shutdown leaves the runtime dead in the child: ENXIO for
 *   every call, ult_init too.  The sync objects, like pthread objects,
 *   are usable in the child only if no other thread held them at the
 *   fork.
 * - Deadlines are absolute CLOCK_MONOTONIC times in nanoseconds (ult_now()).
 *   Two values mean the same to every call that takes one:
 *   ULT_DEADLINE_NONE (UINT64_MAX) never passes, and ULT_DEADLINE_NOW (1)
 *   has always passed (the call does what it can without waiting).  The
 *   literal 0 kept its old meaning per call, for compatibility: "already
 *   passed" for the timed waits and ult_sleep_until, but "no deadline" for
 *   ult_wait_fd.  New code should say ULT_DEADLINE_NONE or
 *   ULT_DEADLINE_NOW.  ult_after() and ult_deadline_ts() make deadlines.
 * - Every struct has a _t typedef (ult_attr_t, ult_cpu_info_t, ...), so
 *   that C++ can name the two whose struct shares its name with a
 *   function (ult_thread_info, ult_cpu_info) without `struct'.
 * - "Context" says from where a function may be called: a uthread, a
 *   foreign thread (any pthread that is not a ult worker, such as main),
 *   or a signal handler.  "Blocks" says whether the call may sleep; a
 *   blocking call puts a uthread to sleep, never its worker.
 */
#ifndef ULT_H
#define ULT_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ULT_VERSION_MAJOR 0
#define ULT_VERSION_MINOR 1

/* Runtime configuration.  A zero field keeps the default, which the
 * matching environment variable may override first. */
struct ult_config {
	int ncpu;	    /* workers; 0: ULT_NCPU, else one per CPU of the
			       process affinity mask.  At most ULT_MAXCPU. */
	const char *policy; /* "ule" (default) or "4bsd"; NULL: ULT_POLICY
			       or "ule"; unknown: ult_init fails EINVAL */
	size_t stack_size;  /* default uthread stack; 0: ULT_STACK_SIZE or
			       256 KiB.  ULT_STACK_MIN..ULT_STACK_MAX.  Its
			       guard: ULT_STACK_GUARD, below. */
	int preempt;	    /* 0: default (on; ULT_PREEMPT=0 turns it
			       off), >0 on, <0 off.  See "Preemption". */
	int tls;	    /* 0: default (per uthread; ULT_TLS=worker
			       turns it off), >0 per uthread, <0 per
			       worker.  See "Thread-local storage". */
};
typedef struct ult_config ult_config_t;

#define ULT_MAXCPU 256
#define ULT_STACK_MIN (16u * 1024)
#define ULT_STACK_DEFAULT (256u * 1024)
/* Stacks are address space reserved with MAP_NORESERVE; only the pages a
 * thread touches cost memory.  Larger sizes are refused (EINVAL). */
#define ULT_STACK_MAX (1024u * 1024 * 1024)

/*
 * Below every uthread stack lies a guard: environment variable
 * ULT_STACK_GUARD, in bytes, rounded up to pages, 1..ULT_STACK_MAX
 * (malformed or out of range: ult_init fails EINVAL); default
 * ULT_STACK_GUARD_DEFAULT.  A uthread that runs into it dies with "ult:
 * stack overflow in uthread <name> (<id>)".  The guard costs address
 * space, no memory.  A frame larger than the guard can jump over it into
 * another stack unless the code was built with -fstack-clash-protection,
 * which probes every page of a large frame: build programs using ult with
 * it.
 */
#define ULT_STACK_GUARD_DEFAULT (256u * 1024)

/*
 * Thread-local storage.  Every uthread has its own thread control block
 * and static TLS, switched with it (the x86-64 thread pointer): errno,
 * every __thread, _Thread_local and C++ thread_local variable, and libc's
 * per-thread state (uselocale, dlerror, strerror's and strsignal's
 * buffers, pthread keys, stdio lock ownership, the C++ exception being
 * handled) belong to the uthread, on whichever worker it runs and across
 * any switch, migration or preemption; an address of them may be kept
 * like a pthread's.  A uthread starts with every variable's initial
 * value; C++ thread_local destructors, __cxa_thread_atexit_impl ones and
 * pthread key destructors run when it exits, in the uthread; a library's
 * TLS (dlopen'd before or after the uthread started) is allocated when
 * the uthread first touches it and freed at its exit.  What stays per
 * kernel thread is what the kernel knows: gettid(), the owner of a
 * pthread mutex (an owner-checked one unlocked on another worker than it
 * was locked on gives EPERM; see "Preemption" for holding one across a
 * switch), sched_getcpu()'s answer, and pthread_setname_np,
 * _setaffinity_np, _setschedparam and _getcpuclockid on pthread_self(),
 * which act on the worker.  A pthread a uthread creates gets the
 * process's CPUs, not its pinned worker's one (unless its attributes name
 * CPUs), as ult_blocking's helpers do.  A robust mutex a uthread still
 * holds at its exit is not marked EOWNERDEAD; pthread_exit and
 * pthread_cancel are not supported in a uthread; direct users of rseq
 * lose its protection (the rseq area of a uthread says "not
 * registered").  sigaltstack in a
 * uthread records and reports that uthread's own setting, while the
 * kernel keeps its worker's alternate stack (64 KiB), where a stack
 * overflow is reported and SA_ONSTACK handlers run.
 * This needs the x86-64 switch, a CPU and kernel that let user mode write
 * the FS base (FSGSBASE, Linux 5.9+), a dynamically linked program,
 * glibc 2.36, and no sanitizer; elsewhere ult_init says why in one line
 * on stderr and the uthreads of a worker share its TLS: errno is then
 * saved and restored at each switch, but code that keeps &errno or any
 * TLS address across a switch (compilers do, for errno) may read another
 * worker's copy after a migration.  ult_config.tls < 0 or ULT_TLS=worker
 * asks for shared TLS, ULT_TLS=uthread for the default (any other value:
 * ult_init fails EINVAL); read-only sysctl ult.tls says which is in force
 * (1: per uthread).
 */

/*
 * Start the runtime: workers, the clock thread, the stack pool.
 * cfg may be NULL.  Errors: EBUSY already running; EINVAL bad field (ncpu
 * out of range, stack_size outside ULT_STACK_MIN..ULT_STACK_MAX, unknown
 * policy, or a malformed or out-of-range ULT_* variable); ENOMEM/EAGAIN
 * resources, after which nothing is left behind and ult_init may be tried
 * again; ENXIO in a fork child that interrupted ult_init or ult_shutdown
 * (see the top).  A fork child of a uthread runs on that uthread's TLS;
 * it may allocate, start threads, start a runtime and exec.
 * Besides the ncpu workers, ult_init starts a spare one, parked, that runs
 * the queued uthreads only while every worker is blocked in a raw system
 * call (see ult_cpu); ULT_SPARE=0 starts none, ULT_SPARE=1 is the default.
 * ULT_HOST_NICE=1 (sysctl ult.host_nice, 0 or 1; default 0) makes each
 * worker's kernel thread take the nice of the uthread it runs: a uthread
 * at nice n > 0 then competes with the host's other processes as a nice n
 * process (at most 19; idle class and an idle worker: 19), every other
 * uthread at ult_init's caller's nice.  A worker follows at its switches:
 * one setpriority() call per change.  It needs the right to lower a nice
 * value again (CAP_SYS_NICE, or RLIMIT_NICE): without it ult_init and
 * the sysctl fail with EPERM.  Any other value: EINVAL.
 * Observing (README, "Debugging and tracing"): ULT_TRACE=path writes a
 * Chrome trace-event JSON file at ult_shutdown or exit (a file that
 * cannot be made: ult_init fails with open's errno); "%p" in path is the
 * process's pid, so that every process that inherits the variable and
 * runs ult (under ult-run, every child) writes its own file.  A path
 * without "%p" is written only by the first process that traced with it:
 * ult_init sets ULT_TRACE_PID to its pid in the environment, and a
 * process that finds another pid there (a child it started) traces
 * nothing.  ULT_TRACE_BUFFER sets
 * its per-thread ring in records (a power of two, 256..2^24) and
 * ULT_TRACE_FLUSH_MS how often the rings are drained (1..10000, default
 * 2); ULT_STATS=1
 * prints worker and uthread tables to stderr at ult_shutdown or exit;
 * ULT_WITNESS=1 turns on the lock checker (read-only sysctl ult.witness;
 * on by default in debug builds;
 * ULT_WITNESS=0 turns it off there): it reports on stderr, once each, a
 * uthread that waits (yields, sleeps, blocks) while it holds a lock taken
 * through libc (pthread mutex, std::mutex, flockfile...), which can hang
 * the process, and ult mutexes or rwlocks taken in both orders, with the
 * call sites (DESIGN.md 4.1); off, it costs one predicted branch per lock
 * call and switch.  A deadlock among uthreads (each waits for a lock the
 * next one owns) is named by ULT_STATS's report, ult-top and gdb
 * (ULT_WITNESS other than 0 or 1: EINVAL).
 * ULT_SHM=1 keeps the statistics segment ult-top reads
 * (/dev/shm/ult-<pid>, made anew with mode 0600; a name somebody else
 * took is refused with a message on stderr, and the program runs without
 * a segment; 0, the default: none).  Other values: EINVAL.
 * With any of the three on, SIGTERM, SIGINT and SIGQUIT, where their
 * action at ult_init is the default one, first write the trace and the
 * report and remove the segment (a helper thread does it; at most 10 s),
 * then end the process with that signal as before.  A signal the program
 * handles or ignores is left alone (its exit writes them).
 * ULT_DUMP_SIGNAL=sig (a number, or HUP, USR1, USR2, PWR, WINCH, TTIN,
 * TTOU, XCPU, VTALRM, PROF, with or without SIG; default none) names a
 * signal the runtime then takes, whatever its action was: on it the
 * trace is written (tracing ends there) and the report printed, once,
 * and the program goes on; as any handled signal, it can cut short a
 * sleep or a wait of the thread it lands on.  Signals the runtime uses or
 * that end the process (URG, KILL, STOP, TERM, INT, QUIT, SEGV, BUS, FPE,
 * ILL, TRAP, SYS, ABRT, 32, 33): EINVAL.
 * Debug builds also read ULT_FAULT=kind:N[,kind:N] (kinds mmap, malloc,
 * thread), which fails the Nth allocation of that kind the process makes,
 * once, to test what a program does then; release builds ignore it.
 * Context: foreign thread.  Blocks: no.
 */
int ult_init(const struct ult_config *cfg);

/*
 * Wait until every uthread (detached ones included) has finished, then
 * stop the workers and release everything.  Handles of finished but
 * unjoined uthreads become invalid.  ult_init() may be called again.
 * No other foreign thread may be inside an ult_ call meanwhile (as with
 * pthread objects, tearing down what another thread uses is undefined).
 * Errors: ENXIO not running; EDEADLK called from a uthread.
 * Context: foreign thread.  Blocks: yes (until the uthreads finish).
 */
int ult_shutdown(void);

/*
 * Run fn(arg) as a uthread named "main" and wait for it: the usual body of
 * a program's main().  Starts the runtime (ult_init(NULL): the environment
 * configures it) unless it runs already, and then stops it again
 * (ult_shutdown, which also waits for the detached uthreads) after fn
 * returns; a runtime that was running is left running.  *ret (if ret is not
 * NULL) gets fn's return value.  Errors: ult_init's, ult_spawn's and
 * ult_shutdown's; EINVAL fn NULL; EDEADLK called from a uthread.
 * Context: foreign thread.  Blocks: yes (until fn returns).
 */
int ult_main(void *(*fn)(void *), void *arg, void **ret);

/* CLOCK_MONOTONIC in nanoseconds.  Any context, async-signal-safe. */
uint64_t ult_now(void);

/* Deadlines every call accepts alike (see the conventions above). */
#define ULT_DEADLINE_NONE UINT64_MAX
#define ULT_DEADLINE_NOW ((uint64_t)1)

/* The deadline ns nanoseconds from now, saturating at ULT_DEADLINE_NONE.
 * Any context, async-signal-safe. */
uint64_t ult_after(uint64_t ns);

struct timespec;
/*
 * The deadline of an absolute time abs on clock (CLOCK_MONOTONIC or
 * CLOCK_REALTIME, as pthread's timed calls take), so that a POSIX-style
 * timeout converts in one call.  A realtime time is converted at the call:
 * later changes to the wall clock do not move the deadline.  abs NULL:
 * ULT_DEADLINE_NONE; a time already past: ULT_DEADLINE_NOW; another clock
 * or a tv_nsec outside 0..999999999: 0, which no caller should pass on
 * (check for it).  Any context.
 */
uint64_t ult_deadline_ts(int clock, const struct timespec *abs);

typedef struct ult_thread ult_thread_t;

struct ult_attr {
	size_t stack_size; /* 0: the runtime default; other sizes are
			      rounded up to a class (at most 25% more) */
	int cls;	   /* ULT_CLASS_*; 0 is ULT_CLASS_TIMESHARE */
	int rtprio;	   /* 0..31 for the realtime and idle classes */
	int nice;	   /* -20..20 */
	int cpu;	   /* -1: unbound; else bound to that worker */
	int detached;	   /* nonzero: no join; resources freed at exit */
	const char *name;  /* copied; at most 31 bytes are kept */
};
typedef struct ult_attr ult_attr_t;

/* Defaults: stack_size 0, timeshare, nice 0, cpu -1, joinable, no name. */
void ult_attr_init(struct ult_attr *a);

/*
 * Create a uthread running fn(arg).  a may be NULL (defaults).  t may be
 * NULL only for a detached thread.  The new thread inherits the creator's
 * scheduling history like a forked process in ULE, and when the creator
 * is a uthread and the new thread lands on the same worker, the new thread
 * runs first (see DESIGN.md, "fork-join").
 * Errors: ENXIO; EINVAL (fn NULL, t NULL for a joinable thread, nice out of
 * range, cpu not a worker, stack_size nonzero and outside ULT_STACK_MIN..
 * ULT_STACK_MAX); EAGAIN no memory for the thread, or its stack cannot be
 * mapped (a large stack_size may exceed the address space or RLIMIT_AS).
 * Context: uthread or foreign thread.  Blocks: no (may switch to the child).
 */
int ult_spawn(ult_thread_t **t, const struct ult_attr *a, void *(*fn)(void *),
    void *arg);

/*
 * Wait for t to finish and free it; *ret (if ret is not NULL) gets its
 * return value.  The handle is invalid afterwards.
 * Errors: ENXIO; EINVAL t NULL, detached, or already being joined;
 * EDEADLK t is the caller; ESRCH t was already joined (detected as long
 * as its handle has not been recycled by a later ult_spawn).
 * Context: uthread or foreign thread.  Blocks: yes.
 */
int ult_join(ult_thread_t *t, void **ret);

/*
 * Mark t detached: its resources are freed when it finishes.
 * Errors: ENXIO; EINVAL t NULL, already detached, or being joined; ESRCH
 * already joined.  Context: uthread or foreign thread.  Blocks: no.
 */
int ult_detach(ult_thread_t *t);

/* The calling uthread, or NULL outside a uthread.  Any context. */
ult_thread_t *ult_self(void);

/* Worker index the caller runs on, or -1 outside a uthread.  It is
 * 0..ult_ncpu()-1, or ult_ncpu() while the spare worker runs the caller:
 * the runtime starts one extra worker (ULT_SPARE=0: none) that takes the
 * queued uthreads while every worker is blocked in a raw system call. */
int ult_cpu(void);

/*
 * Finish the calling uthread with return value ret.  Outside a uthread it
 * behaves as pthread_exit(ret).  Context: uthread.  Does not return.
 */
void ult_exit(void *ret) __attribute__((noreturn));

/*
 * Give up the worker: the caller goes to the tail of its run queue, as
 * sched_yield() does in ULE.  If a slice end was pending the switch counts
 * as involuntary.  Outside a uthread it calls sched_yield().
 */
void ult_yield(void);

/*
 * Sleep until deadline_ns (ult_now() clock); never returns early.  A
 * deadline that has passed, 0 included, returns at once (a uthread still
 * takes a pending reschedule there, as at any return from the runtime).
 * ult_sleep_ns saturates at UINT64_MAX, which never comes: a sleep that
 * long does not return.  A uthread sleeps on the runtime's timers and
 * earns ULE sleep credit; a foreign thread uses clock_nanosleep.  Returns
 * 0, or ENXIO when called from a uthread of a stopped runtime.
 * Blocks: yes.
 */
int ult_sleep_until(uint64_t deadline_ns);
int ult_sleep_ns(uint64_t ns);

/*
 * Nice value of t (NULL: the caller), -20..20, as in ULE: it moves batch
 * priority and the interactivity threshold.
 * Errors: ENXIO; EINVAL nice out of range, or t NULL outside a uthread;
 * ESRCH t has finished.  Context: uthread or foreign.  Blocks: no.
 */
int ult_setnice(ult_thread_t *t, int nice);
int ult_getnice(ult_thread_t *t, int *nice);

/*
 * Bind t (NULL: the caller) to worker cpu, or unbind with -1.  Binding the
 * caller moves it there before returning; a queued or sleeping thread is
 * moved at once; a thread running on another worker moves at its next
 * switch (without asynchronous preemption it is asked to switch at its
 * next call into ult), and one that was preempted and has not switched
 * voluntarily since, at its next voluntary switch (so that no preempted
 * thread changes kernel threads under its feet; see
 * "Preemption").  A new thread bound elsewhere does not run first on its
 * creator's worker.  Errors: ENXIO; EINVAL
 * cpu out of range or t NULL outside a uthread; ESRCH t has finished.  Context:
 * uthread or foreign.  Blocks: no.
 */
int ult_bind(ult_thread_t *t, int cpu);

/* Number of workers, or 0 when the runtime is not running. */
int ult_ncpu(void);

/* The running policy's name, "ULE" or "4BSD" (kern.sched.name), or NULL
 * when the runtime is not running. */
const char *ult_sched_name(void);

enum {
	ULT_STATE_RUNNING = 1, /* on a worker now */
	ULT_STATE_RUNNABLE,    /* on a run queue */
	ULT_STATE_SLEEPING,    /* blocked: sleep, join, wait, fd */
	ULT_STATE_FINISHED,    /* exited, not yet joined */
	ULT_STATE_BLOCKED      /* in a system call that blocks its worker
				  (see "Blocking calls") */
};

struct ult_thread_info {
	char name[32];
	uint64_t id;	    /* unique, never reused */
	int cpu;	    /* worker it runs or last ran on */
	int priority;	    /* ULE priority 0..255, lower is better */
	int nice;	    /* -20..20 */
	int interact_score; /* ULE interactivity score 0..100 (<30:
			       interactive); -1 under 4BSD */
	int state;	    /* ULT_STATE_* */
	double pctcpu;	    /* ULE %CPU estimate, 0..100 */
	uint64_t runtime_ns, nvcsw, nivcsw, nmigrations;
	/* preemptions schedctl deferred, and ones forced past its bound */
	uint64_t deferred, forced;
	/* what it sleeps on while ULT_STATE_SLEEPING ("sem", "cond",
	   "mutex", "rwlock", "join", "sleep", "fd", "blocking", "barrier",
	   "once"), else "" */
	char wchan[16];
	/* run-queue delay: from becoming runnable (woken, created,
	   preempted, yielding) to running, over its nruns runs */
	uint64_t nruns, rq_delay_avg_ns, rq_delay_max_ns;
	/* Appended in 0.1 (a caller built against the shorter struct still
	   gets a struct this size written: rebuild).  While SLEEPING: the
	   object it waits on (the ult_mutex_t, ult_rwlock_t, ult_cond_t,
	   ult_sem_t ... address; NULL for a plain sleep) and, for a mutex or
	   a write-locked rwlock, the id of the uthread that owns it (0: none
	   known, a foreign owner, or readers).  A cycle of such owners is a
	   deadlock, which ult-top, ULT_STATS and gdb's `info ult-deadlock'
	   report. */
	const void *wait_obj;
	uint64_t wait_owner_id;
};
typedef struct ult_thread_info ult_thread_info_t;

/*
 * Snapshot of t (NULL: the caller).  Errors: ENXIO; EINVAL out NULL, or t
 * NULL outside a uthread; ESRCH t already joined.  Context: any thread.
 */
int ult_thread_info(ult_thread_t *t, struct ult_thread_info *out);

struct ult_cpu_info {
	int cpu, load;	   /* load: running + queued uthreads */
	uint64_t switches; /* context switches on this worker */
	uint64_t steals;   /* uthreads this worker stole from others */
	uint64_t idle_ns, busy_ns;
	uint64_t preemptions; /* uthreads switched out by the signal */
	uint64_t owed;	      /* preemptions deferred to a safe point */
	/* scheduler-lock acquisitions that had to wait: this CPU's run
	 * queue under ULE; the one global lock under 4BSD (on CPU 0) */
	uint64_t sched_lock_waits;
	/* times this worker slept in the kernel for want of work, and
	 * futex wakeups it sent (to wake a sleeping worker or a foreign
	 * thread blocked on an ult object): what handing work over cost */
	uint64_t parks, futex_wakes;
	/* times the clock thread found this worker blocked in the kernel
	 * and handed its queue to the others; blocked: it is so now */
	uint64_t handoffs;
	int blocked;
};
typedef struct ult_cpu_info ult_cpu_info_t;

/* Errors: ENXIO; EINVAL cpu out of range or out NULL. */
int ult_cpu_info(int cpu, struct ult_cpu_info *out);

/*
 * Read and/or set a tunable by its FreeBSD sysctl name ("kern.sched.slice",
 * "kern.sched.steal_thresh", ...; the list is in DESIGN.md).  oldval, if
 * not NULL, gets the value before the change; newval, if not NULL, is the
 * value to set.  Errors: ENXIO; EINVAL name NULL or value out of range;
 * ENOENT unknown name; EPERM read-only.  Context: any thread.
 */
int ult_sysctl(const char *name, long *oldval, const long *newval);

/*
 * Preemption.  With preemption on (the default; ULT_PREEMPT=0 or
 * ult_config.preempt < 0 turns it off), a uthread that runs past its
 * slice, or that a better thread should displace, is interrupted by a
 * signal (SIGURG) and switched out at once, its registers and FP/vector
 * state kept.  It is never interrupted inside the runtime, inside libc or
 * another library not registered below, inside ult_schedctl_start/stop
 * (up to a bound), when its stack lacks room for the switch and one more
 * signal frame (a few KiB: a ULT_STACK_MIN stack has room), or while it
 * holds a lock taken through one of these libc calls:
 *   pthread_mutex_lock, _trylock, _timedlock, _clocklock, until
 *     pthread_mutex_unlock (each level of a recursive mutex counts; a
 *     robust mutex taken with EOWNERDEAD counts);
 *   pthread_rwlock_rdlock, _wrlock, _tryrdlock, _trywrlock, _timedrdlock,
 *     _timedwrlock, _clockrdlock, _clockwrlock, until
 *     pthread_rwlock_unlock;
 *   pthread_spin_lock, _trylock, until pthread_spin_unlock;
 *   C11 mtx_lock, mtx_trylock, mtx_timedlock, until mtx_unlock;
 *   flockfile, ftrylockfile, until funlockfile.
 * A failed try or timed attempt holds nothing, and an unlock of a lock the
 * thread did not take through these calls releases nothing.  NOT covered:
 * locks that libc or other libraries take on the program's behalf (their
 * calls need not go through these entry points), POSIX semaphores or
 * atomics used as locks, and any lock held across a voluntary switch
 * (ult_yield, a ult lock, a sleep): these locks belong to the worker's
 * kernel thread, and the next uthread on that worker may block it, or
 * enter a recursive lock's region.  A preemption deferred
 * like this is owed and taken at the next safe point (for a lock, its
 * last release).  A preempted uthread stays on its worker until it next
 * yields or blocks, so the kernel thread under it does not change: its
 * thread id, which pthread mutexes record, and, with per-worker TLS (see
 * "Thread-local storage"), &errno and every TLS address (sysctl
 * ult.preempt_migrate=1 lifts this).  System calls are restarted
 * (SA_RESTART), except those Linux never restarts (nanosleep, poll,
 * epoll_wait, ...), which may fail with EINTR.  SIGURG that the program
 * sends itself (raise, kill, pthread_kill, sigqueue) is passed to the
 * handler installed before ult_init; the kernel keeps one SIGURG pending
 * per thread, so one that coincides with a preemption signal may merge
 * into it, as two of the program's own would.  ThreadSanitizer and
 * AddressSanitizer builds run without asynchronous preemption.  So do
 * static executables (a message says so); link those with
 * -Wl,-u,ult__static_libc (pkg-config --static --libs ult), which brings
 * in libc.a's code behind the lock calls above; without it a program
 * that calls one whose code is missing is stopped with a message naming
 * the flag.  The flag is for static executables only.  Read-only sysctl
 * ult.preempt says whether preemption is in force.
 */

/* Also preempt while the PC is inside a loaded library whose path
 * contains `name' (for libraries known to keep no per-thread state), its
 * PLT stubs excepted.  Errors: EINVAL name NULL or empty; ENOMEM;
 * ENOEXEC a matching library's file could not be read to find its PLT
 * (the name stays registered).  Context: any thread. */
int ult_preempt_allow_library(const char *name);

/*
 * Scheduler hints (Solaris schedctl): between start and stop a preemption
 * is deferred, for at most ult.schedctl_bound_us microseconds (default:
 * one minimum slice) after the first deferral; stop then yields at once
 * if a preemption was owed.  Nesting counts.  No system call, no atomic
 * read-modify-write.  Context: uthread (no-ops elsewhere).
 */
void ult_schedctl_start(void);
void ult_schedctl_stop(void);

/*
 * Scheduling classes, as FreeBSD's rtprio/idprio.
 *   ULT_CLASS_TIMESHARE    the default: ULE's interactive/batch priorities
 *   ULT_CLASS_REALTIME     fixed priority prio 0..31 (0 best), above every
 *                          timeshare thread, FIFO among equals, no slice
 *   ULT_CLASS_REALTIME_RR  the same, round-robin among equals by slice
 *   ULT_CLASS_IDLE         prio 0..31, runs only when nothing else can
 * prio must be 0..31 for every class, as rtprio(2) checks it, and the
 * timeshare class then ignores it (ult_getclass reports 0): so
 * ult_setclass(t, ULT_CLASS_TIMESHARE, 99) fails EINVAL, as
 * sched_setscheduler(2) refuses a priority SCHED_OTHER has no use for.
 * t NULL: the caller.
 * Errors: ENXIO; EINVAL bad class or prio, or t NULL outside a uthread;
 * ESRCH t has finished.  Context: uthread or foreign.  Blocks: no.
 */
enum {
	ULT_CLASS_TIMESHARE = 0,
	ULT_CLASS_REALTIME,
	ULT_CLASS_REALTIME_RR,
	ULT_CLASS_IDLE
};
int ult_setclass(ult_thread_t *t, int cls, int prio);
int ult_getclass(ult_thread_t *t, int *cls, int *prio);

/*
 * I/O.  A uthread that waits for a file descriptor sleeps, and its worker
 * runs others; the runtime's poller (epoll) wakes it when the descriptor
 * is ready, through the policy's wakeup, like any sleeper: a thread that
 * mostly waits for I/O earns ULE's interactive status.  Descriptors are
 * registered with the poller on first use and stay registered until
 * ult_close (or until the kernel drops a closed file).  Close descriptors
 * that uthreads wait on with ult_close, which wakes the waiters with
 * EBADF.  After a plain close() (or dup2 over the fd) a waiter sleeps on
 * until its deadline, or until a uthread waits on the file that gets the
 * number, which wakes it with EBADF: it never reads another file's data.
 * A uthread woken by I/O runs at the socket sleep priority until the call
 * returns (sysctl ult.io_boost, 1; 0 gives ULE's own static boost), so it
 * preempts batch work as a FreeBSD socket wakeup does under 4BSD.
 * From a foreign thread every call here is the plain blocking call.
 */
#define ULT_IN POLLIN
#define ULT_OUT POLLOUT
#define ULT_ERR POLLERR
#define ULT_HUP POLLHUP

/*
 * Wait until fd is ready for one of `events' (ULT_IN, ULT_OUT, or both;
 * ULT_ERR and ULT_HUP are always reported) or the absolute deadline passes
 * (ULT_DEADLINE_NONE, or 0 as before: no deadline; ULT_DEADLINE_NOW: look
 * once).  *revents (if not NULL) gets the poll(2) bits that are ready.
 * Any number of uthreads may wait on one fd, in either direction;
 * readiness wakes every waiter of its direction, as poll(2) would.
 * Errors: ETIMEDOUT; EBADF fd not open, or closed meanwhile (see above);
 * EINVAL events has neither ULT_IN nor ULT_OUT, or fd is beyond the
 * poller's range (2^20) or refused by epoll; ENOMEM; ENXIO.  A regular
 * file is always ready, as poll(2) says: use ult_blocking for its slow
 * calls.  Context: uthread or foreign thread (there poll(2)).  Blocks: yes.
 */
int ult_wait_fd(int fd, int events, uint64_t deadline_ns, int *revents);

/*
 * Stand-ins for the POSIX calls of the same name, with their results and
 * errno (-1 and errno on failure, unlike the rest of the API).  On a
 * descriptor the program left blocking they block the calling uthread,
 * never its worker; on one with O_NONBLOCK they return EAGAIN as the call
 * would.  They never change the descriptor's flags, except ult_connect,
 * which sets O_NONBLOCK for the duration of the connect() call itself.  A
 * blocking write or send returns when everything is written, or with the
 * count written when an error or signal stops it.  Any number of uthreads
 * may call them on one fd at once, as threads may block in the calls
 * themselves.  Context: uthread or foreign thread.  Blocks: yes.
 */
ssize_t ult_read(int fd, void *buf, size_t n);
ssize_t ult_write(int fd, const void *buf, size_t n);
ssize_t ult_readv(int fd, const struct iovec *iov, int iovcnt);
ssize_t ult_writev(int fd, const struct iovec *iov, int iovcnt);
ssize_t ult_recv(int fd, void *buf, size_t n, int flags);
ssize_t ult_send(int fd, const void *buf, size_t n, int flags);
ssize_t ult_recvfrom(int fd, void *buf, size_t n, int flags,
    struct sockaddr *from, socklen_t *fromlen);
ssize_t ult_sendto(int fd, const void *buf, size_t n, int flags,
    const struct sockaddr *to, socklen_t tolen);
ssize_t ult_recvmsg(int fd, struct msghdr *msg, int flags);
ssize_t ult_sendmsg(int fd, const struct msghdr *msg, int flags);
int ult_accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
int ult_connect(int fd, const struct sockaddr *addr, socklen_t addrlen);
/* poll(2): one descriptor waits through the poller; several are polled
 * by a helper thread (ult_blocking). */
int ult_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms);
/* close(2), after waking the uthreads that wait on fd with EBADF. */
int ult_close(int fd);

/*
 * Blocking calls.  Run fn(arg) on a helper kernel thread while the calling
 * uthread sleeps, for calls no poller covers: regular files, fsync,
 * getaddrinfo, a library's own blocking call.  *ret (if not NULL) gets
 * fn's result; fn starts with the caller's errno and errno is left as fn
 * left it, as if fn had run on the caller.  fn runs
 * with the helper's TLS, not the caller's, and must not call ult_
 * functions that block.  Helpers are started on demand up to sysctl
 * ult.blocking_max (64) at once (more calls queue); one idle for
 * ult.blocking_idle_ms (10000) exits.  Errors: EINVAL fn NULL; EAGAIN no
 * helper could be started and none runs; ENXIO.  From a foreign thread fn
 * runs on the caller.  Context: uthread or foreign thread.  Blocks: yes.
 *
 * A worker that blocks in the kernel anyway (a raw read(), a page-fault
 * storm, a contended pthread mutex) would strand the uthreads queued on
 * it: the clock thread notices a worker that has run one uthread for over
 * ult.handoff_us (1000; 0: never) while its kernel thread sleeps, reports
 * the uthread as ULT_STATE_BLOCKED, and moves the worker's queue to the
 * other workers until it returns (threads bound to it stay).
 */
int ult_blocking(void *(*fn)(void *), void *arg, void **ret);

/*
 * Synchronisation objects.
 *
 * Every object works between uthreads and foreign threads alike (a
 * blocked uthread sleeps and its worker runs others; a blocked foreign
 * thread sleeps in the kernel), and foreign threads may use them even
 * while the runtime is not running.  Objects are plain structs of a fixed
 * size: embed them anywhere, initialise them statically or with the
 * _init function, and never copy one that is in use.  The fields are
 * private.  Timed waits take absolute CLOCK_MONOTONIC deadlines and
 * return ETIMEDOUT once the deadline has passed; with a deadline already
 * past (0 and ULT_DEADLINE_NOW included) they still succeed if they need
 * not wait, and otherwise time out at once.  ULT_DEADLINE_NONE
 * (UINT64_MAX) never passes: the wait is the untimed one.
 *
 * Context for all of them: uthread or foreign thread, not a signal
 * handler.  Functions named lock, wait, rdlock or wrlock block; the
 * others do not.
 */

/*
 * Mutex: error-checking, not recursive, with priority propagation: a
 * uthread blocked on it lends its priority to the owner (and on along a
 * chain of owners), and the owner gets its own back at unlock.  Unlock
 * wakes the best waiter (priority order, FIFO among equals); see DESIGN.md
 * for when it hands the mutex over directly.
 *   lock/timedlock: EDEADLK the caller owns it; EINVAL NULL; ETIMEDOUT.
 *   trylock: EBUSY held.  unlock: EPERM the caller does not own it.
 *   destroy: EBUSY locked or waited on.
 * A thread that exits while holding a mutex leaves it locked for good.
 */
typedef struct ult_mutex {
	uintptr_t _word;
	uintptr_t _spare;
} ult_mutex_t;
#define ULT_MUTEX_INITIALIZER \
	{                     \
		0, 0          \
	}

int ult_mutex_init(ult_mutex_t *m);
int ult_mutex_destroy(ult_mutex_t *m);
int ult_mutex_lock(ult_mutex_t *m);
int ult_mutex_trylock(ult_mutex_t *m);
int ult_mutex_timedlock(ult_mutex_t *m, uint64_t deadline_ns);
int ult_mutex_unlock(ult_mutex_t *m);

/*
 * Condition variable.  wait/timedwait release m (which the caller must
 * own: EPERM otherwise) and reacquire it before returning, also on
 * ETIMEDOUT.  Waiters are woken in FIFO order.  Wakeups are not spurious
 * in this implementation, but callers should still loop on their
 * predicate.  destroy: EBUSY while waited on.
 */
typedef struct ult_cond {
	unsigned _waiters;
	unsigned _spare;
	uintptr_t _spare2;
} ult_cond_t;
#define ULT_COND_INITIALIZER \
	{                    \
		0, 0, 0      \
	}

int ult_cond_init(ult_cond_t *c);
int ult_cond_destroy(ult_cond_t *c);
int ult_cond_wait(ult_cond_t *c, ult_mutex_t *m);
int ult_cond_timedwait(ult_cond_t *c, ult_mutex_t *m, uint64_t deadline_ns);
int ult_cond_signal(ult_cond_t *c);
int ult_cond_broadcast(ult_cond_t *c);

/*
 * Counting semaphore, value 0..ULT_SEM_VALUE_MAX.  Waiters are woken in
 * FIFO order.  init: EINVAL value too large.  trywait: EAGAIN at zero.
 * post: EOVERFLOW at ULT_SEM_VALUE_MAX.  destroy: EBUSY while waited on.
 * getvalue stores the current value (never negative).
 */
#define ULT_SEM_VALUE_MAX 0x7fffffffu
typedef struct ult_sem {
	uint64_t _word;
	uint64_t _spare;
} ult_sem_t;

int ult_sem_init(ult_sem_t *s, unsigned value);
int ult_sem_destroy(ult_sem_t *s);
int ult_sem_wait(ult_sem_t *s);
int ult_sem_trywait(ult_sem_t *s);
int ult_sem_timedwait(ult_sem_t *s, uint64_t deadline_ns);
int ult_sem_post(ult_sem_t *s);
int ult_sem_getvalue(ult_sem_t *s, int *value);

/*
 * Reader-writer lock, writer-preferring: once a writer waits, new readers
 * wait too, so a stream of readers cannot starve writers; a writer's
 * unlock admits every reader that was waiting, so writers cannot starve
 * readers either.  Consequently a thread must not take a read lock it
 * already holds while a writer may be waiting (it would deadlock).  A
 * write owner receives priority propagation like a mutex owner.
 *   rdlock/wrlock: EDEADLK the caller holds the write lock.
 *   tryrdlock/trywrlock: EBUSY.  unlock: EPERM not held (by the caller,
 *   for a write lock).  destroy: EBUSY held or waited on.
 */
typedef struct ult_rwlock {
	unsigned _state;
	unsigned _spare;
	uintptr_t _owner;
	uintptr_t _spare2[2];
} ult_rwlock_t;
#define ULT_RWLOCK_INITIALIZER \
	{                      \
		0, 0, 0,       \
		{              \
			0, 0   \
		}              \
	}

int ult_rwlock_init(ult_rwlock_t *rw);
int ult_rwlock_destroy(ult_rwlock_t *rw);
int ult_rwlock_rdlock(ult_rwlock_t *rw);
int ult_rwlock_wrlock(ult_rwlock_t *rw);
int ult_rwlock_tryrdlock(ult_rwlock_t *rw);
int ult_rwlock_trywrlock(ult_rwlock_t *rw);
int ult_rwlock_unlock(ult_rwlock_t *rw);

/*
 * Barrier for `count' threads, reusable.  wait returns
 * ULT_BARRIER_SERIAL_THREAD to one waiter of each round and 0 to the
 * others.  init: EINVAL count 0.  destroy: EBUSY while waited on.
 */
#define ULT_BARRIER_SERIAL_THREAD (-1)
typedef struct ult_barrier {
	unsigned _count;
	unsigned _waiting;
	unsigned _round;
	unsigned _spare;
} ult_barrier_t;

int ult_barrier_init(ult_barrier_t *b, unsigned count);
int ult_barrier_wait(ult_barrier_t *b);
int ult_barrier_destroy(ult_barrier_t *b);

/*
 * Run fn exactly once per object; concurrent callers wait until it has
 * returned.  fn must return normally (not exit the thread).
 * Errors: EINVAL o or fn NULL.
 */
typedef struct ult_once {
	unsigned _state;
} ult_once_t;
#define ULT_ONCE_INIT \
	{             \
		0     \
	}

int ult_once(ult_once_t *o, void (*fn)(void));

#ifdef __cplusplus
}
#endif
#endif /* ULT_H */
