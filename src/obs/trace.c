/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Trace buffers.  Every kernel thread that records an event has a ring of
 * its own: a worker's is made before it starts (w->tbuf), any other
 * thread's (the clock thread, a foreign thread, a blocking-call helper)
 * at its first event.  The recording thread is the only writer, but a
 * signal handler on it may record in the middle of another record, so a
 * slot is claimed with an atomic add and published by its seq word; the
 * flusher thread copies published slots in order to the raw file every
 * few milliseconds and frees them by moving tail.  A full ring counts the
 * event as dropped: the JSON says how many, per track.
 *
 * The raw file is <path>.raw, unlinked as soon as it is open: nothing is
 * left behind, and the JSON is written from it at the end (trace_json.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../kern/runtime.h"
#include "../kern/worker.h"
#include "../kern/uthread.h"
#include "trace.h"
#include "../kern/subsys.h"

#define TBUF_DEFAULT (1u << 16) /* records a ring: 3 MiB */
#define TBUF_SLACK 64		/* room for signal handlers' records */
/* A thread that is no worker records little (wakeups, lock waits), and
 * there may be many: its ring is smaller. */
#define OTHER_RING 4096u
#define FLUSH_MS 2 /* the flusher's period, by default */
#define ULT_TRACE_OWNER "ULT_TRACE_PID"

int ult__trace_on;

struct tbuf {
	struct ult__tev *ev;
	unsigned size;	  /* records, a power of two */
	atomic_uint head; /* next slot to claim */
	atomic_uint tail; /* next slot to drain: the flusher's */
	atomic_uint_fast64_t dropped[TEV_NKINDS]; /* by kind */
	struct ult__trace_track info;
	int tid;	   /* a thread that is no worker's: its kernel tid */
	atomic_int freed;  /* its thread gone, ev freed (the flusher's) */
	struct tbuf *next; /* on `all' */
};

static struct {
	pthread_mutex_t lock; /* start/finish, and adding to `all' */
	struct tbuf *_Atomic all;
	unsigned size, ntracks;
	unsigned gen; /* tracing sessions started: stale tls_tbuf check */
	int rawfd, outfd;
	int flushing;
	uint64_t period_ns; /* ULT_TRACE_FLUSH_MS */
	uint64_t raw_bytes; /* whole records in the raw file (the flusher's) */
	int raw_broken;	    /* a write failed: no more (the flusher's) */
	atomic_uint stop;   /* futex word: the flusher sleeps on it */
	pthread_t flusher;
	atomic_uint_fast64_t lost; /* records the raw file refused */
} tr = {.lock = PTHREAD_MUTEX_INITIALIZER, .rawfd = -1, .outfd = -1};

static __thread struct tbuf *tls_tbuf;
static __thread unsigned tls_gen;

/* A ring for worker cpu, or (cpu -1) for thread tid; published on `all'
 * complete, since the flusher reads it from then on. */
static struct tbuf *
buf_new(int cpu, int tid, const char *name)
{
	struct tbuf *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return (NULL);
	b->size = cpu >= 0 || tr.size <= OTHER_RING ? tr.size : OTHER_RING;
	b->ev = calloc(b->size, sizeof(*b->ev));
	if (b->ev == NULL) {
		free(b);
		return (NULL);
	}
	b->info.cpu = cpu;
	b->tid = tid;
	snprintf(b->info.name, sizeof(b->info.name), "%s", name);
	pthread_mutex_lock(&tr.lock);
	b->info.id = ++tr.ntracks;
	b->next = ULT_LD(&tr.all);
	ULT_ST_REL(&tr.all, b);
	pthread_mutex_unlock(&tr.lock);
	return (b);
}

/* A thread that is no worker: its own ring, named after its thread. */
static struct tbuf *
buf_other(void)
{
	char name[16] = "thread";

	if (tls_tbuf != NULL && tls_gen == tr.gen)
		return (tls_tbuf);
	/* Not pthread_getname_np: the drop-in answers that for uthreads. */
	(void)prctl(PR_GET_NAME, name, 0, 0, 0);
	tls_tbuf = buf_new(-1, ult__os_gettid(), name);
	tls_gen = tr.gen;
	return (tls_tbuf);
}

void
ult__trace_emit(int kind, uint64_t ts, uint64_t a, uint64_t b, uint64_t c,
    uint32_t d)
{
	struct ult__worker *w = ult__tls_worker;
	struct tbuf *t = w != NULL ? w->tbuf : buf_other();
	struct ult__tev *e;
	unsigned h;

	if (t == NULL)
		return;
	h = ULT_LD(&t->head);
	if (h - ULT_LD_ACQ(&t->tail) >= t->size - TBUF_SLACK) {
		ULT_ADD(&t->dropped[kind], 1);
		return;
	}
	h = ULT_ADD(&t->head, 1);
	e = &t->ev[h & (t->size - 1)];
	e->ts = ts != 0 ? ts : ult__fastclock_now();
	e->a = a;
	e->b = b;
	e->c = c;
	e->d = d;
	e->kind = (uint16_t)kind;
	e->cpu = (int16_t)(w != NULL ? w->id : ult__tls_actcpu);
	e->track = t->info.id;
	ULT_ST_REL(&e->seq, h + 1);
}

/* Append whole records; after a failed write (a full disk) the file is
 * cut back to its last whole record and nothing more is written: the
 * records that did not go in are counted as lost. */
static void
raw_write(const void *p, size_t n)
{
	const char *c = p;
	size_t left = n;

	if (tr.raw_broken) {
		ULT_ADD(&tr.lost, n / sizeof(struct ult__tev));
		return;
	}
	while (left > 0) {
		ssize_t k = write(tr.rawfd, c, left);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			tr.raw_broken = 1;
			(void)ftruncate(tr.rawfd, (off_t)tr.raw_bytes);
			(void)lseek(tr.rawfd, (off_t)tr.raw_bytes, SEEK_SET);
			ULT_ADD(&tr.lost, n / sizeof(struct ult__tev));
			return;
		}
		c += k;
		left -= (size_t)k;
	}
	tr.raw_bytes += n;
}

