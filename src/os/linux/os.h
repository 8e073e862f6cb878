/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The only OS-specific calls the runtime makes: futexes, the monotonic
 * clock, CPU affinity and topology, thread names.
 */
#ifndef ULT_OS_LINUX_OS_H
#define ULT_OS_LINUX_OS_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "../../util/topo_cpu.h"
#include "../../util/atomic.h"

/*
 * CLOCK_MONOTONIC in nanoseconds (vDSO, no system call).  The runtime's
 * own reads raise ult__tls_in_vdso meanwhile: the preemption handler may
 * interrupt a uthread inside the vDSO (a user's clock_gettime), but not
 * the runtime, which reads the clock holding its locks.  ult_now() uses
 * the unmarked read.
 */
uint64_t ult__now(void);
uint64_t ult__now_unmarked(void);
extern __thread volatile int ult__tls_in_vdso
    __attribute__((tls_model("initial-exec")));

/* The same clock read from the TSC where it is invariant (fastclock.c);
 * _update() is called by the clock thread to keep it calibrated. */
void ult__fastclock_init(void);
void ult__fastclock_update(void);
uint64_t ult__fastclock_now(void);

/* ns (a CLOCK_MONOTONIC time) as a timespec; times past what time_t
 * holds saturate rather than wrap. */
struct timespec;
void ult__os_timespec(uint64_t ns, struct timespec *ts);

/* Sleep while *addr == val, until woken or the absolute CLOCK_MONOTONIC
 * deadline (0: none).  Returns 0, EAGAIN (value changed), ETIMEDOUT or
 * EINTR; callers always re-check their condition. */
int ult__futex_wait(atomic_uint *addr, unsigned val, uint64_t deadline_ns);
void ult__futex_wake(atomic_uint *addr, int n);

/* An anonymous read-write private mapping of len bytes, with `extra'
 * mmap flags (MAP_NORESERVE, MAP_STACK); NULL if it cannot be made (or
 * fault injection says so). */
void *ult__os_map(size_t len, int extra);
/* sigaltstack(2) itself, past any interposer: -1 with errno. */
int ult__os_sigaltstack(const stack_t *ss, stack_t *old);
/* pthread_create for the runtime's own threads, with attributes a (NULL:
 * the defaults); 0 or an errno (EAGAIN under fault injection).  The
 * thread starts with every signal a fault does not raise blocked; each
 * opens what it must itself (see os.c). */
int ult__os_thread_attr(pthread_t *t, const pthread_attr_t *a,
    void *(*fn)(void *), void *arg);
int ult__os_thread(pthread_t *t, void *(*fn)(void *), void *arg);
/* The calling kernel thread's signal mask, the kernel's 64 bits: set,
 * read; block every signal a fault does not raise (runtime threads that
 * must not take the program's signals). */
void ult__os_sigmask(uint64_t mask);
/* What ult__os_block_async_signals leaves open: the signals a fault
 * raises (not SIGABRT: abort opens it itself, and one sent by kill must
 * reach a uthread that accepts it), and glibc's SIGCANCEL and SIGSETXID (32,
 * 33), which its set*id calls send to every thread and wait for (blocked, they
 * would wait forever). */
#define ULT_SIGMASK_KEEP                                                       \
	(1ull << (SIGSEGV - 1) | 1ull << (SIGBUS - 1) | 1ull << (SIGFPE - 1) | \
	    1ull << (SIGILL - 1) | 1ull << (SIGTRAP - 1) |                     \
	    1ull << (SIGSYS - 1) | 1ull << 31 | 1ull << 32)
uint64_t ult__os_sigmask_get(void);
void ult__os_block_async_signals(void);

/* The OS CPUs this process may run on, in order; returns how many.  The
 * mask is kept: threads the runtime starts from a pinned worker take it
 * (ult__os_attr_cpus) instead of that worker's one CPU. */
int ult__os_cpus(int *cpus, int max);
/* Give attr the mask the last ult__os_cpus saw (none seen: leave it). */
void ult__os_attr_cpus(pthread_attr_t *attr);
/* The calling thread's affinity becomes that mask, for the threads it
 * creates meanwhile to inherit: 1 if it changed (the old one in *old,
 * for ult__os_affinity_restore), 0 if it was that already. */
int ult__os_affinity_widen(cpu_set_t *old);
void ult__os_affinity_restore(const cpu_set_t *old);
/* Pin the calling kernel thread to one OS CPU; 0 or an errno. */
int ult__os_pin(int oscpu);
void ult__os_set_name(const char *name);
/* The calling kernel thread's id, and whether thread tid of this process
 * still exists (a tid can be reused: "alive" may be another thread). */
int ult__os_gettid(void);
/* Send sig to the calling kernel thread (not raise(): the pthread drop-in
 * has its own); async-signal-safe. */
int ult__os_raise_self(int sig);
int ult__os_thread_alive(int tid);
/* Thread nice values (host_nice.c): the caller's; set thread tid's,
 * keeping errno; may this process lower a thread's nice down to nice? */
int ult__os_nice_get(void);
void ult__os_nice_set(int tid, int nice);
int ult__os_may_renice(int nice);
/* Cache-sharing sets from sysfs for cpus 0..n-1 that run on oscpu[i];
 * 0 on success, -1 when unknown (the caller uses one flat group). */
int ult__os_topology(int n, const int *oscpu, struct topo_cpu *out);
/* Nonzero if this executable has no program interpreter (static). */
int ult__os_static_binary(void);
/* text.c: the table of preemptible text.  Add a library name (0 or
 * ENOMEM), (re)build the table (0, ENOMEM, ENOEXEC: a file's section
 * headers could not be read, E2BIG), ask about a pc (lock-free, for the
 * signal handler), free every table once no handler can run. */
int ult__text_allow(const char *name);
int ult__text_build(void);
int ult__text_preemptible(uintptr_t pc);
void ult__text_free(void);

/* The address ranges [lo, hi) of the PLT stubs of the ELF file at path
 * loaded at bias (elf.c); returns how many (at most max), -1 if the file
 * cannot be read. */
int ult__os_plt_ranges(const char *path, uintptr_t bias, uintptr_t (*out)[2],
    int max);

#endif
