/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The drop-in's scheduling calls (DESIGN.md section 14): sleeps, yields,
 * priorities, names and affinity, each on the calling or named uthread
 * rather than on the worker that runs it.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dropin.h"
#include "os/linux/os.h"

#define NS 1000000000ull

/* Sleeps. */

int
sched_yield(void)
{
	ult__dropin_up();
	ult_yield();
	ult__dropin_after_call();
	return (0);
}

static int
sleep_fn(void *unused, uint64_t deadline)
{
	(void)unused;
	return (ult_sleep_until(deadline));
}

/* A handler that runs ends the sleep with EINTR, SA_RESTART or not
 * (signal(7)); rem, if not NULL, gets what was left. */
static int
sleep_until(uint64_t deadline, struct timespec *rem)
{
	uint64_t now;
	int err;

	/* A thread that is not a uthread (a fork child's before its first
	 * thread, a helper of libc's): the kernel's sleep, which a handler
	 * ends with EINTR. */
	if (ult_self() == NULL) {
		struct timespec ts, left;

		now = ult__now();
		now = now < deadline ? deadline - now : 0;
		ts.tv_sec = (time_t)(now / NS);
		ts.tv_nsec = (long)(now % NS);
		err = ult__libc_clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &left);
		if (err == EINTR && rem != NULL)
			*rem = left;
		return (err);
	}
	ult__dropin_point();
	err = ult__dropin_wait_intr(sleep_fn, NULL, deadline, 0);
	if (err == EINTR && rem != NULL) {
		now = ult__now();
		now = now < deadline ? deadline - now : 0;
		rem->tv_sec = (time_t)(now / NS);
		rem->tv_nsec = (long)(now % NS);
	}
	if (err != EINTR)
		ult__dropin_point();
	return (err);
}

int
clock_nanosleep(clockid_t clock, int flags, const struct timespec *t,
    struct timespec *rem)
{
	uint64_t deadline;
	int err;

	ult__dropin_up();
	if (clock == CLOCK_BOOTTIME)
		clock = CLOCK_MONOTONIC;
	if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
		return (ult__libc_clock_nanosleep(clock, flags, t, rem));
	if (t->tv_sec < 0)
		return (EINVAL); /* the kernel's answer, absolute or not */
	err = (flags & TIMER_ABSTIME)
	    ? ult__dropin_deadline(clock, t, &deadline)
	    : ult__dropin_after(t, &deadline);
	if (err != 0)
		return (err);
	return (sleep_until(deadline, (flags & TIMER_ABSTIME) ? NULL : rem));
}

int
nanosleep(const struct timespec *t, struct timespec *rem)
{
	int err = clock_nanosleep(CLOCK_MONOTONIC, 0, t, rem);

	if (err != 0) {
		errno = err;
		return (-1);
	}
	return (0);
}

int
usleep(useconds_t us)
{
	ult__dropin_up();
	if (sleep_until(ult__now() + (uint64_t)us * 1000u, NULL) == EINTR) {
		errno = EINTR;
		return (-1);
	}
	return (0);
}

unsigned
sleep(unsigned s)
{
	struct timespec rem;

	ult__dropin_up();
	/* Interrupted: the whole seconds not slept, as glibc says. */
	if (sleep_until(ult__now() + (uint64_t)s * NS, &rem) == EINTR)
		return ((unsigned)rem.tv_sec);
	return (0);
}

/* Priorities: the POSIX policies onto ULE's classes.  SCHED_FIFO and
 * SCHED_RR priorities 1..99 (99 best) become realtime priorities 31..0
 * (0 best); SCHED_IDLE is the idle class; SCHED_OTHER and SCHED_BATCH
 * are timeshare, where nice decides. */

static int
rt_prio(int p)
{
	return (31 - (p - 1) * 31 / 98);
}

int
ult__dropin_sched_map(int policy, const struct sched_param *sp,
    struct ult_attr *ua, struct dp_thread *dp)
{
	int lo = sched_get_priority_min(policy),
	    hi = sched_get_priority_max(policy);

	if (sp == NULL || lo < 0 || sp->sched_priority < lo ||
	    sp->sched_priority > hi)
		return (EINVAL);
	switch (policy) {
	case SCHED_FIFO:
	case SCHED_RR:
		ua->cls = policy == SCHED_FIFO ? ULT_CLASS_REALTIME
					       : ULT_CLASS_REALTIME_RR;
		ua->rtprio = rt_prio(sp->sched_priority);
		break;
	case SCHED_IDLE:
		ua->cls = ULT_CLASS_IDLE;
		ua->rtprio = 0;
		break;
	case SCHED_OTHER:
	case SCHED_BATCH:
		ua->cls = ULT_CLASS_TIMESHARE;
		ua->rtprio = 0;
		break;
	default:
		return (EINVAL);
	}
	dp->policy = policy;
	dp->param = *sp;
	return (0);
}

