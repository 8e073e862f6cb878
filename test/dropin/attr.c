/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Thread attributes: stack size (on the attr and as the thread sees it
 * through pthread_getattr_np, and really usable), a stack supplied by
 * the program, detach state (on the attr and in the thread), scheduling
 * policy, inheritance and parameters on attr objects, scope, guard size;
 * thread names and the running thread's scheduling parameters; the guard
 * a thread's stack reports (one below a stack the library made, as Rust's
 * std checks; none for a stack of the program's or for main), and that
 * the stack reported holds the thread's locals.
 */
#include "conf.h"

#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>

#define BIG_STACK (4u << 20)
#define SMALL_STACK (256u << 10)

struct seen {
	size_t stacksize;
	size_t guard;
	uintptr_t lo, hi; /* the stack getattr_np reports */
	int detachstate;
	int getattr_rc;
	int used_ok;
	uintptr_t local;
	int policy;
	int getsched_rc;
	char name[32];
	int setname_rc, getname_rc, long_name_rc;
	struct conf_step done;
};

/* Touch most of a large stack frame, so that a short stack faults. */
static __attribute__((noinline)) int
use_stack(size_t bytes)
{
	volatile char *p = __builtin_alloca(bytes);
	size_t i;
	int sum = 0;

	for (i = 0; i < bytes; i += 512)
		p[i] = (char)i;
	for (i = 0; i < bytes; i += 512)
		sum += p[i] == (char)i;
	return (sum == (int)((bytes + 511) / 512));
}

static void *
inspect(void *arg)
{
	struct seen *s = arg;
	struct sched_param sp;
	pthread_attr_t a;
	int local;

	s->local = (uintptr_t)&local;
	s->getattr_rc = pthread_getattr_np(pthread_self(), &a);
	if (s->getattr_rc == 0) {
		void *lo = NULL;
		size_t len = 0;

		pthread_attr_getstacksize(&a, &s->stacksize);
		pthread_attr_getdetachstate(&a, &s->detachstate);
		pthread_attr_getguardsize(&a, &s->guard);
		if (pthread_attr_getstack(&a, &lo, &len) == 0) {
			s->lo = (uintptr_t)lo;
			s->hi = (uintptr_t)lo + len;
		}
		pthread_attr_destroy(&a);
	}
	if (s->stacksize >= BIG_STACK)
		s->used_ok = use_stack(BIG_STACK - (512u << 10));
	s->getsched_rc = pthread_getschedparam(pthread_self(), &s->policy, &sp);
	s->setname_rc = pthread_setname_np(pthread_self(), "conf-worker");
	s->getname_rc =
	    pthread_getname_np(pthread_self(), s->name, sizeof(s->name));
	s->long_name_rc =
	    pthread_setname_np(pthread_self(), "a-name-longer-than-fifteen");
	conf_step_set(&s->done, 1);
	return (NULL);
}

static void
check_stacksize(void)
{
	pthread_attr_t a;
	struct seen s;
	pthread_t t;
	size_t sz = 0;

	conf_must("attr_init", pthread_attr_init(&a));
	conf_ok("default stacksize > 0",
	    pthread_attr_getstacksize(&a, &sz) == 0 && sz > 0);
	conf_err("setstacksize PTHREAD_STACK_MIN - 1",
	    pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN - 1), EINVAL);
	conf_err("setstacksize 4 MiB", pthread_attr_setstacksize(&a, BIG_STACK),
	    0);
	conf_ok("getstacksize 4 MiB",
	    pthread_attr_getstacksize(&a, &sz) == 0 && sz == BIG_STACK);

	memset(&s, 0, sizeof(s));
	s.done = (struct conf_step)CONF_STEP_INIT;
	conf_create(&t, &a, inspect, &s);
	conf_join(t);
	conf_err("pthread_getattr_np in the thread", s.getattr_rc, 0);
	conf_ok("its stacksize >= requested 4 MiB", s.stacksize >= BIG_STACK);
	conf_ok("3.5 MiB of that stack used", s.used_ok);
	conf_ok("its detachstate JOINABLE",
	    s.detachstate == PTHREAD_CREATE_JOINABLE);
	conf_err("pthread_getschedparam in the thread", s.getsched_rc, 0);
	conf_ok("its policy SCHED_OTHER (inherited)", s.policy == SCHED_OTHER);
	conf_err("pthread_setname_np", s.setname_rc, 0);
	conf_err("pthread_getname_np", s.getname_rc, 0);
	conf_str("its name", s.name, "conf-worker");
	conf_err("pthread_setname_np with 26 characters", s.long_name_rc,
	    ERANGE);

	conf_err("setstacksize 256 KiB",
	    pthread_attr_setstacksize(&a, SMALL_STACK), 0);
	memset(&s, 0, sizeof(s));
	s.done = (struct conf_step)CONF_STEP_INIT;
	conf_create(&t, &a, inspect, &s);
	conf_join(t);
	conf_ok("256 KiB thread: stacksize >= requested",
	    s.getattr_rc == 0 && s.stacksize >= SMALL_STACK);
	pthread_attr_destroy(&a);
}

