/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The runtime's and the policies' heap allocations, each of which may be
 * made to fail by fault injection (fault.h).  ult__zalloc_cl is cache-line
 * aligned and zeroed (C11 aligned_alloc wants the size to be a multiple
 * of the alignment).
 */
#ifndef ULT_UTIL_MEM_H
#define ULT_UTIL_MEM_H

#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "fault.h"

static inline void *
ult__malloc(size_t size)
{
	return (ult__fault(ULT__FAULT_MALLOC) ? NULL : malloc(size));
}

static inline void *
ult__calloc(size_t n, size_t size)
{
	return (ult__fault(ULT__FAULT_MALLOC) ? NULL : calloc(n, size));
}

static inline char *
ult__strdup(const char *s)
{
	return (ult__fault(ULT__FAULT_MALLOC) ? NULL : strdup(s));
}

static inline void *
ult__zalloc_cl(size_t n, size_t size)
{
	size_t total =
	    (n * size + ULT_CACHELINE - 1) & ~(size_t)(ULT_CACHELINE - 1);
	void *p;

	if (size != 0 && n > (size_t)-1 / size)
		return (NULL);
	if (ult__fault(ULT__FAULT_MALLOC))
		return (NULL);
	p = aligned_alloc(ULT_CACHELINE, total ? total : ULT_CACHELINE);
	if (p != NULL)
		memset(p, 0, total);
	return (p);
}

#endif
