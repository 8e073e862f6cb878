/*
 * micro: what micro.c and micro_tree.c share.
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
void rt_start(int r, int ncpu);
void mark_end(void);

/* micro_tree.c */
double thread_ring_ns(int r, long n);
int skynet_child(const char *rts, int levels);
void bench_skynet(const char *c, int r, int levels);

#endif /* !BENCH_MICRO_H */
