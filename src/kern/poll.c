/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The poller: one epoll instance for the runtime, in edge-triggered mode,
 * as Go's netpoller uses it.  An fd is added on the first wait and stays
 * until ult_close (or the kernel drops the closed file); each readiness
 * edge is reported once, to whichever thread calls epoll_wait first: a
 * worker about to park (ult__io_poll_now) or the clock thread, which
 * sleeps in epoll_wait instead of on its futex once I/O is armed.
 *
 * Per fd there is one wait channel and two waiter slots, reader and
 * writer (a waiter for both directions takes both), under the channel's
 * sleep-queue chain lock.  An edge with no waiter is kept in `ready' so a
 * uthread that saw EAGAIN just before it cannot sleep through it; a
 * waiter that finds it set consumes it and looks again.  A woken uthread
 * goes through the policy's wakeup like any sleeper.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "runtime.h"
#include "worker.h"
#include "switch.h"
#include "clock.h"
#include "sleepq.h"
#include "io.h"

#define IO_CHUNK 1024
#define IO_NCHUNK 1024
#define IO_MAXFD (IO_CHUNK * IO_NCHUNK)
#define IO_EVENTS 64
/* epoll data of the kick eventfd; fds use their number. */
#define IO_KICK UINT64_MAX

/* Locking key: l, the chain lock of &chan; a, atomic. */
struct io_fd {
	unsigned ready;		  /* (l) IO_RD/IO_WR edges nobody took */
	atomic_uint gen;	  /* (l, a) bumped by ult_close; read
				     unlocked by ult__io_ref */
	struct ult__waiter *w[2]; /* (l) reader, writer */
	int closing;		  /* (l) ult_close is under way */
	char chan;		  /* the wait channel is its address */
};

static struct io_fd *_Atomic chunks[IO_NCHUNK];
static int epfd = -1, kickfd = -1;
static atomic_int no_pwait2; /* the kernel lacks epoll_pwait2 */
atomic_int ult__io_armed;
atomic_int ult__io_nwaiting;
atomic_int ult__io_boost = 1;

int
ult__io_init(void)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = IO_KICK};

	ULT_ST(&ult__io_armed, 0);
	ULT_ST(&ult__io_nwaiting, 0);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	kickfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	/* Level-triggered: a worker's poll that sees the kick leaves it for
	 * the clock thread, which drains it. */
	if (epfd < 0 || kickfd < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, kickfd, &ev) != 0) {
		int err = ult__errno();

		ult__io_fini();
		return (err == EMFILE || err == ENFILE ? EAGAIN : err);
	}
	return (0);
}

void
ult__io_fini(void)
{
	if (epfd >= 0)
		close(epfd);
	if (kickfd >= 0)
		close(kickfd);
	epfd = kickfd = -1;
	ULT_ST(&ult__io_armed, 0);
	for (int i = 0; i < IO_NCHUNK; i++) {
		free(ULT_LD(&chunks[i]));
		ULT_ST(&chunks[i], NULL);
	}
}

static struct io_fd *
fd_entry(int fd, int create)
{
	struct io_fd *_Atomic *slot = &chunks[fd / IO_CHUNK];
	struct io_fd *c = ULT_LD_ACQ(slot), *expect = NULL;

	if (c == NULL && create) {
		if ((c = calloc(IO_CHUNK, sizeof(*c))) == NULL)
			return (NULL);
		if (!atomic_compare_exchange_strong(slot, &expect, c)) {
			free(c);
			c = expect;
		}
	}
	return (c != NULL ? &c[fd % IO_CHUNK] : NULL);
}

int
ult__io_ref(int fd, struct ult__io_ref *ref)
{
	if (fd < 0 || fd >= IO_MAXFD)
		return (fd < 0 ? EBADF : EINVAL);
	if ((ref->e = fd_entry(fd, 1)) == NULL)
		return (ENOMEM);
	ref->gen = ULT_LD_ACQ(&ref->e->gen);
	ref->fd = fd;
	return (0);
}

static unsigned
dirs_of_events(uint32_t ev)
{
	unsigned d = 0;

	if (ev & (EPOLLIN | EPOLLPRI | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		d |= IO_RD;
	if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		d |= IO_WR;
	return (d);
}

/* Chain locked: take w out of e's slots and wake it with `result'; 0 if
 * it had timed out and is waking by itself. */
