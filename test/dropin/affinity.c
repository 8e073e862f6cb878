/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CPU affinity of the calling thread: sched_setaffinity(0) to one CPU
 * reads back that CPU, the threads created afterwards inherit it (as
 * Linux's inherit the mask), and on that one CPU a SCHED_FIFO thread
 * created ten priorities above its creator runs, yielding, until it
 * ends before the creator goes on (priorities closer than that may share
 * one of ULE's run queues: DESIGN.md section 14).  The ordering part
 * needs realtime privilege; without it the program says so, the same way
 * in every run.
 */
#include "conf.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

#define YIELDS 2000

struct inherit {
	int rc, count, cpu0;
	int np_rc, np_count;
};

static void *
inherited(void *arg)
{
	struct inherit *s = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	s->rc = sched_getaffinity(0, sizeof(set), &set) == 0 ? 0 : errno;
	s->count = CPU_COUNT(&set);
	s->cpu0 = CPU_ISSET(0, &set);
	CPU_ZERO(&set);
	s->np_rc = pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
	s->np_count = CPU_COUNT(&set);
	return (NULL);
}

static atomic_int creator_resumed, higher_done, higher_saw_creator;

static void *
higher(void *arg)
{
	for (int i = 0; i < YIELDS; i++) {
		if (atomic_load(&creator_resumed))
			atomic_store(&higher_saw_creator, 1);
		sched_yield();
	}
	atomic_store(&higher_done, 1);
	return (arg);
}

static int
fifo_attr(pthread_attr_t *a, int prio)
{
	struct sched_param sp = {.sched_priority = prio};

	pthread_attr_init(a);
	pthread_attr_setinheritsched(a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(a, SCHED_FIFO);
	return (pthread_attr_setschedparam(a, &sp));
}

struct order {
	int prio;
	int create_rc, done_first, never_saw;
};

/* Runs at SCHED_FIFO prio: makes a thread at prio + 10 on the same CPU. */
static void *
creator(void *arg)
{
	struct order *o = arg;
	pthread_attr_t a;
	pthread_t t;

	atomic_store(&creator_resumed, 0);
	atomic_store(&higher_done, 0);
	atomic_store(&higher_saw_creator, 0);
	fifo_attr(&a, o->prio + 10);
	o->create_rc = pthread_create(&t, &a, higher, NULL);
	atomic_store(&creator_resumed, 1);
	o->done_first = atomic_load(&higher_done);
	if (o->create_rc == 0)
		pthread_join(t, NULL);
	o->never_saw = !atomic_load(&higher_saw_creator);
	pthread_attr_destroy(&a);
	return (NULL);
}

static void
order(const char *what, int prio)
{
	struct order o = {.prio = prio};
	pthread_attr_t a;
	pthread_t t;
	char line[96];

	fifo_attr(&a, prio);
	snprintf(line, sizeof(line), "%s: create the creator", what);
	conf_err(line, pthread_create(&t, &a, creator, &o), 0);
	pthread_join(t, NULL);
	pthread_attr_destroy(&a);
	snprintf(line, sizeof(line), "%s: create ten above", what);
	conf_err(line, o.create_rc, 0);
	snprintf(line, sizeof(line), "%s: it ended before the creator went on",
	    what);
	conf_ok(line, o.done_first && o.never_saw);
}

static int
realtime_allowed(void)
{
	struct rlimit rl;

	return (geteuid() == 0 ||
	    (getrlimit(RLIMIT_RTPRIO, &rl) == 0 && rl.rlim_cur >= 99));
}

int
main(void)
{
	struct inherit s;
	cpu_set_t set;
	pthread_t t;
	int lo = sched_get_priority_min(SCHED_FIFO),
	    hi = sched_get_priority_max(SCHED_FIFO);

	conf_begin("affinity");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	conf_err("sched_setaffinity(0, {0})",
	    conf_rc_errno(sched_setaffinity(0, sizeof(set), &set)), 0);
	CPU_ZERO(&set);
	conf_err("sched_getaffinity(0)",
	    conf_rc_errno(sched_getaffinity(0, sizeof(set), &set)), 0);
	conf_long("CPUs read back", CPU_COUNT(&set), 1);
	conf_ok("the one is CPU 0", CPU_ISSET(0, &set));
	conf_err("sched_setaffinity(0, NULL)",
	    conf_rc_errno(sched_setaffinity(0, sizeof(set), NULL)), EFAULT);

	memset(&s, 0, sizeof(s));
	conf_err("create", pthread_create(&t, NULL, inherited, &s), 0);
	pthread_join(t, NULL);
	conf_err("a new thread's sched_getaffinity", s.rc, 0);
	conf_long("its CPUs", s.count, 1);
	conf_ok("its one is CPU 0", s.cpu0);
	conf_err("its pthread_getaffinity_np", s.np_rc, 0);
	conf_long("its CPUs, by pthread_getaffinity_np", s.np_count, 1);

	if (!realtime_allowed()) {
		printf("affinity: ordering skipped: no realtime privilege\n");
		return (conf_end());
	}
	order("10", lo + 9);
	order("max - 10", hi - 10);
	return (conf_end());
}
