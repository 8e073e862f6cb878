/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stack pool.  Stacks are carved from large MAP_NORESERVE mappings, each
 * with a guard below it, and recycled forever: once the pool is warm,
 * spawning a uthread makes no system call.  Recycled stacks also keep
 * their pages resident, so a reused stack does not fault again.
 *
 * Guards use MADV_GUARD_INSTALL (Linux 6.13+), which adds page-table
 * markers without splitting the mapping; older kernels get mprotect,
 * which costs two VMAs per stack (vm.max_map_count caps that at ~32k).
 * Either way a guard is never backed by pages (PROT_NONE pages of a
 * MAP_NORESERVE mapping are neither touched nor charged), so it costs
 * address space only, and it is large (ult__rt.stack_guard, 256 KiB by
 * default): a frame that jumps past the end of its stack without probing
 * each page still lands in it rather than in the neighbouring stack.
 *
 * Each worker keeps a small LIFO cache of default-size stacks, so the
 * common spawn/exit pair touches no shared lock; other sizes and cache
 * overflow go through per-class global lists.
 *
 * Sizes other than the default are rounded up to a class: four per power
 * of two from ULT_STACK_MIN to ULT_STACK_MAX, so a thread gets at most a
 * quarter more address space than it asked for (never less), and any
 * number of distinct sizes shares a bounded set of free lists instead of
 * each keeping stacks of its own.  The default size is a class of its
 * own, exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime.h"
#include "worker.h"
#include "stack.h"
#include "switch.h"
#include "subsys.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#define CHUNK_BYTES (8u * 1024 * 1024)
#define WORKER_CACHE 64

#define CLASS_MIN_LOG 14 /* log2(ULT_STACK_MIN) */
#define CLASS_MAX_LOG 30 /* log2(ULT_STACK_MAX) */
#define CLASS_STEP_LOG 2 /* 1 << CLASS_STEP_LOG classes per power of two */
#define NCLASSES (((CLASS_MAX_LOG - CLASS_MIN_LOG) << CLASS_STEP_LOG) + 1)
#define DEFAULT_CLASS NCLASSES

_Static_assert(ULT_STACK_MIN == 1u << CLASS_MIN_LOG, "class table");
_Static_assert(ULT_STACK_MAX == 1u << CLASS_MAX_LOG, "class table");

struct stack_class {
	size_t size;
	struct ult__stack *free;
};

/* At the top of its own mapping, above the last slot: the pool uses no
 * malloc, whose heap would stay resident after shutdown. */
struct chunk {
	struct chunk *next;
	void *base;
	size_t len;
	struct ult__stack descs[];
};

static struct mtx pool_lock = MTX_INITIALIZER("stack pool");
static struct stack_class classes[NCLASSES + 1]; /* + the default */
static struct chunk *chunks;
static int guard_mprotect; /* MADV_GUARD_INSTALL unavailable */
static size_t pagesz;

static size_t
round_size(size_t size)
{
	return ((size + pagesz - 1) & ~(pagesz - 1));
}

/* The class of a page-rounded size in ULT_STACK_MIN..ULT_STACK_MAX: the
 * smallest 2^k + j * 2^(k - CLASS_STEP_LOG) that holds it. */
static int
class_index(size_t size)
{
	int k = 63 - __builtin_clzll((unsigned long long)size);
	size_t step = (size_t)1 << (k - CLASS_STEP_LOG);
	size_t j = (size - ((size_t)1 << k) + step - 1) / step;

	return (((k - CLASS_MIN_LOG) << CLASS_STEP_LOG) + (int)j);
}

static size_t
class_size(int i)
{
	int k = CLASS_MIN_LOG + (i >> CLASS_STEP_LOG);
	size_t j = (size_t)(i & ((1 << CLASS_STEP_LOG) - 1));

	return (round_size(((size_t)1 << k) + (j << (k - CLASS_STEP_LOG))));
}

int
ult__stacks_init(void)
{
	pagesz = (size_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < NCLASSES; i++) {
		classes[i].size = class_size(i);
		classes[i].free = NULL;
	}
	classes[DEFAULT_CLASS].size = ult__rt.stack_size;
	classes[DEFAULT_CLASS].free = NULL;
	chunks = NULL;
	return (0);
}

void
ult__stacks_fini(void)
{
	while (chunks != NULL) {
		struct chunk *c = chunks;

		chunks = c->next;
		munmap(c->base, c->len); /* c with it */
	}
}

/*
 * The first guard installed by madvise is tested once: the kernel must
 * refuse to read it (EFAULT from a write into a pipe).  qemu-user accepts
 * any advice it does not know and does nothing, which would leave every
 * stack unguarded; mprotect is honoured there.
 */