/* Copy b's published records to the raw file, oldest first. */
static void
drain(struct tbuf *b)
{
	unsigned t = ULT_LD(&b->tail), n = 0, mask = b->size - 1;

	while (
	    n < b->size && ULT_LD_ACQ(&b->ev[(t + n) & mask].seq) == t + n + 1)
		n++;
	if (n == 0)
		return;
	if ((t & mask) + n > b->size) {
		unsigned first = b->size - (t & mask);

		raw_write(&b->ev[t & mask], first * sizeof(*b->ev));
		raw_write(&b->ev[0], (n - first) * sizeof(*b->ev));
	} else
		raw_write(&b->ev[t & mask], n * sizeof(*b->ev));
	ULT_ST_REL(&b->tail, t + n);
}

/*
 * A program that starts many short-lived threads which call into ult
 * would otherwise keep a ring per thread it ever had.  Once the thread of
 * a ring has exited and the ring is drained, nobody can write to it: its
 * records go, and its track (name, drop counts) stays for the JSON.  (A
 * reused tid only delays that; the new thread has a ring of its own.)
 */
static void
reclaim(struct tbuf *b)
{
	if (b->tid == 0 || b->ev == NULL || ult__os_thread_alive(b->tid))
		return;
	/* Gone: whatever it published before it went is drained now. */
	drain(b);
	if (ULT_LD(&b->head) != ULT_LD(&b->tail))
		return;
	free(b->ev);
	b->ev = NULL;
	ULT_ST_REL(&b->freed, 1);
}

/* Every ring; with `reap', free the rings of threads that have gone. */
static void
drain_all(int reap)
{
	for (struct tbuf *b = ULT_LD_ACQ(&tr.all); b != NULL; b = b->next) {
		if (b->ev == NULL)
			continue;
		drain(b);
		if (reap)
			reclaim(b);
	}
}

unsigned
ult__trace_rings_held(void)
{
	unsigned n = 0;

	pthread_mutex_lock(&tr.lock);
	for (struct tbuf *b = ULT_LD_ACQ(&tr.all); b != NULL; b = b->next)
		n += ULT_LD_ACQ(&b->freed) == 0;
	pthread_mutex_unlock(&tr.lock);
	return (n);
}

static void *
flusher(void *arg)
{
	(void)arg;
	/* The program's signals are for its own threads. */
	ult__os_block_async_signals();
	ult__os_set_name("ult-trace");
	for (unsigned n = 1; !ULT_LD_ACQ(&tr.stop); n++) {
		ult__futex_wait(&tr.stop, 0, ult__now() + tr.period_ns);
		/* Look for exited threads every 64 periods: a system call
		 * each. */
		drain_all(n % 64 == 0);
	}
	return (NULL);
}