static int
wake_waiter(struct io_fd *e, struct ult__waiter *w, int result)
{
	for (int d = 0; d < 2; d++)
		if (e->w[d] == w)
			e->w[d] = NULL;
	if (!ult__list_linked(&w->link))
		return (0);
	ult__list_remove(&w->link);
	w->result = result;
	ult__sleepq_resume(&e->chan, w);
	return (1);
}

static int
fd_event(int fd, uint32_t ev)
{
	unsigned dirs = dirs_of_events(ev);
	struct io_fd *e;
	int woken = 0;

	if (fd < 0 || fd >= IO_MAXFD || (e = fd_entry(fd, 0)) == NULL)
		return (0);
	ult__sleepq_lock(&e->chan);
	for (int d = 0; d < 2; d++) {
		struct ult__waiter *w = e->w[d];

		if ((dirs & (1u << d)) == 0)
			continue;
		if (w != NULL && wake_waiter(e, w, 0))
			woken++;
		else
			e->ready |= 1u << d;
	}
	ult__sleepq_release(&e->chan);
	return (woken);
}

static int
handle(const struct epoll_event *evs, int n, int *kicked)
{
	int woken = 0;

	for (int i = 0; i < n; i++) {
		if (evs[i].data.u64 == IO_KICK)
			*kicked = 1;
		else
			woken += fd_event((int)evs[i].data.u64, evs[i].events);
	}
	return (woken);
}

int
ult__io_epfd(void)
{
	return (epfd);
}

int
ult__io_poll_now(void)
{
	struct epoll_event evs[IO_EVENTS];
	int saved = ult__errno(), n, kicked = 0, woken;

	n = epoll_wait(epfd, evs, IO_EVENTS, 0);
	woken = n > 0 ? handle(evs, n, &kicked) : 0;
	ult__set_errno(saved);
	return (woken);
}

void
ult__io_clock_wait(uint64_t deadline)
{
	struct epoll_event evs[IO_EVENTS];
	struct timespec ts, *tp = NULL;
	int n, kicked = 0;
	uint64_t v;

	if (deadline != UINT64_MAX) {
		uint64_t now = ult__now(),
			 d = deadline > now ? deadline - now : 0;

		ts.tv_sec = (time_t)(d / 1000000000u);
		ts.tv_nsec = (long)(d % 1000000000u);
		tp = &ts;
	}
	/* epoll_pwait2 (Linux 5.11) takes nanoseconds; before it, epoll_wait
	 * with the timeout rounded up to a millisecond. */
	if (ULT_LD(&no_pwait2) ||
	    ((n = epoll_pwait2(epfd, evs, IO_EVENTS, tp, NULL)) < 0 &&
		errno == ENOSYS)) {
		ULT_ST(&no_pwait2, 1);
		long long ms = tp == NULL ? -1
					  : (long long)ts.tv_sec * 1000 +
			(ts.tv_nsec + 999999) / 1000000;

		n = epoll_wait(epfd, evs, IO_EVENTS,
		    ms > INT_MAX ? INT_MAX : (int)ms);
	}
	if (n > 0)
		handle(evs, n, &kicked);
	if (kicked && read(kickfd, &v, sizeof(v)) < 0)
		(void)0; /* drained by an earlier read: nothing pending */
}

void
ult__io_kick(void)
{
	uint64_t one = 1;
	int saved = ult__errno();

	if (write(kickfd, &one, sizeof(one)) < 0)
		(void)0; /* counter saturated: a kick is pending anyway */
	ult__set_errno(saved);
}

