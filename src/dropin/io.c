/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program's I/O calls through ult's I/O layer (DESIGN.md sections 7.2
 * and 12): a uthread that would block waits on the poller and its worker
 * runs others; a thread that is not a uthread makes the plain call, which
 * ult's stand-ins do themselves.  These are POSIX cancellation points.
 * libc's own internal calls (stdio's buffers, getaddrinfo) do not come
 * here: they block the worker, whose queue the clock thread hands to the
 * others if it stays blocked.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include "dropin.h"
#include "runtime.h"

#define ENTER()                      \
	do {                         \
		ult__dropin_up();    \
		ult__dropin_point(); \
	} while (0)

/*
 * A call that may wait, at a cancellation point: pthread_cancel and
 * pthread_kill interrupt the wait (the call then fails with EINTR), and
 * after the cancellation point the call is made again.  A call that made
 * progress returns it, as POSIX says, and is not repeated.  A signal
 * handler that ran ends the call with EINTR, unless it had SA_RESTART
 * and the call is one the kernel restarts (WAITING, not WAITING_NR).
 * Every EINTR in a uthread is the drop-in's: a signal that interrupts a
 * system call of a worker finds it in libc, so it is queued on the
 * uthread and its handler runs at the cancellation point.
 */
#define WAITING_R(type, restart, call)                                   \
	do {                                                             \
		struct dp_thread *dp_ = ult__dropin_self();              \
		type r_;                                                 \
		int ran_;                                                \
                                                                         \
		ult__dropin_up();                                        \
		ult__dropin_point();                                     \
		for (;;) {                                               \
			ult__dropin_intr_begin();                        \
			r_ = (call);                                     \
			ult__dropin_intr_end();                          \
			if (r_ >= 0 || errno != EINTR || dp_ == NULL)    \
				return (r_);                             \
			ran_ = ult__dropin_point();                      \
			if ((ran_ & DP_SIG_RAN) &&                       \
			    (!(restart) || (ran_ & DP_SIG_NORESTART))) { \
				errno = EINTR;                           \
				return (-1);                             \
			}                                                \
		}                                                        \
	} while (0)
/* A wait with its own signal mask, in a uthread: the mask for the
 * wait's length (ult__dropin_mask_in), as sigsuspend has it. */
#define WITH_MASK(mask, call)                             \
	do {                                              \
		uint64_t old_;                            \
		int r_, e_;                               \
                                                          \
		if (ult__dropin_mask_in((mask), &old_)) { \
			errno = EINTR;                    \
			return (-1);                      \
		}                                         \
		r_ = (call);                              \
		e_ = errno;                               \
		ult__dropin_mask_out(old_);               \
		errno = e_;                               \
		return (r_);                              \
	} while (0)

#define WAITING(type, call) WAITING_R(type, 1, call)
#define WAITING_NR(type, call) WAITING_R(type, 0, call)

ssize_t
read(int fd, void *buf, size_t n)
{
	WAITING(ssize_t, ult_read(fd, buf, n));
}

ssize_t
write(int fd, const void *buf, size_t n)
{
	WAITING(ssize_t, ult_write(fd, buf, n));
}

ssize_t
readv(int fd, const struct iovec *iov, int n)
{
	WAITING(ssize_t, ult_readv(fd, iov, n));
}

ssize_t
writev(int fd, const struct iovec *iov, int n)
{
	WAITING(ssize_t, ult_writev(fd, iov, n));
}

ssize_t
recv(int fd, void *buf, size_t n, int flags)
{
	WAITING(ssize_t, ult_recv(fd, buf, n, flags));
}

ssize_t
send(int fd, const void *buf, size_t n, int flags)
{
	WAITING(ssize_t, ult_send(fd, buf, n, flags));
}

ssize_t
recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *sa,
    socklen_t *sl)
{
	WAITING(ssize_t, ult_recvfrom(fd, buf, n, flags, sa, sl));
}

