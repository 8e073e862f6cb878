/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The POSIX stand-ins (ult_read, ult_send, ...): the call itself, made so
 * that it cannot block, and a wait on the poller when it would have.
 *
 * Sockets take MSG_DONTWAIT per call, which leaves the descriptor's own
 * flags alone, so a program (or another process) sharing it sees no
 * change.  Other descriptors (pipes, ttys, eventfds) have no per-call
 * flag: the stand-in waits until poll(2) says ready, then makes the
 * blocking call, which returns at once unless somebody else drained the
 * fd in between: another uthread woken by the same edge, or another
 * process (then the worker blocks, and the clock thread's handoff keeps
 * its queue moving).  A descriptor the program made non-blocking
 * gets the plain call: EAGAIN is its answer.  A blocking send on a stream
 * socket sends everything, as send(2) does, so it loops over partial
 * sends; MSG_WAITALL loops the same way for receives.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kern/runtime.h"
#include "../kern/worker.h"
#include "../kern/switch.h"
#include "../kern/io.h"

/* Enough iovecs for the stand-ins' own copy; larger arrays go to the
 * heap. */
#define IOV_LOCAL 16

static int
in_uthread(void)
{
	return (ult__self_ut() != NULL && ult__running());
}

static int
again(ssize_t r)
{
	return (
	    r < 0 && (ult__errno() == EAGAIN || ult__errno() == EWOULDBLOCK));
}

/*
 * The call said EAGAIN: 0 after a wait to try again, or -1 with errno
 * (EAGAIN itself for a non-blocking fd).  ref was peeked at before the
 * first try (a few loads, no entry made for an fd never waited on);
 * *first is set until the first wait, which looks at the fd's flags.
 */
static int
wait_again(int fd, unsigned dir, struct ult__io_ref *ref, int *first)
{
	int err;

	if (*first) {
		int nb = ult__io_nonblocking(fd);

		if (nb != 0) {
			if (nb > 0)
				ult__set_errno(EAGAIN);
			return (-1);
		}
		*first = 0;
	}
	if (ref->e == NULL && (err = ult__io_ref(fd, ref)) != 0) {
		ult__set_errno(err);
		return (-1);
	}
	if ((err = ult__io_await(ref, dir, 0)) != 0) {
		ult__set_errno(err);
		return (-1);
	}
	return (0);
}

/* A descriptor that is not a socket: wait until ready for `events', then
 * the caller makes the call.  0, or -1 with errno. */
static int
wait_ready(int fd, int events)
{
	int nb = ult__io_nonblocking(fd), err;

	if (nb != 0)
		return (nb > 0 ? 0 : -1);
	err = ult__io_wait(fd, events, 0, NULL);
	if (err == EINVAL)
		return (0); /* cannot be polled (a regular file): just call */
	if (err != 0) {
		ult__set_errno(err);
		return (-1);
	}
	return (0);
}

static int
is_stream(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	    type == SOCK_STREAM);
}

/* Drop `done' bytes from the front of an iovec array (a private copy). */
static void
iov_advance(struct iovec **iov, int *cnt, size_t done)
{
	while (*cnt > 0 && done >= (*iov)->iov_len) {
		done -= (*iov)->iov_len;
		(*iov)++;
		(*cnt)--;
	}
	if (*cnt > 0 && done > 0) {
		(*iov)->iov_base = (char *)(*iov)->iov_base + done;
		(*iov)->iov_len -= done;
	}
}

static size_t
iov_total(const struct iovec *iov, size_t cnt)
{
	size_t t = 0;

	for (size_t i = 0; i < cnt; i++)
		t += iov[i].iov_len;
	return (t);
}

/*
 * The engine under every socket stand-in: recvmsg or sendmsg with
 * MSG_DONTWAIT, waiting on EAGAIN; a send, or a receive with MSG_WAITALL,
 * goes on until the whole length has moved.  ENOTSOCK is returned for the
 * caller to handle.
 */
