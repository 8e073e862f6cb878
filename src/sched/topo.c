/* SPDX-License-Identifier: BSD-2-Clause
 * Follows the design of FreeBSD's CPU topology (sys/kern/subr_smp.c). */
/*
 * Building ULE's cpu_group tree from cache-sharing sets.  Pure: the host
 * (sysfs in the runtime, a script in the simulator) supplies the sets.
 *
 * A group splits into children at the largest cache level below its own
 * that divides its CPUs into at least two parts, at least one of them
 * shared by several CPUs; private caches make no groups, as in FreeBSD.
 * A level whose parts are exactly the SMT sibling sets is flagged SMT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/mem.h"
#include "topo.h"

static void
share_set(const struct topo_cpu *desc, int cpu, int level, cpuset_t *out)
{
	CS_ZERO(out);
	if (desc != NULL) {
		*out = desc[cpu].share[level];
		if (level == CG_SHARE_L1 && CS_EMPTY(out))
			*out = desc[cpu].smt;
	}
	if (CS_EMPTY(out))
		CS_SET(cpu, out);
}

/* Split mask at level; returns the number of parts (up to max). */
static int
partition(const struct topo_cpu *desc, const cpuset_t *mask, int level,
    cpuset_t *parts, int max, int *shared)
{
	cpuset_t left = *mask;
	int n = 0, c;

	*shared = 0;
	while ((c = CS_FFS(&left)) >= 0 && n < max) {
		cpuset_t s;

		share_set(desc, c, level, &s);
		CS_AND(&s, mask);
		CS_SET(c, &s);
		for (int i = 0; i < ULT_CPUSET_WORDS; i++)
			left.w[i] &= ~s.w[i];
		if (CS_COUNT(&s) > 1)
			*shared = 1;
		parts[n++] = s;
	}
	return (n);
}

static int
is_smt_level(const struct topo_cpu *desc, const cpuset_t *parts, int n)
{
	if (desc == NULL)
		return (0);
	for (int i = 0; i < n; i++) {
		int c = CS_FFS(&parts[i]);

		if (CS_COUNT(&parts[i]) < 2 || CS_CMP(&parts[i], &desc[c].smt))
			return (0);
	}
	return (1);
}

static int
fill_group(struct cpu_group *g, struct cpu_group *parent, const cpuset_t *mask,
    int level, int flags, const struct topo_cpu *desc, int ncpu)
{
	cpuset_t *parts;
	int n = 0, shared = 0, l;

	g->cg_parent = parent;
	g->cg_mask = *mask;
	g->cg_count = CS_COUNT(mask);
	g->cg_first = CS_FFS(mask);
	g->cg_last = g->cg_first;
	for (int c = 0; c < ncpu; c++)
		if (CS_ISSET(c, mask))
			g->cg_last = c;
	g->cg_level = level;
	g->cg_flags = flags;
	g->cg_children = 0;
	g->cg_child = NULL;
	if (g->cg_count < 2)
		return (0);
	parts = ult__malloc(sizeof(*parts) * (size_t)g->cg_count);
	if (parts == NULL)
		return (-1);
	for (l = (level == CG_SHARE_NONE ? MAX_CACHE_LEVELS : level - 1);
	     l >= CG_SHARE_L1; l--) {
		n = partition(desc, mask, l, parts, g->cg_count, &shared);
		if (n >= 2 && shared)
			break;
	}
	if (l >= CG_SHARE_L1) {
		int cflags = is_smt_level(desc, parts, n) ? CG_FLAG_THREAD : 0;

		g->cg_child = ult__calloc((size_t)n, sizeof(*g->cg_child));
		if (g->cg_child == NULL) {
			free(parts);
			return (-1);
		}
		g->cg_children = n;
		for (int i = 0; i < n; i++)
			if (fill_group(&g->cg_child[i], g, &parts[i], l, cflags,
				desc, ncpu) != 0) {
				free(parts);
				return (-1);
			}
	}
	free(parts);
	return (0);
}

static void
free_children(struct cpu_group *g)
{
	for (int i = 0; i < g->cg_children; i++)
		free_children(&g->cg_child[i]);
	free(g->cg_child);
	g->cg_child = NULL;
	g->cg_children = 0;
}

