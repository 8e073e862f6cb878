/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Observability: the ULT_TRACE file (its events, their pairing, dropped
 * counts), the ULT_STATS report, and the wait channel and run-queue delay
 * in ult_thread_info.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_test.h"

enum {
	NT = 8,
	ROUNDS = 50
};

static ult_sem_t ping[NT], pong[NT];
static ult_mutex_t mtx = ULT_MUTEX_INITIALIZER;
static atomic_int in_lock;

/* Half a ping-pong pair, then a contended mutex held across a sleep. */
static void *
player(void *arg)
{
	int i = (int)(intptr_t)arg;

	for (int r = 0; r < ROUNDS; r++) {
		CHECK_EQ(ult_sem_wait(&ping[i]), 0);
		CHECK_EQ(ult_sem_post(&pong[i]), 0);
	}
	CHECK_EQ(ult_mutex_lock(&mtx), 0);
	atomic_fetch_add(&in_lock, 1);
	CHECK_EQ(ult_sleep_ns(200000), 0);
	CHECK_EQ(ult_mutex_unlock(&mtx), 0);
	return (NULL);
}

static void *
server(void *arg)
{
	int i = (int)(intptr_t)arg;

	for (int r = 0; r < ROUNDS; r++) {
		CHECK_EQ(ult_sem_post(&ping[i]), 0);
		CHECK_EQ(ult_sem_wait(&pong[i]), 0);
	}
	return (NULL);
}

static void
trace_path(char *buf, size_t n, const char *what)
{
	const char *dir = getenv("TMPDIR");

	snprintf(buf, n, "%s/ult-%s-%d.json", dir != NULL ? dir : "/tmp", what,
	    (int)getpid());
}

/* The whole file, NUL-terminated. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	CHECK(f != NULL);
	CHECK_EQ(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	CHECK(n > 0);
	rewind(f);
	s = malloc((size_t)n + 1);
	CHECK(s != NULL);
	CHECK_EQ(fread(s, 1, (size_t)n, f), n);
	s[n] = '\0';
	fclose(f);
	return (s);
}

static long
occurrences(const char *s, const char *what)
{
	long n = 0;

	for (const char *p = s; (p = strstr(p, what)) != NULL; p++)
		n++;
	return (n);
}

/* Every line between the brackets is one event ending in "},", but the
 * last, which has no comma: the JSON is well formed as a list. */
static void
check_shape(const char *s)
{
	const char *body = strstr(s, "{\"traceEvents\":[\n"), *end;
	const char *p;

	CHECK(body == s);
	end = strstr(s, "\n],\n\"displayTimeUnit\":\"ns\"");
	CHECK(end != NULL);
	CHECK(strstr(end, "\"otherData\":{") != NULL);
	p = body + strlen("{\"traceEvents\":[\n");
	while (p < end) {
		const char *nl = strchr(p, '\n');

		CHECK(nl != NULL && nl <= end);
		CHECK(p[0] == '{');
		if (nl == end)
			CHECK(nl[-1] == '}');
		else
			CHECK(nl[-2] == '}' && nl[-1] == ',');
		p = nl + 1;
	}
}

/* The players (t[2i]) or the servers (t[2i + 1]). */
static void
spawn_side(ult_thread_t **t, int servers)
{
	struct ult_attr a;
	char name[32];

	ult_attr_init(&a);
	a.name = name;
	for (int i = 0; i < NT; i++) {
		if (servers)
			snprintf(name, sizeof(name), "server \"%d\"", i);
		else
			snprintf(name, sizeof(name), "player-%d", i);
		CHECK_EQ(ult_spawn(&t[2 * i + servers], &a,
			     servers ? server : player, (void *)(intptr_t)i),
		    0);
	}
}

static void wait_wchan(ult_thread_t *t, const char *what);

static void *
long_named(void *arg)
{
	return (arg);
}

