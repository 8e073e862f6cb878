/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Invariant checks in the style of FreeBSD's KASSERT and MPASS, compiled
 * in when ULT_INVARIANTS is defined (debug builds: the dev, asan-ubsan
 * and tsan presets) and to nothing otherwise, so the expressions may be
 * as expensive as a check needs.  A failure is reported by the host
 * (ult__assert_fail: the runtime names the uthread and worker, the
 * simulator its virtual CPU), which then aborts.
 */
#ifndef ULT_UTIL_KASSERT_H
#define ULT_UTIL_KASSERT_H

/* Provided by the host: print file:line, the function, the expression,
 * an optional message and who was running, then abort. */
void ult__assert_fail(const char *file, int line, const char *func,
    const char *expr, const char *msg) __attribute__((noreturn, cold));

#ifdef ULT_INVARIANTS
#define ULT_KASSERT(exp, msg)                                                \
	do {                                                                 \
		if (__builtin_expect(!(exp), 0))                             \
			ult__assert_fail(__FILE__, __LINE__, __func__, #exp, \
			    (msg));                                          \
	} while (0)
#else
/* Not evaluated, but its names count as used. */
#define ULT_KASSERT(exp, msg) ((void)sizeof(!(exp)), (void)sizeof(msg))
#endif

#define MPASS(exp) ULT_KASSERT(exp, (const char *)0)

#endif
