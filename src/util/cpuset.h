/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fixed-size CPU masks over worker ids (not OS CPU numbers).
 */
#ifndef ULT_UTIL_CPUSET_H
#define ULT_UTIL_CPUSET_H

#include <stdint.h>
#include <string.h>

#include "ult.h"

/* The runtime's masks hold ULT_MAXCPU workers; the simulator builds its
 * copy of the policy with room for more virtual CPUs. */
#ifndef ULT_CPUSET_MAX
#define ULT_CPUSET_MAX ULT_MAXCPU
#endif
#define ULT_CPUSET_WORDS (ULT_CPUSET_MAX / 64)

typedef struct {
	uint64_t w[ULT_CPUSET_WORDS];
} cpuset_t;

static inline void
CS_ZERO(cpuset_t *s)
{
	memset(s, 0, sizeof(*s));
}

static inline void
CS_SET(int c, cpuset_t *s)
{
	s->w[c / 64] |= (uint64_t)1 << (c % 64);
}

static inline void
CS_CLR(int c, cpuset_t *s)
{
	s->w[c / 64] &= ~((uint64_t)1 << (c % 64));
}

static inline int
CS_ISSET(int c, const cpuset_t *s)
{
	return ((s->w[c / 64] >> (c % 64)) & 1);
}

static inline int
CS_EMPTY(const cpuset_t *s)
{
	for (int i = 0; i < ULT_CPUSET_WORDS; i++)
		if (s->w[i] != 0)
			return (0);
	return (1);
}

static inline int
CS_COUNT(const cpuset_t *s)
{
	int n = 0;

	for (int i = 0; i < ULT_CPUSET_WORDS; i++)
		n += __builtin_popcountll(s->w[i]);
	return (n);
}

static inline void
CS_FILL_N(cpuset_t *s, int n)
{
	CS_ZERO(s);
	for (int c = 0; c < n; c++)
		CS_SET(c, s);
}

static inline void
CS_AND(cpuset_t *d, const cpuset_t *s)
{
	for (int i = 0; i < ULT_CPUSET_WORDS; i++)
		d->w[i] &= s->w[i];
}

static inline int
CS_CMP(const cpuset_t *a, const cpuset_t *b)
{
	return (memcmp(a, b, sizeof(*a)) != 0);
}

/* Lowest set cpu, or -1. */
static inline int
CS_FFS(const cpuset_t *s)
{
	for (int i = 0; i < ULT_CPUSET_WORDS; i++)
		if (s->w[i] != 0)
			return (i * 64 + __builtin_ctzll(s->w[i]));
	return (-1);
}

#endif