static struct dp_thread *
named(pthread_t t)
{
	ult__dropin_up();
	return (ult__dropin_of(t));
}

int
pthread_setschedparam(pthread_t t, int policy, const struct sched_param *sp)
{
	struct dp_thread *dp = named(t);
	struct ult_attr ua;
	int err;

	if (dp == NULL)
		return (ult__dropin_forked
			? ULT__DROPIN_LIBC(pthread_setschedparam,
			      int (*)(pthread_t, int,
				  const struct sched_param *))(t, policy, sp)
			: ESRCH);
	ult_attr_init(&ua);
	if ((err = ult__dropin_sched_map(policy, sp, &ua, dp)) != 0)
		return (err);
	err = ult_setclass(ult__dropin_ut(dp), ua.cls, ua.rtprio);
	return (err == EINVAL ? EINVAL : err != 0 ? ESRCH : 0);
}

int
pthread_getschedparam(pthread_t t, int *policy, struct sched_param *sp)
{
	struct dp_thread *dp = named(t);

	if (dp == NULL)
		return (ult__dropin_forked
			? ULT__DROPIN_LIBC(pthread_getschedparam,
			      int (*)(pthread_t, int *, struct sched_param *))(
			      t, policy, sp)
			: ESRCH);
	*policy = dp->policy;
	*sp = dp->param;
	return (0);
}

int
pthread_setschedprio(pthread_t t, int prio)
{
	struct dp_thread *dp = named(t);
	struct sched_param sp = {.sched_priority = prio};

	if (dp == NULL)
		return (ult__dropin_forked
			? ULT__DROPIN_LIBC(pthread_setschedprio,
			      int (*)(pthread_t, int))(t, prio)
			: ESRCH);
	return (pthread_setschedparam(t, dp->policy, &sp));
}

/* 0, or the id gettid gives the caller, names the calling thread in
 * Linux's per-thread calls (setpriority, sched_setaffinity). */
static int
names_caller(long id)
{
	return (id == 0 || id == (long)gettid());
}

/* PRIO_PROCESS on the calling thread is its uthread.  Anything else is
 * the kernel's. */
static int
is_self(int which, id_t who)
{
	return (which == PRIO_PROCESS && ult__dropin_self() != NULL &&
	    names_caller((long)who));
}

int
setpriority(__priority_which_t which, id_t who, int prio)
{
	static void *_Atomic slot;
	int err;

	ult__dropin_up();
	if (!is_self(which, who))
		return (
		    ((int (*)(__priority_which_t, id_t, int))ult__dropin_next(
			"setpriority", &slot))(which, who, prio));
	prio = prio < -20 ? -20 : prio > 19 ? 19 : prio;
	if ((err = ult_setnice(NULL, prio)) != 0) {
		errno = err;
		return (-1);
	}
	return (0);
}

int
getpriority(__priority_which_t which, id_t who)
{
	static void *_Atomic slot;
	int nice = 0;

	ult__dropin_up();
	if (!is_self(which, who))
		return (((int (*)(__priority_which_t, id_t))ult__dropin_next(
		    "getpriority", &slot))(which, who));
	ult_getnice(NULL, &nice);
	return (nice);
}

int
nice(int inc)
{
	int n = getpriority(PRIO_PROCESS, 0) + inc;

	if (setpriority(PRIO_PROCESS, 0, n) != 0)
		return (-1);
	return (getpriority(PRIO_PROCESS, 0));
}

/* Names: kept per uthread, as Linux keeps them per thread (15 bytes). */

int
pthread_setname_np(pthread_t t, const char *name)
{
	struct dp_thread *dp = named(t);

	if (dp == NULL)
		return (ult__dropin_forked
			? ULT__DROPIN_LIBC(pthread_setname_np,
			      int (*)(pthread_t, const char *))(t, name)
			: ESRCH);
	if (strlen(name) >= sizeof(dp->name))
		return (ERANGE);
	strcpy(dp->name, name);
	return (0);
}

