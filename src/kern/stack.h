/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Uthread stacks (stack.c): mappings with a guard below, cached per
 * worker.
 */
#ifndef ULT_KERN_STACK_H
#define ULT_KERN_STACK_H

#include <stddef.h>

#include "ult.h"

struct ult__worker;

struct ult__stack {
	void *base;   /* start of the mapping slot: guard, then stack */
	size_t guard; /* bytes of guard at base */
	size_t size;  /* usable bytes above the guard */
	int user;     /* the spawner's memory (ult__spawn_on): no guard,
			 never pooled or unmapped */
	struct ult__stack *next;
};

int ult__stacks_init(void);
void ult__stacks_fini(void);
struct ult__stack *ult__stack_get(struct ult__worker *w, size_t size);
void ult__stack_put(struct ult__worker *w, struct ult__stack *s);
void ult__stack_cache_drain(struct ult__worker *w);

#endif
