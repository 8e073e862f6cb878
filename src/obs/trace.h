/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The scheduler trace (ULT_TRACE=path): events recorded into one buffer
 * per kernel thread, drained to a raw file by a flusher thread, and turned
 * into Chrome trace-event JSON when the runtime stops or the process
 * exits (trace_json.c).  DESIGN.md, "Tracing", has the format.
 *
 * With tracing off, a trace point costs one load of ult__trace_on and a
 * branch the compiler lays out as not taken.
 */
#ifndef ULT_CORE_TRACE_H
#define ULT_CORE_TRACE_H

#include <stdint.h>

#include "../util/atomic.h"

/* Event kinds.  a, b, c are per kind: */
enum {
	TEV_SWITCH = 1, /* a from id (0: idle), b to id, c reason (SWT_*),
			   d to's wakeup count */
	TEV_WAKEUP,	/* a waker id (0: none), b woken id, c target CPU
			   (-1: unknown), d woken's wakeup count */
	TEV_SPAWN,	/* a parent id (0: foreign), b child id, d 1 */
	TEV_EXIT,	/* a id */
	TEV_NAME,	/* a id, b and c: up to 12 bytes of the name, d the
			   part number (names go in 12-byte parts) */
	TEV_SLEEP,	/* a id, b wait channel, c wmesg (a static string) */
	TEV_MIGRATE,	/* a id, b from CPU, c to CPU */
	TEV_STEAL,	/* a id, b from CPU, c to CPU (by the CPU it went to) */
	TEV_PUSH,	/* a id, b from CPU, c to CPU (balancer, elsewhere) */
	TEV_PREEMPT_SENT, /* a target CPU */
	TEV_PREEMPT,	  /* a id: switched out by the preemption signal */
	TEV_OWED,	  /* a id: preemption deferred to a safe point */
	TEV_DEFERRED,	  /* a id: preemption deferred by a schedctl hint */
	TEV_FORCED,	  /* a id: hint's bound passed, preempted anyway */
	TEV_LOCK,	  /* a waiter id, b lock address, c owner id */
	TEV_HANDOFF,	  /* a CPU found blocked in the kernel */
	TEV_NKINDS
};

/* Off unless ULT_TRACE named a file at ult_init. */
extern int ult__trace_on;

/* Record an event (ts 0: read the clock). */
void ult__trace_emit(int kind, uint64_t ts, uint64_t a, uint64_t b, uint64_t c,
    uint32_t d);

/*
 * USDT probes (provider "ult") at the same points, for perf and bpftrace,
 * where the build found <sys/sdt.h> (Debian: systemtap-sdt-dev).  A probe
 * is a nop until a tracer attaches; its arguments are values the code
 * has at hand.  DESIGN.md, "Tracing", lists them.
 */
#if defined(__has_include)
#if __has_include(<sys/sdt.h>) && !defined(ULT_NO_USDT)
#include <sys/sdt.h>
#define ULT_HAVE_USDT 1
#endif
#endif
#ifdef ULT_HAVE_USDT
#define ULT_USDT(name, a, b, c) \
	DTRACE_PROBE3(ult, name, (uint64_t)(a), (uint64_t)(b), (uint64_t)(c))
#else
#define ULT_USDT(name, a, b, c) ((void)0)
#endif

/* A trace point: the USDT probe `probe', and the trace's event. */
#define ULT_TRACE(kind, probe, ts, a, b, c, d)                            \
	do {                                                              \
		ULT_USDT(probe, a, b, c);                                 \
		if (ULT_UNLIKELY(ULT_PLD(&ult__trace_on)))                \
			ult__trace_emit((kind), (ts), (uint64_t)(a),      \
			    (uint64_t)(b), (uint64_t)(c), (uint32_t)(d)); \
	} while (0)

struct ult__worker;
struct ult_thread;

/* From ult_init: start tracing if ULT_TRACE is set.  0, or an errno
 * value (the file cannot be made: ult_init fails with it). */
int ult__trace_start(void);
/* The worker's buffer, made before it runs anything. */
int ult__trace_worker_init(struct ult__worker *w);
/* Write the trace and stop tracing: from ult_shutdown (or a failed
 * ult_init) once the workers have stopped, threads_gone 1; at process
 * exit with the runtime still up, 0 (the rings are not freed then: a
 * worker may be writing its last record). */
void ult__trace_finish(int threads_gone);
/* Rings that hold records space now (for tests: exited threads' rings
 * are freed). */
unsigned ult__trace_rings_held(void);
/* A spawned thread's name and creation, for the trace. */
void ult__trace_spawn(struct ult_thread *parent, struct ult_thread *ut);
/* A switch on w at now (its clock). */
void ult__trace_switch(struct ult__worker *w, struct ult_thread *from,
    struct ult_thread *to, uint64_t now);

/* Trace records, as the raw file holds them. */
struct ult__tev {
	uint64_t ts, a, b, c;
	uint32_t d;
	uint16_t kind;
	int16_t cpu;	 /* the CPU the event happened on, or -1 */
	atomic_uint seq; /* index + 1 once written (trace.c) */
	uint32_t track;	 /* the buffer it was recorded in */
};

/* trace_json.c: turn the raw file (fd, at its start) into JSON on out. */
struct ult__trace_track {
	uint32_t id;
	int cpu; /* a worker's CPU, or -1 */
	char name[24];
	uint64_t dropped[TEV_NKINDS]; /* by kind; [0]: their sum */
};
/* lost: records the raw file could not take (a full disk). */
int ult__trace_json(int rawfd, int outfd, const struct ult__trace_track *tr,
    int ntracks, uint64_t lost);

/* A uthread's trace state (struct ult_thread's part): twake counts its
 * wakeups (written under its thread lock by whoever wakes it), tseen is
 * the last one the trace paired with a run (s). */
struct ult__trace_part {
	uint32_t twake, tseen;
};

struct ult__subsys;
extern const struct ult__subsys ult__trace_subsys;

#endif
