/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Linux implementations of os.h, plus the host side of struct mtx: the
 * slow path spins briefly, then sleeps on the lock word, because with
 * more workers than CPUs the lock holder may be waiting for this CPU.
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <link.h>

#include "../../arch/cpu.h"
#include "../../util/fault.h"
#include "../../util/lock.h"
#include "os.h"

uint64_t
ult__now(void)
{
	struct timespec ts;

	ult__tls_in_vdso++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ult__tls_in_vdso--;
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

__thread volatile int ult__tls_in_vdso
    __attribute__((tls_model("initial-exec")));

uint64_t
ult__now_unmarked(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

void
ult__os_timespec(uint64_t ns, struct timespec *ts)
{
	uint64_t sec = ns / 1000000000u;
	/* With a 32-bit time_t a far deadline would wrap to the past; the
	 * kernel reads any time beyond its range as never. */
	const uint64_t sec_max = sizeof(time_t) >= 8 ? INT64_MAX : INT32_MAX;

	if (sec > sec_max) {
		ts->tv_sec = (time_t)sec_max;
		ts->tv_nsec = 999999999;
		return;
	}
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)(ns % 1000000000u);
}

int
ult__futex_wait(atomic_uint *addr, unsigned val, uint64_t deadline_ns)
{
	struct timespec ts, *tp = NULL;
	int saved = errno, err = 0;

	if (deadline_ns != 0) {
		ult__os_timespec(deadline_ns, &ts);
		tp = &ts;
	}
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline.  The
	 * result is returned, and errno left as the caller had it: ult's
	 * functions preserve errno (a foreign thread's timed lock used to
	 * come back with errno ETIMEDOUT). */
	if (syscall(SYS_futex, addr, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG,
		val, tp, NULL, FUTEX_BITSET_MATCH_ANY) != 0)
		err = errno == EAGAIN || errno == ETIMEDOUT ? errno : EINTR;
	errno = saved;
	return (err);
}

int
ult__os_sigaltstack(const stack_t *ss, stack_t *old)
{
	return ((int)syscall(SYS_sigaltstack, ss, old));
}

void *
ult__os_map(size_t len, int extra)
{
	void *p;

	if (ult__fault(ULT__FAULT_MMAP))
		return (NULL);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);
	return (p == MAP_FAILED ? NULL : p);
}

/*
 * glibc gives a new thread its creator's signal mask before its function
 * runs.  Created from a worker running a uthread that accepts a program's
 * signal, the clock thread or a blocking helper took that signal there
 * and ran the program's handler on a runtime thread, which could then
 * hold a runtime lock a nested handler's call took (a hang of LTP's
 * pthread_cond_timedwait 4-3 under ult-run).  So the creator blocks them
 * across the creation and gets its own mask back.
 */
int
ult__os_thread_attr(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *),
    void *arg)
{
	uint64_t old;
	int err;

	if (ult__fault(ULT__FAULT_THREAD))
		return (EAGAIN);
	old = ult__os_sigmask_get();
	ult__os_block_async_signals();
	err = pthread_create(t, a, fn, arg);
	ult__os_sigmask(old);
	return (err);
}

int
ult__os_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	return (ult__os_thread_attr(t, NULL, fn, arg));
}

void
ult__futex_wake(atomic_uint *addr, int n)
{
	int saved = errno;

	syscall(SYS_futex, addr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL, NULL,
	    0);
	errno = saved;
}

static cpu_set_t proc_cpus;
static int proc_cpus_known;

int
ult__os_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	proc_cpus_known = 0;
	if (sched_getaffinity(0, sizeof(set), &set) != 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		for (int i = 0; i < c && n < max; i++)
			cpus[n++] = i;
		return (n > 0 ? n : 1);
	}
	for (int i = 0; i < CPU_SETSIZE && n < max; i++)
		if (CPU_ISSET(i, &set))
			cpus[n++] = i;
	proc_cpus = set;
	proc_cpus_known = 1;
	return (n);
}

void
ult__os_attr_cpus(pthread_attr_t *attr)
{
	if (proc_cpus_known)
		(void)pthread_attr_setaffinity_np(attr, sizeof(proc_cpus),
		    &proc_cpus);
}

int
ult__os_affinity_widen(cpu_set_t *old)
{
	if (!proc_cpus_known || sched_getaffinity(0, sizeof(*old), old) != 0 ||
	    CPU_EQUAL(old, &proc_cpus))
		return (0);
	return (sched_setaffinity(0, sizeof(proc_cpus), &proc_cpus) == 0);
}

void
ult__os_affinity_restore(const cpu_set_t *old)
{
	(void)sched_setaffinity(0, sizeof(*old), old);
}

