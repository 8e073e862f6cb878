/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The raw trace as Chrome trace-event JSON, which Perfetto's UI and
 * chrome://tracing open.  One track (tid) per recording thread: a worker's
 * shows its uthreads' runs as complete ("X") slices; a wakeup is a flow
 * from the waker's slice to the woken thread's next run; everything else
 * is an instant ("i") with its details in args.  One event per line with
 * the keys in a fixed order, so that ult-trace-summary reads it without a
 * JSON library.  Two passes over the raw file: the first collects names
 * and the first timestamp, the second writes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kern/runtime.h"
#include "trace.h"

/* ---- a small map: uthread id -> name ---- */

struct name_ent {
	uint64_t id; /* 0: empty */
	char name[32];
};

static struct {
	struct name_ent *e;
	size_t cap, n;
} names;

static size_t
slot_of(uint64_t id, size_t cap)
{
	return ((size_t)(id * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1));
}

static struct name_ent *
name_get(uint64_t id, int make)
{
	size_t i;

	if (names.cap == 0 || (make && 2 * (names.n + 1) > names.cap)) {
		size_t ncap = names.cap ? 2 * names.cap : 1024;
		struct name_ent *ne = calloc(ncap, sizeof(*ne));

		if (ne == NULL)
			return (NULL);
		for (size_t k = 0; k < names.cap; k++) {
			if (names.e[k].id == 0)
				continue;
			i = slot_of(names.e[k].id, ncap);
			while (ne[i].id != 0)
				i = (i + 1) & (ncap - 1);
			ne[i] = names.e[k];
		}
		free(names.e);
		names.e = ne;
		names.cap = ncap;
	}
	for (i = slot_of(id, names.cap); names.e[i].id != 0;
	     i = (i + 1) & (names.cap - 1))
		if (names.e[i].id == id)
			return (&names.e[i]);
	if (!make)
		return (NULL);
	names.e[i].id = id;
	names.n++;
	return (&names.e[i]);
}

/* ---- buffered output ---- */

static struct {
	int fd, err;
	size_t n;
	char b[1 << 16];
} out;

