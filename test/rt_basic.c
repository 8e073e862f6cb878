/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Runtime basics: spawn, join, detach, exit, nesting, joins from plain
 * pthreads, shutdown and re-initialisation.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "test.h"
#include "ult.h"

static void
init_n(int ncpu)
{
	struct ult_config cfg = {0};

	cfg.ncpu = ncpu;
	CHECK_EQ(ult_init(&cfg), 0);
}

static void *
ret_arg(void *arg)
{
	return (arg);
}

void
test_spawn_join(void)
{
	ult_thread_t *t[64];
	void *r;

	init_n(0);
	for (intptr_t i = 0; i < 64; i++)
		CHECK_EQ(ult_spawn(&t[i], NULL, ret_arg, (void *)i), 0);
	for (intptr_t i = 0; i < 64; i++) {
		CHECK_EQ(ult_join(t[i], &r), 0);
		CHECK_EQ((intptr_t)r, i);
	}
	CHECK_EQ(ult_shutdown(), 0);
}

static atomic_long counter;

static void *
count_one(void *arg)
{
	(void)arg;
	atomic_fetch_add(&counter, 1);
	return (NULL);
}

/* 100,000 spawn+join pairs, half from a uthread, half from main. */
static void *
spawner(void *arg)
{
	long n = (long)(intptr_t)arg;

	for (long i = 0; i < n; i++) {
		ult_thread_t *t;

		CHECK_EQ(ult_spawn(&t, NULL, count_one, NULL), 0);
		CHECK_EQ(ult_join(t, NULL), 0);
	}
	return (NULL);
}

