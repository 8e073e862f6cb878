/*
 * Test runner: `<binary> <test>` runs one test from test_list.h, `<binary>`
 * lists them.  Each binary holds the tests of one suite (ULT_SUITE).
 *
 * A runtime test that is still running at nine tenths of its CTest
 * timeout writes the runtime's hang report to stderr and aborts, so that
 * a hang in CI leaves more behind than "Timeout".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ULT_TEST_rt(name, t) void test_##name(void);
#define ULT_TEST_sim(name, t) void test_##name(void);
#define ULT_TEST_static(name, t) void test_##name(void);
#define ULT_TEST_bare(name, t) void test_##name(void);
#define ULT_TEST(name, suite, timeout, labels) ULT_TEST_##suite(name, timeout)
#include "test_list.h"
#undef ULT_TEST_rt
#undef ULT_TEST_sim
#undef ULT_TEST_static
#undef ULT_TEST_bare

#define ULT_TEST_rt(name, t)
#define ULT_TEST_sim(name, t)
#define ULT_TEST_static(name, t)
#define ULT_TEST_bare(name, t)
#if defined(ULT_SUITE_RT)
#undef ULT_TEST_rt
#define ULT_TEST_rt(name, t) {#name, test_##name, t},
#elif defined(ULT_SUITE_STATIC)
#undef ULT_TEST_static
#define ULT_TEST_static(name, t) {#name, test_##name, t},
#elif defined(ULT_SUITE_BARE)
#undef ULT_TEST_bare
#define ULT_TEST_bare(name, t) {#name, test_##name, t},
#else
#undef ULT_TEST_sim
#define ULT_TEST_sim(name, t) {#name, test_##name, t},
#endif

static const struct {
	const char *name;
	void (*fn)(void);
	int timeout; /* seconds, as CTest has it */
} tests[] = {
#include "test_list.h"
    {NULL, NULL, 0},
};

#if defined(ULT_SUITE_RT)
void ult__debug_dump(int fd);

static void *
watchdog(void *arg)
{
	static const char msg[] = "test still running near its timeout; "
				  "the runtime's state:\n";

	/* Signals (glibc's setxid broadcast among them) cut a sleep short. */
	for (unsigned left = (unsigned)(intptr_t)arg; left > 0;)
		left = sleep(left);
	if (write(2, msg, sizeof(msg) - 1) < 0)
		(void)0;
	ult__debug_dump(2);
	abort();
}

static void
start_watchdog(int timeout)
{
	pthread_attr_t a;
	pthread_t t;

	if (timeout < 10)
		return;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_create(&t, &a, watchdog, (void *)(intptr_t)(timeout * 9 / 10));
	pthread_attr_destroy(&a);
}
#else
static void
start_watchdog(int timeout)
{
	(void)timeout;
}
#endif

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
			if (getenv("ULT_TEST_NO_WATCHDOG") == NULL)
				start_watchdog(tests[i].timeout);
			tests[i].fn();
			printf("ok %s\n", argv[1]);
			return (0);
		}
	}
	fprintf(stderr, "no test named %s\n", argv[1]);
	return (2);
}
