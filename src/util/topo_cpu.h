/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the host knows about each CPU's caches, as the OS layer reads it
 * (os/linux/os.c) and the policy's topology builds on it (sched/topo.h).
 * Here, below both, so that the OS layer needs nothing of the policy.
 */
#ifndef ULT_UTIL_TOPO_CPU_H
#define ULT_UTIL_TOPO_CPU_H

#include "cpuset.h"

#define MAX_CACHE_LEVELS 3

/*
 * For level 1..3, the set of CPUs sharing that cache with the CPU (itself
 * included; empty if unknown), and its SMT siblings.
 */
struct topo_cpu {
	cpuset_t share[MAX_CACHE_LEVELS + 1];
	cpuset_t smt;
};

#endif
