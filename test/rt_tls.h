/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the per-uthread TLS tests share (rt_tls.c, rt_tls_kernel.c,
 * rt_tls_cxx.cpp): start the runtime with ult.chaos_migrate on, and skip,
 * saying why, where per-uthread TLS is not in force.  With ULT_TLS=worker
 * asked for explicitly they run anyway, to show what breaks without it.
 */
#ifndef ULT_TEST_RT_TLS_H
#define ULT_TEST_RT_TLS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt_test.h"

static inline int
tls_worker_asked(void)
{
	const char *s = getenv("ULT_TLS");

	return (s != NULL && strcmp(s, "worker") == 0);
}

static inline const char *
tls_off_reason(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return ("per-uthread TLS is off in sanitizer builds");
#elif !defined(ULT_CONTEXT_ASM)
	return ("per-uthread TLS is off with the ucontext backend");
#else
	return ("per-uthread TLS is off here (ult_init said why)");
#endif
}

/* 1 if per-uthread TLS is in force in the running runtime. */
static inline int
tls_on(void)
{
	long v = 0;

	CHECK_EQ(ult_sysctl("ult.tls", &v, NULL), 0);
	return (v != 0);
}

static inline void
tls_begin(int ncpu)
{
	long one = 1;

	rt_init(ncpu, 0);
	if (!tls_on() && !tls_worker_asked()) {
		CHECK_EQ(ult_shutdown(), 0);
		SKIP(tls_off_reason());
	}
	CHECK_EQ(ult_sysctl("ult.chaos_migrate", NULL, &one), 0);
}

/* n uthreads, the i-th running body((void *)i), all spawned, then all
 * joined. */
static inline void
tls_spawn_join(int n, void *(*body)(void *))
{
	ult_thread_t *t[64];

	CHECK(n <= 64);
	for (intptr_t i = 0; i < n; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, body, (void *)i), 0);
	for (int i = 0; i < n; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
}

static inline void
tls_end(void)
{
	CHECK_EQ(ult_shutdown(), 0);
}

#endif
