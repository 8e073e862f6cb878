/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Limits of the stack pool and of the runtime's memory: absurd stack
 * sizes are refused, any number of distinct sizes works, a frame that
 * jumps past the end of its stack lands in the guard, and ult_shutdown
 * gives back the memory of threads that were never joined.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_test.h"
#include "test.h"
#include "ult.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_SANITIZED 1
#else
#define TEST_SANITIZED 0
#endif

static void *
nop(void *arg)
{
	return (arg);
}

static struct ult_config
one_cpu(size_t stack_size)
{
	struct ult_config c = {0};

	c.ncpu = 1;
	c.stack_size = stack_size;
	return (c);
}

static int
spawn_sized(size_t size)
{
	struct ult_attr a;
	ult_thread_t *t;
	int err;

	ult_attr_init(&a);
	a.stack_size = size;
	if ((err = ult_spawn(&t, &a, nop, NULL)) == 0)
		CHECK_EQ(ult_join(t, NULL), 0);
	return (err);
}

/* /proc/self/statm in bytes: field 0 the address space, 1 the RSS. */
static size_t
statm_field(int field)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long v[2] = {0, 0};

	CHECK(f != NULL);
	CHECK_EQ(fscanf(f, "%lu %lu", &v[0], &v[1]), 2);
	fclose(f);
	return ((size_t)v[field] * (size_t)sysconf(_SC_PAGESIZE));
}

/*
 * A legal size that the address space cannot hold fails with EAGAIN and
 * leaves the runtime working.  In a child, under an RLIMIT_AS a little
 * above what the runtime needs.
 */
static void
check_unmappable(void)
{
	int status;
	pid_t pid;

	if (TEST_SANITIZED)
		return; /* their shadow memory does not fit an RLIMIT_AS */
	SKIP_EMULATED("RLIMIT_AS limits the emulator's own address space");
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct ult_config c = one_cpu(0);
		struct rlimit rl;

		CHECK_EQ(ult_init(&c), 0);
		CHECK_EQ(spawn_sized(0), 0);
		rl.rlim_cur = rl.rlim_max =
		    statm_field(0) + (size_t)ULT_STACK_MAX / 2;
		CHECK_EQ(setrlimit(RLIMIT_AS, &rl), 0);
		CHECK_EQ(spawn_sized(ULT_STACK_MAX), EAGAIN);
		CHECK_EQ(spawn_sized(0), 0);
		CHECK_EQ(spawn_sized(ULT_STACK_MIN), 0);
		CHECK_EQ(ult_shutdown(), 0);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

/*
 * Stack sizes near SIZE_MAX used to wrap in the page rounding and then in
 * the slot arithmetic; they are refused, as is anything above
 * ULT_STACK_MAX, at ult_init and at ult_spawn alike; a legal size that
 * cannot be mapped is EAGAIN.
 */
void
test_stack_size_max(void)
{
	static const size_t bad[] = {SIZE_MAX, SIZE_MAX - 4095,
	    (size_t)0xffffffffffff0000ull, (size_t)ULT_STACK_MAX + 1,
	    (size_t)ULT_STACK_MAX + 4096};
	static const char *const bad_env[] = {"18446744073709551615",
	    "9223372036854775807", "1073741825", "-4096"};
	struct ult_config c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = one_cpu(bad[i]);
		CHECK_EQ(ult_init(&c), EINVAL);
	}
	for (size_t i = 0; i < sizeof(bad_env) / sizeof(bad_env[0]); i++) {
		setenv("ULT_STACK_SIZE", bad_env[i], 1);
		c = one_cpu(0);
		CHECK_EQ(ult_init(&c), EINVAL);
	}
	unsetenv("ULT_STACK_SIZE");

	c = one_cpu(0);
	CHECK_EQ(ult_init(&c), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(spawn_sized(bad[i]), EINVAL);
	/* The limit itself is legal: address space, not memory. */
	CHECK_EQ(spawn_sized(ULT_STACK_MAX), 0);
	CHECK_EQ(spawn_sized(0), 0);
	CHECK_EQ(ult_shutdown(), 0);

	c = one_cpu(ULT_STACK_MAX);
	CHECK_EQ(ult_init(&c), 0);
	CHECK_EQ(spawn_sized(0), 0);
	CHECK_EQ(ult_shutdown(), 0);

	check_unmappable();
}

/* Fill all but 8 KiB of a stack of arg bytes, so that a thread
 * given less than it asked for overflows. */
static void *
fill_stack(void *arg)
{
	size_t n = (size_t)(uintptr_t)arg - 8192;
	volatile char buf[n];

	memset((char *)buf, 0x5a, n);
	return ((void *)(uintptr_t)buf[0]);
}

/*
 * Any number of distinct stack sizes works (the pool used to have room
 * for 16 per runtime lifetime), each thread gets at least what it asked
 * for, and the sizes share a bounded set of classes instead of mapping
 * stacks of their own.
 */
void
test_stack_size_classes(void)
{
	enum {
		NSIZES = 400
	};
	struct ult_config c = one_cpu(0);
	size_t before, grown = 0;

	CHECK_EQ(ult_init(&c), 0);
	before = statm_field(0);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < NSIZES; i++) {
			/* 24 KiB to ~5.5 MiB, odd sizes. */
			size_t size = 24 * 1024 + (size_t)i * 14 * 1024 + 1;
			struct ult_attr a;
			ult_thread_t *t;
			void *r;

			ult_attr_init(&a);
			a.stack_size = size;
			CHECK_EQ(ult_spawn(&t, &a, fill_stack,
				     (void *)(uintptr_t)size),
			    0);
			CHECK_EQ(ult_join(t, &r), 0);
			CHECK_EQ((uintptr_t)r, 0x5a);
		}
		/* The second round's stacks all come from the pool: no
		 * 8 MiB chunk is mapped (thread structs may still take
		 * fresh slab memory). */
		if (round == 0)
			grown = statm_field(0) - before;
		else
			CHECK(statm_field(0) - before - grown <
			    ((size_t)4 << 20));
	}
	/* About 36 classes of one 8 MiB chunk each; a chunk per size would
	 * be 3 GiB. */
	if (grown > (size_t)512 << 20) {
		fprintf(stderr, "%d sizes took %zu MiB of address space\n",
		    NSIZES, grown >> 20);
		CHECK(0);
	}
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * Frames that move the stack pointer far down and touch only their lowest
 * byte: without stack-clash protection nothing touches the pages in
 * between, so they jump whatever lies below the stack's end.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define TEST_JUMPS 1