static int
guard_holds(const void *p)
{
	int fd[2], ok, saved = ult__errno();

	if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) != 0) {
		ult__set_errno(saved);
		return (1); /* cannot tell: trust the kernel's answer */
	}
	ok = write(fd[1], p, 1) < 0 && ult__errno() == EFAULT;
	close(fd[0]);
	close(fd[1]);
	ult__set_errno(saved);
	return (ok);
}

static int
install_guard(void *p, size_t len)
{
	static int tested;

	if (!guard_mprotect && madvise(p, len, MADV_GUARD_INSTALL) == 0) {
		if (tested || guard_holds(p)) {
			tested = 1;
			return (0);
		}
	}
	guard_mprotect = 1;
	return (mprotect(p, len, PROT_NONE));
}

/* Pool locked: map a chunk of stacks of `size' and put them on cl. */
static int
grow(struct stack_class *cl)
{
	size_t guard = ult__rt.stack_guard;
	size_t slot = guard + cl->size; /* both at most ULT_STACK_MAX */
	size_t n = CHUNK_BYTES / slot, top;
	struct chunk *c;
	void *base;

	if (n < 1)
		n = 1;
	top = round_size(sizeof(*c) + n * sizeof(c->descs[0]));
	base = ult__os_map(n * slot + top, MAP_NORESERVE | MAP_STACK);
	if (base == NULL)
		return (ENOMEM);
	/* Huge pages would turn a few touched bytes into 2 MiB of RSS. */
	madvise(base, n * slot + top, MADV_NOHUGEPAGE);
	c = (struct chunk *)(void *)((char *)base + n * slot);
	c->base = base;
	c->len = n * slot + top;
	for (size_t i = 0; i < n; i++) {
		struct ult__stack *s = &c->descs[i];

		s->base = (char *)base + i * slot;
		s->guard = guard;
		s->size = cl->size;
		if (install_guard(s->base, guard) != 0) {
			munmap(c->base, c->len);
			return (ENOMEM);
		}
	}
	for (size_t i = 0; i < n; i++) {
		c->descs[i].next = cl->free;
		cl->free = &c->descs[i];
	}
	c->next = chunks;
	chunks = c;
	return (0);
}

/* The class of a size that is the default or a class size. */
static struct stack_class *
class_of(size_t size)
{
	return (size == ult__rt.stack_size ? &classes[DEFAULT_CLASS]
					   : &classes[class_index(size)]);
}

struct ult__stack *
ult__stack_get(struct ult__worker *w, size_t size)
{
	struct stack_class *cl;
	struct ult__stack *s = NULL;

	size = round_size(size);
	if (size != ult__rt.stack_size) {
		if (size < ULT_STACK_MIN || size > ULT_STACK_MAX)
			return (NULL); /* callers check: never happens */
		/* A class that comes out at the default size is the default
		 * class, worker caches included. */
		size = classes[class_index(size)].size;
	}
	if (w != NULL && size == ult__rt.stack_size && w->stack_cache != NULL) {
		s = w->stack_cache;
		w->stack_cache = s->next;
		w->nstack_cache--;
		return (s);
	}
	mtx_lock_spin(&pool_lock);
	cl = class_of(size);
	if (cl->free != NULL || grow(cl) == 0) {
		s = cl->free;
		cl->free = s->next;
	}
	mtx_unlock_spin(&pool_lock);
	return (s);
}

static void
put_global(struct ult__stack *s)
{
	struct stack_class *cl;

	mtx_lock_spin(&pool_lock);
	cl = class_of(s->size);
	s->next = cl->free;
	cl->free = s;
	mtx_unlock_spin(&pool_lock);
}

void
ult__stack_put(struct ult__worker *w, struct ult__stack *s)
{
	if (s->user) {
		free(s);
		return;
	}
	if (w != NULL && s->size == ult__rt.stack_size) {
		if (w->nstack_cache >= WORKER_CACHE) {
			/* Give half back so stacks can flow between workers. */
			while (w->nstack_cache > WORKER_CACHE / 2) {
				struct ult__stack *o = w->stack_cache;

				w->stack_cache = o->next;
				w->nstack_cache--;
				put_global(o);
			}
		}
		s->next = w->stack_cache;
		w->stack_cache = s;
		w->nstack_cache++;
		return;
	}
	put_global(s);
}

void
ult__stack_cache_drain(struct ult__worker *w)
{
	while (w->stack_cache != NULL) {
		struct ult__stack *s = w->stack_cache;

		w->stack_cache = s->next;
		put_global(s);
	}
	w->nstack_cache = 0;
}

/* The parent's stacks stay mapped (the forking uthread runs on one). */
static void
stacks_fork_child(void)
{
	mtx_init(&pool_lock, "stack pool");
	chunks = NULL;
}

const struct ult__subsys ult__stacks_subsys = {.name = "stacks",
    .init = ult__stacks_init,
    .fini = ult__stacks_fini,
    .fork_child = stacks_fork_child};