static int
io_register(int fd)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP |
		EPOLLPRI | EPOLLET,
	    .data.u64 = (uint64_t)fd};

	/* Added again at every wait: a plain close() drops the kernel's
	 * registration, and the fd's number may name a new file now. */
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		if (ult__errno() == EEXIST)
			return (0);
		return (ult__errno() == EPERM ? EINVAL : ult__errno());
	}
	if (!ULT_LD(&ult__io_armed)) {
		ULT_ST(&ult__io_armed, 1);
		ult__clock_rearm();
	}
	return (0);
}

static int
await(struct ult__io_ref *ref, unsigned dirs, uint64_t deadline)
{
	struct io_fd *e = ref->e;
	struct ult__waiter w;
	int err;

	if ((err = io_register(ref->fd)) != 0)
		return (err);
	ult__waiter_self(&w);
	ult__sleepq_lock(&e->chan);
	/* Closed meanwhile (ult_close moves the generation as it starts and
	 * as it ends): EBADF if it is closed now; a new file under the same
	 * number is waited on afresh. */
	if (ULT_LD(&e->gen) != ref->gen) {
		ult__sleepq_release(&e->chan);
		if (fcntl(ref->fd, F_GETFD) < 0)
			return (EBADF);
		ref->gen = ULT_LD_ACQ(&e->gen);
		return (0);
	}
	if (e->closing) {
		ult__sleepq_release(&e->chan);
		ult_yield(); /* until the close is done: then look again */
		return (0);
	}
	if (e->ready & dirs) {
		e->ready &= ~dirs;
		ult__sleepq_release(&e->chan);
		return (0);
	}
	/* A slot whose waiter timed out and has not cleared it yet is free:
	 * that waiter clears a slot only while it still names it. */
	for (int d = 0; d < 2; d++) {
		if ((dirs & (1u << d)) && e->w[d] != NULL &&
		    ult__list_linked(&e->w[d]->link)) {
			ult__sleepq_release(&e->chan);
			return (EBUSY);
		}
	}
	for (int d = 0; d < 2; d++)
		if (dirs & (1u << d))
			e->w[d] = &w;
	ult__sleepq_add(&e->chan, &w, "fd");
	atomic_fetch_add(&ult__io_nwaiting, 1);
	err = ult__sleepq_wait_pri(&e->chan, &w, deadline,
	    PSOCK | (ULT_LD(&ult__io_boost) ? PRI_SLEEP_BOOST : 0));
	atomic_fetch_sub(&ult__io_nwaiting, 1);
	ult__userret();
	if (err == ETIMEDOUT || err == EINTR) {
		ult__sleepq_lock(&e->chan);
		for (int d = 0; d < 2; d++)
			if (e->w[d] == &w)
				e->w[d] = NULL;
		ult__sleepq_release(&e->chan);
	}
	return (err);
}

/* The callers' errno stays as it was: they return error codes, and the
 * stand-ins set errno themselves. */
int
ult__io_await(struct ult__io_ref *ref, unsigned dirs, uint64_t deadline)
{
	int saved = ult__errno(), err = await(ref, dirs, deadline);

	ult__set_errno(saved);
	return (err);
}

/* 1: ready, with *revents; 0: not yet; -errno. */
static int
poll1(int fd, int events, int *revents)
{
	struct pollfd p = {.fd = fd, .events = (short)events};
	int r;

	while ((r = poll(&p, 1, 0)) < 0 && ult__errno() == EINTR)
		;
	if (r < 0)
		return (-ult__errno());
	if (r == 0)
		return (0);
	if (p.revents & POLLNVAL)
		return (-EBADF);
	if (revents != NULL)
		*revents = p.revents;
	return (1);
}