#define NO_PROBES \
	__attribute__((noinline, optimize("no-stack-clash-protection")))

NO_PROBES static int
frame_400k(void)
{
	volatile char buf[400 * 1024];

	buf[0] = 1;
	return (buf[0]);
}

NO_PROBES static int
frame_800k(void)
{
	volatile char buf[800 * 1024];

	buf[0] = 1;
	return (buf[0]);
}
#else
#define TEST_JUMPS 0
static int
frame_400k(void)
{
	return (0);
}

static int
frame_800k(void)
{
	return (0);
}
#endif

static void *
jump(void *arg)
{
	return ((void *)(intptr_t)(arg != NULL ? frame_800k() : frame_400k()));
}

struct jumper {
	const char *guard_env;
	size_t stack;
	int big;
};

/* In a child, which should die: run jump(big) in a uthread named jumper
 * with the given stack size. */
static void
jumper_child(void *arg)
{
	const struct jumper *j = arg;
	struct ult_config c = one_cpu(0);
	struct ult_attr a;
	ult_thread_t *t;
	void *r;

	if (j->guard_env != NULL)
		setenv("ULT_STACK_GUARD", j->guard_env, 1);
	CHECK_EQ(ult_init(&c), 0);
	ult_attr_init(&a);
	a.name = "jumper";
	a.stack_size = j->stack;
	CHECK_EQ(ult_spawn(&t, &a, jump, (void *)(intptr_t)j->big), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	fprintf(stderr, "the frame jumped the guard\n");
}

static void
check_caught(const char *guard_env, size_t stack, int big)
{
	struct jumper j = {guard_env, stack, big};
	char buf[512];
	int status = rt_child_stderr(jumper_child, &j, buf, sizeof(buf));

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT ||
	    strstr(buf, "ult: stack overflow in uthread jumper (") == NULL) {
		fprintf(stderr,
		    "guard %s, stack %zu, %s frame: child said: %s\n",
		    guard_env ? guard_env : "default", stack,
		    big ? "800 KiB" : "400 KiB", buf);
		CHECK(0);
	}
}

/*
 * A frame larger than its stack but smaller than stack and guard lands in
 * the guard and is reported, with the default guard (256 KiB below a
 * 256 KiB stack) and with one set by ULT_STACK_GUARD; malformed values
 * of ULT_STACK_GUARD are refused.
 */
void
test_stack_guard(void)
{
	static const char *const bad[] = {"", "12abc", "0", "-4096",
	    "1073741825", "99999999999999999999"};
	struct ult_config c = one_cpu(0);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("ULT_STACK_GUARD", bad[i], 1);
		/* An empty variable means the default, as for the others. */
		CHECK_EQ(ult_init(&c), i == 0 ? 0 : EINVAL);
		if (i == 0)
			CHECK_EQ(ult_shutdown(), 0);
	}
	setenv("ULT_STACK_GUARD", "1", 1); /* one page */
	CHECK_EQ(ult_init(&c), 0);
	CHECK_EQ(spawn_sized(0), 0);
	CHECK_EQ(ult_shutdown(), 0);
	unsetenv("ULT_STACK_GUARD");

	if (!TEST_JUMPS)
		SKIP("needs a frame built without stack-clash protection");
	check_caught(NULL, 0, 0);
	check_caught("1048576", ULT_STACK_MIN, 1);
}

