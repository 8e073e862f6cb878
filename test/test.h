/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The tiny assertion kit every test uses.  A failed CHECK prints where and
 * exits 1; SKIP exits 77, which CTest reports as skipped.
 */
#ifndef ULT_TEST_H
#define ULT_TEST_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, \
			    __LINE__, #c);                                     \
			exit(1);                                               \
		}                                                              \
	} while (0)

#define CHECK_EQ(a, b)                                                  \
	do {                                                            \
		long long a_ = (long long)(a), b_ = (long long)(b);     \
		if (a_ != b_) {                                         \
			fprintf(stderr,                                 \
			    "%s:%d: %s == %lld, expected %s == %lld\n", \
			    __FILE__, __LINE__, #a, a_, #b, b_);        \
			exit(1);                                        \
		}                                                       \
	} while (0)

#define SKIP(why)                                      \
	do {                                           \
		fprintf(stderr, "skipped: %s\n", why); \
		exit(77);                              \
	} while (0)

/* A cross build's tests run under qemu-user (test/CMakeLists.txt sets
 * ULT_TEST_EMULATOR): what the emulator cannot show is skipped, with the
 * reason. */
#define SKIP_EMULATED(why)                               \
	do {                                             \
		if (getenv("ULT_TEST_EMULATOR") != NULL) \
			SKIP("under qemu-user, " why);   \
	} while (0)

/*
 * errno through a fresh lookup.  The compiler may keep &errno (a TLS
 * address) in a register across a call; a uthread that migrated during
 * the call would then read its old worker's errno.  With per-worker TLS
 * the runtime saves and restores errno per uthread, which these helpers
 * observe; plain `errno' is then only reliable across switches for
 * threads that cannot migrate (DESIGN.md section 10.2).  With per-uthread
 * TLS, the default, plain errno is (the tls_* tests use it).
 */
#if defined(__GNUC__) && !defined(__clang__)
#define TEST_NOIPA __attribute__((noipa, unused))
#else
#define TEST_NOIPA __attribute__((noinline, unused))
#endif

#include <errno.h>

TEST_NOIPA static int
errno_get(void)
{
	return (errno);
}

TEST_NOIPA static void
errno_set(int e)
{
	errno = e;
}

/*
 * Work sizes shrink under the sanitizers, which slow contended code by
 * 10-50x, and under qemu-user (ULT_TEST_SCALE, set for a cross build's
 * tests); the checks stay the same.
 */
#if defined(ULT_TEST_SCALE)
#define TEST_SCALE ULT_TEST_SCALE
#elif defined(__SANITIZE_THREAD__)
#define TEST_SCALE 20
#elif defined(__SANITIZE_ADDRESS__)
#define TEST_SCALE 5
#else
#define TEST_SCALE 1
#endif

/* Deterministic per-test random numbers (xorshift). */
static inline unsigned
test_rand(unsigned *s)
{
	unsigned x = *s ? *s : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return (*s = x);
}

/* Every test's prototype (the runner calls them through its table). */
#define ULT_TEST(name, suite, timeout, labels) void test_##name(void);
#include "test_list.h"
#undef ULT_TEST

#endif