ssize_t
sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *sa,
    socklen_t sl)
{
	WAITING(ssize_t, ult_sendto(fd, buf, n, flags, sa, sl));
}

ssize_t
recvmsg(int fd, struct msghdr *m, int flags)
{
	WAITING(ssize_t, ult_recvmsg(fd, m, flags));
}

ssize_t
sendmsg(int fd, const struct msghdr *m, int flags)
{
	WAITING(ssize_t, ult_sendmsg(fd, m, flags));
}

int
accept4(int fd, struct sockaddr *sa, socklen_t *sl, int flags)
{
	WAITING(int, ult_accept4(fd, sa, sl, flags));
}

int
accept(int fd, struct sockaddr *sa, socklen_t *sl)
{
	WAITING(int, ult_accept4(fd, sa, sl, 0));
}

int
connect(int fd, const struct sockaddr *sa, socklen_t sl)
{
	ENTER();
	return (ult_connect(fd, sa, sl));
}

int
close(int fd)
{
	ult__dropin_up();
	return (ult_close(fd));
}

int
poll(struct pollfd *fds, nfds_t n, int ms)
{
	WAITING_NR(int, ult__dropin_poll(fds, n, ms));
}

static int
ts_ms(const struct timespec *ts)
{
	uint64_t ms;

	if (ts == NULL)
		return (-1);
	ms = (uint64_t)ts->tv_sec * 1000u +
	    ((uint64_t)ts->tv_nsec + 999999u) / 1000000u;
	return (ms > INT32_MAX ? INT32_MAX : (int)ms);
}

int
ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
    const sigset_t *mask)
{
	static void *_Atomic slot;

	ENTER();
	if (ts != NULL &&
	    (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)) {
		errno = EINVAL;
		return (-1);
	}
	if (mask != NULL && ult__dropin_self() != NULL) /* signal.c */
		WITH_MASK(mask, ppoll(fds, n, ts, NULL));
	if (mask != NULL)
		return (
		    ((int (*)(struct pollfd *, nfds_t, const struct timespec *,
			const sigset_t *))ult__dropin_next("ppoll", &slot))(fds,
			n, ts, mask));
	WAITING_NR(int, ult__dropin_poll(fds, n, ts_ms(ts)));
}

/* select on ult_poll: the sets become pollfds and back.  The timeout
 * is left as given (Linux would lower it by the time waited). */
static int
do_select(int nfds, fd_set *r, fd_set *w, fd_set *e, int ms)
{
	struct pollfd local[64], *p = local;
	int n = 0, ready = 0, err;

	if (nfds < 0 || nfds > FD_SETSIZE) {
		errno = EINVAL;
		return (-1);
	}
	if (nfds > 64 && (p = calloc((size_t)nfds, sizeof(*p))) == NULL) {
		errno = ENOMEM;
		return (-1);
	}
	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;

		if (r != NULL && FD_ISSET(fd, r))
			ev |= POLLIN;
		if (w != NULL && FD_ISSET(fd, w))
			ev |= POLLOUT;
		if (e != NULL && FD_ISSET(fd, e))
			ev |= POLLPRI;
		if (ev != 0)
			p[n++] = (struct pollfd){.fd = fd, .events = ev};
	}
	if ((ready = ult__dropin_poll(p, (nfds_t)n, ms)) < 0) {
		err = errno;
		goto out;
	}
	err = 0;
	ready = 0;
	for (int i = 0; i < n; i++)
		if (p[i].revents & POLLNVAL)
			err = EBADF;
	if (err != 0)
		goto out;
	for (int i = 0; i < n; i++) {
		short rv = p[i].revents;
		int fd = p[i].fd;

		if (r != NULL && FD_ISSET(fd, r) &&
		    !(rv & (POLLIN | POLLHUP | POLLERR)))
			FD_CLR(fd, r);
		if (w != NULL && FD_ISSET(fd, w) && !(rv & (POLLOUT | POLLERR)))
			FD_CLR(fd, w);
		if (e != NULL && FD_ISSET(fd, e) && !(rv & POLLPRI))
			FD_CLR(fd, e);
		ready += (r != NULL && FD_ISSET(fd, r)) +
		    (w != NULL && FD_ISSET(fd, w)) +
		    (e != NULL && FD_ISSET(fd, e));
	}
