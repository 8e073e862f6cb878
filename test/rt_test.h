/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers the runtime tests share: start the runtime with a worker count
 * and a preemption setting, snapshot a thread, run what should die in a
 * child and read its stderr, and whether asynchronous preemption can be
 * in force in this build.
 */
#ifndef ULT_TEST_RT_TEST_H
#define ULT_TEST_RT_TEST_H

#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "ult.h"

/* preempt: 0 the default, >0 on, <0 off (as ult_config.preempt). */
static inline void
rt_init(int ncpu, int preempt)
{
	struct ult_config cfg = {0};

	cfg.ncpu = ncpu;
	cfg.preempt = preempt;
	CHECK_EQ(ult_init(&cfg), 0);
}

static inline struct ult_thread_info
rt_info(ult_thread_t *t)
{
	struct ult_thread_info in;

	CHECK_EQ(ult_thread_info(t, &in), 0);
	return (in);
}

static inline void
rt_sysctl_set(const char *name, long v)
{
	CHECK_EQ(ult_sysctl(name, NULL, &v), 0);
}

static inline long
rt_sysctl_get(const char *name)
{
	long v;

	CHECK_EQ(ult_sysctl(name, &v, NULL), 0);
	return (v);
}

/* A uthread bound to cpu: one that checks errno after a sleep must not
 * migrate when TLS is per worker (sanitizer builds), where its &errno,
 * kept by the compiler, would name another worker's. */
static inline void
rt_spawn_on(ult_thread_t **t, int cpu, void *(*fn)(void *), void *arg)
{
	struct ult_attr a;

	ult_attr_init(&a);
	a.cpu = cpu;
	CHECK_EQ(ult_spawn(t, &a, fn, arg), 0);
}

/* Wait (from main, a foreign thread) until t is in state. */
static inline void
rt_wait_state(ult_thread_t *t, int state)
{
	for (int i = 0; rt_info(t).state != state; i++) {
		CHECK(i < 20000);
		usleep(500);
	}
}

/*
 * Run body(arg) in a child process, its stderr into buf (len bytes, NUL
 * terminated), and return the child's wait status: for what should kill
 * the process (the runtime aborts), or exits 0 if body returns.
 */
static inline int
rt_child_stderr(void (*body)(void *), void *arg, char *buf, size_t len)
{
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	CHECK_EQ(pipe(fds), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		body(arg);
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fds[0]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	return (status);
}

/* The sanitizer builds run without asynchronous preemption. */
static inline int
rt_preempt_available(void)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	return (0);
#else
	return (1);
#endif
}

#endif
