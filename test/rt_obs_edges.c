/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Edges that review found between the runtime and the rest of the
 * process: what a helper thread inherits from a pinned worker, what the
 * runtime's own preemption signal does to a uthread's poll, and a
 * statistics segment somebody else made first.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "obs/shm_layout.h"
#include "rt_test.h"
#include "test.h"

/* ---- ult_blocking helpers run on the process's CPUs ---- */

static cpu_set_t helper_set;

static void *
affinity_probe(void *arg)
{
	CHECK_EQ(sched_getaffinity(0, sizeof(helper_set), &helper_set), 0);
	return (arg);
}

static void *
affinity_caller(void *arg)
{
	CHECK_EQ(ult_blocking(affinity_probe, NULL, NULL), 0);
	return (arg);
}

void
test_blocking_helper_affinity(void)
{
	cpu_set_t proc;
	ult_thread_t *t;

	CHECK_EQ(sched_getaffinity(0, sizeof(proc), &proc), 0);
	if (CPU_COUNT(&proc) < 2) {
		printf(
		    "one CPU: workers are not pinned apart, nothing to see\n");
		return;
	}
	/* Two workers on a process of at least two CPUs: pinned, each to
	 * one CPU; the helper starts from worker 0's kernel thread. */
	rt_init(2, 0);
	rt_sysctl_set("ult.blocking_idle_ms", 10000);
	rt_spawn_on(&t, 0, affinity_caller, NULL);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK(CPU_EQUAL(&helper_set, &proc));
	CHECK_EQ(ult_shutdown(), 0);
}

/*
 * A pthread a uthread creates gets the process's CPUs too, not its pinned
 * worker's one, unless its attributes name CPUs; the worker stays pinned.
 */