void
test_trace_events(void)
{
	static const char long_name[] = "a-name-of-thirty-one-characters";
	ult_thread_t *t[2 * NT], *ln;
	struct ult_attr a;
	char path[256], want[96];
	char *s;

	trace_path(path, sizeof(path), "trace");
	setenv("ULT_TRACE", path, 1);
	rt_init(2, 0);
	unsetenv("ULT_TRACE");
	atomic_store(&in_lock, 0);
	for (int i = 0; i < NT; i++) {
		CHECK_EQ(ult_sem_init(&ping[i], 0), 0);
		CHECK_EQ(ult_sem_init(&pong[i], 0), 0);
	}
	/* Made so that each player surely sleeps on its semaphore first and
	 * surely finds the mutex taken (by this thread) at the end. */
	CHECK_EQ(ult_mutex_lock(&mtx), 0);
	spawn_side(t, 0);
	for (int i = 0; i < NT; i++)
		wait_wchan(t[2 * i], "sem");
	spawn_side(t, 1);
	for (int i = 0; i < NT; i++)
		wait_wchan(t[2 * i], "mutex");
	CHECK_EQ(ult_mutex_unlock(&mtx), 0);
	for (int i = 0; i < 2 * NT; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	CHECK_EQ(sizeof(long_name), 32);
	ult_attr_init(&a);
	a.name = long_name;
	CHECK_EQ(ult_spawn(&ln, &a, long_named, NULL), 0);
	CHECK_EQ(ult_join(ln, NULL), 0);
	CHECK_EQ(atomic_load(&in_lock), NT);
	CHECK_EQ(ult_shutdown(), 0);

	s = slurp(path);
	check_shape(s);
	/* Every uthread is spawned, named and exits once, its last run
	 * ending in its exit. */
	CHECK_EQ(occurrences(s, "\"name\":\"spawn\",\"cat\":\"sched\""),
	    2 * NT + 1);
	CHECK_EQ(occurrences(s, "\"name\":\"exit\",\"cat\":\"sched\""),
	    2 * NT + 1);
	CHECK_EQ(occurrences(s, "\"out\":\"exit\""), 2 * NT + 1);
	/* The longest name ult keeps, whole. */
	snprintf(want, sizeof(want), "\"name\":\"%s\",\"cat\":\"run\"",
	    long_name);
	CHECK_EQ(occurrences(s, want), 1);
	for (int i = 0; i < NT; i++) {
		snprintf(want, sizeof(want),
		    "\"name\":\"player-%d\",\"cat\":\"run\"", i);
		CHECK(occurrences(s, want) >= 1);
		/* A quote in a name is escaped. */
		snprintf(want, sizeof(want),
		    "\"name\":\"server \\\"%d\\\"\",\"cat\":\"run\"", i);
		CHECK(occurrences(s, want) >= 1);
	}
	/* Each player slept on its semaphore, then on the mutex, and was
	 * woken from both. */
	CHECK(occurrences(s, "\"wmesg\":\"sem\"") >= NT);
	CHECK(occurrences(s, "\"name\":\"lock contended\"") >= NT);
	/* Every wakeup and spawn starts a flow and every one ends, at the
	 * woken thread's next run: all of them ran again, to exit. */
	CHECK_EQ(occurrences(s, "{\"ph\":\"s\""),
	    occurrences(s, "{\"ph\":\"f\""));
	CHECK(occurrences(s, "{\"ph\":\"f\"") >= 2 * NT + 1 + 2 * NT);
	CHECK(strstr(s, "\"dropped_events\":0,") != NULL);
	CHECK(strstr(s, "\"name\":\"worker 0\"") != NULL);
	CHECK(strstr(s, "\"name\":\"worker 1\"") != NULL);
	free(s);
	unlink(path);
}

static ult_barrier_t both;

/* Yield n times once the other yielder is runnable too. */
static void *
yielder(void *arg)
{
	long n = (long)(intptr_t)arg;

	ult_barrier_wait(&both);
	for (long i = 0; i < n; i++)
		ult_yield();
	return (NULL);
}

static long bounce_n;

/* Semaphore ping-pong on one worker: each side sleeps every round (its
 * semaphore is empty, its partner not yet run), so every round is two
 * switches, whatever the policy thinks of yields. */
static void *
bounce(void *arg)
{
	int side = (int)(intptr_t)arg;

	for (long r = 0; r < bounce_n; r++) {
		if (side == 0) {
			CHECK_EQ(ult_sem_post(&ping[0]), 0);
			CHECK_EQ(ult_sem_wait(&pong[0]), 0);
		} else {
			CHECK_EQ(ult_sem_wait(&ping[0]), 0);
			CHECK_EQ(ult_sem_post(&pong[0]), 0);
		}
	}
	return (NULL);
}

/* A ring far too small for what a ping-pong writes, and no flush before
 * the end: the events that did not fit are counted, in the file. */
void
test_trace_dropped(void)
{
	long dropped, kept, lost;
	struct ult_cpu_info ci;
	ult_thread_t *a, *b;
	char path[256], *s;
	const char *p;

	trace_path(path, sizeof(path), "dropped");
	setenv("ULT_TRACE", path, 1);
	setenv("ULT_TRACE_BUFFER", "256", 1);
	setenv("ULT_TRACE_FLUSH_MS", "10000", 1); /* none till the end */
	rt_init(1, -1);
	unsetenv("ULT_TRACE");
	unsetenv("ULT_TRACE_BUFFER");
	unsetenv("ULT_TRACE_FLUSH_MS");
	bounce_n = 20000 / TEST_SCALE > 300 ? 20000 / TEST_SCALE : 300;
	CHECK_EQ(ult_sem_init(&ping[0], 0), 0);
	CHECK_EQ(ult_sem_init(&pong[0], 0), 0);
	CHECK_EQ(ult_spawn(&a, NULL, bounce, (void *)(intptr_t)0), 0);
	CHECK_EQ(ult_spawn(&b, NULL, bounce, (void *)(intptr_t)1), 0);
	CHECK_EQ(ult_join(a, NULL), 0);
	CHECK_EQ(ult_join(b, NULL), 0);
	/* Both have exited, and the worker's last switch (to its idle
	 * loop) came before: no more switches until shutdown. */
	CHECK_EQ(ult_cpu_info(0, &ci), 0);
	CHECK_EQ(ult_shutdown(), 0);

	s = slurp(path);
	check_shape(s);
	/* Every switch the worker counted is in the file or counted as
	 * dropped, and far more were made than a ring holds. */
	CHECK((p = strstr(s, "\"recorded\":{\"switch\":")) != NULL);
	kept = strtol(p + strlen("\"recorded\":{\"switch\":"), NULL, 10);
	CHECK((p = strstr(s, "\"dropped\":{\"switch\":")) != NULL);
	dropped = strtol(p + strlen("\"dropped\":{\"switch\":"), NULL, 10);
	CHECK((p = strstr(s, "\"lost_in_writing\":")) != NULL);
	lost = strtol(p + strlen("\"lost_in_writing\":"), NULL, 10);
	CHECK_EQ(lost, 0);
	CHECK_EQ(kept + dropped, (long)ci.switches);
	CHECK(ci.switches >= 2 * (uint64_t)bounce_n);
	CHECK(dropped > 0);
	/* The kept switches are the run slices, but for switches out of
	 * the idle loop, which start a slice and end none. */
	CHECK(occurrences(s, "\"cat\":\"run\"") <= kept);
	CHECK(strstr(s, "events dropped)") != NULL);
	free(s);
	unlink(path);
}

static void *
empty(void *arg)
{
	return (arg);
}

/* A thread that is no uthread spawns and joins one, and exits. */
static void *
foreign_spawner(void *arg)
{
	ult_thread_t *t;

	(void)arg;
	CHECK_EQ(ult_spawn(&t, NULL, empty, NULL), 0);
	CHECK_EQ(ult_join(t, NULL), 0);
	return (NULL);
}

unsigned ult__trace_rings_held(void); /* src/obs/trace.h */

/* 100 short-lived threads record events, each in a ring of its own: the
 * rings of those that exited are freed while the trace goes on, and every
 * one of their spawns is still in the file. */
void
test_trace_thread_rings(void)
{
	char path[256], *s;
	unsigned held = 0;

	trace_path(path, sizeof(path), "rings");
	setenv("ULT_TRACE", path, 1);
	setenv("ULT_TRACE_FLUSH_MS", "1", 1);
	rt_init(2, -1);
	unsetenv("ULT_TRACE");
	unsetenv("ULT_TRACE_FLUSH_MS");
	for (int i = 0; i < 100; i++) {
		pthread_t p;

		CHECK_EQ(pthread_create(&p, NULL, foreign_spawner, NULL), 0);
		CHECK_EQ(pthread_join(p, NULL), 0);
	}
	/* The flusher looks for exited threads every 64 periods. */
	for (int i = 0; i < 200; i++) {
		held = ult__trace_rings_held();
		if (held < 10)
			break;
		usleep(10000);
	}
	if (held >= 10)
		fprintf(stderr, "%u rings held\n", held);
	CHECK(held < 10);
	CHECK_EQ(ult_shutdown(), 0);
	s = slurp(path);
	check_shape(s);
	CHECK(occurrences(s, "\"name\":\"spawn\",\"cat\":\"sched\"") >= 100);
	free(s);
	unlink(path);
}

void
test_trace_bad_env(void)
{
	setenv("ULT_TRACE", "/nonexistent-dir/x/trace.json", 1);
	CHECK_EQ(ult_init(NULL), ENOENT);
	setenv("ULT_TRACE", "/tmp/ult-never-written.json", 1);
	setenv("ULT_TRACE_BUFFER", "1000", 1); /* not a power of two */
	CHECK_EQ(ult_init(NULL), EINVAL);
	setenv("ULT_TRACE_BUFFER", "128", 1); /* too small */
	CHECK_EQ(ult_init(NULL), EINVAL);
	unsetenv("ULT_TRACE_BUFFER");
	setenv("ULT_TRACE_FLUSH_MS", "0", 1);
	CHECK_EQ(ult_init(NULL), EINVAL);
	unsetenv("ULT_TRACE_FLUSH_MS");
	unsetenv("ULT_TRACE");
	setenv("ULT_STATS", "yes", 1);
	CHECK_EQ(ult_init(NULL), EINVAL);
	unsetenv("ULT_STATS");
	setenv("ULT_SHM", "2", 1);
	CHECK_EQ(ult_init(NULL), EINVAL);
	unsetenv("ULT_SHM");
	/* Nothing was left half started. */
	rt_init(1, 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static void *
sleeper(void *arg)
{
	long n = (long)(intptr_t)arg;

	for (long i = 0; i < n; i++)
		CHECK_EQ(ult_sleep_ns(10000), 0);
	return (NULL);
}

void
test_stats_report(void)
{
	char path[256], *s, *row;
	struct ult_attr a;
	ult_thread_t *t[3];
	int fd, saved;

	trace_path(path, sizeof(path), "stats");
	setenv("ULT_STATS", "1", 1);
	rt_init(2, 0);
	unsetenv("ULT_STATS");
	CHECK_EQ(ult_barrier_init(&both, 2), 0);
	ult_attr_init(&a);
	a.name = "napper";
	CHECK_EQ(ult_spawn(&t[0], &a, sleeper, (void *)(intptr_t)100), 0);
	a.name = "spinner";
	CHECK_EQ(ult_spawn(&t[1], &a, yielder, (void *)(intptr_t)1000), 0);
	a.name = "spinner";
	CHECK_EQ(ult_spawn(&t[2], &a, yielder, (void *)(intptr_t)1000), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(ult_join(t[i], NULL), 0);
	/* The report goes to stderr at ult_shutdown. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	CHECK(dup2(fd, 2) == 2);
	CHECK_EQ(ult_shutdown(), 0);
	fflush(stderr);
	CHECK(dup2(saved, 2) == 2);
	close(saved);
	close(fd);

	s = slurp(path);
	CHECK(strstr(s, "ult stats: policy ") != NULL);
	CHECK(strstr(s, "\n0 ") != NULL && strstr(s, "\n1 ") != NULL);
	CHECK(strstr(s, "rq_p99_us") != NULL);
	CHECK(strstr(s, " napper ") != NULL);
	CHECK_EQ(occurrences(s, " spinner "), 2);
	row = s;
	for (int i = 0; i < 2; i++) {
		double ms;
		unsigned long long vol, invol, migr, runs;

		row = strstr(row, " spinner ");
		CHECK_EQ(sscanf(row, " spinner %lf %llu %llu %llu %llu", &ms,
			     &vol, &invol, &migr, &runs),
		    5);
		/* A yield is a switch, whether or not another thread runs:
		 * voluntary, or involuntary when it honours a pending AST
		 * instead; each ran at least once. */
		CHECK(vol + invol >= 1000);
		CHECK(runs >= 1);
		row++;
	}
	free(s);
	CHECK_EQ(ult_barrier_destroy(&both), 0);
	unlink(path);
}

static ult_sem_t never;
static ult_mutex_t held_mx = ULT_MUTEX_INITIALIZER;

static void *
sem_sleeper(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_sem_wait(&never), 0);
	return (NULL);
}

static void *
mutex_sleeper(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_mutex_lock(&held_mx), 0);
	CHECK_EQ(ult_mutex_unlock(&held_mx), 0);
	return (NULL);
}

static void *
joiner(void *arg)
{
	CHECK_EQ(ult_join((ult_thread_t *)arg, NULL), 0);
	return (NULL);
}

/* Until t sleeps on what; then its info names it. */
static void
wait_wchan(ult_thread_t *t, const char *what)
{
	struct ult_thread_info in;

	for (int i = 0; i < 100000; i++) {
		CHECK_EQ(ult_thread_info(t, &in), 0);
		if (in.state == ULT_STATE_SLEEPING &&
		    strcmp(in.wchan, what) == 0)
			return;
		CHECK(in.state != ULT_STATE_SLEEPING || in.wchan[0] != '\0');
		usleep(100);
	}
	fprintf(stderr, "wchan: still '%s', state %d, want '%s'\n", in.wchan,
	    in.state, what);
	CHECK(0);
}

void
test_info_wchan(void)
{
	ult_thread_t *s, *m, *j, *z;
	struct ult_thread_info in;

	rt_init(2, 0);
	CHECK_EQ(ult_sem_init(&never, 0), 0);
	CHECK_EQ(ult_mutex_lock(&held_mx), 0);
	CHECK_EQ(ult_spawn(&s, NULL, sem_sleeper, NULL), 0);
	CHECK_EQ(ult_spawn(&m, NULL, mutex_sleeper, NULL), 0);
	CHECK_EQ(ult_spawn(&z, NULL, sleeper, (void *)(intptr_t)3000), 0);
	CHECK_EQ(ult_spawn(&j, NULL, joiner, s), 0);
	wait_wchan(s, "sem");
	wait_wchan(m, "mutex");
	wait_wchan(j, "join");
	wait_wchan(z, "sleep");
	in = rt_info(s);
	CHECK(in.nruns >= 1);
	CHECK(in.rq_delay_avg_ns <= in.rq_delay_max_ns);
	CHECK_EQ(ult_sem_post(&never), 0);
	CHECK_EQ(ult_mutex_unlock(&held_mx), 0);
	CHECK_EQ(ult_join(j, NULL), 0);
	CHECK_EQ(ult_join(m, NULL), 0);
	/* It has slept, so it has run, and a run-queue delay is never
	 * above its maximum. */
	in = rt_info(z);
	CHECK(in.nruns >= 1);
	CHECK(in.rq_delay_avg_ns <= in.rq_delay_max_ns);
	CHECK_EQ(ult_join(z, NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* With ULT_SHM=1 the statistics segment is there while the runtime runs
 * and gone after ult_shutdown; without it, there is none. */
void
test_shm_segment(void)
{
	char path[64];

	if (access("/dev/shm", W_OK) != 0)
		SKIP("no writable /dev/shm: the runtime keeps no segment");
	snprintf(path, sizeof(path), "/dev/shm/ult-%d", (int)getpid());
	setenv("ULT_SHM", "1", 1);
	rt_init(1, 0);
	unsetenv("ULT_SHM");
	CHECK_EQ(access(path, R_OK), 0);
	CHECK_EQ(ult_shutdown(), 0);
	CHECK(access(path, F_OK) != 0);
	rt_init(1, 0);
	CHECK(access(path, F_OK) != 0);
	CHECK_EQ(ult_shutdown(), 0);
	setenv("ULT_SHM", "0", 1);
	rt_init(1, 0);
	unsetenv("ULT_SHM");
	CHECK(access(path, F_OK) != 0);
	CHECK_EQ(ult_shutdown(), 0);
}

static ult_sem_t go;

static void *
mover(void *arg)
{
	(void)arg;
	CHECK_EQ(ult_sem_wait(&go), 0);
	CHECK_EQ(ult_cpu(), 1);
	return (NULL);
}

/* Spin until preempted twice (or 10 s: the check below then fails). */
static void *
hog(void *arg)
{
	uint64_t end = ult_now() + 10000000000ull;

	(void)arg;
	while (rt_info(NULL).nivcsw < 2 && ult_now() < end)
		for (volatile int i = 0; i < 10000; i++)
			;
	return (NULL);
}

/* The kinds a simple program cannot avoid: a migration that ult_bind
 * forces, and, with preemption, two hogs on one worker taking turns. */
void
test_trace_kinds(void)
{
	ult_thread_t *m, *h[2];
	struct ult_attr a;
	char path[256], *s;
	long preempt = 0;

	trace_path(path, sizeof(path), "kinds");
	setenv("ULT_TRACE", path, 1);
	rt_init(2, 0);
	unsetenv("ULT_TRACE");
	CHECK_EQ(ult_sysctl("ult.preempt", &preempt, NULL), 0);
	CHECK_EQ(ult_sem_init(&go, 0), 0);
	ult_attr_init(&a);
	a.cpu = 0;
	CHECK_EQ(ult_spawn(&m, &a, mover, NULL), 0);
	wait_wchan(m, "sem");
	CHECK_EQ(ult_bind(m, 1), 0);
	CHECK_EQ(ult_sem_post(&go), 0);
	CHECK_EQ(ult_join(m, NULL), 0);
	if (preempt) {
		for (int i = 0; i < 2; i++)
			CHECK_EQ(ult_spawn(&h[i], &a, hog, NULL), 0);
		for (int i = 0; i < 2; i++)
			CHECK_EQ(ult_join(h[i], NULL), 0);
	}
	CHECK_EQ(ult_shutdown(), 0);

	s = slurp(path);
	check_shape(s);
	/* The mover, from worker 0 to worker 1. */
	CHECK(strstr(s, "\"name\":\"migrate\"") != NULL);
	CHECK(strstr(s, "\"from\":0,\"to\":1}") != NULL);
	if (preempt) {
		CHECK(occurrences(s, "\"name\":\"preempt sent\"") >= 1);
		CHECK(occurrences(s, "\"name\":\"preempt taken\"") >= 1);
		CHECK(occurrences(s, "\"out\":\"preempt\"") +
			occurrences(s, "\"out\":\"owepreempt\"") +
			occurrences(s, "\"out\":\"remotepreempt\"") +
			occurrences(s, "\"out\":\"needresched\"") >=
		    2);
	}
	free(s);
	unlink(path);
}

/* ---- a foreign observer of recycled thread structs ---- */

#include "kern/runtime.h"
#include "kern/uthread.h"

enum {
	OBS_MAX = 512
};
static ult_thread_t *obs_seen[OBS_MAX];
static int obs_n;
static atomic_int obs_stop;
static atomic_long obs_infos;

static void
obs_collect(struct ult_thread *ut, void *arg)
{
	(void)arg;
	if (obs_n < OBS_MAX)
		obs_seen[obs_n++] = ut;
}

/* What ult-top's publisher does, as fast as it can: take the slab's
 * structs, then ask about each, though it may have been freed and be
 * being set up for another thread by now. */
static void *
observer(void *arg)
{
	(void)arg;
	while (!atomic_load(&obs_stop)) {
		obs_n = 0;
		ult__thread_foreach(obs_collect, NULL, 0);
		for (int i = 0; i < obs_n; i++) {
			struct ult_thread_info in;
			int e = ult_thread_info(obs_seen[i], &in);

			CHECK(e == 0 || e == ESRCH);
			atomic_fetch_add(&obs_infos, 1);
		}
	}
	return (NULL);
}

static void *
nothing(void *arg)
{
	return (arg);
}

static void *
churner(void *arg)
{
	uint64_t end = ult_now() + 1000000000ull;

	(void)arg;
	while (ult_now() < end) {
		ult_thread_t *t;

		CHECK_EQ(ult_spawn(&t, NULL, nothing, NULL), 0);
		CHECK_EQ(ult_join(t, NULL), 0);
	}
	return (NULL);
}

void
test_info_recycled(void)
{
	ult_thread_t *c[4];
	pthread_t o[1];

	rt_init(4, 0);
	atomic_store(&obs_stop, 0);
	atomic_store(&obs_infos, 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ult_spawn(&c[i], NULL, churner, NULL), 0);
	CHECK_EQ(pthread_create(&o[0], NULL, observer, NULL), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ult_join(c[i], NULL), 0);
	atomic_store(&obs_stop, 1);
	CHECK_EQ(pthread_join(o[0], NULL), 0);
	CHECK(atomic_load(&obs_infos) > 0);
	CHECK_EQ(ult_shutdown(), 0);
}
