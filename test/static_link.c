/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult in a static executable (suites "static" and "bare", each its own
 * binary linked with -static against libult.a).  There libc is part of
 * the program text, so preemption is off, and the lock wrappers replace
 * libc's own entry points: they must still reach libc's code, which
 * -Wl,-u,ult__static_libc links in ("static"), or say what to add to the
 * link ("bare", linked without it).
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_preempt_locks.h"
#include "test.h"
#include "ult.h"

static int
interp_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP)
			*(int *)data = 1;
	return (1); /* the program only */
}

static void
require_static(void)
{
	int dynamic = 0;

#ifdef ULT_TEST_NO_STATIC
	SKIP("no static link in this build (libc.a missing, or sanitizers)");
#endif
	dl_iterate_phdr(interp_cb, &dynamic);
	CHECK_EQ(dynamic, 0);
}

static void *
square(void *arg)
{
	intptr_t n = (intptr_t)arg;

	ult_yield();
	return ((void *)(n * n));
}

void
test_static_link(void)
{
	ult_thread_t *t[10];
	intptr_t sum = 0;
	long preempt;
	void *r;

	require_static();
	CHECK_EQ(ult_init(NULL), 0);
	CHECK_EQ(ult_sysctl("ult.preempt", &preempt, NULL), 0);
	CHECK(preempt <= 0);
	for (intptr_t i = 0; i < 10; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, square, (void *)i), 0);
	for (int i = 0; i < 10; i++) {
		CHECK_EQ(ult_join(t[i], &r), 0);
		sum += (intptr_t)r;
	}
	CHECK_EQ(sum, 285);
	lock_count_checks();
	CHECK_EQ(ult_shutdown(), 0);
}

/* Linked without -Wl,-u,ult__static_libc: a wrapper whose libc code is
 * missing names the flag and aborts, rather than calling nowhere. */
extern void __pthread_spin_trylock(void) __attribute__((weak));

void
test_static_missing_libc(void)
{
	char buf[512];
	size_t n = 0;
	ssize_t k;
	int fd[2], status;
	pid_t pid;

	require_static();
	if (__pthread_spin_trylock != NULL)
		SKIP("libc.a's spin lock code is linked in anyway");
	CHECK_EQ(pipe(fd), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		pthread_spinlock_t s;

		dup2(fd[1], STDERR_FILENO);
		pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
		pthread_spin_trylock(&s);
		_exit(0);
	}
	close(fd[1]);
	while (n < sizeof(buf) - 1 &&
	    (k = read(fd[0], buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)k;
	buf[n] = '\0';
	close(fd[0]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	fprintf(stderr, "child said: %s", buf);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	CHECK(strstr(buf, "pthread_spin_trylock") != NULL);
	CHECK(strstr(buf, "-Wl,-u,ult__static_libc") != NULL);
}