/* A decimal environment value in lo..hi; def if absent. */
static int
env_in(const char *var, unsigned long lo, unsigned long hi, unsigned long def,
    unsigned long *out)
{
	const char *s = getenv(var);
	char *end;

	*out = def;
	if (s == NULL || *s == '\0')
		return (0);
	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || *out < lo || *out > hi)
		return (EINVAL);
	return (0);
}

/* ULT_TRACE_BUFFER: records a ring, a power of two; ULT_TRACE_FLUSH_MS:
 * the flusher's period (tests make the one small, the other long). */
static int
trace_config(void)
{
	unsigned long size, ms;

	if (env_in("ULT_TRACE_BUFFER", 256, 1ul << 24, TBUF_DEFAULT, &size) ||
	    (size & (size - 1)) != 0 ||
	    env_in("ULT_TRACE_FLUSH_MS", 1, 10000, FLUSH_MS, &ms))
		return (EINVAL);
	tr.size = (unsigned)size;
	tr.period_ns = ms * 1000000ull;
	return (0);
}

static void
free_all(void)
{
	struct tbuf *b = ULT_LD(&tr.all);

	while (b != NULL) {
		struct tbuf *n = b->next;

		free(b->ev);
		free(b);
		b = n;
	}
	ULT_ST(&tr.all, NULL);
}

/*
 * ULT_TRACE is inherited by every process the program starts, and any of
 * them that runs ult (under ult-run, every dynamically linked one) would
 * write the same file over the program's.  So "%p" in the name is this
 * process's pid (each writes its own), and a name without it belongs to
 * the first process that traced with it: ULT_TRACE_PID, set by that
 * process, tells a child that the file is not its to write.  0 with the
 * path in path, -1 if this process writes no trace, or an errno.
 */
static int
trace_path(const char *name, char *path, size_t size)
{
	const char *owner = getenv(ULT_TRACE_OWNER);
	char pid[24], *end;
	size_t n = 0;
	long o;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (strstr(name, "%p") == NULL) {
		if (owner != NULL && *owner != '\0') {
			o = strtol(owner, &end, 10);
			if (*end == '\0' && o != (long)getpid())
				return (-1);
		}
		if (setenv(ULT_TRACE_OWNER, pid, 1) != 0)
			return (errno);
	}
	for (const char *c = name; *c != '\0'; c++) {
		const char *add = c[0] == '%' && c[1] == 'p' ? pid : NULL;
		size_t len = add != NULL ? strlen(add) : 1;

		if (n + len >= size)
			return (ENAMETOOLONG);
		memcpy(path + n, add != NULL ? add : c, len);
		n += len;
		c += add != NULL;
	}
	path[n] = '\0';
	return (0);
}