struct cpu_group *
ult__topo_build(int ncpu, const struct topo_cpu *desc)
{
	struct cpu_group *root = ult__calloc(1, sizeof(*root));
	cpuset_t all;
	int level = CG_SHARE_NONE;

	if (root == NULL)
		return (NULL);
	CS_FILL_N(&all, ncpu);
	/* The root's level is the largest cache every cpu shares. */
	for (int l = MAX_CACHE_LEVELS; l >= CG_SHARE_L1 && desc != NULL &&
	     ncpu > 1 && level == CG_SHARE_NONE;
	     l--) {
		int all_share = 1;

		for (int c = 0; c < ncpu && all_share; c++) {
			cpuset_t s;

			share_set(desc, c, l, &s);
			CS_AND(&s, &all);
			all_share = (CS_COUNT(&s) == ncpu);
		}
		if (all_share)
			level = l;
	}
	if (fill_group(root, NULL, &all, level, 0, desc, ncpu) != 0) {
		ult__topo_free(root);
		return (NULL);
	}
	return (root);
}

/*
 * ult: cpu, a reserve CPU (machine.h), shares no cache with the others:
 * it joins the root, as a leaf of its own when the root has children, so
 * that the searches over the root find it and no other group changes.
 */
int
ult__topo_add_reserve(struct cpu_group *root, int cpu)
{
	if (root->cg_children > 0) {
		struct cpu_group *ch = realloc(root->cg_child,
		    sizeof(*ch) * (size_t)(root->cg_children + 1));

		if (ch == NULL)
			return (-1);
		root->cg_child = ch;
		/* The children's own children point at them, not at the
		 * array: only their parent pointers moved. */
		for (int i = 0; i < root->cg_children; i++)
			for (int j = 0; j < ch[i].cg_children; j++)
				ch[i].cg_child[j].cg_parent = &ch[i];
		ch = &ch[root->cg_children++];
		memset(ch, 0, sizeof(*ch));
		ch->cg_parent = root;
		CS_SET(cpu, &ch->cg_mask);
		ch->cg_count = 1;
		ch->cg_first = ch->cg_last = cpu;
		ch->cg_level = CG_SHARE_NONE;
	}
	CS_SET(cpu, &root->cg_mask);
	root->cg_count++;
	if (cpu > root->cg_last)
		root->cg_last = cpu;
	if (cpu < root->cg_first)
		root->cg_first = cpu;
	return (0);
}

void
ult__topo_free(struct cpu_group *root)
{
	if (root == NULL)
		return;
	free_children(root);
	free(root);
}

const struct cpu_group *
ult__topo_find(const struct cpu_group *root, int cpu)
{
	const struct cpu_group *g = root;

	while (g->cg_children > 0) {
		int i;

		for (i = 0; i < g->cg_children; i++)
			if (CS_ISSET(cpu, &g->cg_child[i].cg_mask))
				break;
		if (i == g->cg_children)
			break;
		g = &g->cg_child[i];
	}
	return (g);
}

static int
format_group(const struct cpu_group *g, char *buf, int len)
{
	static const char *lv[] = {"none", "L1", "L2", "L3"};
	int n = snprintf(buf, (size_t)(len > 0 ? len : 0), "%d-%d %s%s {",
	    g->cg_first, g->cg_last, lv[g->cg_level],
	    (g->cg_flags & CG_FLAG_THREAD) ? " SMT" : "");

	for (int i = 0; i < g->cg_children; i++) {
		n += snprintf(buf + (n < len ? n : len),
		    (size_t)(n < len ? len - n : 0), " ");
		n += format_group(&g->cg_child[i], buf + (n < len ? n : len),
		    n < len ? len - n : 0);
	}
	n += snprintf(buf + (n < len ? n : len),
	    (size_t)(n < len ? len - n : 0), "%s}", g->cg_children ? " " : "");
	return (n);
}

int
ult__topo_format(const struct cpu_group *root, char *buf, int len)
{
	return (format_group(root, buf, len));
}