/*
 * A stack the program allocates itself: the thread runs on it (a local
 * variable lies inside), and pthread_getattr_np in the thread gives it
 * back; it is used twice, one thread after the other.
 */
static void
check_own_stack(void)
{
	size_t len = 1u << 20;
	pthread_attr_t a;
	struct seen s;
	pthread_t t;
	void *stk, *got = NULL;
	size_t gotlen = 0;

	stk = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stk == MAP_FAILED)
		conf_must("mmap", errno);
	conf_must("attr_init", pthread_attr_init(&a));
	conf_err("setstack", pthread_attr_setstack(&a, stk, len), 0);
	conf_ok("getstack gives it back",
	    pthread_attr_getstack(&a, &got, &gotlen) == 0 && got == stk &&
		gotlen == len);
	for (int round = 0; round < 2; round++) {
		memset(&s, 0, sizeof(s));
		s.done = (struct conf_step)CONF_STEP_INIT;
		conf_create(&t, &a, inspect, &s);
		conf_join(t);
		conf_ok("a thread with a supplied stack runs on it",
		    s.local >= (uintptr_t)stk &&
			s.local < (uintptr_t)stk + len);
		conf_ok("getattr_np in it: stacksize of the supplied stack",
		    s.getattr_rc == 0 && s.stacksize == len);
		conf_long("getattr_np in it: guard size", (long)s.guard, 0);
	}
	pthread_attr_destroy(&a);
	munmap(stk, len);
}

static void
check_detachstate(void)
{
	/* Static: the detached thread may still be unlocking s.done. */
	static struct seen s;
	pthread_attr_t a;
	pthread_t t;
	int v = -1;

	conf_must("attr_init", pthread_attr_init(&a));
	conf_ok("default detachstate JOINABLE",
	    pthread_attr_getdetachstate(&a, &v) == 0 &&
		v == PTHREAD_CREATE_JOINABLE);
	conf_err("setdetachstate DETACHED",
	    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED), 0);
	conf_ok("getdetachstate DETACHED",
	    pthread_attr_getdetachstate(&a, &v) == 0 &&
		v == PTHREAD_CREATE_DETACHED);
	conf_err("setdetachstate 12345", pthread_attr_setdetachstate(&a, 12345),
	    EINVAL);
	memset(&s, 0, sizeof(s));
	s.done = (struct conf_step)CONF_STEP_INIT;
	conf_create(&t, &a, inspect, &s);
	/* Detached: not joined; it tells when it has looked. */
	conf_step_wait(&s.done, 1);
	conf_err("detached thread: pthread_getattr_np", s.getattr_rc, 0);
	conf_ok("detached thread sees detachstate DETACHED",
	    s.detachstate == PTHREAD_CREATE_DETACHED);
	pthread_attr_destroy(&a);
}