int
ult__trace_start(void)
{
	const char *name = getenv("ULT_TRACE");
	char path[4000], raw[4096];
	int err;

	if (name == NULL || *name == '\0')
		return (0);
	if ((err = trace_config()) != 0)
		return (err);
	if ((err = trace_path(name, path, sizeof(path))) != 0)
		return (err < 0 ? 0 : err);
	if (snprintf(raw, sizeof(raw), "%s.raw", path) >= (int)sizeof(raw))
		return (ENAMETOOLONG);
	pthread_mutex_lock(&tr.lock);
	tr.outfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	/* Never a file of the user's: EEXIST if <path>.raw exists. */
	tr.rawfd = open(raw, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	err = tr.outfd < 0 || tr.rawfd < 0 ? errno : 0;
	if (tr.rawfd >= 0)
		(void)unlink(raw);
	tr.gen++;
	tr.ntracks = 0;
	tr.raw_bytes = 0;
	tr.raw_broken = 0;
	ULT_ST(&tr.lost, 0);
	ULT_ST(&tr.stop, 0);
	if (err == 0 &&
	    (err = pthread_create(&tr.flusher, NULL, flusher, NULL)) == 0)
		tr.flushing = 1;
	if (err != 0) {
		if (tr.outfd >= 0)
			close(tr.outfd);
		if (tr.rawfd >= 0)
			close(tr.rawfd);
		tr.outfd = tr.rawfd = -1;
	}
	pthread_mutex_unlock(&tr.lock);
	if (err == 0)
		ULT_PST(&ult__trace_on, 1);
	return (err);
}

int
ult__trace_worker_init(struct ult__worker *w)
{
	char name[24];

	w->tbuf = NULL;
	if (!ULT_PLD(&ult__trace_on))
		return (0);
	snprintf(name, sizeof(name), "worker %d%s", w->id,
	    w->id >= ult__rt.ncpu ? " (spare)" : "");
	w->tbuf = buf_new(w->id, 0, name);
	return (w->tbuf != NULL ? 0 : ENOMEM);
}

void
ult__trace_spawn(struct ult_thread *parent, struct ult_thread *ut)
{
	size_t n = strnlen(ut->name, sizeof(ut->name));
	uint64_t now = ult__fastclock_now();

	ult__trace_emit(TEV_SPAWN, now, parent != NULL ? parent->id : 0, ut->id,
	    0, 1);
	for (size_t off = 0; off < n; off += 12) {
		uint64_t p[2] = {0, 0};

		memcpy(p, ut->name + off, n - off < 12 ? n - off : 12);
		ult__trace_emit(TEV_NAME, now, ut->id, p[0], p[1],
		    (uint32_t)(off / 12));
	}
}

void
ult__trace_switch(struct ult__worker *w, struct ult_thread *from,
    struct ult_thread *to, uint64_t now)
{
	uint32_t k = 0;

	/* The first run after a wakeup ends the wakeup's flow. */
	if (to != &w->idle && to->twake != to->tseen) {
		k = to->twake;
		to->tseen = k;
	}
	ult__trace_emit(TEV_SWITCH, now, from == &w->idle ? 0 : from->id,
	    to == &w->idle ? 0 : to->id, (uint64_t)from->last_swt, k);
}

void
ult__trace_wakeup(struct ult_thread *ut, uint64_t now)
{
	struct ult_thread *self = ult__self_ut();

	ult__trace_emit(TEV_WAKEUP, now, self != NULL ? self->id : 0, ut->id,
	    (uint64_t)-1, ut->twake);
}

void
ult__trace_finish(int threads_gone)
{
	struct ult__trace_track *tracks;
	int n = 0;

	pthread_mutex_lock(&tr.lock);
	if (!tr.flushing) {
		pthread_mutex_unlock(&tr.lock);
		return;
	}
	ULT_PST(&ult__trace_on, 0);
	ULT_ST_REL(&tr.stop, 1);
	ult__futex_wake(&tr.stop, 1);
	pthread_mutex_unlock(&tr.lock);
	pthread_join(tr.flusher, NULL);
	pthread_mutex_lock(&tr.lock);
	tr.flushing = 0;
	drain_all(0);
	tracks = calloc(tr.ntracks + 1, sizeof(*tracks));
	for (struct tbuf *b = ULT_LD(&tr.all); b != NULL && tracks != NULL;
	     b = b->next) {
		tracks[n] = b->info;
		for (int k = 1; k < TEV_NKINDS; k++) {
			tracks[n].dropped[k] = ULT_LD(&b->dropped[k]);
			tracks[n].dropped[0] += tracks[n].dropped[k];
		}
		n++;
	}
	if (tracks == NULL || lseek(tr.rawfd, 0, SEEK_SET) != 0 ||
	    ult__trace_json(tr.rawfd, tr.outfd, tracks, n, ULT_LD(&tr.lost)) !=
		0)
		fprintf(stderr, "ult: ULT_TRACE: could not write the trace\n");
	free(tracks);
	close(tr.rawfd);
	close(tr.outfd);
	tr.rawfd = tr.outfd = -1;
	if (threads_gone)
		free_all();
	pthread_mutex_unlock(&tr.lock);
}

/* ult_shutdown: every uthread is gone, the trace is complete. */
static void
trace_fini(void)
{
	ult__trace_finish(1);
}

/* The flusher and the files are the parent's (a child writes no trace
 * of its own unless the name has %p: trace_path). */
static void
trace_fork_child(void)
{
	pthread_mutex_init(&tr.lock, NULL);
	ULT_PST(&ult__trace_on, 0);
	if (tr.flushing) {
		close(tr.rawfd);
		close(tr.outfd);
	}
	tr.rawfd = tr.outfd = -1;
	tr.flushing = 0;
	tr.gen++; /* the forking thread's buffer is stale */
	ULT_ST(&tr.all, NULL);
}

const struct ult__subsys ult__trace_subsys = {.name = "trace",
    .init = ult__trace_start,
    .fini = trace_fini,
    .fork_child = trace_fork_child};
