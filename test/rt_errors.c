/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bad input gets its documented error, never a crash; calls before
 * ult_init say ENXIO; a stack overflow is reported by name.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_test.h"
#include "test.h"
#include "ult.h"

static void *
noop(void *arg)
{
	return (arg);
}

static void *
sleep_ms(void *arg)
{
	ult_sleep_ns((uint64_t)(uintptr_t)arg * 1000000);
	return (NULL);
}

static void *
join_self(void *arg)
{
	(void)arg;
	return ((void *)(intptr_t)ult_join(ult_self(), NULL));
}

static void *
shutdown_inside(void *arg)
{
	(void)arg;
	return ((void *)(intptr_t)ult_shutdown());
}

static void *
second_joiner(void *arg)
{
	return ((void *)(intptr_t)ult_join(arg, NULL));
}

void
test_bad_input(void)
{
	struct ult_config cfg = {0};
	struct ult_attr a;
	struct ult_thread_info in;
	struct ult_cpu_info ci;
	ult_thread_t *t, *u;
	void *r;
	int nice;

	cfg.ncpu = -1;
	CHECK_EQ(ult_init(&cfg), EINVAL);
	cfg.ncpu = ULT_MAXCPU + 1;
	CHECK_EQ(ult_init(&cfg), EINVAL);
	cfg.ncpu = 2;
	cfg.stack_size = 4096;
	CHECK_EQ(ult_init(&cfg), EINVAL);
	cfg.stack_size = 0;
	cfg.policy = "cfs";
	CHECK_EQ(ult_init(&cfg), EINVAL);
	cfg.policy = NULL;
	setenv("ULT_NCPU", "two", 1);
	CHECK_EQ(ult_init(NULL), EINVAL);
	setenv("ULT_NCPU", "2", 1);
	CHECK_EQ(ult_init(NULL), 0);
	unsetenv("ULT_NCPU");
	CHECK_EQ(ult_ncpu(), 2);

	/* spawn */
	ult_attr_init(&a);
	CHECK_EQ(ult_spawn(&t, NULL, NULL, NULL), EINVAL);
	CHECK_EQ(ult_spawn(NULL, NULL, noop, NULL), EINVAL);
	CHECK_EQ(ult_spawn(NULL, &a, noop, NULL), EINVAL);
	a.nice = 21;
	CHECK_EQ(ult_spawn(&t, &a, noop, NULL), EINVAL);
	a.nice = -21;
	CHECK_EQ(ult_spawn(&t, &a, noop, NULL), EINVAL);
	a.nice = 0;
	a.cpu = 2;
	CHECK_EQ(ult_spawn(&t, &a, noop, NULL), EINVAL);
	a.cpu = -2;
	CHECK_EQ(ult_spawn(&t, &a, noop, NULL), EINVAL);
	a.cpu = -1;
	a.stack_size = 100;
	CHECK_EQ(ult_spawn(&t, &a, noop, NULL), EINVAL);
	ult_attr_init(NULL); /* harmless */

	/* join and detach */
	CHECK_EQ(ult_join(NULL, &r), EINVAL);
	CHECK_EQ(ult_detach(NULL), EINVAL);
	CHECK_EQ(ult_spawn(&t, NULL, noop, (void *)7), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ((intptr_t)r, 7);
	CHECK_EQ(ult_join(t, &r), ESRCH); /* joined twice */
	CHECK_EQ(ult_detach(t), ESRCH);
	CHECK_EQ(ult_spawn(&t, NULL, join_self, NULL), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ((intptr_t)r, EDEADLK);
	CHECK_EQ(ult_spawn(&t, NULL, sleep_ms, (void *)(uintptr_t)200), 0);
	CHECK_EQ(ult_spawn(&u, NULL, second_joiner, t), 0);
	ult_sleep_ns(50000000); /* u is now waiting in ult_join(t) */
	CHECK_EQ(ult_join(t, NULL), EINVAL); /* already being joined */
	CHECK_EQ(ult_detach(t), EINVAL);
	CHECK_EQ(ult_join(u, &r), 0);
	CHECK_EQ((intptr_t)r, 0);
	CHECK_EQ(ult_spawn(&t, NULL, sleep_ms, (void *)(uintptr_t)10), 0);
	CHECK_EQ(ult_detach(t), 0);
	CHECK_EQ(ult_detach(t), EINVAL);
	CHECK_EQ(ult_join(t, NULL), EINVAL); /* join of a detached thread */

	/* nice, bind, info */
	CHECK_EQ(ult_setnice(NULL, 0), EINVAL); /* not a uthread */
	CHECK_EQ(ult_getnice(NULL, &nice), EINVAL);
	CHECK_EQ(ult_spawn(&t, NULL, sleep_ms, (void *)(uintptr_t)50), 0);
	CHECK_EQ(ult_setnice(t, 21), EINVAL);
	CHECK_EQ(ult_setnice(t, -21), EINVAL);
	CHECK_EQ(ult_getnice(t, NULL), EINVAL);
	CHECK_EQ(ult_bind(t, 2), EINVAL);
	CHECK_EQ(ult_bind(t, -2), EINVAL);
	CHECK_EQ(ult_bind(NULL, 0), EINVAL);
	CHECK_EQ(ult_thread_info(t, NULL), EINVAL);
	CHECK_EQ(ult_thread_info(NULL, &in), EINVAL);
	CHECK_EQ(ult_cpu_info(-1, &ci), EINVAL);
	CHECK_EQ(ult_cpu_info(2, &ci), EINVAL);
	CHECK_EQ(ult_cpu_info(0, NULL), EINVAL);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_setnice(t, 1), ESRCH);
	CHECK_EQ(ult_bind(t, 0), ESRCH);
	CHECK_EQ(ult_thread_info(t, &in), ESRCH);

	/* shutdown from a uthread; double init */
	CHECK_EQ(ult_spawn(&t, NULL, shutdown_inside, NULL), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ((intptr_t)r, EDEADLK);
	CHECK_EQ(ult_init(NULL), EBUSY);
	CHECK_EQ(ult_shutdown(), 0);
}

void
test_calls_before_init(void)
{
	struct ult_thread_info in;
	struct ult_cpu_info ci;
	ult_thread_t *t = NULL;
	long v;
	int nice;
	uint64_t d;

	CHECK_EQ(ult_spawn(&t, NULL, noop, NULL), ENXIO);
	CHECK_EQ(ult_join((ult_thread_t *)&v, NULL), ENXIO);
	CHECK_EQ(ult_detach((ult_thread_t *)&v), ENXIO);
	CHECK_EQ(ult_setnice(NULL, 0), ENXIO);
	CHECK_EQ(ult_getnice(NULL, &nice), ENXIO);
	CHECK_EQ(ult_bind(NULL, 0), ENXIO);
	CHECK_EQ(ult_thread_info(NULL, &in), ENXIO);
	CHECK_EQ(ult_cpu_info(0, &ci), ENXIO);
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, NULL), ENXIO);
	CHECK_EQ(ult_shutdown(), ENXIO);
	CHECK(ult_self() == NULL);
	CHECK_EQ(ult_cpu(), -1);
	CHECK_EQ(ult_ncpu(), 0);
	/* These work without a runtime, as their pthread equivalents. */
	ult_yield();
	d = ult_now() + 1000000;
	CHECK_EQ(ult_sleep_until(d), 0);
	CHECK(ult_now() >= d);
	/* And again after a shutdown. */
	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
	CHECK_EQ(ult_spawn(&t, NULL, noop, NULL), ENXIO);
	CHECK_EQ(ult_sysctl("kern.sched.slice", &v, NULL), ENXIO);
}

