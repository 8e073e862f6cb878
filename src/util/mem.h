/*
 * Cache-line aligned, zeroed allocation (C11 aligned_alloc wants the size
 * to be a multiple of the alignment).
 */
#ifndef ULT_UTIL_MEM_H
#define ULT_UTIL_MEM_H

#include <stdlib.h>
#include <string.h>

#include "atomic.h"

static inline void *
ult__zalloc_cl(size_t n, size_t size)
{
	size_t total =
	    (n * size + ULT_CACHELINE - 1) & ~(size_t)(ULT_CACHELINE - 1);
	void *p;

	if (size != 0 && n > (size_t)-1 / size)
		return (NULL);
	p = aligned_alloc(ULT_CACHELINE, total ? total : ULT_CACHELINE);
	if (p != NULL)
		memset(p, 0, total);
	return (p);
}

#endif