out:
	if (p != local)
		free(p);
	if (err != 0) {
		errno = err;
		return (-1);
	}
	return (ready);
}

int
select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	int ms = -1;

	ENTER();
	if (tv != NULL) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0 ||
		    tv->tv_usec >= 1000000) {
			errno = EINVAL;
			return (-1);
		}
		uint64_t v = (uint64_t)tv->tv_sec * 1000u +
		    ((uint64_t)tv->tv_usec + 999u) / 1000u;
		ms = v > INT32_MAX ? INT32_MAX : (int)v;
	}
	WAITING_NR(int, do_select(nfds, r, w, e, ms));
}

int
pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
    const sigset_t *mask)
{
	static void *_Atomic slot;

	ENTER();
	if (mask != NULL && ult__dropin_self() != NULL) /* signal.c */
		WITH_MASK(mask, pselect(nfds, r, w, e, ts, NULL));
	if (mask != NULL)
		return (((int (*)(int, fd_set *, fd_set *, fd_set *,
		    const struct timespec *,
		    const sigset_t *))ult__dropin_next("pselect", &slot))(nfds,
		    r, w, e, ts, mask));
	if (ts != NULL &&
	    (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)) {
		errno = EINVAL;
		return (-1);
	}
	WAITING_NR(int, do_select(nfds, r, w, e, ts_ms(ts)));
}

/*
 * epoll_wait: an epoll fd is readable while it has events, so the
 * uthread waits for that on ult's poller, then collects them without
 * blocking.  Its own try (epoll_wait with no timeout) is the call the
 * poller's edge counts are read before, as for a read: one system call
 * before the sleep and one after it.  Several uthreads waiting on one
 * epoll fd all wake at its edge; those that collect nothing wait again.
 */
int
epoll_wait(int ep, struct epoll_event *ev, int n, int ms)
{
	struct ult__io_ref ref;
	uint64_t deadline = 0;
	int r, err;

	ENTER();
	if (ult_self() == NULL || ms == 0)
		return (ult__libc_epoll_wait(ep, ev, n, ms));
	if (ms > 0)
		deadline = ult__now() + (uint64_t)ms * 1000000u;
	ult__io_peek(ep, &ref);
	for (;;) {
		if ((r = ult__libc_epoll_wait(ep, ev, n, 0)) != 0)
			return (r);
		if (ref.e == NULL && (err = ult__io_ref(ep, &ref)) != 0) {
			errno = err;
			return (-1);
		}
		ult__dropin_intr_begin();
		err = ult__io_await(&ref, IO_RD, deadline);
		ult__dropin_intr_end();
		if (err == EINTR) {
			/* Never restarted (signal(7)). */
			if (ult__dropin_point() & DP_SIG_RAN) {
				errno = EINTR;
				return (-1);
			}
			continue;
		}
		if (err == ETIMEDOUT)
			return (0);
		if (err != 0) {
			errno = err;
			return (-1);
		}
		ult__dropin_point();
	}
}

int
epoll_pwait(int ep, struct epoll_event *ev, int n, int ms, const sigset_t *mask)
{
	static void *_Atomic slot;

	if (mask == NULL)
		return (epoll_wait(ep, ev, n, ms));
	ult__dropin_up();
	if (ult__dropin_self() != NULL) /* signal.c */
		WITH_MASK(mask, epoll_wait(ep, ev, n, ms));
	return (((int (*)(int, struct epoll_event *, int, int,
	    const sigset_t *))ult__dropin_next("epoll_pwait", &slot))(ep, ev, n,
	    ms, mask));
}