static void
check_sched_attrs(void)
{
	struct sched_param sp = {0};
	pthread_attr_t a;
	int v = -1, errs = 0;
	int policies[] = {SCHED_FIFO, SCHED_RR, SCHED_OTHER};
	size_t i, g = 0;

	conf_must("attr_init", pthread_attr_init(&a));
	conf_ok("default inheritsched INHERIT",
	    pthread_attr_getinheritsched(&a, &v) == 0 &&
		v == PTHREAD_INHERIT_SCHED);
	conf_err("setinheritsched EXPLICIT",
	    pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
	conf_ok("getinheritsched EXPLICIT",
	    pthread_attr_getinheritsched(&a, &v) == 0 &&
		v == PTHREAD_EXPLICIT_SCHED);
	conf_err("setinheritsched 12345",
	    pthread_attr_setinheritsched(&a, 12345), EINVAL);
	conf_ok("default schedpolicy SCHED_OTHER",
	    pthread_attr_getschedpolicy(&a, &v) == 0 && v == SCHED_OTHER);
	for (i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		if (pthread_attr_setschedpolicy(&a, policies[i]) != 0 ||
		    pthread_attr_getschedpolicy(&a, &v) != 0 ||
		    v != policies[i])
			errs++;
	}
	conf_long("schedpolicy FIFO/RR/OTHER set and get: errors", errs, 0);
	conf_err("setschedpolicy 12345", pthread_attr_setschedpolicy(&a, 12345),
	    EINVAL);
	sp.sched_priority = 0;
	conf_err("setschedparam priority 0",
	    pthread_attr_setschedparam(&a, &sp), 0);
	sp.sched_priority = -1;
	conf_ok("getschedparam priority 0",
	    pthread_attr_getschedparam(&a, &sp) == 0 && sp.sched_priority == 0);
	conf_err("setscope SYSTEM",
	    pthread_attr_setscope(&a, PTHREAD_SCOPE_SYSTEM), 0);
	conf_err("setscope PROCESS",
	    pthread_attr_setscope(&a, PTHREAD_SCOPE_PROCESS), ENOTSUP);
	conf_ok("getscope SYSTEM",
	    pthread_attr_getscope(&a, &v) == 0 && v == PTHREAD_SCOPE_SYSTEM);
	conf_err("setguardsize 64 KiB", pthread_attr_setguardsize(&a, 65536),
	    0);
	conf_ok("getguardsize 64 KiB",
	    pthread_attr_getguardsize(&a, &g) == 0 && g == 65536);
	conf_err("attr_destroy", pthread_attr_destroy(&a), 0);
}

/* Threads created from one attr object with inherit, the default. */
static void *
nothing(void *arg)
{
	return (arg);
}

static void
check_create_with_attrs(void)
{
	pthread_attr_t a;
	pthread_t t[16];
	int i, ok = 0;

	conf_must("attr_init", pthread_attr_init(&a));
	conf_must("setstacksize", pthread_attr_setstacksize(&a, SMALL_STACK));
	conf_must("setguardsize", pthread_attr_setguardsize(&a, 8192));
	for (i = 0; i < 16; i++)
		conf_create(&t[i], &a, nothing, &t[i]);
	for (i = 0; i < 16; i++)
		ok += conf_join(t[i]) == &t[i];
	conf_long("16 threads from one attr object: joined", ok, 16);
	pthread_attr_destroy(&a);
}

static void
check_guard(void)
{
	struct seen s;
	pthread_t t;

	memset(&s, 0, sizeof(s));
	s.done = (struct conf_step)CONF_STEP_INIT;
	conf_create(&t, NULL, inspect, &s);
	conf_join(t);
	conf_ok("getattr_np in a thread: a guard page reported",
	    s.getattr_rc == 0 && s.guard > 0);
	conf_ok("getattr_np in a thread: its stack holds its locals",
	    s.local >= s.lo && s.local < s.hi);
}

static void
check_main(void)
{
	pthread_attr_t a;
	void *lo = NULL;
	size_t len = 0, guard = 1;
	size_t sz = 0;
	int policy = -1;
	struct sched_param sp;

	conf_err("pthread_getattr_np on main",
	    pthread_getattr_np(pthread_self(), &a), 0);
	conf_ok("main's stacksize > 0",
	    pthread_attr_getstacksize(&a, &sz) == 0 && sz > 0);
	conf_ok("main's stack holds its locals",
	    pthread_attr_getstack(&a, &lo, &len) == 0 &&
		(uintptr_t)&a >= (uintptr_t)lo &&
		(uintptr_t)&a < (uintptr_t)lo + len);
	/* glibc reports none for main: the kernel grows it. */
	conf_ok("main's guard size 0",
	    pthread_attr_getguardsize(&a, &guard) == 0 && guard == 0);
	pthread_attr_destroy(&a);
	conf_err("pthread_getschedparam on main",
	    pthread_getschedparam(pthread_self(), &policy, &sp), 0);
	conf_ok("main's policy SCHED_OTHER", policy == SCHED_OTHER);
}

int
main(void)
{
	conf_begin("attr");
	check_main();
	check_sched_attrs();
	check_stacksize();
	check_detachstate();
	check_create_with_attrs();
	check_own_stack();
	check_guard();
	return (conf_end());
}