static ssize_t
xfer(int fd, struct msghdr *msg, int flags, int out)
{
	struct iovec local[IOV_LOCAL], *copy = local, *iov;
	struct ult__io_ref ref;
	struct msghdr m = *msg;
	/* MSG_PEEK returns the same bytes again: it never loops. */
	int all = out || (flags & (MSG_WAITALL | MSG_PEEK)) == MSG_WAITALL;
	int cnt = (int)m.msg_iovlen, stream = -1, first = 1;
	size_t want = iov_total(msg->msg_iov, msg->msg_iovlen), done = 0;
	int saved = ult__errno();
	ssize_t r = 0;

	if (m.msg_iovlen > IOV_LOCAL &&
	    (copy = malloc(m.msg_iovlen * sizeof(*copy))) == NULL) {
		ult__set_errno(ENOMEM);
		return (-1);
	}
	if (m.msg_iovlen > 0)
		memcpy(copy, msg->msg_iov, m.msg_iovlen * sizeof(*copy));
	iov = copy;
	ult__io_peek(fd, &ref);
	for (;;) {
		m.msg_iov = iov;
		m.msg_iovlen = (size_t)cnt;
		r = out ? sendmsg(fd, &m, flags | MSG_DONTWAIT)
			: recvmsg(fd, &m, flags | MSG_DONTWAIT);
		if (r >= 0 && !out && done == 0) {
			/* What the first receive says about the message. */
			msg->msg_namelen = m.msg_namelen;
			msg->msg_controllen = m.msg_controllen;
			msg->msg_flags = m.msg_flags;
		}
		if (r > 0) {
			done += (size_t)r;
			if (!all || done >= want)
				break;
			/* A message moves whole: only a stream goes on (Linux
			 * ignores MSG_WAITALL on the other socket types). */
			if (!out && stream < 0)
				stream = is_stream(fd);
			if (!out && !stream)
				break;
			iov_advance(&iov, &cnt, (size_t)r);
			/* The address and control data went with the first. */
			m.msg_name = NULL;
			m.msg_namelen = 0;
			m.msg_control = NULL;
			m.msg_controllen = 0;
			continue;
		}
		if (r == 0 && (!out || want == 0))
			break; /* end of file, or nothing to send */
		if (!again(r) || (flags & MSG_DONTWAIT) ||
		    wait_again(fd, out ? IO_WR : IO_RD, &ref, &first) != 0)
			break;
	}
	if (copy != local)
		free(copy);
	/* A success leaves errno alone, as the call would (the EAGAIN of an
	 * attempt before the wait is no business of the caller's). */
	if (r >= 0 || done > 0)
		ult__set_errno(saved);
	return (done > 0 ? (ssize_t)done : r);
}

static ssize_t
xfer_buf(int fd, void *buf, size_t n, int flags, int out)
{
	struct iovec v = {buf, n};
	struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};

	return (xfer(fd, &m, flags, out));
}

/*
 * A blocking write of more than PIPE_BUF bytes to a pipe waits until all
 * of it is in, and POLLOUT promises room for one page only: the write
 * goes in pieces of PIPE_BUF, each after a wait, so the worker never
 * waits for a reader that may be a uthread queued behind it.
 */
static ssize_t
write_pieces(int fd, const struct iovec *iov, int cnt)
{
	size_t done = 0;

	for (int i = 0; i < cnt; i++) {
		for (size_t off = 0; off < iov[i].iov_len;) {
			size_t n = iov[i].iov_len - off;
			ssize_t w;

			if (n > PIPE_BUF)
				n = PIPE_BUF;
			if (wait_ready(fd, POLLOUT) != 0 ||
			    (w = write(fd, (char *)iov[i].iov_base + off, n)) <
				0)
				return (done > 0 ? (ssize_t)done : -1);
			off += (size_t)w;
			done += (size_t)w;
		}
	}
	return ((ssize_t)done);
}

static int
is_fifo(int fd)
{
	struct stat st;

	return (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode));
}

/* read, write, readv, writev: a socket goes through xfer; anything else
 * waits until ready and then makes the plain call. */
static ssize_t
rw(int fd, const struct iovec *iov, int cnt, int out)
{
	struct msghdr m = {.msg_iov = (struct iovec *)iov,
	    .msg_iovlen = (size_t)cnt};
	int saved = ult__errno();
	ssize_t r;

	if ((r = xfer(fd, &m, 0, out)) >= 0 || ult__errno() != ENOTSOCK)
		return (r);
	ult__set_errno(saved);
	if (out && iov_total(iov, (size_t)cnt) > PIPE_BUF && is_fifo(fd))
		return (write_pieces(fd, iov, cnt));
	if (wait_ready(fd, out ? POLLOUT : POLLIN) != 0)
		return (-1);
	ult__set_errno(saved);
	return (out ? writev(fd, iov, cnt) : readv(fd, iov, cnt));
}

