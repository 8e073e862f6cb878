/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fork child's thread taken in as a uthread (DESIGN.md section 10.1).
 *
 * The child's one kernel thread runs on the forking uthread's stack and
 * block.  Once the child's runtime is up again, the thread saves its
 * context into a uthread struct as a switch would, and, between saving
 * it and loading the next one (ult__ctx_switch_via's middle step, on a
 * stack of its own), moves its thread pointer to a block of its own and
 * only then queues the uthread, which a worker may resume at once: the
 * rule of section 10 that no kernel thread names a block another may be
 * running.  The kernel thread then runs host() on that stack and block.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../os/linux/glibc_tls.h"
#include "runtime.h"
#include "switch.h"
#include "tls.h"
#include "uthread.h"
#include "worker.h"

#ifdef ULT_TLS_SWITCH
/* The host's stack, then the middle step's scratch stack above it. */
#define HOST_STACK (256u * 1024)
#define HOST_SCRATCH (16u * 1024)

static struct {
	struct ult__ctx ctx;
	void (*fn)(void);
	void *tp;
	struct ult_thread *ut;
	const struct ult_attr *attr;
} host;

static void
host_entry(void *arg)
{
	(void)arg;
	host.fn();
	abort();
}

/* Nothing runs on the uthread's stack or block any more. */
static void
adopt_mid(void *arg)
{
	(void)arg;
	ult__tp_write(host.tp);
	ult__thread_adopt_add(host.ut, host.attr);
}
#endif

int
ult__thread_adopt(struct ult_thread *reuse, const struct ult_attr *a, void *arg,
    void *stack, size_t size, void (*host_fn)(void), ult_thread_t **out)
{
#ifdef ULT_TLS_SWITCH
	struct ult_thread *ut;
	char *hs;
	void *tp;

	if (!ult__running() || ult__worker_self() != NULL)
		return (ENXIO);
	if (!ult__rt.tls)
		return (ENOTSUP);
	if ((hs = ult__os_map(HOST_STACK + HOST_SCRATCH, 0)) == NULL)
		return (EAGAIN);
	if ((tp = ult__glibc_tls_alloc()) == NULL) {
		munmap(hs, HOST_STACK + HOST_SCRATCH);
		return (EAGAIN);
	}
	/* The kernel thread's own from now on: its id, its stack. */
	*(pid_t *)((char *)tp + ult__glibc_tls.tid) = gettid();
	ult__glibc_tls_start(tp, hs, HOST_STACK, NULL, NULL);
	if ((ut = ult__thread_adopt_make(reuse, a, arg, stack, size,
		 ult__tp())) == NULL) {
		ult__glibc_tls_free(tp);
		munmap(hs, HOST_STACK + HOST_SCRATCH);
		return (EAGAIN);
	}
	host.fn = host_fn;
	host.tp = tp;
	host.ut = ut;
	host.attr = a;
	ult__ctx_init(&host.ctx, hs, HOST_STACK, host_entry, NULL);
	/* The uthread keeps its mask (adopt_make read it); the host takes
	 * none of the program's signals until host() says. */
	ult__os_block_async_signals();
	ult__ctx_switch_via(&ut->ctx, &host.ctx, hs + HOST_STACK + HOST_SCRATCH,
	    adopt_mid, NULL);
	/* On a worker, as a new uthread starts (ult__thread_entry). */
	ult__switch_finish();
	ult__userret();
	if (out != NULL)
		*out = ut;
	return (0);
#else
	(void)reuse;
	(void)a;
	(void)arg;
	(void)stack;
	(void)size;
	(void)host_fn;
	(void)out;
	return (ENOTSUP);
#endif
}