static int recurse(int n);
static int (*volatile recurse_p)(int) = recurse;

/* Endless on purpose (through a pointer, so the compiler lets it be). */
static int
recurse(int n)
{
	volatile char pad[512];

	pad[0] = (char)n;
	return (recurse_p(n + 1) + pad[0]);
}

static void *
overflow(void *arg)
{
	(void)arg;
	return ((void *)(intptr_t)recurse(0));
}

/*
 * A uthread sets up an alternate signal stack and disables it again, as a
 * library guarding itself does: it sees its own setting, the worker keeps
 * the stack the overflow report runs on.
 */
static char alt_buf[64 * 1024];

static void *
altstack_user(void *arg)
{
	stack_t ss = {.ss_sp = alt_buf, .ss_size = sizeof(alt_buf)}, o, k;

	(void)arg;
	CHECK_EQ(sigaltstack(NULL, &o), 0);
	CHECK(o.ss_flags & SS_DISABLE);
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	CHECK_EQ(sigaltstack(NULL, &o), 0);
	CHECK(o.ss_sp == alt_buf && o.ss_size == sizeof(alt_buf));
	CHECK_EQ(o.ss_flags, 0);
	ss.ss_flags = SS_DISABLE;
	CHECK_EQ(sigaltstack(&ss, &o), 0);
	CHECK(o.ss_sp == alt_buf);
	CHECK_EQ(sigaltstack(NULL, &o), 0);
	CHECK(o.ss_flags & SS_DISABLE);
	ss.ss_flags = 0;
	ss.ss_size = 1;
	errno = 0;
	CHECK_EQ(sigaltstack(&ss, NULL), -1);
	CHECK_EQ(errno, ENOMEM);
	/* The kernel's, the worker's: neither disabled nor the uthread's. */
	CHECK_EQ(syscall(SYS_sigaltstack, NULL, &k), 0);
	CHECK(!(k.ss_flags & SS_DISABLE) && k.ss_sp != NULL &&
	    k.ss_sp != alt_buf);
	return (NULL);
}

/*
 * A uthread that runs off its stack dies with a message naming it; run in
 * a child process, since the runtime aborts.  with_altstack: after a
 * uthread of the same worker set up and disabled an alternate stack.
 */
static void
overflow_child(void *arg)
{
	int with_altstack = (int)(intptr_t)arg;
	struct ult_config c = {.ncpu = 1};
	struct ult_attr a;
	ult_thread_t *t;

	CHECK_EQ(ult_init(with_altstack ? &c : NULL), 0);
	if (with_altstack) {
		CHECK_EQ(ult_spawn(&t, NULL, altstack_user, NULL), 0);
		CHECK_EQ(ult_join(t, NULL), 0);
	}
	ult_attr_init(&a);
	a.name = "deep";
	a.stack_size = 64 * 1024;
	CHECK_EQ(ult_spawn(&t, &a, overflow, NULL), 0);
	ult_join(t, NULL); /* not reached */
}

static void
stack_overflow(int with_altstack)
{
	char buf[512];
	int status = rt_child_stderr(overflow_child,
	    (void *)(intptr_t)with_altstack, buf, sizeof(buf));

	CHECK(WIFSIGNALED(status));
	CHECK_EQ(WTERMSIG(status), SIGABRT);
	if (strstr(buf, "ult: stack overflow in uthread deep (") == NULL) {
		fprintf(stderr, "child said: %s\n", buf);
		CHECK(0);
	}
}

void
test_stack_overflow(void)
{
	stack_overflow(0);
}

void
test_stack_overflow_altstack(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	SKIP("the sanitizers keep sigaltstack to themselves");
#endif
	stack_overflow(1);
}
