/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * micro: the cases with hundreds of threads and more: thread_ring (503
 * threads pass a token) and skynet (a 10-ary tree, a fresh process a round).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "micro.h"
#include "work.h"

/* ---- thread_ring ---- */

static bw_sem_t ring[RING];
static long token, ring_result;
static int ring_done;

static void *
ring_member(void *arg)
{
	int me = (int)(intptr_t)arg, next = (me + 1) % RING;

	for (;;) {
		bw_sem_wait(&ring[me]);
		/* The semaphores order these plain accesses. */
		if (ring_done) {
			bw_sem_post(&ring[next]);
			return (NULL);
		}
		if (token == 0) {
			mark_end();
			ring_result = me + 1;
			ring_done = 1;
			bw_sem_post(&ring[next]); /* the others leave in turn */
			return (NULL);
		}
		token--;
		bw_sem_post(&ring[next]);
	}
}

double
thread_ring_ns(int r, long n)
{
	bw_thread_t t[RING];
	uint64_t t0;

	rt_start(r, 0);
	for (int i = 0; i < RING; i++)
		bw_sem_init(&ring[i], 0);
	token = n;
	ring_done = 0;
	ring_result = 0;
	atomic_store(&t_end, 0);
	for (int i = 0; i < RING; i++)
		bw_must(bw_spawn(&t[i], ring_member, (void *)(intptr_t)i),
		    "spawn");
	t0 = ult_now();
	bw_sem_post(&ring[0]);
	for (int i = 0; i < RING; i++)
		bw_join(&t[i]);
	for (int i = 0; i < RING; i++)
		bw_sem_destroy(&ring[i]);
	bw_rt_stop();
	if (ring_result != n % RING + 1)
		bw_die("thread_ring %s: result %ld, want %ld", rtname[r],
		    ring_result, n % RING + 1);
	return ((double)(atomic_load(&t_end) - t0) / (double)n);
}

/* ---- skynet, in a fresh process per round ---- */

static int spawn_failed;

static void *
skynet(void *arg)
{
	uintptr_t v = (uintptr_t)arg, num = v >> 8, level = v & 0xff;
	uintptr_t sum = 0;
	bw_thread_t c[10];
	int n = 0;

	if (level == 0)
		return ((void *)num);
	for (uintptr_t i = 0; i < 10; i++, n++)
		if (bw_spawn(&c[i], skynet,
			(void *)(((num * 10 + i) << 8) | (level - 1))) != 0) {
			spawn_failed = 1;
			break;
		}
	for (int i = 0; i < n; i++)
		sum += (uintptr_t)bw_join(&c[i]);
	return ((void *)sum);
}

/* VmHWM of this process in KiB: its peak RSS since exec. */
static long
vm_hwm_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return (-1);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return (kib);
}

/* The child: one skynet round, "ms sum peak_kib" on stdout.  Exit 2 when
 * a thread could not be created (a limit of the machine, not a bug). */
int
skynet_child(const char *rts, int levels)
{
	bw_thread_t root;
	uint64_t t0;
	void *sum = NULL;

	rt_start(strcmp(rts, "ult") == 0 ? RT_ULT : RT_PTHREAD, 0);
	t0 = ult_now();
	if (bw_spawn(&root, skynet, (void *)(uintptr_t)levels) != 0)
		spawn_failed = 1;
	else
		sum = bw_join(&root);
	t0 = ult_now() - t0;
	bw_rt_stop();
	if (spawn_failed) {
		fprintf(stderr, "micro: skynet %s: thread creation failed\n",
		    rts);
		return (2);
	}
	printf("%.3f %lu %ld\n", (double)t0 / 1e6,
	    (unsigned long)(uintptr_t)sum, vm_hwm_kib());
	return (0);
}

/* Run one skynet round in a fresh process; 1: skipped (limits). */
static int
skynet_round(int r, int levels, double *ms, unsigned long *sum, long *peak_kib)
{
	char buf[256], lv[16];
	ssize_t n, got = 0;
	int fds[2], status;
	pid_t pid;

	snprintf(lv, sizeof(lv), "%d", levels);
	if (pipe(fds) != 0)
		bw_die("pipe: %s", strerror(errno));
	fflush(stdout);
	if ((pid = fork()) < 0)
		bw_die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		close(fds[1]);
		execl("/proc/self/exe", "micro", "--skynet-child", rtname[r],
		    lv, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (got < (ssize_t)sizeof(buf) - 1 &&
	    (n = read(fds[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		bw_die("skynet %s: child died", rtname[r]);
	if (WEXITSTATUS(status) == 2 && r == RT_PTHREAD)
		return (1);
	if (WEXITSTATUS(status) != 0 ||
	    sscanf(buf, "%lf %lu %ld", ms, sum, peak_kib) != 3)
		bw_die("skynet %s: child failed", rtname[r]);
	return (0);
}

void
bench_skynet(const char *c, int r, int levels)
{
	unsigned long leaves = 1, want, sum;
	double ms[MAXROUNDS];
	long kib, peak = 0;
	uint64_t t0 = ult_now();
	int k = rounds;

	for (int i = 0; i < levels; i++)
		leaves *= 10;
	want = leaves * (leaves - 1) / 2;
	for (int i = 0; i < k; i++) {
		if (i == 1 && k > 3 && ult_now() - t0 > LONG_ROUND_NS)
			k = 3; /* as median_of() does */
		if (skynet_round(r, levels, &ms[i], &sum, &kib) != 0) {
			fprintf(stderr,
			    "skip: %s %s: thread creation failed "
			    "(thread or memory limits)\n",
			    rtname[r], c);
			return;
		}
		if (sum != want)
			bw_die("%s %s: sum %lu, want %lu", c, rtname[r], sum,
			    want);
		peak = kib > peak ? kib : peak;
	}
	bw_emit(c, rtname[r], "ms", 1, bw_median(ms, k));
	bw_emit(c, rtname[r], "peak_rss_MiB", 1, (double)peak / 1024.0);
	fprintf(stderr, "  %s %s: %lu leaves, sum %lu ok\n", c, rtname[r],
	    leaves, sum);
}