int
ult__os_pin(int oscpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(oscpu, &set);
	return (pthread_setaffinity_np(pthread_self(), sizeof(set), &set));
}

void
ult__os_set_name(const char *name)
{
	pthread_setname_np(pthread_self(), name);
}

int
ult__os_gettid(void)
{
	return ((int)syscall(SYS_gettid));
}

int
ult__os_raise_self(int sig)
{
	return ((int)syscall(SYS_tgkill, getpid(), ult__os_gettid(), sig));
}

int
ult__os_thread_alive(int tid)
{
	return (syscall(SYS_tgkill, getpid(), tid, 0) == 0 || errno != ESRCH);
}

/* System calls, not libc's: the pthread drop-in replaces getpriority and
 * setpriority with per-uthread versions.  The kernel's getpriority returns
 * 20 - nice. */
int
ult__os_nice_get(void)
{
	long r = syscall(SYS_getpriority, PRIO_PROCESS, 0);

	return (r < 0 ? 0 : 20 - (int)r);
}

void
ult__os_nice_set(int tid, int nice)
{
	int e = errno;

	(void)syscall(SYS_setpriority, PRIO_PROCESS, tid, nice);
	errno = e;
}

int
ult__os_may_renice(int nice)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	struct rlimit rl;

	if (syscall(SYS_capget, &h, d) == 0 &&
	    (d[CAP_TO_INDEX(CAP_SYS_NICE)].effective &
		CAP_TO_MASK(CAP_SYS_NICE)) != 0)
		return (1);
	/* RLIMIT_NICE is 20 minus the lowest nice a thread may ask for. */
	return (getrlimit(RLIMIT_NICE, &rl) == 0 &&
	    (rl.rlim_cur == RLIM_INFINITY ||
		rl.rlim_cur >= (rlim_t)(20 - nice)));
}

static int
read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (f == NULL)
		return (-1);
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	return (ok ? 0 : -1);
}

/* "0-3,8-11" over OS cpu numbers -> worker ids that run on them. */
static void
parse_list(const char *s, int n, const int *oscpu, cpuset_t *out)
{
	CS_ZERO(out);
	while (*s != '\0' && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (int i = 0; i < n; i++)
			if (oscpu[i] >= a && oscpu[i] <= b)
				CS_SET(i, out);
		s = (*end == ',') ? end + 1 : end;
	}
}

int
ult__os_topology(int n, const int *oscpu, struct topo_cpu *out)
{
	char path[160], buf[512];
	int found = 0;

	memset(out, 0, sizeof(*out) * (size_t)n);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
		    "/sys/devices/system/cpu/cpu%d/topology/"
		    "thread_siblings_list",
		    oscpu[i]);
		if (read_line(path, buf, sizeof(buf)) == 0)
			parse_list(buf, n, oscpu, &out[i].smt);
		for (int idx = 0; idx < 16; idx++) {
			int level;

			snprintf(path, sizeof(path),
			    "/sys/devices/system/cpu/cpu%d/cache/index%d/level",
			    oscpu[i], idx);
			if (read_line(path, buf, sizeof(buf)) != 0)
				break;
			level = atoi(buf);
			snprintf(path, sizeof(path),
			    "/sys/devices/system/cpu/cpu%d/cache/index%d/type",
			    oscpu[i], idx);
			if (read_line(path, buf, sizeof(buf)) == 0 &&
			    strncmp(buf, "Instruction", 11) == 0)
				continue;
			if (level < 1 || level > MAX_CACHE_LEVELS)
				continue;
			snprintf(path, sizeof(path),
			    "/sys/devices/system/cpu/cpu%d/cache/index%d/"
			    "shared_cpu_list",
			    oscpu[i], idx);
			if (read_line(path, buf, sizeof(buf)) != 0)
				continue;
			parse_list(buf, n, oscpu, &out[i].share[level]);
			found = 1;
		}
	}
	return (found ? 0 : -1);
}

static int
phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') {
		for (int i = 0; i < info->dlpi_phnum; i++)
			if (info->dlpi_phdr[i].p_type == PT_INTERP)
				*(int *)data = 0;
		return (1);
	}
	return (0);
}

int
ult__os_static_binary(void)
{
	int is_static = 1;

	dl_iterate_phdr(phdr_cb, &is_static);
	return (is_static);
}

/*
 * Spinning on a host that may deschedule the thread being waited for.
 * A spin pays only while the thread that will release the word runs;
 * the critical sections behind these words last well under a
 * microsecond, so a wait that outlasts SPIN_WAIT_NS means the holder is
 * not running, most likely descheduled by the kernel, and the waiter
 * then sleeps so that its CPU can go to the holder.  sched_yield would
 * not do: the kernel may pick the yielder again at once (CFS gives it
 * nothing but a skip hint), and it burns the CPU in system calls.  A
 * spinner that sees its own clock jump (SPIN_GAP_NS between two reads
 * a few pauses apart) was itself descheduled: the host is
 * oversubscribed, and it stops spinning at once.
 */
