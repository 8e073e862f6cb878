/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Telling AddressSanitizer, ThreadSanitizer and Valgrind about stack
 * switches.  Without it ASan reports false stack-buffer errors after a
 * switch, TSan mixes up the happens-before of uthreads that share a
 * worker, and Valgrind warns "client switching stacks?".  Every hook is an
 * empty inline when the tool is not compiled in.
 */
#ifndef ULT_ARCH_SANITIZER_H
#define ULT_ARCH_SANITIZER_H

#include <stddef.h>

#ifndef __has_feature
#define __has_feature(x) 0
#endif

#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define ULT_HAVE_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__SANITIZE_THREAD__) || __has_feature(thread_sanitizer)
#define ULT_HAVE_TSAN 1
#include <sanitizer/tsan_interface.h>
#endif

#if defined(ULT_HAVE_VALGRIND_H)
#include <valgrind/valgrind.h>
#endif

/* Per-context sanitizer state, embedded in every uthread and worker. */
struct ult__san {
	void *asan_fake_stack; /* ASan: saved when this context leaves */
	const void *stack_lo;  /* bounds ASan needs to enter this context */
	size_t stack_size;
	void *tsan_fiber;     /* TSan: fiber of this context */
	unsigned vg_stack_id; /* Valgrind: registered stack */
};

/* A uthread context on the given stack is being created. */
static inline void
ult__san_create(struct ult__san *s, void *lo, size_t size)
{
	s->asan_fake_stack = NULL;
	s->stack_lo = lo;
	s->stack_size = size;
#ifdef ULT_HAVE_ASAN
	/* A pooled stack may carry poison from its previous owner's frames. */
	__asan_unpoison_memory_region(lo, size);
#endif
#ifdef ULT_HAVE_TSAN
	s->tsan_fiber = __tsan_create_fiber(0);
#else
	s->tsan_fiber = NULL;
#endif
#ifdef ULT_HAVE_VALGRIND_H
	s->vg_stack_id = VALGRIND_STACK_REGISTER(lo, (char *)lo + size);
#else
	s->vg_stack_id = 0;
#endif
}

/* The context is dead and nothing runs on it any more. */
static inline void
ult__san_destroy(struct ult__san *s)
{
#ifdef ULT_HAVE_TSAN
	if (s->tsan_fiber != NULL)
		__tsan_destroy_fiber(s->tsan_fiber);
	s->tsan_fiber = NULL;
#endif
#ifdef ULT_HAVE_VALGRIND_H
	if (s->vg_stack_id != 0)
		VALGRIND_STACK_DEREGISTER(s->vg_stack_id);
	s->vg_stack_id = 0;
#endif
	(void)s;
}

/* The kernel thread's own context (a worker's idle loop). */
static inline void
ult__san_adopt_current(struct ult__san *s, void *lo, size_t size)
{
	s->asan_fake_stack = NULL;
	s->stack_lo = lo;
	s->stack_size = size;
	s->vg_stack_id = 0;
#ifdef ULT_HAVE_TSAN
	s->tsan_fiber = __tsan_get_current_fiber();
#else
	s->tsan_fiber = NULL;
#endif
}

/* Immediately before switching from -> to.  A dying context passes
 * dying != 0 so that ASan frees its fake stack. */
static inline void
ult__san_switch(struct ult__san *from, struct ult__san *to, int dying)
{
#ifdef ULT_HAVE_ASAN
	__sanitizer_start_switch_fiber(dying ? NULL : &from->asan_fake_stack,
	    to->stack_lo, to->stack_size);
#endif
	(void)from;
	(void)to;
	(void)dying;
}

/*
 * TSan binds a fiber to one kernel thread at a time, so the fiber switch
 * happens in the middle step of the context switch, on the worker's own
 * scratch fiber: first leave the outgoing fiber (before it can be resumed
 * elsewhere), then, once the incoming thread has been released by its
 * previous worker, enter it.
 */
static inline void
ult__san_mid_enter(struct ult__san *scratch)
{
#ifdef ULT_HAVE_TSAN
	__tsan_switch_to_fiber(scratch->tsan_fiber, 0);
#endif
	(void)scratch;
}

static inline void
ult__san_mid_leave(struct ult__san *to)
{
#ifdef ULT_HAVE_TSAN
	__tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
	(void)to;
}

/* A worker's scratch context (no stack of its own to describe). */
static inline void
ult__san_scratch_create(struct ult__san *s)
{
	s->asan_fake_stack = NULL;
	s->stack_lo = NULL;
	s->stack_size = 0;
	s->vg_stack_id = 0;
#ifdef ULT_HAVE_TSAN
	s->tsan_fiber = __tsan_create_fiber(0);
#else
	s->tsan_fiber = NULL;
#endif
}

/* First thing on the destination stack after a switch. */
static inline void
ult__san_switched(struct ult__san *self)
{
#ifdef ULT_HAVE_ASAN
	__sanitizer_finish_switch_fiber(self->asan_fake_stack, NULL, NULL);
#endif
	(void)self;
}

#endif