static void
out_flush(void)
{
	size_t off = 0;

	while (off < out.n && !out.err) {
		ssize_t k = write(out.fd, out.b + off, out.n - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			out.err = 1;
		else
			off += (size_t)k;
	}
	out.n = 0;
}

__attribute__((format(printf, 1, 2))) static void
outf(const char *fmt, ...)
{
	va_list ap;
	int k;

	if (sizeof(out.b) - out.n < 1024)
		out_flush();
	va_start(ap, fmt);
	k = vsnprintf(out.b + out.n, sizeof(out.b) - out.n, fmt, ap);
	va_end(ap);
	if (k > 0)
		out.n += (size_t)k < sizeof(out.b) - out.n
		    ? (size_t)k
		    : sizeof(out.b) - out.n - 1;
}

/* ---- reading the raw file ---- */

static int
raw_next(int fd, struct ult__tev *buf, size_t *have, size_t *pos,
    struct ult__tev *e)
{
	if (*pos == *have) {
		ssize_t k;

		do
			k = read(fd, buf, 4096 * sizeof(*buf));
		while (k < 0 && errno == EINTR);
		if (k <= 0)
			return (0);
		*have = (size_t)k / sizeof(*buf);
		*pos = 0;
		if (*have == 0)
			return (0);
	}
	*e = buf[(*pos)++];
	return (1);
}

/* ---- writing ---- */

static uint64_t t0;

/* Microseconds since the first event, as Chrome wants them. */
static double
us(uint64_t ts)
{
	return (ts > t0 ? (double)(ts - t0) / 1e3 : 0.0);
}

/* s as the inside of a JSON string (names are the program's). */
static const char *
escaped(const char *s, char *buf, size_t n)
{
	size_t o = 0;

	for (; *s != '\0' && o + 7 < n; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(buf + o, n - o, "\\u%04x", c);
		} else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return (buf);
}

static const char *
who(uint64_t id, char *buf, size_t n)
{
	struct name_ent *ne = name_get(id, 0);

	if (ne != NULL && ne->name[0] != '\0')
		return (escaped(ne->name, buf, n));
	snprintf(buf, n, "ut %" PRIu64, id);
	return (buf);
}

static const char *
swt_name(uint64_t swt)
{
	static const char *const n[] = {"none", "preempt", "owepreempt",
	    "turnstile", "sleepq", "?", "yield", "needresched", "idle", "?",
	    "?", "remotepreempt", "?", "bind", "childfirst"};

	return (swt < sizeof(n) / sizeof(n[0]) ? n[swt] : "?");
}

/* Per track: the uthread running now and since when. */
struct track_state {
	uint64_t cur, since;
	int started;
	int worker;
	int exiting; /* cur has exited: its slice ends with "exit" */
};

static int pid;

static void
slice(uint32_t tid, uint64_t id, uint64_t from, uint64_t to, const char *why)
{
	char nb[200];

	outf("{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
	     "\"name\":\"%s\",\"cat\":\"run\",\"args\":{\"id\":%" PRIu64
	     ",\"out\":\"%s\"}},\n",
	    pid, tid, us(from), us(to) - us(from), who(id, nb, sizeof(nb)), id,
	    why);
}

static void
flow(char ph, uint32_t tid, uint64_t ts, uint64_t id, uint32_t k,
    const char *name)
{
	outf("{\"ph\":\"%c\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"name\":\"%s\","
	     "\"cat\":\"wakeup\",\"id\":\"%" PRIu64 ".%u\",\"bp\":\"e\"},\n",
	    ph, pid, tid, us(ts), name, id, k);
}

static void
instant(uint32_t tid, uint64_t ts, const char *name, const char *args)
{
	outf("{\"ph\":\"i\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"name\":\"%s\","
	     "\"cat\":\"sched\",\"s\":\"t\",\"args\":{%s}},\n",
	    pid, tid, us(ts), name, args);
}

/* A wakeup or spawn: the flow starts in the waker's running slice, or in
 * a slice of its own on a track that runs no uthreads. */
static void
flow_start(struct track_state *st, uint32_t tid, const struct ult__tev *e,
    uint64_t woken, uint32_t k, const char *name)
{
	if (!st->worker || st->cur == 0)
		outf("{\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,"
		     "\"dur\":0.001,\"name\":\"%s\",\"cat\":\"wakeup\","
		     "\"args\":{\"id\":%" PRIu64 "}},\n",
		    pid, tid, us(e->ts), name, woken);
	flow('s', tid, e->ts, woken, k, name);
}

/* The kinds that are an instant with one of three sets of args. */
enum {
	ARGS_ID = 1,
	ARGS_CPU,
	ARGS_MOVE
};
static const struct {
	const char *name;
	int args;
} simple_kind[TEV_NKINDS] = {
    [TEV_EXIT] = {"exit", ARGS_ID},
    [TEV_MIGRATE] = {"migrate", ARGS_MOVE},
    [TEV_STEAL] = {"steal", ARGS_MOVE},
    [TEV_PUSH] = {"push", ARGS_MOVE},
    [TEV_PREEMPT_SENT] = {"preempt sent", ARGS_CPU},
    [TEV_PREEMPT] = {"preempt taken", ARGS_ID},
    [TEV_OWED] = {"preempt owed", ARGS_ID},
    [TEV_DEFERRED] = {"preempt deferred", ARGS_ID},
    [TEV_FORCED] = {"preempt forced", ARGS_ID},
    [TEV_HANDOFF] = {"handoff", ARGS_CPU},
};

static void
simple(uint32_t tid, const struct ult__tev *e)
{
	char a[96];

	if (e->kind >= TEV_NKINDS || simple_kind[e->kind].name == NULL)
		return;
	switch (simple_kind[e->kind].args) {
	case ARGS_ID:
		snprintf(a, sizeof(a), "\"id\":%" PRIu64, e->a);
		break;
	case ARGS_CPU:
		snprintf(a, sizeof(a), "\"cpu\":%" PRIu64, e->a);
		break;
	default:
		snprintf(a, sizeof(a),
		    "\"id\":%" PRIu64 ",\"from\":%" PRId64 ",\"to\":%" PRId64,
		    e->a, (int64_t)e->b, (int64_t)e->c);
	}
	instant(tid, e->ts, simple_kind[e->kind].name, a);
}

static void
event(struct track_state *st, const struct ult__tev *e)
{
	uint32_t tid = e->track;
	char a[320], nb[200];

	switch (e->kind) {
	case TEV_SWITCH:
		if (st->started && st->cur != 0)
			slice(tid, st->cur, st->since, e->ts,
			    st->exiting ? "exit" : swt_name(e->c));
		st->exiting = 0;
		st->cur = e->b;
		st->since = e->ts;
		st->started = 1;
		if (e->b != 0 && e->d != 0)
			flow('f', tid, e->ts, e->b, e->d,
			    e->d == 1 ? "spawn" : "wakeup");
		return;
	case TEV_WAKEUP:
		flow_start(st, tid, e, e->b, e->d, "wakeup");
		return;
	case TEV_SPAWN:
		flow_start(st, tid, e, e->b, 1, "spawn");
		snprintf(a, sizeof(a), "\"child\":%" PRIu64 ",\"name\":\"%s\"",
		    e->b, who(e->b, nb, sizeof(nb)));
		instant(tid, e->ts, "spawn", a);
		return;
	case TEV_SLEEP:
		snprintf(a, sizeof(a),
		    "\"id\":%" PRIu64 ",\"wchan\":\"0x%" PRIx64
		    "\",\"wmesg\":\"%s\"",
		    e->a, e->b,
		    e->c != 0 ? (const char *)(uintptr_t)e->c : "?");
		instant(tid, e->ts, "sleep", a);
		return;
	case TEV_LOCK:
		snprintf(a, sizeof(a),
		    "\"id\":%" PRIu64 ",\"lock\":\"0x%" PRIx64
		    "\",\"owner\":%" PRIu64,
		    e->a, e->b, e->c);
		instant(tid, e->ts, "lock contended", a);
		return;
	default:
		if (e->kind == TEV_EXIT && e->a == st->cur)
			st->exiting = 1;
		simple(tid, e);
		return;
	}
}

static void
metadata(const struct ult__trace_track *tr, int ntracks)
{
	outf("{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\","
	     "\"args\":{\"name\":\"ult (%s)\"}},\n",
	    pid, ult__rt.sched->name);
	for (int i = 0; i < ntracks; i++) {
		char dropped[48] = "", nb[160];

		if (tr[i].dropped[0] != 0)
			snprintf(dropped, sizeof(dropped),
			    " (%" PRIu64 " events dropped)", tr[i].dropped[0]);
		outf("{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_"
		     "name\",\"args\":{\"name\":\"%s%s\"}},\n",
		    pid, tr[i].id, escaped(tr[i].name, nb, sizeof(nb)),
		    dropped);
		outf("{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_"
		     "sort_index\",\"args\":{\"sort_index\":%d}},\n",
		    pid, tr[i].id,
		    tr[i].cpu >= 0 ? tr[i].cpu : 1000 + (int)tr[i].id);
	}
}

/* The kinds by name, for otherData's counts. */
static const char *const kind_name[TEV_NKINDS] = {
    [TEV_SWITCH] = "switch",
    [TEV_WAKEUP] = "wakeup",
    [TEV_SPAWN] = "spawn",
    [TEV_EXIT] = "exit",
    [TEV_NAME] = "name",
    [TEV_SLEEP] = "sleep",
    [TEV_MIGRATE] = "migrate",
    [TEV_STEAL] = "steal",
    [TEV_PUSH] = "push",
    [TEV_PREEMPT_SENT] = "preempt_sent",
    [TEV_PREEMPT] = "preempt",
    [TEV_OWED] = "owed",
    [TEV_DEFERRED] = "deferred",
    [TEV_FORCED] = "forced",
    [TEV_LOCK] = "lock",
    [TEV_HANDOFF] = "handoff",
};

static void
kind_counts(const char *key, const uint64_t *n)
{
	outf(",\"%s\":{", key);
	for (int k = 1; k < TEV_NKINDS; k++)
		outf("%s\"%s\":%" PRIu64, k > 1 ? "," : "", kind_name[k], n[k]);
	outf("}");
}

int
ult__trace_json(int rawfd, int outfd, const struct ult__trace_track *tr,
    int ntracks, uint64_t lost)
{
	uint64_t kept[TEV_NKINDS] = {0}, dropped[TEV_NKINDS] = {0};
	struct ult__tev *buf = malloc(4096 * sizeof(*buf)), e;
	struct track_state *st = calloc((size_t)ntracks + 2, sizeof(*st));
	size_t have = 0, pos = 0;
	uint64_t total = 0;
	int first = 1, ok;

	if (buf == NULL || st == NULL) {
		free(buf);
		free(st);
		return (ENOMEM);
	}
	pid = (int)getpid();
	out.fd = outfd;
	out.err = 0;
	out.n = 0;
	t0 = 0;
	while (raw_next(rawfd, buf, &have, &pos, &e)) {
		if (first || e.ts < t0)
			t0 = e.ts;
		first = 0;
		if (e.kind == TEV_NAME && e.d < 3) {
			struct name_ent *ne = name_get(e.a, 1);
			char part[12];
			size_t at = 12 * (size_t)e.d;

			memcpy(part, &e.b, 8);
			memcpy(part + 8, &e.c, 4);
			if (ne != NULL) {
				memcpy(ne->name + at, part,
				    at + 12 <= 31 ? 12 : 31 - at);
				ne->name[31] = '\0';
			}
		}
	}
	for (int i = 0; i < ntracks; i++)
		if (tr[i].id <= (uint32_t)ntracks + 1)
			st[tr[i].id].worker = tr[i].cpu >= 0;
	outf("{\"traceEvents\":[\n");
	metadata(tr, ntracks);
	have = pos = 0;
	ok = lseek(rawfd, 0, SEEK_SET) == 0;
	while (ok && raw_next(rawfd, buf, &have, &pos, &e))
		if (e.track <= (uint32_t)ntracks + 1 && e.kind < TEV_NKINDS) {
			kept[e.kind]++;
			event(&st[e.track], &e);
		}
	for (int i = 0; i < ntracks; i++)
		for (int k = 1; k < TEV_NKINDS; k++)
			dropped[k] += tr[i].dropped[k];
	for (int k = 1; k < TEV_NKINDS; k++)
		total += dropped[k];
	total += lost;
	/* The last metadata line carries no comma: JSON has no trailing
	 * commas, and every event line above has one. */
	outf("{\"ph\":\"M\",\"pid\":%d,\"name\":\"ult_dropped_events\","
	     "\"args\":{\"dropped\":%" PRIu64 "}}\n",
	    pid, total);
	outf(
	    "],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"policy\":\"%s\","
	    "\"ncpu\":%d,\"dropped_events\":%" PRIu64
	    ",\"lost_in_writing\":%" PRIu64,
	    ult__rt.sched->name, ult__rt.ncpu, total, lost);
	kind_counts("recorded", kept);
	kind_counts("dropped", dropped);
	outf("}}\n");
	out_flush();
	free(buf);
	free(st);
	free(names.e);
	names.e = NULL;
	names.cap = names.n = 0;
	return (ok && !out.err ? 0 : EIO);
}