#define SPIN_WAIT_NS 4000u
#define SPIN_GAP_NS 20000u
#define SPIN_CHECK 8 /* pauses between two clock reads */

/* 1 while the spin that started at *start may go on; *last: the
 * previous clock read. */
static int
spin_pays(uint64_t start, uint64_t *last)
{
	uint64_t now = ult__now();
	int go = now - start < SPIN_WAIT_NS && now - *last < SPIN_GAP_NS;

	*last = now;
	return (go);
}

/*
 * The barrier a lock sleeper runs between counting itself and looking at
 * the word again: afterwards every thread of the process that was
 * running has executed a full fence, so a release store not yet visible
 * here is followed, in its thread, by a load that sees the count.
 * Registered on first use, and again after a fork (the child's address
 * space starts unregistered).  Returns 0 where the kernel has no such
 * barrier (or forbids it): the sleeper then sleeps in bounded slices.
 */
static atomic_int membarrier_state; /* 0 unknown, 1 works, -1 unusable */

static int
membarrier_all(void)
{
	int st = ULT_LD(&membarrier_state);

	if (st < 0)
		return (0);
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) ==
	    0) {
		if (st == 0)
			ULT_ST(&membarrier_state, 1);
		return (1);
	}
	if (errno == EPERM &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		0, 0) == 0 &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) ==
		0) {
		ULT_ST(&membarrier_state, 1);
		return (1);
	}
	ULT_ST(&membarrier_state, -1);
	return (0);
}

/* Without the barrier a sleeper may miss its wakeup: it looks again
 * after this long. */
#define LOCK_SLEEP_POLL_NS 200000u

static int
mtx_try(struct mtx *m)
{
	return (ULT_LD(&m->mtx_locked) == 0 &&
	    atomic_exchange_explicit(&m->mtx_locked, 1, memory_order_acquire) ==
		0);
}

void
ult__mtx_lock_slow(struct mtx *m)
{
	uint64_t start = ult__now(), last = start;
	int saved = errno;

	ULT_ADD(&m->mtx_contended, 1);
	for (unsigned i = 1;; i++) {
		if (mtx_try(m))
			return;
		ult__cpu_relax();
		if (i % SPIN_CHECK == 0 && !spin_pays(start, &last))
			break;
	}
	for (;;) {
		int fenced;

		/* seq_cst: the count is stored before the barrier. */
		ULT_ADD_SC(&m->mtx_waiters, 1);
		fenced = membarrier_all();
		if (atomic_exchange_explicit(&m->mtx_locked, 1,
			memory_order_acquire) == 0) {
			ULT_SUB(&m->mtx_waiters, 1);
			break;
		}
		/* mtx_locked is an int the release stores to; the futex
		 * compares the same 32 bits. */
		ult__futex_wait((atomic_uint *)(void *)&m->mtx_locked, 1,
		    fenced ? 0 : ult__now() + LOCK_SLEEP_POLL_NS);
		ULT_SUB(&m->mtx_waiters, 1);
		if (mtx_try(m))
			break;
	}
	errno = saved;
}

void
ult__mtx_wake(struct mtx *m)
{
	ult__futex_wake((atomic_uint *)(void *)&m->mtx_locked, 1);
}

/*
 * Waits on words nobody wakes the waiter for: spin while it pays (as
 * above), then sleep for 16 us, doubling up to 1 ms.  The iteration
 * count carries the state: below SPIN_ITERS spinning, past it the
 * number of sleeps so far.
 */
#define SPIN_ITERS 256u

void
ult__nap_ns(uint64_t ns)
{
	static atomic_uint never; /* nobody wakes it: a timed sleep */

	ult__futex_wait(&never, 0, ult__now() + ns);
}

void
ult__spin_backoff(unsigned *iter)
{
	unsigned n = ++*iter;

	if (n < SPIN_ITERS) {
		ult__cpu_relax();
		return;
	}
	n -= SPIN_ITERS;
	ult__nap_ns(16000ull << (n < 6 ? n : 6));
}

/* The raw call: glibc's sigprocmask would refuse none of these bits, but
 * its wrapper is what the drop-in interposes. */
void
ult__os_sigmask(uint64_t mask)
{
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mask, NULL, sizeof(mask));
}

uint64_t
ult__os_sigmask_get(void)
{
	uint64_t mask = 0;

	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mask, sizeof(mask));
	return (mask);
}

void
ult__os_block_async_signals(void)
{
	ult__os_sigmask(~ULT_SIGMASK_KEEP);
}
