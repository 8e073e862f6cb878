/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The statistics segment for ult-top (shm_layout.h), with ULT_SHM=1.  A
 * thread of its own, "ult-stats", rewrites it every PERIOD_NS from
 * ult_thread_info and ult_cpu_info, so that a reader needs no signal, no
 * ptrace and no help from the program.  It costs one wakeup per period,
 * a walk of the thread slab under its lock, and a thread-lock round trip
 * per uthread shown (at most ULT_SHM_THREADS), from a kernel thread the
 * host may deschedule while it holds one of those locks: so it is off
 * unless asked for.  A segment that cannot be made is no error: ult-top
 * then says it finds none.
 *
 * The name is guessable and /dev/shm is everybody's: the segment is only
 * ever a file this process made (O_EXCL), mode 0600.  A name that is
 * taken is either a segment left by a dead process of this user with the
 * same pid, which is removed and made anew, or somebody else's, which is
 * refused.  The snapshot is built in memory of the process's own and
 * written with pwrite, not through a mapping: a file its owner truncates
 * (the same user) then grows back, where a mapping would raise SIGBUS in
 * the publisher.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kern/runtime.h"
#include "../kern/worker.h"
#include "../kern/uthread.h"
#include "shm.h"
#include "shm_layout.h"
#include "../kern/subsys.h"

#define PERIOD_NS 500000000ull

static struct {
	int want;	   /* ULT_SHM, read by ult__shm_configure */
	struct ult_shm *m; /* the process's copy, written to fd */
	int fd;
	char name[32];
	pthread_t thread;
	atomic_uint stop;
	int running;
	struct ult_thread **uts; /* this snapshot's, with their ids */
	uint64_t *ids;
	uint32_t n, nalive;
} shm = {.fd = -1};

static void
collect(struct ult_thread *ut, void *arg)
{
	(void)arg;
	/* Acquire: its id was set before it became UT_ALIVE. */
	if (ULT_LD_ACQ(&ut->lstate) != UT_ALIVE)
		return;
	shm.nalive++;
	if (shm.n == ULT_SHM_THREADS)
		return;
	shm.uts[shm.n] = ut;
	shm.ids[shm.n++] = ut->id;
}

static void
put_cpu(struct ult_shm_cpu *c, int i)
{
	struct ult__worker *w = &ult__rt.workers[i];
	struct ult_cpu_info ci;

	memset(c, 0, sizeof(*c));
	c->cpu = i;
	c->spare = i >= ult__rt.ncpu;
	if (!c->spare && ult_cpu_info(i, &ci) == 0) {
		c->load = ci.load;
		c->blocked = ci.blocked;
		c->steals = ci.steals;
	} else
		c->blocked = ULT_LD(&w->blocked);
	c->switches = ULT_LD(&w->nswitch);
	c->idle_ns = ULT_LD(&w->idle_ns);
	c->busy_ns = ULT_LD(&w->busy_ns);
	c->preemptions = ULT_LD(&w->npreempt);
	c->parks = ULT_LD(&w->nparks);
}

static void
put_thread(struct ult_shm_thread *o, const struct ult_thread_info *in)
{
	memset(o, 0, sizeof(*o));
	o->id = in->id;
	memcpy(o->name, in->name, sizeof(o->name));
	o->name[sizeof(o->name) - 1] = '\0';
	memcpy(o->wchan, in->wchan, sizeof(o->wchan));
	o->state = in->state;
	o->cpu = in->cpu;
	o->priority = in->priority;
	o->nice = in->nice;
	o->score = in->interact_score;
	o->pctcpu_x100 = (int32_t)(in->pctcpu * 100.0);
	o->runtime_ns = in->runtime_ns;
	o->nvcsw = in->nvcsw;
	o->nivcsw = in->nivcsw;
	o->nmigrations = in->nmigrations;
}

