/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Litmus-style stress of the cross-worker wakeup, on the protocol code
 * itself (DESIGN.md section 17.3): the shapes a weakly ordered CPU breaks
 * when a barrier is missing, which x86-64's total store order hides.
 *
 *  - Message passing: a producer stores a message (plain words, each on a
 *    cache line of its own) and posts; the consumer, on another worker,
 *    waits and reads them in the opposite order.  Between the two lie the
 *    policy's enqueue, tdq_notify, the park word, the sleeping worker's
 *    futex, its idle loop and the thread lock's hand-over: a stale word
 *    means one of them lets the consumer run before the producer's stores
 *    are visible to its CPU.
 *  - Store buffering: the waker's enqueue then its look at the target's
 *    idle word, against the target's store of that word then its look at
 *    its queue (ule_idle_enter / ule_tdq_notify, bsd_idle_enter), and the
 *    park word's claim against the unparker's exchange.  If both sides can
 *    miss each other, a worker parks with work queued and never wakes: a
 *    watcher reports such a worker (ult__worker_stranded) and the test
 *    fails; a round that never completes fails it too.
 *
 * Every pair of workers around a ring exchanges messages both ways, with
 * random gaps (none, shorter than the idle spin, longer than it) so that
 * each post finds the consumer's worker running, spinning, entering idle
 * or parked.  ULT_LITMUS_ROUNDS sets the rounds per pair (default 10000;
 * the qemu runs in CI use fewer; on a real arm64 machine use more).
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "arch/cpu.h"
#include "kern/runtime.h"
#include "kern/worker.h"
#include "obs/debug.h"
#include "rt_test.h"

#define LITMUS_FAIL(...)                                 \
	do {                                             \
		ult__debug_dump(STDERR_FILENO);          \
		fprintf(stderr, "litmus: " __VA_ARGS__); \
		fputc('\n', stderr);                     \
		exit(1);                                 \
	} while (0)

#define LITMUS_WORDS 4
#define LITMUS_MAXCPU 8

struct litmus_msg {
	unsigned long v;
	char pad[64 - sizeof(unsigned long)];
};

/* Pair i: worker i sends to worker (i + 1) % n, which answers. */
struct litmus_pair {
	ult_sem_t go, back;
	struct litmus_msg fwd[LITMUS_WORDS], rev[LITMUS_WORDS];
	unsigned long rounds;
	atomic_ulong done; /* rounds completed, for the watchers */
	atomic_ulong bad;  /* stale words seen */
	unsigned seed;
};

static struct litmus_pair pairs[LITMUS_MAXCPU];
static atomic_int litmus_stop;
static atomic_int litmus_stranded = -1;

/* A gap before a post: none, shorter than the idle spin (10-50 us), or
 * longer, so that the other worker is parked. */
static void
gap(unsigned *seed)
{
	unsigned r = test_rand(seed), n;

	switch (r & 3) {
	case 0:
		return;
	case 1:
		n = (r >> 2) % 64;
		break;
	case 2:
		n = (r >> 2) % 2048;
		break;
	default:
		n = (r >> 2) % 16384;
		break;
	}
	for (unsigned i = 0; i < n; i++)
		ult__cpu_relax();
}

static void
put(struct litmus_msg *m, unsigned long v)
{
	for (int i = 0; i < LITMUS_WORDS; i++)
		m[i].v = v;
}

/* Read in the opposite order to the stores: the last word stored is read
 * first, so a reordering on either side shows as an older value below. */
static int
stale(const struct litmus_msg *m, unsigned long v)
{
	int n = 0;

	for (int i = LITMUS_WORDS - 1; i >= 0; i--)
		n += m[i].v != v;
	return (n);
}

static void *
producer(void *arg)
{
	struct litmus_pair *p = arg;
	unsigned seed = p->seed;

	for (unsigned long r = 1; r <= p->rounds; r++) {
		gap(&seed);
		put(p->fwd, r);
		CHECK_EQ(ult_sem_post(&p->go), 0);
		CHECK_EQ(ult_sem_wait(&p->back), 0);
		if (stale(p->rev, r) != 0)
			atomic_fetch_add(&p->bad, 1);
		atomic_store(&p->done, r);
	}
	return (NULL);
}