static int
io_wait(int fd, int events, uint64_t deadline, int *revents)
{
	unsigned dirs =
	    ((events & POLLIN) ? IO_RD : 0) | ((events & POLLOUT) ? IO_WR : 0);
	struct ult__io_ref ref;
	int r, err;

	if ((err = ult__io_ref(fd, &ref)) != 0)
		return (err);
	for (;;) {
		if ((r = poll1(fd, events, revents)) != 0)
			return (r > 0 ? 0 : -r);
		if (deadline != 0 && ult__now() >= deadline)
			return (ETIMEDOUT);
		if ((err = await(&ref, dirs, deadline)) != 0)
			return (err);
	}
}

int
ult__io_wait(int fd, int events, uint64_t deadline, int *revents)
{
	int saved = ult__errno(), err = io_wait(fd, events, deadline, revents);

	ult__set_errno(saved);
	return (err);
}

/* A foreign thread's wait: poll(2) itself, in pieces of at most the time
 * left (its timeout is in milliseconds, rounded up). */
static int
poll_foreign(int fd, int events, uint64_t deadline, int *revents)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = (short)events};
		uint64_t now = ult__now();
		int ms = -1, r;

		if (deadline != 0) {
			if (now >= deadline) {
				r = poll1(fd, events, revents);
				return (r > 0 ? 0 : r < 0 ? -r : ETIMEDOUT);
			}
			ms = (int)((deadline - now + 999999) / 1000000 > 1000000
				? 1000000
				: (deadline - now + 999999) / 1000000);
		}
		if ((r = poll(&p, 1, ms)) < 0 && ult__errno() != EINTR)
			return (ult__errno());
		if (r <= 0)
			continue;
		if (p.revents & POLLNVAL)
			return (EBADF);
		if (revents != NULL)
			*revents = p.revents;
		return (0);
	}
}

int
ult__io_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return (fl < 0 ? -1 : (fl & O_NONBLOCK) != 0);
}

/* ult_close: mark fd closing (on) or closed (off); the generation moves
 * both times, and going on the waiters wake with EBADF. */
static void
fd_closing(int fd, int on)
{
	struct io_fd *e;

	if (fd < 0 || fd >= IO_MAXFD || (e = fd_entry(fd, 0)) == NULL)
		return;
	ult__sleepq_lock(&e->chan);
	e->closing = on;
	ULT_ST(&e->gen, ULT_LD(&e->gen) + 1);
	if (on) {
		e->ready = 0;
		for (int d = 0; d < 2; d++)
			if (e->w[d] != NULL)
				wake_waiter(e, e->w[d], EBADF);
	}
	ult__sleepq_release(&e->chan);
}

/*
 * The waiters of an fd being closed wake with EBADF; so does a uthread
 * that looked the fd up before this and sleeps later (the generation).
 * Until close() itself has returned the fd is "closing": a uthread that
 * would sleep on it (a woken one calling again, seeing it still open)
 * yields and looks again instead, and then finds it closed, or a new
 * file under the same number.
 */
int
ult_close(int fd)
{
	int saved = ult__errno(), r, err;

	/* In a fork child (or with the runtime stopped) nobody here waits,
	 * and the epoll instance is the parent's: just close. */
	if (!ult__running())
		return (close(fd));
	fd_closing(fd, 1);
	if (epfd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	ult__set_errno(saved);
	r = close(fd);
	err = ult__errno();
	fd_closing(fd, 0);
	ult__set_errno(err);
	return (r);
}

int
ult_wait_fd(int fd, int events, uint64_t deadline, int *revents)
{
	int saved = ult__errno(), err;

	if ((events & (POLLIN | POLLOUT)) == 0)
		return (EINVAL);
	if (fd < 0)
		return (EBADF);
	if (ult__self_ut() == NULL) {
		err = poll_foreign(fd, events, deadline, revents);
	} else if (!ult__running()) {
		err = ENXIO;
	} else {
		err = io_wait(fd, events, deadline, revents);
	}
	ult__set_errno(saved);
	return (err);
}
