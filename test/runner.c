/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Test runner: `<binary> <test>` runs one test from test_list.h, `<binary>`
 * lists them.  Each binary holds the tests of one suite (ULT_SUITE).
 */
#include <stdio.h>
#include <string.h>

#include "test.h"

#define ULT_TEST_rt(name)
#define ULT_TEST_sim(name)
#define ULT_TEST_static(name)
#define ULT_TEST_bare(name)
#if defined(ULT_SUITE_RT)
#undef ULT_TEST_rt
#define ULT_TEST_rt(name) {#name, test_##name},
#elif defined(ULT_SUITE_STATIC)
#undef ULT_TEST_static
#define ULT_TEST_static(name) {#name, test_##name},
#elif defined(ULT_SUITE_BARE)
#undef ULT_TEST_bare
#define ULT_TEST_bare(name) {#name, test_##name},
#else
#undef ULT_TEST_sim
#define ULT_TEST_sim(name) {#name, test_##name},
#endif
#define ULT_TEST(name, suite, timeout, labels) ULT_TEST_##suite(name)

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
#include "test_list.h"
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
	if (argc < 2) {
		for (int i = 0; tests[i].name != NULL; i++)
			printf("%s\n", tests[i].name);
		return (0);
	}
	for (int i = 0; tests[i].name != NULL; i++) {
		if (strcmp(tests[i].name, argv[1]) == 0) {
			tests[i].fn();
			printf("ok %s\n", argv[1]);
			return (0);
		}
	}
	fprintf(stderr, "no test named %s\n", argv[1]);
	return (2);
}