static void *
consumer(void *arg)
{
	struct litmus_pair *p = arg;
	unsigned seed = p->seed ^ 0x5bd1e995u;

	for (unsigned long r = 1; r <= p->rounds; r++) {
		CHECK_EQ(ult_sem_wait(&p->go), 0);
		if (stale(p->fwd, r) != 0)
			atomic_fetch_add(&p->bad, 1);
		gap(&seed);
		put(p->rev, r);
		CHECK_EQ(ult_sem_post(&p->back), 0);
	}
	return (NULL);
}

/* Samples, 10 ms apart, for which a worker may sleep with work queued
 * before it counts as a lost wakeup (as the stress harness's watchdog). */
#define STRANDED_SAMPLES 20

static void *
watcher(void *arg)
{
	int n = (int)(intptr_t)arg, strand[LITMUS_MAXCPU] = {0};

	while (!atomic_load(&litmus_stop)) {
		for (int c = 0; c < n; c++) {
			strand[c] = ult__worker_stranded(c) ? strand[c] + 1 : 0;
			if (strand[c] >= STRANDED_SAMPLES) {
				atomic_store(&litmus_stranded, c);
				return (NULL);
			}
		}
		usleep(10000);
	}
	return (NULL);
}

static void
litmus(int n)
{
	ult_thread_t *prod[LITMUS_MAXCPU], *cons[LITMUS_MAXCPU];
	const char *e = getenv("ULT_LITMUS_ROUNDS");
	unsigned long rounds = e != NULL && atol(e) > 0 ? (unsigned long)atol(e)
							: 10000 / TEST_SCALE;
	unsigned long total = 0, bad = 0, last = 0, parks = 0;
	uint64_t seen;
	pthread_t w;

	rt_init(n, 0);
	CHECK_EQ(ult_ncpu(), n);
	atomic_store(&litmus_stop, 0);
	atomic_store(&litmus_stranded, -1);
	for (int i = 0; i < n; i++) {
		struct litmus_pair *p = &pairs[i];

		CHECK_EQ(ult_sem_init(&p->go, 0), 0);
		CHECK_EQ(ult_sem_init(&p->back, 0), 0);
		put(p->fwd, 0);
		put(p->rev, 0);
		p->rounds = rounds;
		p->seed = 0x9e3779b9u * (unsigned)(i + 1);
		atomic_store(&p->done, 0);
		atomic_store(&p->bad, 0);
	}
	CHECK_EQ(pthread_create(&w, NULL, watcher, (void *)(intptr_t)n), 0);
	for (int i = 0; i < n; i++) {
		rt_spawn_on(&cons[i], (i + 1) % n, consumer, &pairs[i]);
		rt_spawn_on(&prod[i], i, producer, &pairs[i]);
	}
	/* Progress: a round that never completes is a lost wakeup the
	 * watcher did not see (a worker spinning, not parked). */
	seen = ult_now();
	for (;;) {
		unsigned long sum = 0;

		for (int i = 0; i < n; i++)
			sum += atomic_load(&pairs[i].done);
		if (sum == rounds * (unsigned long)n)
			break;
		if (atomic_load(&litmus_stranded) >= 0)
			LITMUS_FAIL("worker %d parked with work queued: a "
				    "lost wakeup",
			    atomic_load(&litmus_stranded));
		if (sum != last) {
			last = sum;
			seen = ult_now();
		}
		if (ult_now() - seen > 60000000000ull)
			LITMUS_FAIL("no round completed for 60 s (%lu of %lu "
				    "done)",
			    sum, rounds * (unsigned long)n);
		usleep(10000);
	}
	atomic_store(&litmus_stop, 1);
	CHECK_EQ(pthread_join(w, NULL), 0);
	for (int i = 0; i < n; i++) {
		CHECK_EQ(ult_join(prod[i], NULL), 0);
		CHECK_EQ(ult_join(cons[i], NULL), 0);
		total += pairs[i].rounds;
		bad += atomic_load(&pairs[i].bad);
	}
	CHECK(atomic_load(&litmus_stranded) < 0);
	for (int c = 0; c < n; c++) {
		struct ult_cpu_info ci;

		CHECK_EQ(ult_cpu_info(c, &ci), 0);
		parks += ci.parks;
	}
	/* The parks say the posts found workers asleep, not only spinning. */
	fprintf(stderr,
	    "%d workers: %lu messages each way, %lu stale, %lu parks\n", n,
	    total, bad, parks);
	CHECK_EQ(bad, 0);
	CHECK_EQ(ult_shutdown(), 0);
}

void
test_litmus_wake_w2(void)
{
	litmus(2);
}

void
test_litmus_wake_w4(void)
{
	litmus(4);
}