void
test_spawn_join_100k(void)
{
	ult_thread_t *t;

	init_n(0);
	atomic_store(&counter, 0);
	CHECK_EQ(ult_spawn(&t, NULL, spawner, (void *)(intptr_t)50000), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	spawner((void *)(intptr_t)50000);
	CHECK_EQ(atomic_load(&counter), 100000);
	CHECK_EQ(ult_shutdown(), 0);
}

/* A binary tree of depth d returns the number of its leaves. */
static void *
tree(void *arg)
{
	intptr_t d = (intptr_t)arg;
	ult_thread_t *l, *r;
	void *a, *b;

	if (d == 0)
		return ((void *)1);
	CHECK_EQ(ult_spawn(&l, NULL, tree, (void *)(d - 1)), 0);
	CHECK_EQ(ult_spawn(&r, NULL, tree, (void *)(d - 1)), 0);
	CHECK_EQ(ult_join(l, &a), 0);
	CHECK_EQ(ult_join(r, &b), 0);
	return ((void *)((intptr_t)a + (intptr_t)b));
}

void
test_nested_spawn(void)
{
	ult_thread_t *t;
	void *r;

	init_n(0);
	CHECK_EQ(ult_spawn(&t, NULL, tree, (void *)12), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ((intptr_t)r, 4096);
	CHECK_EQ(ult_shutdown(), 0);
}

static void *
sleepy(void *arg)
{
	ult_sleep_ns(2000000);
	return (arg);
}

static void *
pthread_joiner(void *arg)
{
	ult_thread_t **t = arg;
	void *r;

	CHECK(ult_self() == NULL);
	CHECK_EQ(ult_join(*t, &r), 0);
	return (r);
}

/* Plain pthreads join uthreads, concurrently with each other. */
void
test_join_from_pthread(void)
{
	ult_thread_t *t[8];
	pthread_t p[8];
	void *r;

	init_n(0);
	for (intptr_t i = 0; i < 8; i++) {
		CHECK_EQ(ult_spawn(&t[i], NULL, sleepy, (void *)(i + 100)), 0);
		CHECK_EQ(pthread_create(&p[i], NULL, pthread_joiner, &t[i]), 0);
	}
	for (intptr_t i = 0; i < 8; i++) {
		CHECK_EQ(pthread_join(p[i], &r), 0);
		CHECK_EQ((intptr_t)r, i + 100);
	}
	CHECK_EQ(ult_shutdown(), 0);
}

static atomic_int detached_done;

static void *
detached_body(void *arg)
{
	(void)arg;
	ult_yield();
	ult_sleep_ns(1000000);
	atomic_fetch_add(&detached_done, 1);
	return (NULL);
}

static void *
detach_self_later(void *arg)
{
	(void)arg;
	ult_sleep_ns(3000000);
	atomic_fetch_add(&detached_done, 1);
	return (NULL);
}

void
test_detach(void)
{
	struct ult_attr a;
	ult_thread_t *t, *z;

	init_n(0);
	atomic_store(&detached_done, 0);
	ult_attr_init(&a);
	a.detached = 1;
	for (int i = 0; i < 100; i++)
		CHECK_EQ(ult_spawn(NULL, &a, detached_body, NULL), 0);
	/* Detach a running thread, and one that has already finished. */
	CHECK_EQ(ult_spawn(&t, NULL, detach_self_later, NULL), 0);
	CHECK_EQ(ult_detach(t), 0);
	CHECK_EQ(ult_spawn(&z, NULL, ret_arg, NULL), 0);
	while (1) {
		struct ult_thread_info in;

		CHECK_EQ(ult_thread_info(z, &in), 0);
		if (in.state == ULT_STATE_FINISHED)
			break;
		ult_sleep_ns(100000);
	}
	CHECK_EQ(ult_detach(z), 0);
	CHECK_EQ(ult_join(z, NULL), ESRCH);
	/* Shutdown waits for detached threads too. */
	CHECK_EQ(ult_shutdown(), 0);
	CHECK_EQ(atomic_load(&detached_done), 101);
}

static void deep_exit(int depth);
static void (*volatile deep_exit_p)(int) = deep_exit;

/* Exit from ten frames down: ult_exit unwinds nothing, it switches away. */
static void
deep_exit(int depth)
{
	if (depth == 0)
		ult_exit((void *)(intptr_t)42);
	deep_exit_p(depth - 1);
	CHECK(0);
}

static void *
exits_deep(void *arg)
{
	(void)arg;
	deep_exit(10);
	return (NULL);
}

void
test_exit_value(void)
{
	ult_thread_t *t;
	void *r = NULL;

	init_n(0);
	CHECK_EQ(ult_spawn(&t, NULL, exits_deep, NULL), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ((intptr_t)r, 42);
	CHECK_EQ(ult_shutdown(), 0);
}

static atomic_int finished;

static void *
slow_finisher(void *arg)
{
	intptr_t i = (intptr_t)arg;

	for (int k = 0; k < 5; k++) {
		ult_sleep_ns(1000000 + (uint64_t)i * 1000);
		ult_yield();
	}
	atomic_fetch_add(&finished, 1);
	return (NULL);
}

/* ult_shutdown() with uthreads still running waits for all of them. */
void
test_shutdown_waits(void)
{
	struct ult_attr a;

	init_n(0);
	atomic_store(&finished, 0);
	ult_attr_init(&a);
	a.detached = 1;
	for (intptr_t i = 0; i < 200; i++)
		CHECK_EQ(ult_spawn(NULL, &a, slow_finisher, (void *)i), 0);
	CHECK_EQ(ult_shutdown(), 0);
	CHECK_EQ(atomic_load(&finished), 200);
	CHECK_EQ(ult_ncpu(), 0);
}

static atomic_int relay_done;

/*
 * One link of a relay: spawn the next link on the next worker, then exit.
 * Every thread is spawned on one worker and exits on another, while its
 * parent is already gone, which is where a live count kept per worker
 * could read 0 too early.
 */
static void *
relay(void *arg)
{
	intptr_t left = (intptr_t)arg;
	struct ult_attr a;

	if (left > 0) {
		ult_attr_init(&a);
		a.detached = 1;
		a.cpu = (ult_cpu() + 1) % ult_ncpu();
		CHECK_EQ(ult_spawn(NULL, &a, relay, (void *)(left - 1)), 0);
	}
	atomic_fetch_add(&relay_done, 1);
	return (NULL);
}

/* ult_shutdown() waits for threads spawned while it waits, on any worker. */
void
test_shutdown_waits_relay(void)
{
	enum {
		RELAYS = 40,
		LINKS = 250
	};
	struct ult_attr a;

	for (int round = 0; round < 4; round++) {
		init_n(2 + round % 3);
		atomic_store(&relay_done, 0);
		ult_attr_init(&a);
		a.detached = 1;
		for (intptr_t i = 0; i < RELAYS; i++)
			CHECK_EQ(ult_spawn(NULL, &a, relay,
				     (void *)(intptr_t)(LINKS - 1)),
			    0);
		CHECK_EQ(ult_shutdown(), 0);
		CHECK_EQ(atomic_load(&relay_done), RELAYS * LINKS);
	}
}

void
test_reinit(void)
{
	for (int round = 0; round < 20; round++) {
		ult_thread_t *t;
		void *r;

		init_n(1 + round % 4);
		CHECK_EQ(ult_ncpu(), 1 + round % 4);
		CHECK_EQ(ult_init(NULL), EBUSY);
		CHECK_EQ(ult_spawn(&t, NULL, tree, (void *)4), 0);
		CHECK_EQ(ult_join(t, &r), 0);
		CHECK_EQ((intptr_t)r, 16);
		CHECK_EQ(ult_shutdown(), 0);
		CHECK_EQ(ult_shutdown(), ENXIO);
	}
}

static void *
use_stack(void *arg)
{
	size_t n = (size_t)(uintptr_t)arg;
	volatile char buf[n];

	memset((char *)buf, 0x5a, n);
	return ((void *)(uintptr_t)buf[n - 1]);
}

/* Per-thread stack sizes and ULT_STACK_SIZE are honoured. */
void
test_stack_size(void)
{
	struct ult_attr a;
	ult_thread_t *t;
	void *r;

	init_n(1);
	ult_attr_init(&a);
	a.stack_size = 4u << 20;
	CHECK_EQ(ult_spawn(&t, &a, use_stack, (void *)(uintptr_t)(3u << 20)),
	    0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ((uintptr_t)r, 0x5a);
	a.stack_size = ULT_STACK_MIN;
	CHECK_EQ(ult_spawn(&t, &a, use_stack, (void *)(uintptr_t)8192), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ(ult_shutdown(), 0);

	setenv("ULT_STACK_SIZE", "2097152", 1);
	init_n(1);
	CHECK_EQ(ult_spawn(&t, NULL, use_stack, (void *)(uintptr_t)(1u << 20)),
	    0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ(ult_shutdown(), 0);
	setenv("ULT_STACK_SIZE", "1000", 1);
	CHECK_EQ(ult_init(NULL), EINVAL);
	setenv("ULT_STACK_SIZE", "12abc", 1);
	CHECK_EQ(ult_init(NULL), EINVAL);
	unsetenv("ULT_STACK_SIZE");
}
