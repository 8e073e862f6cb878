/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Parking in the poller (io.h, DESIGN.md section 7.2): one idle worker at
 * a time sleeps in epoll on a set of its own, which holds the poller's
 * set (readable while it has events) and an eventfd its unparkers write.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "runtime.h"
#include "worker.h"
#include "switch.h"
#include "io.h"

enum {
	PARK_POLLER = 1,
	PARK_KICK = 2
};

/* The worker parked in the poller, or -1. */
static atomic_int owner = -1;
atomic_ulong ult__io_nparks_io; /* poller parks, for the tests */

void
ult__io_worker_init(struct ult__worker *w)
{
	struct epoll_event p = {.events = EPOLLIN, .data.u32 = PARK_POLLER},
			   k = {.events = EPOLLIN, .data.u32 = PARK_KICK};
	int saved = ult__errno();

	w->park_ep = epoll_create1(EPOLL_CLOEXEC);
	w->park_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->park_ep < 0 || w->park_efd < 0 ||
	    epoll_ctl(w->park_ep, EPOLL_CTL_ADD, ult__io_epfd(), &p) != 0 ||
	    epoll_ctl(w->park_ep, EPOLL_CTL_ADD, w->park_efd, &k) != 0)
		ult__io_worker_fini(w); /* it parks on its futex only */
	ult__set_errno(saved);
}

void
ult__io_worker_fini(struct ult__worker *w)
{
	if (w->park_ep >= 0)
		close(w->park_ep);
	if (w->park_efd >= 0)
		close(w->park_efd);
	w->park_ep = w->park_efd = -1;
}

int
ult__io_park_begin(struct ult__worker *w)
{
	int none = -1;

	ULT_KASSERT(w == ult__tls_worker,
	    "ult__io_park_begin: a worker parks only itself");
	if (w->park_ep < 0 || ULT_LD(&ult__io_nwaiting) == 0 ||
	    ULT_LD(&owner) >= 0)
		return (0);
	/* seq_cst: one owner of the poller at a time; the release store in
	 * ult__io_park_end publishes what the previous owner left. */
	if (!ULT_CAS_SC(&owner, &none, w->id))
		return (0);
	atomic_fetch_add_explicit(&ult__io_nparks_io, 1, memory_order_relaxed);
	return (1);
}

void
ult__io_park_end(struct ult__worker *w)
{
	ULT_KASSERT(ULT_LD(&owner) == w->id,
	    "ult__io_park_end: only the poller's owner leaves it");
	(void)w;
	ULT_ST_REL(&owner, -1);
}

int
ult__io_park_busy(void)
{
	return (ULT_LD(&owner) >= 0);
}

void
ult__io_park_forget(void)
{
	ULT_ST(&owner, -1);
}

/* Any event ends the wait: the idle loop polls, and finds what is runnable
 * whatever woke it.  The eventfd is drained each time; an unpark that
 * writes it after the worker has left ends its next park early, which
 * costs one turn of the idle loop. */
void
ult__io_park_wait(struct ult__worker *w)
{
	struct epoll_event ev[2];
	uint64_t v;
	int saved = ult__errno();

	ULT_KASSERT(w == ult__tls_worker && ULT_LD(&owner) == w->id,
	    "ult__io_park_wait: only the poller's owner sleeps in it");
	if (epoll_wait(w->park_ep, ev, 2, -1) < 0 && errno != EINTR)
		(void)0; /* the set is gone: the idle loop goes on anyway */
	if (read(w->park_efd, &v, sizeof(v)) < 0)
		(void)0; /* not written: an event of the poller's */
	ult__set_errno(saved);
}

void
ult__io_park_unpark(struct ult__worker *w)
{
	uint64_t one = 1;
	int saved = ult__errno();

	struct ult__worker *me = ult__tls_worker;

	ULT_KASSERT(w->park_efd >= 0,
	    "ult__io_park_unpark: a worker without a park set");
	/* Counted as ult__wake_counted counts a futex wake: on the sender. */
	if (me != NULL)
		ULT_ST(&me->nfutex_wakes, ULT_LD(&me->nfutex_wakes) + 1);
	if (write(w->park_efd, &one, sizeof(one)) < 0)
		(void)0; /* saturated: it is woken already */
	ult__set_errno(saved);
}
