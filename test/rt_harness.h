/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the stress harness (rt_harness.c) shares with its watchers
 * (rt_harness_watch.c): the actors, the run's end and the failure count.
 */
#ifndef ULT_RT_HARNESS_H
#define ULT_RT_HARNESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "ult.h"

#define NUTHREADS 24
#define NPTHREADS 3
#define NACTORS (NUTHREADS + NPTHREADS)

struct actor {
	int idx;
	ult_thread_t *_Atomic ut; /* NULL for a pthread */
	pthread_t pt;
	unsigned seed;
	atomic_long ops;
	_Atomic uint64_t last; /* ult_now() at the last completed op */
	atomic_int exempt;     /* in the idle class: may starve legitimately */
	const char *doing;     /* the op under way, for the hang message */
};

extern struct actor harness_actors[NACTORS];
extern atomic_int harness_stop, harness_failures;
extern uint64_t harness_run_until;
/* What the main thread is doing; it must be done within the hang limit
 * after the end of the run. */
extern const char *_Atomic harness_main_doing;

#define FAIL(...)                                         \
	do {                                              \
		fprintf(stderr, "harness: " __VA_ARGS__); \
		fputc('\n', stderr);                      \
		atomic_fetch_add(&harness_failures, 1);   \
	} while (0)

/* rt_harness_watch.c: the policy checker and the watchdog (pthreads). */
uint64_t harness_env_ms(const char *var, uint64_t dflt);
void harness_watch_start(uint64_t hang_ns);
long harness_checker_stop(void); /* returns the checks made */
void harness_sample_stop(void);	 /* before ult_shutdown frees the workers */
void harness_watch_stop(void);

/* rt_harness_io.c: one round of I/O, or of blocking calls, by an actor;
 * 0, or -1 with what went wrong in why. */
int harness_io_round(unsigned *seed, char *why, size_t whylen);
int harness_blocking_round(unsigned *seed, char *why, size_t whylen);

#endif