static void
write_at(const void *p, size_t n, off_t off)
{
	const char *c = p;

	while (n > 0) {
		ssize_t k = pwrite(shm.fd, c, n, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return; /* a full /dev/shm: this snapshot is torn */
		c += k;
		n -= (size_t)k;
		off += k;
	}
}

static void
seq_write(void)
{
	write_at(&shm.m->seq, sizeof(shm.m->seq),
	    offsetof(struct ult_shm, seq));
}

static void
snapshot(void)
{
	struct ult_shm *m = shm.m;
	uint32_t k = 0;

	/* Collected under the slab's lock, read after it: ult_thread_info
	 * takes each thread's lock, and a struct reused since is told by
	 * its id. */
	shm.n = shm.nalive = 0;
	ult__thread_foreach(collect, NULL, 0);
	m->seq++;
	/* The odd number before any of the data, the even one after it: a
	 * reader's copy between two equal even ones is whole. */
	seq_write();
	for (int i = 0; i < ult__rt.nworkers && i < ULT_SHM_CPUS; i++)
		put_cpu(&m->cpus[i], i);
	for (uint32_t i = 0; i < shm.n; i++) {
		struct ult_thread_info in;
		ult_thread_t *t = shm.uts[i];

		if (ult_thread_info(t, &in) == 0 && in.id == shm.ids[i]) {
			m->waits[k].obj = (uintptr_t)in.wait_obj;
			m->waits[k].owner_id = in.wait_owner_id;
			put_thread(&m->threads[k++], &in);
		}
	}
	m->nthreads = k;
	m->nalive = shm.nalive;
	m->snap_ns = ult__now();
	write_at(m,
	    offsetof(struct ult_shm, threads) + k * sizeof(m->threads[0]), 0);
	write_at(m->waits, k * sizeof(m->waits[0]),
	    offsetof(struct ult_shm, waits));
	m->seq++;
	seq_write();
}

static void *
publisher(void *arg)
{
	(void)arg;
	/* The program's signals are for its own threads. */
	ult__os_block_async_signals();
	ult__os_set_name("ult-stats");
	while (!ULT_LD_ACQ(&shm.stop)) {
		snapshot();
		ult__futex_wait(&shm.stop, 0, ult__now() + PERIOD_NS);
	}
	return (NULL);
}

/* Segments of processes that died without removing theirs (a crash, a
 * kill -9): a process that starts the runtime removes those it may. */
static void
sweep(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char name[300];
		long pid;
		char *end;

		if (strncmp(e->d_name, "ult-", 4) != 0)
			continue;
		pid = strtol(e->d_name + 4, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(name, sizeof(name), "/%s", e->d_name);
		(void)shm_unlink(name);
	}
	closedir(d);
}

int
ult__shm_configure(void)
{
	const char *s = getenv("ULT_SHM");

	shm.want = s != NULL && strcmp(s, "1") == 0;
	if (!shm.want && s != NULL && *s != '\0' && strcmp(s, "0") != 0)
		return (EINVAL);
	return (0);
}

/* A new segment, O_EXCL: -1 if the name is taken by what is not a dead
 * process's segment of this user (said on stderr), or on another error. */
static int
create(void)
{
	int flags = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	struct stat st;
	int fd;

	if ((fd = shm_open(shm.name, flags, 0600)) >= 0 || errno != EEXIST)
		return (fd);
	/* The pid in the name is this process's, so whoever made the file
	 * either was a process of this pid before (dead: its stale
	 * segment), or made it on purpose.  Only the first is removed, and
	 * only if it looks like a segment: a regular file of this user,
	 * not readable by others. */
	if ((fd = shm_open(shm.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0)) <
		0 ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		fprintf(stderr,
		    "ult: ULT_SHM: /dev/shm%s exists and is not a segment this "
		    "user left (owner %ld, mode %03o): no statistics segment\n",
		    shm.name, fd >= 0 ? (long)st.st_uid : -1L,
		    fd >= 0 ? (unsigned)(st.st_mode & 07777) : 0u);
		if (fd >= 0)
			close(fd);
		return (-1);
	}
	close(fd);
	(void)shm_unlink(shm.name);
	return (shm_open(shm.name, flags, 0600));
}

void
ult__shm_start(void)
{
	if (!shm.want)
		return;
	sweep();
	snprintf(shm.name, sizeof(shm.name), "/ult-%d", (int)getpid());
	if ((shm.fd = create()) < 0)
		return;
	shm.m = calloc(1, sizeof(struct ult_shm));
	shm.uts = calloc(ULT_SHM_THREADS, sizeof(*shm.uts));
	shm.ids = calloc(ULT_SHM_THREADS, sizeof(*shm.ids));
	if (shm.m == NULL || shm.uts == NULL || shm.ids == NULL ||
	    ftruncate(shm.fd, sizeof(struct ult_shm)) != 0) {
		ult__shm_stop();
		return;
	}
	shm.m->magic = ULT_SHM_MAGIC;
	shm.m->version = ULT_SHM_VERSION;
	shm.m->size = sizeof(struct ult_shm);
	shm.m->pid = (int32_t)getpid();
	shm.m->ncpu = ult__rt.ncpu;
	shm.m->nworkers = ult__rt.nworkers;
	snprintf(shm.m->policy, sizeof(shm.m->policy), "%s",
	    ult__rt.sched->name);
	write_at(shm.m, offsetof(struct ult_shm, cpus), 0);
	ULT_ST(&shm.stop, 0);
	if (ult__os_thread(&shm.thread, publisher, NULL) != 0) {
		ult__shm_stop();
		return;
	}
	shm.running = 1;
}

void
ult__shm_stop(void)
{
	if (shm.running) {
		ULT_ST_REL(&shm.stop, 1);
		ult__futex_wake(&shm.stop, 1);
		pthread_join(shm.thread, NULL);
		shm.running = 0;
	}
	if (shm.fd >= 0) {
		close(shm.fd);
		shm.fd = -1;
		shm_unlink(shm.name);
	}
	free(shm.m);
	shm.m = NULL;
	free(shm.uts);
	free(shm.ids);
	shm.uts = NULL;
	shm.ids = NULL;
}

int
ult__shm_active(void)
{
	return (shm.fd >= 0);
}

void
ult__shm_exit(void)
{
	/* At exit the publisher may be mid-snapshot: take the name away,
	 * leave the descriptor to the process's end. */
	if (shm.fd >= 0)
		shm_unlink(shm.name);
}

static int
shm_configure(const struct ult_config *cfg)
{
	(void)cfg;
	return (ult__shm_configure());
}

static int
shm_init(void)
{
	ult__shm_start();
	return (0);
}

/* The segment's name is the parent's: the child's copy of the fd goes,
 * and its own start makes one under its pid. */
static void
shm_fork_child(void)
{
	if (shm.fd >= 0)
		close(shm.fd);
	shm.fd = -1;
	shm.running = 0;
	shm.m = NULL;
	shm.uts = NULL;
	shm.ids = NULL;
}

const struct ult__subsys ult__shm_subsys = {.name = "shm",
    .configure = shm_configure,
    .init = shm_init,
    .fini = ult__shm_stop,
    .fork_child = shm_fork_child};