static ult_mutex_t held = ULT_MUTEX_INITIALIZER;
static ult_sem_t locked, release, exited;

static void *
hold(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_mutex_lock(&held), 0);
	CHECK_EQ(ult_sem_post(&locked), 0);
	CHECK_EQ(ult_sem_wait(&release), 0);
	CHECK_EQ(ult_mutex_unlock(&held), 0);
	return (NULL);
}

/* A foreign thread waits on a lock another one holds, so it takes a
 * spare turnstile (or uses the one it has) and gives up at a deadline. */
static void *
wait_held(void *arg)
{
	pthread_t p;

	(void)arg;
	CHECK_EQ(pthread_create(&p, NULL, hold, NULL), 0);
	CHECK_EQ(ult_sem_wait(&locked), 0);
	CHECK_EQ(ult_mutex_timedlock(&held, ult_now() + 20000000), ETIMEDOUT);
	CHECK_EQ(ult_sem_post(&release), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	return (NULL);
}

static void *
nop_exit(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_sem_post(&exited), 0);
	return (NULL);
}

/*
 * The memory of threads that were never joined comes back at
 * ult_shutdown: their structs and spare turnstiles used to stay in a
 * fragmented malloc heap (130 MiB for 200k threads).  A memory figure,
 * with ample slack: RSS after shutdown within 10% + 8 MiB of RSS before
 * ult_init.  Foreign threads keep their turnstiles through it: the main
 * thread's spare, and the pool a new thread takes one from.
 */
void
test_unjoined_memory(void)
{
	enum {
		NTHREADS = 200000,
		BATCH = 1000
	};
	struct ult_config c = one_cpu(0);
	size_t before, after;
	pthread_t p;

	if (TEST_SANITIZED)
		SKIP("the sanitizers keep freed memory and shadow resident");
	SKIP_EMULATED("the RSS includes the emulator's translated code");
	CHECK_EQ(ult_sem_init(&locked, 0), 0);
	CHECK_EQ(ult_sem_init(&release, 0), 0);
	CHECK_EQ(ult_sem_init(&exited, 0), 0);
	wait_held(NULL); /* the main thread gets its spare */

	before = statm_field(1);
	CHECK_EQ(ult_init(&c), 0);
	for (int i = 0; i < NTHREADS; i += BATCH) {
		/* Batches keep the stacks of live threads few; the threads
		 * stay unjoined. */
		for (int j = 0; j < BATCH; j++) {
			ult_thread_t *t;

			CHECK_EQ(ult_spawn(&t, NULL, nop_exit, NULL), 0);
		}
		for (int j = 0; j < BATCH; j++)
			CHECK_EQ(ult_sem_wait(&exited), 0);
	}
	CHECK_EQ(ult_shutdown(), 0);
	after = statm_field(1);
	if (after > before + before / 10 + ((size_t)8 << 20)) {
		fprintf(stderr,
		    "RSS %zu KiB before ult_init, %zu KiB after %d unjoined "
		    "threads and ult_shutdown\n",
		    before >> 10, after >> 10, NTHREADS);
		CHECK(0);
	}

	wait_held(NULL);
	CHECK_EQ(pthread_create(&p, NULL, wait_held, NULL), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
}

/*
 * Thread blocks (per-uthread TLS) of many uthreads alive at once are
 * given back at ult_shutdown: they come from mappings of the runtime's
 * own, which a heap would keep resident once it grew for them.
 */
enum {
	LIVE_N = 10000
};
static ult_sem_t live_go;
static ult_thread_t *live_t[LIVE_N];

static void *
live_wait(void *arg)
{
	CHECK_EQ(ult_sem_wait(&live_go), 0);
	return (arg);
}

void
test_tls_memory_live(void)
{
	struct ult_config c = {.ncpu = 2};
	size_t before, after;
	long tls = 0;

	if (TEST_SANITIZED)
		SKIP("the sanitizers keep freed memory and shadow resident");
	before = statm_field(1);
	CHECK_EQ(ult_init(&c), 0);
	CHECK_EQ(ult_sysctl("ult.tls", &tls, NULL), 0);
	CHECK_EQ(ult_sem_init(&live_go, 0), 0);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < LIVE_N; i++)
			CHECK_EQ(ult_spawn(&live_t[i], NULL, live_wait, NULL),
			    0);
		for (int i = 0; i < LIVE_N; i++)
			CHECK_EQ(ult_sem_post(&live_go), 0);
		for (int i = 0; i < LIVE_N; i++)
			CHECK_EQ(ult_join(live_t[i], NULL), 0);
	}
	CHECK_EQ(ult_shutdown(), 0);
	after = statm_field(1);
	if (after > before + before / 10 + ((size_t)8 << 20)) {
		fprintf(stderr,
		    "RSS %zu KiB before ult_init, %zu KiB after %d uthreads "
		    "alive at once and ult_shutdown (ult.tls=%ld)\n",
		    before >> 10, after >> 10, LIVE_N, tls);
		CHECK(0);
	}
}