static void *
pthread_caller(void *arg)
{
	cpu_set_t before, after, one;
	pthread_attr_t a;
	pthread_t p;

	CHECK_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
	CHECK_EQ(CPU_COUNT(&before), 1);
	CHECK_EQ(pthread_create(&p, NULL, affinity_probe, NULL), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	CHECK(CPU_EQUAL(&helper_set, (cpu_set_t *)arg));
	CHECK_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
	CHECK(CPU_EQUAL(&before, &after));
	/* A mask of its own wins: the worker's other CPU here. */
	CHECK_EQ(sched_getaffinity(0, sizeof(one), &one), 0);
	CHECK_EQ(pthread_attr_init(&a), 0);
	CHECK_EQ(pthread_attr_setaffinity_np(&a, sizeof(one), &one), 0);
	CHECK_EQ(pthread_create(&p, &a, affinity_probe, NULL), 0);
	CHECK_EQ(pthread_join(p, NULL), 0);
	CHECK(CPU_EQUAL(&helper_set, &one));
	pthread_attr_destroy(&a);
	return (NULL);
}

void
test_pthread_affinity(void)
{
	cpu_set_t proc;
	ult_thread_t *t;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	SKIP("the sanitizers intercept pthread_create themselves");
#endif
	CHECK_EQ(sched_getaffinity(0, sizeof(proc), &proc), 0);
	if (CPU_COUNT(&proc) < 2) {
		printf(
		    "one CPU: workers are not pinned apart, nothing to see\n");
		return;
	}
	rt_init(2, 0);
	memset(&helper_set, 0, sizeof(helper_set));
	rt_spawn_on(&t, 0, pthread_caller, &proc);
	CHECK_EQ(ult_join(t, NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
}

/* ---- ult_poll and the preemption signal ---- */

static atomic_int hog_stop;
static atomic_long poll_calls, hog_turns;
static int idle_pipe[2];

/* On one worker with the poller: each time it sees that the poller made
 * progress since its last look, the runtime took the CPU from the one
 * and gave it to the other; neither gives it up. */
static void *
hog(void *arg)
{
	long seen = 0;

	while (!atomic_load(&hog_stop)) {
		long c = atomic_load(&poll_calls);

		if (c != seen) {
			seen = c;
			atomic_fetch_add(&hog_turns, 1);
		}
	}
	return (arg);
}

static void *
poller(void *arg)
{
	/* Until the runtime's signal has switched the two threads many
	 * times; it lands anywhere in this loop, in poll(2) too. */
	while (atomic_load(&hog_turns) < 20) {
		struct pollfd f = {idle_pipe[0], POLLIN, 0};

		CHECK(atomic_fetch_add(&poll_calls, 1) < 1000000000);
		/* The program sends no signal: no EINTR. */
		errno = 0;
		CHECK_EQ(ult_poll(&f, 1, 0), 0);
		CHECK_EQ(errno, 0);
	}
	/* A wait with a timeout starts with the same probe, and ends in a
	 * timeout. */
	for (int i = 0; i < 20; i++) {
		struct pollfd f = {idle_pipe[0], POLLIN, 0};

		CHECK_EQ(ult_poll(&f, 1, 1), 0);
		CHECK_EQ(errno, 0);
	}
	atomic_store(&hog_stop, 1);
	return (arg);
}

void
test_poll_preempt_no_eintr(void)
{
	ult_thread_t *h, *p;

	if (!rt_preempt_available()) {
		printf("no asynchronous preemption in this build\n");
		return;
	}
	CHECK_EQ(pipe(idle_pipe), 0);
	atomic_store(&hog_stop, 0);
	atomic_store(&poll_calls, 0);
	atomic_store(&hog_turns, 0);
	rt_init(1, 1);
	if (rt_sysctl_get("ult.preempt") == 0) {
		printf("preemption is off (ULT_PREEMPT=0)\n");
		CHECK_EQ(ult_shutdown(), 0);
		return;
	}
	CHECK_EQ(ult_spawn(&h, NULL, hog, NULL), 0);
	CHECK_EQ(ult_spawn(&p, NULL, poller, NULL), 0);
	CHECK_EQ(ult_join(p, NULL), 0);
	CHECK_EQ(ult_join(h, NULL), 0);
	CHECK_EQ(ult_shutdown(), 0);
	close(idle_pipe[0]);
	close(idle_pipe[1]);
}

/* ---- the statistics segment's name, taken before ult_init ---- */

/* In a child: make /dev/shm/ult-<pid> with mode, start the runtime with
 * ULT_SHM=1 (its stderr to a file), and say what became of the file. */
static void
shm_precreated_child(mode_t mode, int *adopted, int *said)
{
	char path[64], err[64], buf[512];
	struct stat before, after;
	ssize_t n;
	int fd, efd;

	snprintf(path, sizeof(path), "/dev/shm/ult-%d", (int)getpid());
	snprintf(err, sizeof(err), "/tmp/ult-test-shm-%d", (int)getpid());
	CHECK((fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600)) >= 0);
	CHECK_EQ(fchmod(fd, mode), 0);
	CHECK_EQ(fstat(fd, &before), 0);
	close(fd);
	CHECK((efd = open(err, O_RDWR | O_CREAT | O_TRUNC, 0600)) >= 0);
	CHECK(dup2(efd, 2) == 2);
	CHECK_EQ(setenv("ULT_SHM", "1", 1), 0);
	rt_init(1, 0);
	/* The runtime runs either way. */
	ult_yield();
	CHECK_EQ(stat(path, &after), 0);
	*adopted = after.st_ino == before.st_ino;
	CHECK_EQ(ult_shutdown(), 0);
	n = pread(efd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	*said = strstr(buf, "ULT_SHM") != NULL;
	if (*adopted) {
		/* Never written: size and mode as they were. */
		CHECK_EQ(after.st_size, 0);
		CHECK_EQ(after.st_mode & 0777, mode);
	} else {
		CHECK_EQ(after.st_size, (off_t)sizeof(struct ult_shm));
		CHECK_EQ(after.st_mode & 0777, 0600);
	}
	(void)unlink(path);
	(void)unlink(err);
}

static void
shm_precreated_run(mode_t mode, int want_adopted, int want_said)
{
	pid_t pid;
	int st;

	CHECK((pid = fork()) >= 0);
	if (pid == 0) {
		int adopted, said;

		shm_precreated_child(mode, &adopted, &said);
		_exit(adopted == want_adopted && said == want_said ? 0 : 3);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
}

void
test_shm_precreated(void)
{
	/* Readable by others (as a local attacker would leave it): left
	 * alone, refused with a message, and no segment. */
	shm_precreated_run(0666, 1, 1);
	/* Like a segment this user's dead process of the same pid left:
	 * replaced by a new one, silently. */
	shm_precreated_run(0600, 0, 0);
}
