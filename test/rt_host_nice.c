/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult.host_nice: a worker's kernel thread takes the nice value of the
 * uthread it runs (host_nice.c), and busy workers poll for I/O as they go
 * back to a CPU-bound thread (switch.c:ult__userret).  Inside a uthread,
 * getpriority(PRIO_PROCESS, 0) reads its worker's kernel thread.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt_test.h"

static int
kernel_nice(void)
{
	int n;

	errno = 0;
	n = getpriority(PRIO_PROCESS, 0);
	CHECK_EQ(errno, 0);
	return (n);
}

/* The nice of kernel thread tid of this process, from /proc. */
static int
task_nice(int tid)
{
	char path[64], buf[1024], *p;
	int n = -100;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	CHECK((f = fopen(path, "r")) != NULL);
	CHECK(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	/* Field 19 is the nice value; the name (2) ends at the last ')'. */
	CHECK((p = strrchr(buf, ')')) != NULL);
	CHECK_EQ(sscanf(p + 2,
		     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
		     "%*u %*u %*d %*d %*d %d",
		     &n),
	    1);
	return (n);
}

static void *
report_nice(void *arg)
{
	(void)arg;
	return ((void *)(intptr_t)kernel_nice());
}

static int
nice_of(int cls, int rtprio, int nice)
{
	struct ult_attr a;
	ult_thread_t *t;
	void *r;

	ult_attr_init(&a);
	a.cls = cls;
	a.rtprio = rtprio;
	a.nice = nice;
	CHECK_EQ(ult_spawn(&t, &a, report_nice, NULL), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	return ((int)(intptr_t)r);
}

/* Starts the runtime with ULT_HOST_NICE=1; 0 if this process may not. */
static int
host_nice_init(int ncpu)
{
	struct ult_config cfg = {0};
	int err;

	cfg.ncpu = ncpu;
	setenv("ULT_HOST_NICE", "1", 1);
	err = ult_init(&cfg);
	unsetenv("ULT_HOST_NICE");
	if (err == EPERM)
		return (0);
	CHECK_EQ(err, 0);
	return (1);
}

static void *
renice_self(void *arg)
{
	int before = kernel_nice();

	(void)arg;
	CHECK_EQ(ult_setnice(NULL, 0), 0);
	ult_yield(); /* followed at the next switch */
	return ((void *)(intptr_t)(before * 100 + kernel_nice()));
}

void
test_host_nice_follows(void)
{
	int base = kernel_nice(), top = base + 10 < 19 ? base + 10 : 19;
	struct ult_attr a;
	ult_thread_t *t;
	long v;
	void *r;

	setenv("ULT_HOST_NICE", "2", 1);
	CHECK_EQ(ult_init(NULL), EINVAL);
	if (!host_nice_init(1))
		SKIP("no CAP_SYS_NICE and RLIMIT_NICE too low: EPERM");
	CHECK_EQ(ult_sysctl("ult.host_nice", &v, NULL), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(nice_of(ULT_CLASS_TIMESHARE, 0, 10), top);
	CHECK_EQ(nice_of(ULT_CLASS_TIMESHARE, 0, 20), 19);
	CHECK_EQ(nice_of(ULT_CLASS_TIMESHARE, 0, 0), base);
	CHECK_EQ(nice_of(ULT_CLASS_TIMESHARE, 0, -5), base);
	CHECK_EQ(nice_of(ULT_CLASS_IDLE, 5, 0), 19);
	CHECK_EQ(nice_of(ULT_CLASS_REALTIME, 5, 10), base);
	/* A change of its own nice is followed at the thread's next switch. */
	ult_attr_init(&a);
	a.nice = 10;
	CHECK_EQ(ult_spawn(&t, &a, renice_self, NULL), 0);
	CHECK_EQ(ult_join(t, &r), 0);
	CHECK_EQ((intptr_t)r, top * 100 + base);
	/* Off: every worker is back at base, and stays there. */
	v = 0;
	CHECK_EQ(ult_sysctl("ult.host_nice", NULL, &v), 0);
	CHECK_EQ(nice_of(ULT_CLASS_TIMESHARE, 0, 10), base);
	v = 2;
	CHECK_EQ(ult_sysctl("ult.host_nice", NULL, &v), EINVAL);
	v = 1;
	CHECK_EQ(ult_sysctl("ult.host_nice", NULL, &v), 0);
	CHECK_EQ(nice_of(ULT_CLASS_TIMESHARE, 0, 10), top);
	CHECK_EQ(ult_shutdown(), 0);
	/* The default is off. */
	rt_init(1, 0);
	CHECK_EQ(ult_sysctl("ult.host_nice", &v, NULL), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(nice_of(ULT_CLASS_TIMESHARE, 0, 10), base);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- a waiting thread takes the worker from a niced hog ---- */

static atomic_int hog_stop, worker_tid;
static ult_sem_t probe_sem;

static void *
hog(void *arg)
{
	(void)arg;
	atomic_store(&worker_tid, gettid());
	while (!atomic_load(&hog_stop))
		if (!rt_preempt_available())
			ult_yield(); /* no preemption in sanitizer builds */
	return (NULL);
}

static void *
probe(void *arg)
{
	int sum = 0;

	(void)arg;
	for (int i = 0; i < 20; i++) {
		CHECK_EQ(ult_sem_wait(&probe_sem), 0);
		sum += kernel_nice();
	}
	return ((void *)(intptr_t)sum);
}

void
test_host_nice_wakeup(void)
{
	int base = kernel_nice(), top = base + 10 < 19 ? base + 10 : 19;
	struct ult_attr a;
	ult_thread_t *h, *p;
	void *sum;

	if (!host_nice_init(1))
		SKIP("no CAP_SYS_NICE and RLIMIT_NICE too low: EPERM");
	atomic_store(&hog_stop, 0);
	atomic_store(&worker_tid, 0);
	CHECK_EQ(ult_sem_init(&probe_sem, 0), 0);
	CHECK_EQ(ult_spawn(&p, NULL, probe, NULL), 0);
	ult_attr_init(&a);
	a.nice = 10;
	CHECK_EQ(ult_spawn(&h, &a, hog, NULL), 0);
	for (int i = 0; i < 20; i++) {
		/* The hog alone on the worker: at base + 10 (from /proc). */
		int n = -100;

		for (int k = 0; k < 5000 && n != top; k++) {
			usleep(1000);
			if (atomic_load(&worker_tid) != 0)
				n = task_nice(atomic_load(&worker_tid));
		}
		CHECK_EQ(n, top);
		CHECK_EQ(ult_sem_post(&probe_sem), 0);
	}
	CHECK_EQ(ult_join(p, &sum), 0);
	CHECK_EQ((intptr_t)sum, 20 * base);
	atomic_store(&hog_stop, 1);
	CHECK_EQ(ult_join(h, NULL), 0);
	CHECK_EQ(ult_sem_destroy(&probe_sem), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- I/O while every worker runs a CPU-bound thread ---- */

#define ECHO_N 8
#define ROUNDS 1500
static int echo_sv[ECHO_N][2];

static void *
echo(void *arg)
{
	int fd = echo_sv[(intptr_t)arg][1];
	char buf[512];
	ssize_t n;

	while ((n = ult_read(fd, buf, sizeof(buf))) > 0)
		CHECK_EQ(ult_write(fd, buf, (size_t)n), n);
	CHECK_EQ(n, 0);
	return (NULL);
}

static void
echo_rounds(unsigned seed)
{
	char out[512], in[512];

	for (int r = 0; r < ROUNDS; r++) {
		int i = r % ECHO_N;
		size_t len = 1 + rand_r(&seed) % sizeof(out), got = 0;

		for (size_t k = 0; k < len; k++)
			out[k] = (char)rand_r(&seed);
		CHECK_EQ(write(echo_sv[i][0], out, len), (ssize_t)len);
		while (got < len) {
			ssize_t n = read(echo_sv[i][0], in + got, len - got);

			CHECK(n > 0);
			got += (size_t)n;
		}
		CHECK(memcmp(in, out, len) == 0);
	}
}

static void
io_beside_hogs(int host_nice)
{
	ult_thread_t *h[2], *e[ECHO_N];
	struct ult_attr a;

	if (host_nice) {
		if (!host_nice_init(2))
			return;
	} else {
		rt_init(2, 0);
	}
	atomic_store(&hog_stop, 0);
	ult_attr_init(&a);
	a.nice = 10;
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_spawn(&h[i], &a, hog, NULL), 0);
	for (intptr_t i = 0; i < ECHO_N; i++) {
		CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, echo_sv[i]), 0);
		CHECK_EQ(ult_spawn(&e[i], NULL, echo, (void *)i), 0);
	}
	echo_rounds(7u + (unsigned)host_nice);
	for (int i = 0; i < ECHO_N; i++) {
		CHECK_EQ(shutdown(echo_sv[i][0], SHUT_WR), 0);
		CHECK_EQ(ult_join(e[i], NULL), 0);
		close(echo_sv[i][0]);
		CHECK_EQ(ult_close(echo_sv[i][1]), 0);
	}
	atomic_store(&hog_stop, 1);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ult_join(h[i], NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

void
test_io_beside_hogs(void)
{
	io_beside_hogs(0);
	io_beside_hogs(1);
}