ssize_t
ult_read(int fd, void *buf, size_t n)
{
	struct iovec v = {buf, n};

	if (!in_uthread())
		return (read(fd, buf, n));
	return (rw(fd, &v, 1, 0));
}

ssize_t
ult_write(int fd, const void *buf, size_t n)
{
	struct iovec v = {(void *)buf, n};

	if (!in_uthread())
		return (write(fd, buf, n));
	return (rw(fd, &v, 1, 1));
}

ssize_t
ult_readv(int fd, const struct iovec *iov, int iovcnt)
{
	if (!in_uthread() || iovcnt < 0 || iovcnt > IOV_MAX)
		return (readv(fd, iov, iovcnt));
	return (rw(fd, iov, iovcnt, 0));
}

ssize_t
ult_writev(int fd, const struct iovec *iov, int iovcnt)
{
	if (!in_uthread() || iovcnt < 0 || iovcnt > IOV_MAX)
		return (writev(fd, iov, iovcnt));
	return (rw(fd, iov, iovcnt, 1));
}

ssize_t
ult_recv(int fd, void *buf, size_t n, int flags)
{
	if (!in_uthread())
		return (recv(fd, buf, n, flags));
	return (xfer_buf(fd, buf, n, flags, 0));
}

ssize_t
ult_send(int fd, const void *buf, size_t n, int flags)
{
	if (!in_uthread())
		return (send(fd, buf, n, flags));
	return (xfer_buf(fd, (void *)buf, n, flags, 1));
}

ssize_t
ult_recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from,
    socklen_t *fromlen)
{
	struct iovec v = {buf, n};
	struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
	ssize_t r;

	if (!in_uthread())
		return (recvfrom(fd, buf, n, flags, from, fromlen));
	if (from != NULL && fromlen != NULL) {
		m.msg_name = from;
		m.msg_namelen = *fromlen;
	}
	if ((r = xfer(fd, &m, flags, 0)) >= 0 && from != NULL &&
	    fromlen != NULL)
		*fromlen = m.msg_namelen;
	return (r);
}

ssize_t
ult_sendto(int fd, const void *buf, size_t n, int flags,
    const struct sockaddr *to, socklen_t tolen)
{
	struct iovec v = {(void *)buf, n};
	struct msghdr m = {.msg_name = (void *)to,
	    .msg_namelen = to != NULL ? tolen : 0,
	    .msg_iov = &v,
	    .msg_iovlen = 1};

	if (!in_uthread())
		return (sendto(fd, buf, n, flags, to, tolen));
	return (xfer(fd, &m, flags, 1));
}

ssize_t
ult_recvmsg(int fd, struct msghdr *msg, int flags)
{
	if (!in_uthread() || msg == NULL)
		return (recvmsg(fd, msg, flags));
	return (xfer(fd, msg, flags, 0));
}

ssize_t
ult_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct msghdr m;

	if (!in_uthread() || msg == NULL)
		return (sendmsg(fd, msg, flags));
	m = *msg;
	return (xfer(fd, &m, flags, 1));
}

int
ult_accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
	if (in_uthread() && wait_ready(fd, POLLIN) != 0)
		return (-1);
	return (accept4(fd, addr, addrlen, flags));
}

struct connect_call {
	int fd;
	const struct sockaddr *addr;
	socklen_t len;
};

static void *
connect_helper(void *arg)
{
	struct connect_call *c = arg;

	return ((void *)(intptr_t)connect(c->fd, c->addr, c->len));
}

static int
connect_blocking(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct connect_call c = {fd, addr, len};
	void *ret;
	int err;

	/* ult_blocking hands back the helper's errno with the result. */
	if ((err = ult_blocking(connect_helper, &c, &ret)) != 0) {
		ult__set_errno(err);
		return (-1);
	}
	return ((int)(intptr_t)ret);
}

/*
 * connect(2) on a blocking socket waits for the handshake: start it with
 * O_NONBLOCK set for the call alone, then wait until the socket is
 * writable and read the outcome from SO_ERROR.
 */
