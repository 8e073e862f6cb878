/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's CPU topology (sys/kern/subr_smp.c). */
/*
 * CPU topology as ULE sees it (sys/sys/smp.h): a tree of cpu_groups, one
 * per set of CPUs sharing a cache.  Only shared caches make groups; a
 * group without children is a leaf holding cg_count CPUs.
 */
#ifndef ULT_SCHED_TOPO_H
#define ULT_SCHED_TOPO_H

#include "../util/cpuset.h"
#include "../util/topo_cpu.h"

#define CG_SHARE_NONE 0
#define CG_SHARE_L1 1
#define CG_SHARE_L2 2
#define CG_SHARE_L3 3

#define CG_FLAG_HTT 0x01
#define CG_FLAG_SMT 0x02
#define CG_FLAG_THREAD (CG_FLAG_HTT | CG_FLAG_SMT)
#define CG_FLAG_NODE 0x04

struct cpu_group {
	struct cpu_group *cg_parent;
	struct cpu_group *cg_child; /* array of cg_children groups */
	cpuset_t cg_mask;
	int cg_count;
	int cg_children;
	int cg_first, cg_last; /* lowest and highest cpu in cg_mask */
	int cg_level;	       /* CG_SHARE_* shared by every cpu here */
	int cg_flags;
};

/* Build the tree for ncpu cpus; desc may be NULL (one flat group).
 * Returns NULL only when out of memory. */
struct cpu_group *ult__topo_build(int ncpu, const struct topo_cpu *desc);
/* Add cpu to root as a CPU that shares no cache; -1 out of memory. */
int ult__topo_add_reserve(struct cpu_group *root, int cpu);
void ult__topo_free(struct cpu_group *root);
/* The leaf group holding cpu. */
const struct cpu_group *ult__topo_find(const struct cpu_group *root, int cpu);
/* A one-line description such as "0-7 L3 { 0-3 L2 {} 4-7 L2 {} }". */
int ult__topo_format(const struct cpu_group *root, char *buf, int len);

#endif
