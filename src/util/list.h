/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Intrusive circular doubly linked list.  A list head is a node whose
 * next/prev point at itself when empty; nodes embed a struct ult__list.
 */
#ifndef ULT_UTIL_LIST_H
#define ULT_UTIL_LIST_H

#include <stddef.h>

struct ult__list {
	struct ult__list *next, *prev;
};

#define ULT_CONTAINER_OF(p, type, member) \
	((type *)(void *)((char *)(p)-offsetof(type, member)))

static inline void
ult__list_init(struct ult__list *h)
{
	h->next = h->prev = h;
}

static inline int
ult__list_empty(const struct ult__list *h)
{
	return (h->next == h);
}

/* A node that is not on any list after ult__list_remove() or init. */
static inline int
ult__list_linked(const struct ult__list *n)
{
	return (n->next != n);
}

static inline void
ult__list_insert_after(struct ult__list *pos, struct ult__list *n)
{
	n->prev = pos;
	n->next = pos->next;
	pos->next->prev = n;
	pos->next = n;
}

static inline void
ult__list_insert_tail(struct ult__list *h, struct ult__list *n)
{
	ult__list_insert_after(h->prev, n);
}

static inline void
ult__list_insert_head(struct ult__list *h, struct ult__list *n)
{
	ult__list_insert_after(h, n);
}

static inline void
ult__list_remove(struct ult__list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

static inline struct ult__list *
ult__list_first(const struct ult__list *h)
{
	return (h->next == h ? NULL : h->next);
}

#define ULT_LIST_FOREACH(n, h) \
	for ((n) = (h)->next; (n) != (h); (n) = (n)->next)

#define ULT_LIST_FOREACH_SAFE(n, t, h)                     \
	for ((n) = (h)->next, (t) = (n)->next; (n) != (h); \
	     (n) = (t), (t) = (n)->next)

#endif
