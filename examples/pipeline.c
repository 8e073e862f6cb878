/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pipeline: three stages of uthreads passing items through bounded
 * queues, beside a CPU hog at nice +10.
 *
 *	pipeline [ITEMS [WORKERS]]
 *
 * A reader makes ITEMS numbers (default 20000), two squarers square them,
 * a writer sums the squares and checks the total.  Each queue is a mutex
 * and two condition variables; a stage that finds its queue empty or full
 * sleeps until the neighbouring stage signals it.  The hog shows ULE at
 * work: it runs whenever the stages wait, and the stages, which sleep
 * more than they run, preempt it when they wake.
 *
 * It is also a small program to trace:
 *	ULT_TRACE=pipeline.json ./pipeline && ult-trace-summary pipeline.json
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ult.h>

#define QCAP 16

struct queue {
	ult_mutex_t m;
	ult_cond_t not_empty, not_full;
	uint64_t item[QCAP];
	int head, len, closed; /* closed: producers left */
};

static struct queue q1, q2;
static atomic_int hog_stop;
static long items = 20000;

static void
queue_init(struct queue *q)
{
	ult_mutex_init(&q->m);
	ult_cond_init(&q->not_empty);
	ult_cond_init(&q->not_full);
}

static void
put(struct queue *q, uint64_t v)
{
	ult_mutex_lock(&q->m);
	while (q->len == QCAP)
		ult_cond_wait(&q->not_full, &q->m);
	q->item[(q->head + q->len++) % QCAP] = v;
	ult_cond_signal(&q->not_empty);
	ult_mutex_unlock(&q->m);
}

/* 0 when the queue is closed and empty. */
static int
get(struct queue *q, uint64_t *v)
{
	ult_mutex_lock(&q->m);
	while (q->len == 0 && q->closed == 0)
		ult_cond_wait(&q->not_empty, &q->m);
	if (q->len == 0) {
		ult_mutex_unlock(&q->m);
		return (0);
	}
	*v = q->item[q->head];
	q->head = (q->head + 1) % QCAP;
	q->len--;
	ult_cond_signal(&q->not_full);
	ult_mutex_unlock(&q->m);
	return (1);
}

/* One producer fewer; the last one to leave closes the queue. */
static void
leave(struct queue *q, int *producers)
{
	ult_mutex_lock(&q->m);
	if (--*producers == 0) {
		q->closed = 1;
		ult_cond_broadcast(&q->not_empty);
	}
	ult_mutex_unlock(&q->m);
}

static int q1_producers = 1, q2_producers = 2;

static void *
reader(void *arg)
{
	(void)arg;
	for (long i = 1; i <= items; i++)
		put(&q1, (uint64_t)i);
	leave(&q1, &q1_producers);
	return (NULL);
}

static void *
squarer(void *arg)
{
	uint64_t v;

	(void)arg;
	while (get(&q1, &v))
		put(&q2, v * v);
	leave(&q2, &q2_producers);
	return (NULL);
}

static void *
writer(void *arg)
{
	uint64_t v, sum = 0;

	while (get(&q2, &v))
		sum += v;
	*(uint64_t *)arg = sum;
	return (NULL);
}

static void *
hog(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&hog_stop, memory_order_relaxed))
		;
	return (NULL);
}

static ult_thread_t *
start(const char *name, void *(*fn)(void *), void *arg, int nice)
{
	struct ult_attr a;
	ult_thread_t *t;
	int err;

	ult_attr_init(&a);
	a.name = name;
	a.nice = nice;
	if ((err = ult_spawn(&t, &a, fn, arg)) != 0) {
		fprintf(stderr, "pipeline: ult_spawn: error %d\n", err);
		exit(1);
	}
	return (t);
}

int
main(int argc, char **argv)
{
	struct ult_config cfg = {0};
	ult_thread_t *t[5];
	uint64_t sum = 0, want;
	int err;

	if (argc > 1)
		items = strtol(argv[1], NULL, 10);
	if (argc > 2)
		cfg.ncpu = atoi(argv[2]);
	if (items < 1 || items > 1000000 || cfg.ncpu < 0) {
		fprintf(stderr,
		    "usage: pipeline [ITEMS (1..1000000) [WORKERS]]\n");
		return (2);
	}
	if ((err = ult_init(&cfg)) != 0) {
		fprintf(stderr, "pipeline: ult_init: error %d\n", err);
		return (1);
	}
	queue_init(&q1);
	queue_init(&q2);
	t[0] = start("hog", hog, NULL, 10);
	t[1] = start("reader", reader, NULL, 0);
	t[2] = start("squarer-1", squarer, NULL, 0);
	t[3] = start("squarer-2", squarer, NULL, 0);
	t[4] = start("writer", writer, &sum, 0);
	for (int i = 1; i < 5; i++)
		ult_join(t[i], NULL);
	atomic_store(&hog_stop, 1);
	ult_join(t[0], NULL);
	ult_shutdown();
	/* 1^2 + ... + n^2 = n(n+1)(2n+1)/6 */
	want = (uint64_t)items * (uint64_t)(items + 1) *
	    (uint64_t)(2 * items + 1) / 6;
	printf("%ld items, sum of squares %llu: %s\n", items,
	    (unsigned long long)sum, sum == want ? "ok" : "WRONG");
	return (sum == want ? 0 : 1);
}
