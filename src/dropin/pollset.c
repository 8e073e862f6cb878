/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * poll and select on several descriptors in a uthread, so that a signal
 * ends them (DESIGN.md section 14).  ult_poll makes such a call on a
 * helper thread, where nothing interrupts it until it returns; here the
 * descriptors go into a private epoll set, whose own descriptor the
 * uthread waits for on ult's poller (an interruptible wait), and poll(2)
 * with no timeout then says what is ready.  What the set cannot hold
 * goes to ult_poll as before.
 */
#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "dropin.h"
#include "runtime.h"

static uint32_t
ep_events(short ev)
{
	uint32_t e = 0;

	if (ev & POLLIN)
		e |= EPOLLIN;
	if (ev & POLLOUT)
		e |= EPOLLOUT;
	if (ev & POLLPRI)
		e |= EPOLLPRI;
#ifdef POLLRDHUP
	if (ev & POLLRDHUP)
		e |= EPOLLRDHUP;
#endif
	return (e);
}

/* The set for fds, or -1 if one of them cannot be in one. */
static int
ep_set(struct pollfd *fds, nfds_t n)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return (-1);
	for (nfds_t i = 0; i < n; i++) {
		struct epoll_event ev = {.events = ep_events(fds[i].events)};

		if (fds[i].fd < 0)
			continue;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i].fd, &ev) == 0)
			continue;
		/* The same descriptor twice: the union of what both ask. */
		if (errno == EEXIST) {
			for (nfds_t j = 0; j < i; j++)
				if (fds[j].fd == fds[i].fd)
					ev.events |= ep_events(fds[j].events);
			if (epoll_ctl(ep, EPOLL_CTL_MOD, fds[i].fd, &ev) == 0)
				continue;
		}
		close(ep);
		return (-1);
	}
	return (ep);
}

int
ult__dropin_poll(struct pollfd *fds, nfds_t n, int ms)
{
	uint64_t deadline = 0;
	int ep, r, err, rev, e;

	if (n < 2 || ms == 0 || ult_self() == NULL)
		return (ult_poll(fds, n, ms));
	if ((r = ult__libc_poll(fds, n, 0)) != 0)
		return (r);
	if ((ep = ep_set(fds, n)) < 0)
		return (ult_poll(fds, n, ms));
	if (ms > 0)
		deadline = ult__now() + (uint64_t)ms * 1000000u;
	for (;;) {
		err = ult_wait_fd(ep, ULT_IN, deadline, &rev);
		if (err == 0 && (r = ult__libc_poll(fds, n, 0)) == 0)
			continue; /* drained by somebody else meanwhile */
		e = errno;
		close(ep);
		errno = e;
		if (err == 0)
			return (r);
		if (err == ETIMEDOUT)
			return (0);
		if (err != EINTR)
			return (ult_poll(fds, n, ms));
		errno = EINTR;
		return (-1);
	}
}
