/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * micro: what micro.c, micro_tree.c and micro_cost.c share.
 */
#ifndef BENCH_MICRO_H
#define BENCH_MICRO_H

#include <stdatomic.h>
#include <stdint.h>

#include "contract.h"
#include "rt.h"

enum {
	RT_ULT,
	RT_PTHREAD,
	RT_N
};
extern const char *const rtname[RT_N];

#define MAXROUNDS 5
#define LONG_ROUND_NS 1000000000u /* see median_of() */
#define RING 503

extern int rounds;	       /* rounds per figure */
extern _Atomic uint64_t t_end; /* the last finish, see mark_end() */

/* micro.c */
extern const char *ult_rt; /* what RT_ULT starts */
extern int all_ncpu;	   /* workers for the "all workers" cases; 0: all */
void rt_start(int r, int ncpu);
void mark_end(void);
long case_size(long full, long quick);
double yield_ns(int r, long n);
double create_join_ns(int r, long n);
double mutex_handoff_ns(int r, long n);

/* micro_cost.c */
void case_tls_cost(void);
void case_trace_cost(void);

/* micro_tree.c */
double thread_ring_ns(int r, long n);
int skynet_child(const char *rts, int levels);
void bench_skynet(const char *c, int r, int levels);

#endif /* !BENCH_MICRO_H */