int
ult_connect(int fd, const struct sockaddr *addr, socklen_t addrlen)
{
	int fl, r, err;
	socklen_t len = sizeof(err);

	if (!in_uthread() || (fl = fcntl(fd, F_GETFL)) < 0 || (fl & O_NONBLOCK))
		return (connect(fd, addr, addrlen));
	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return (connect(fd, addr, addrlen));
	r = connect(fd, addr, addrlen);
	err = ult__errno();
	fcntl(fd, F_SETFL, fl);
	/* A Unix socket whose listener's backlog is full says EAGAIN where
	 * the blocking call waits: let a helper wait in the blocking one. */
	if (r != 0 && err == EAGAIN)
		return (connect_blocking(fd, addr, addrlen));
	if (r == 0 || err != EINPROGRESS) {
		ult__set_errno(err);
		return (r);
	}
	if ((err = ult__io_wait(fd, POLLOUT, 0, NULL)) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
		if (err != 0)
			ult__set_errno(err);
		return (-1);
	}
	if (err != 0) {
		ult__set_errno(err);
		return (-1);
	}
	return (0);
}

struct poll_call {
	struct pollfd *fds;
	nfds_t nfds;
	int timeout;
};

static void *
poll_helper(void *arg)
{
	struct poll_call *c = arg;

	return ((void *)(intptr_t)poll(c->fds, c->nfds, c->timeout));
}

/* poll(2) with no wait, from a uthread.  Linux fails even that with EINTR
 * when a handled signal arrives, and the runtime's preemption signal is
 * one: a probe has no wait for a signal to cut short, so it asks again. */
static int
poll_probe(struct pollfd *fds, nfds_t nfds)
{
	int saved = errno, r;

	while ((r = poll(fds, nfds, 0)) < 0 && errno == EINTR)
		errno = saved;
	return (r);
}

int
ult_poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct poll_call c = {fds, nfds, timeout};
	struct ult__io_ref ref = {.e = NULL};
	uint64_t deadline;
	unsigned dirs;
	void *ret;
	int r, err;

	if (!in_uthread())
		return (poll(fds, nfds, timeout));
	/* One descriptor's edge counts, before the probe that is its try. */
	if (nfds == 1 && fds[0].fd >= 0 && timeout != 0)
		ult__io_peek(fds[0].fd, &ref);
	/* Ready, or a probe: back to the program as from a system call,
	 * taking a preemption owed meanwhile (a loop of probes would
	 * otherwise keep the signal's tries landing in the runtime or libc,
	 * where they are deferred, and never give the CPU up). */
	if ((r = poll_probe(fds, nfds)) != 0 || timeout == 0) {
		ult__userret();
		return (r);
	}
	deadline = timeout < 0 ? 0 : ult__now() + (uint64_t)timeout * 1000000u;
	if (nfds == 0) {
		if (ult_sleep_until(deadline ? deadline : UINT64_MAX) == EINTR)
			goto interrupted;
		return (0);
	}
	/* One descriptor waits through the poller, its probe the try the
	 * edge counts were read before; poll(2) then says what is ready
	 * (POLLNVAL after an ult_close), and a readiness somebody else
	 * drained meanwhile means waiting again. */
	dirs = ((fds[0].events & POLLIN) ? IO_RD : 0) |
	    ((fds[0].events & POLLOUT) ? IO_WR : 0);
	while (nfds == 1 && fds[0].fd >= 0 && dirs != 0) {
		if (ref.e == NULL && (err = ult__io_ref(fds[0].fd, &ref)) != 0)
			break;
		err = ult__io_await(&ref, dirs, deadline);
		if (err == ETIMEDOUT)
			return (0);
		if (err == EINTR)
			goto interrupted;
		if (err == 0 || err == EBADF) {
			if ((r = poll_probe(fds, 1)) != 0 || err == EBADF)
				return (r);
			continue;
		}
		/* EINVAL (out of the poller's range), ENOMEM: as for
		 * several. */
		break;
	}
	/* Several, or what the poller cannot wait for: poll(2) itself on a
	 * helper thread, which it occupies until it returns. */
	if ((err = ult_blocking(poll_helper, &c, &ret)) != 0) {
		ult__set_errno(err);
		return (-1);
	}
	return ((int)(intptr_t)ret);
interrupted:
	/* Only the pthread drop-in interrupts a wait (EINTR, as a signal
	 * would); it calls again. */
	ult__set_errno(EINTR);
	return (-1);
}