int
pthread_getname_np(pthread_t t, char *buf, size_t len)
{
	struct dp_thread *dp = named(t);

	if (dp == NULL)
		return (ult__dropin_forked
			? ULT__DROPIN_LIBC(pthread_getname_np,
			      int (*)(pthread_t, char *, size_t))(t, buf, len)
			: ESRCH);
	if (len < strlen(dp->name) + 1)
		return (ERANGE);
	strcpy(buf, dp->name);
	return (0);
}

int
pthread_getattr_np(pthread_t t, pthread_attr_t *a)
{
	struct dp_thread *dp = named(t);
	unsigned i = 0;
	int err;

	if (dp == NULL)
		return (ult__libc_pthread_getattr_np(t, a));
	ult__dropin_ut(dp);
	while (ULT_PLD_ACQ(&dp->desc) == NULL)
		ult__dropin_backoff(&i);
	/* The block's descriptor has the uthread's stack bounds. */
	if ((err = ult__libc_pthread_getattr_np((pthread_t)dp->desc, a)) != 0)
		return (err);
	pthread_attr_setdetachstate(a,
	    dp->detached ? PTHREAD_CREATE_DETACHED : PTHREAD_CREATE_JOINABLE);
	/* A stack of ult's has a guard below it (Rust's threads check that
	 * there is one); main's, like glibc's main, and the program's own
	 * stacks report none. */
	if (!dp->is_main && !dp->own_stack)
		pthread_attr_setguardsize(a, ult__dropin_stack_guard());
	if (dp->policy != SCHED_OTHER) {
		pthread_attr_setschedpolicy(a, dp->policy);
		pthread_attr_setschedparam(a, &dp->param);
	}
	return (0);
}

/*
 * Affinity: a mask of exactly one CPU binds the uthread to that worker
 * (worker i for CPU i), and the threads it then creates are bound there
 * too, as Linux's inherit the mask; any other mask unbinds it.  A bound
 * thread reads back its one CPU, any other the process's mask.
 */
static int
set_bound(struct dp_thread *dp, size_t size, const cpu_set_t *set)
{
	int cpu = -1;

	if (set == NULL)
		return (EFAULT);
	if (CPU_COUNT_S(size, set) == 1)
		for (int i = 0; i < ult_ncpu(); i++)
			if (CPU_ISSET_S((size_t)i, size, set))
				cpu = i;
	if (ult_bind(ult__dropin_ut(dp), cpu) != 0)
		return (EINVAL);
	dp->bound = cpu + 1;
	return (0);
}

static int
get_bound(struct dp_thread *dp, size_t size, cpu_set_t *set)
{
	if (set == NULL)
		return (EFAULT);
	if ((size_t)dp->bound > size * 8)
		return (EINVAL);
	CPU_ZERO_S(size, set);
	CPU_SET_S((size_t)dp->bound - 1, size, set);
	return (0);
}

int
pthread_setaffinity_np(pthread_t t, size_t size, const cpu_set_t *set)
{
	struct dp_thread *dp = named(t);

	if (dp == NULL)
		return (ESRCH);
	return (set_bound(dp, size, set));
}

int
pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *set)
{
	struct dp_thread *dp = named(t);

	if (dp == NULL)
		return (ESRCH);
	if (dp->bound > 0)
		return (get_bound(dp, size, set));
	return (ult__libc_sched_getaffinity(0, size, set) == 0 ? 0 : errno);
}

/* The caller's uthread record when pid names the calling thread, else
 * NULL: the kernel's call then. */
static struct dp_thread *
self_named(pid_t pid)
{
	struct dp_thread *me;

	ult__dropin_up();
	if ((me = ult__dropin_self()) == NULL)
		return (NULL);
	return (names_caller(pid) ? me : NULL);
}

int
sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	struct dp_thread *me = self_named(pid);
	int err;

	if (me == NULL)
		return (ult__libc_sched_setaffinity(pid, size, set));
	if ((err = set_bound(me, size, set)) != 0) {
		errno = err;
		return (-1);
	}
	return (0);
}

int
sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
	struct dp_thread *me = self_named(pid);
	int err;

	if (me == NULL || me->bound == 0)
		return (ult__libc_sched_getaffinity(pid, size, set));
	if ((err = get_bound(me, size, set)) != 0) {
		errno = err;
		return (-1);
	}
	return (0);
}

/* glibc's pthread_yield (which its header renames sched_yield, but
 * older binaries call by name) and thrd_yield make the system call. */
int ult__dropin_pthread_yield(void) __asm__("pthread_yield");
int
ult__dropin_pthread_yield(void)
{
	return (sched_yield());
}

void thrd_yield(void);
void
thrd_yield(void)
{
	sched_yield();
}
