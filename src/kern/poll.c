/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The poller: one epoll instance for the runtime.  An fd is added on the
 * first wait and stays until ult_close (or the kernel drops the closed
 * file), but it is armed only while uthreads wait on it: one-shot, for the
 * directions they wait for, re-armed at each wait.  Its readiness is
 * reported once, to whichever thread calls epoll_wait first: a worker
 * about to park (ult__io_poll_now, or parked in the poller) or the clock
 * thread, which sleeps in an epoll set of its own that holds this one,
 * instead of on its futex, once I/O is armed.  Go's netpoller keeps its fds
 * armed, edge-triggered, and no thread of it sleeps in epoll while all its Ps
 * run; ult's clock thread does (a woken uthread must be able to preempt a batch
 * one), and with fds armed for good it would wake at every packet for a uthread
 * that is running and will read the data itself.  Arming costs no more than the
 * registration each wait made anyway (see io_arm).
 *
 * Per fd there is one wait channel, whose sleep-queue chain lock is the
 * fd's lock, and under it a FIFO of waiters per direction (a waiter for
 * both directions is on both) and a count of the edges seen per
 * direction.  Any number of uthreads may wait on an fd, as the kernel
 * lets any number of threads block in read(2) or accept(2) on one file.
 *
 * An edge wakes every waiter of its direction.  Each of them then repeats
 * its non-blocking call, and one that finds EAGAIN waits again.  Waking
 * one would be enough only if the woken one could tell whether it left
 * something for the next (the edge may stand for many bytes, several
 * queued connections, room for several writes), and it cannot without
 * another call; nor could a waiter that timed out as it was chosen pass
 * its wakeup on.  So the cost is a herd, N failed calls for N waiters,
 * never a waiter sleeping beside data.
 *
 * No edge is lost between "try the call, see EAGAIN" and "sleep": the
 * caller reads the edge counts before its try (ult__io_peek, ult__io_ref,
 * and ult__io_await as it returns "look again"), and ult__io_await sleeps
 * only if, under the fd's lock, they have not moved since.  It arms the
 * fd under that lock, and the kernel reports readiness it finds then as
 * well as later; the report is counted under the same lock.  So readiness
 * after the try is either counted before the sleeper looks (it sees the
 * count moved) or reported after it is queued (it is woken).
 * A counter rather than a flag taken by the first comer, because several
 * callers may be between their try and their sleep at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../util/kassert.h"
#include "clock.h"
#include "runtime.h"
#include "sleepq.h"
#include "switch.h"
#include "worker.h"
#include "io.h"
#include "subsys.h"

#define IO_CHUNK 1024
#define IO_NCHUNK 1024
#define IO_MAXFD (IO_CHUNK * IO_NCHUNK)
#define IO_EVENTS 64
/* What woke the clock thread: epoll data in its own set. */
enum {
	CLOCK_IO,
	CLOCK_KICK,
	CLOCK_TIMER
};

/* Locking key: l, the chain lock of &chan; a, atomic. */
struct io_fd {
	struct ult__list q[2]; /* (l) io_waiters, readers and writers, in
				  arrival order; zero until first used */
	atomic_uint seq[2];    /* (l, a) edges seen per direction; read
				  unlocked before a try */
	atomic_uint gen;       /* (l, a) bumped by ult_close; read
				  unlocked by ult__io_ref */
	int closing;	       /* (l) ult_close is under way */
	char chan;	       /* the wait channel is its address */
};

/* A uthread in ult__io_await, on its stack: on q[d] of its fd while it
 * waits for direction d.  Whoever wakes it (an edge, ult_close) or the
 * waiter itself after a timeout takes it off both, under the fd's lock. */
struct io_waiter {
	struct ult__waiter w;
	struct ult__list q[2];
	unsigned dirs;
};

static struct io_fd *_Atomic chunks[IO_NCHUNK];
static int epfd = -1;
/* The clock thread's own set: the poller's set, nested, its kick eventfd
 * and the timerfd of its next deadline (ult__io_clock_wait).  Only the
 * clock thread waits there; clock_armed is its own. */
static int clock_ep = -1, kickfd = -1, clock_tfd = -1;
static uint64_t clock_armed = UINT64_MAX; /* the timerfd's deadline */
atomic_int ult__io_armed;
atomic_int ult__io_nwaiting;
atomic_int ult__io_boost = 1;
atomic_ulong ult__io_nreports;	   /* fds reported ready, for the tests */
atomic_ulong ult__io_nclock_timer; /* clock timerfd expiries, for tests */
/* Written by every poll: a line of its own, away from the counts. */
_Atomic uint64_t ult__io_polled_ns ULT_ALIGNED_CL;
atomic_ulong ult__io_nclock_waits;

static int
clock_add(int fd, uint64_t what)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = what};

	return (epoll_ctl(clock_ep, EPOLL_CTL_ADD, fd, &ev));
}

int
ult__io_init(void)
{
	ULT_ST(&ult__io_armed, 0);
	ULT_ST(&ult__io_nwaiting, 0);
	clock_armed = UINT64_MAX;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	clock_ep = epoll_create1(EPOLL_CLOEXEC);
	kickfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	clock_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (epfd < 0 || clock_ep < 0 || kickfd < 0 || clock_tfd < 0 ||
	    clock_add(epfd, CLOCK_IO) != 0 ||
	    clock_add(kickfd, CLOCK_KICK) != 0 ||
	    clock_add(clock_tfd, CLOCK_TIMER) != 0) {
		int err = ult__errno();

		ult__io_fini();
		return (err == EMFILE || err == ENFILE ? EAGAIN : err);
	}
	return (0);
}

/* Close this process's epoll instance and kick descriptor; nothing is
 * armed any more. */
static void
io_close(void)
{
	int *fds[] = {&epfd, &clock_ep, &kickfd, &clock_tfd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	ULT_ST(&ult__io_armed, 0);
}

void
ult__io_fini(void)
{
	io_close();
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
		/* seq_cst, as before the explicit form: one chunk wins and
		 * is published to the ULT_LD_ACQ above; acq_rel would do. */
		if (!ULT_CAS_SC(slot, &expect, c)) {
			free(c);
			c = expect;
		}
	}
	return (c != NULL ? &c[fd % IO_CHUNK] : NULL);
}

/* seq_cst: the loads come before the caller's next system call, and
 * pair with the poller's increment (fd_event) after the kernel
 * reported the edge: a try that found nothing either saw the new count
 * or ran before the edge, whose increment then differs from the snap. */
static void
snap_seq(struct ult__io_ref *ref)
{
	for (int d = 0; d < 2; d++)
		ref->seq[d] = ULT_LD_SC(&ref->e->seq[d]);
}

int
ult__io_ref(int fd, struct ult__io_ref *ref)
{
	ref->fd = fd;
	if (fd < 0 || fd >= IO_MAXFD)
		return (fd < 0 ? EBADF : EINVAL);
	if ((ref->e = fd_entry(fd, 1)) == NULL)
		return (ENOMEM);
	ref->gen = ULT_LD_ACQ(&ref->e->gen);
	snap_seq(ref);
	return (0);
}

void
ult__io_peek(int fd, struct ult__io_ref *ref)
{
	ref->fd = fd;
	ref->e = fd >= 0 && fd < IO_MAXFD ? fd_entry(fd, 0) : NULL;
	if (ref->e == NULL)
		return;
	ref->gen = ULT_LD_ACQ(&ref->e->gen);
	snap_seq(ref);
}

/* Chain locked: the entry's queues, made on first use (the chunks are
 * calloc'ed, and an empty list head points at itself). */
static void
fd_queues(struct io_fd *e)
{
	for (int d = 0; d < 2; d++)
		if (e->q[d].next == NULL)
			ult__list_init(&e->q[d]);
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

/* Chain locked: take iw off e's queues; 1 if it was queued. */
static int
dequeue(struct io_waiter *iw)
{
	int was = 0;

	for (int d = 0; d < 2; d++) {
		if (ult__list_linked(&iw->q[d])) {
			MPASS(iw->dirs & (1u << d));
			ult__list_remove(&iw->q[d]);
			was = 1;
		}
	}
	return (was);
}

/* Chain locked: wake every waiter of direction d with `result'; returns
 * how many were asleep (one that timed out is waking by itself, and
 * leaves its queues when it gets the lock, unless we took it off). */
static int
wake_dir(struct io_fd *e, int d, int result)
{
	struct ult__list *n;
	int woken = 0;

	while ((n = ult__list_first(&e->q[d])) != NULL) {
		struct io_waiter *iw =
		    ULT_CONTAINER_OF(n, struct io_waiter, q[d]);

		dequeue(iw);
		MPASS(iw->w.wchan == &e->chan);
		if (!ult__list_linked(&iw->w.link))
			continue;
		ult__list_remove(&iw->w.link);
		iw->w.result = result;
		ult__sleepq_resume(&e->chan, &iw->w);
		woken++;
	}
	return (woken);
}

/* Chain locked: the directions e's waiters wait for. */
static unsigned
queued_dirs(const struct io_fd *e)
{
	unsigned dirs = 0;

	for (int d = 0; d < 2; d++)
		if (!ult__list_empty(&e->q[d]))
			dirs |= 1u << d;
	return (dirs);
}

/*
 * Chain locked: arm fd, one-shot, for dirs.  The kernel looks at the
 * file's state as it arms, so readiness from before is reported too.
 * 1: fd is added now (a plain close() dropped the registration it had,
 * and the number may name another file); 0: it was there; -errno.
 */
static int
io_arm(int fd, unsigned dirs)
{
	struct epoll_event ev = {.events = EPOLLONESHOT,
	    .data.u64 = (uint64_t)fd};

	if (dirs & IO_RD)
		ev.events |= EPOLLIN | EPOLLRDHUP | EPOLLPRI;
	if (dirs & IO_WR)
		ev.events |= EPOLLOUT;
	if (epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) == 0)
		return (0);
	if (ult__errno() != ENOENT)
		return (ult__errno() == EPERM ? -EINVAL : -ult__errno());
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
		return (ult__errno() == EPERM ? -EINVAL : -ult__errno());
	if (!ULT_LD(&ult__io_armed)) {
		ULT_ST(&ult__io_armed, 1);
		ult__clock_rearm();
	}
	return (1);
}

static int
fd_event(int fd, uint32_t ev)
{
	unsigned dirs = dirs_of_events(ev);
	struct io_fd *e;
	int woken = 0;

	atomic_fetch_add_explicit(&ult__io_nreports, 1, memory_order_relaxed);
	if (fd < 0 || fd >= IO_MAXFD || (e = fd_entry(fd, 0)) == NULL)
		return (0);
	ult__sleepq_lock(&e->chan);
	fd_queues(e);
	for (int d = 0; d < 2; d++) {
		if ((dirs & (1u << d)) == 0)
			continue;
		/* Counted before the wakeups, under the lock the sleepers
		 * compare it under. */
		(void)ULT_ADD_SC(&e->seq[d], 1); /* pairs with snap_seq */
		woken += wake_dir(e, d, 0);
		MPASS(ult__list_empty(&e->q[d]));
	}
	/* The report disarmed the fd: those still waiting, for the other
	 * direction, need it armed again.  If it cannot be (the file is
	 * gone), they look again and find out. */
	if ((dirs = queued_dirs(e)) != 0 && io_arm(fd, dirs) != 0)
		for (int d = 0; d < 2; d++)
			woken += wake_dir(e, d, 0);
	ult__sleepq_release(&e->chan);
	return (woken);
}

static int
handle(const struct epoll_event *evs, int n)
{
	int woken = 0;

	for (int i = 0; i < n; i++)
		woken += fd_event((int)evs[i].data.u64, evs[i].events);
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
	int saved = ult__errno(), n, woken;

	ULT_ST(&ult__io_polled_ns, ult__fastclock_now());
	n = epoll_wait(epfd, evs, IO_EVENTS, 0);
	woken = n > 0 ? handle(evs, n) : 0;
	ult__set_errno(saved);
	return (woken);
}

/*
 * The clock thread's sleep when I/O is armed, in its own set.  Two things
 * are kept out of the poller's set, where the workers look:
 *  - its kick.  Level-triggered there (a worker that took it would have
 *    had to pass it on), it woke a worker parked in the poller over and
 *    over until the clock thread drained it; on a host with no CPU to
 *    spare that spinning worker kept the clock thread itself off the CPU,
 *    and the timers it was kicked for ran milliseconds late.
 *  - its deadline.  A timeout on the epoll wait arms a high-resolution
 *    timer at each wait and cancels it at each early wakeup; where it is
 *    the CPU's earliest, both reprogram the timer hardware, which in a
 *    virtual machine exits to the hypervisor.  In a timerfd it is set only
 *    when it changes (at most once a stat tick while workers run), not at
 *    every packet that wakes the clock thread between two ticks.
 */
void
ult__io_clock_wait(uint64_t deadline)
{
	struct epoll_event cev[3], evs[IO_EVENTS];
	struct itimerspec its = {{0, 0}, {0, 0}};
	int n, ms = -1;
	uint64_t v;

	atomic_fetch_add_explicit(&ult__io_nclock_waits, 1,
	    memory_order_relaxed);
	if (deadline != clock_armed) {
		/* 0 disarms; a deadline past fires at once. */
		if (deadline != UINT64_MAX)
			ult__os_timespec(deadline ? deadline : 1,
			    &its.it_value);
		if (timerfd_settime(clock_tfd, TFD_TIMER_ABSTIME, &its, NULL) ==
		    0) {
			clock_armed = deadline;
		} else if (deadline != UINT64_MAX) {
			/* Not set: the wait itself must end by then. */
			uint64_t now = ult__now(),
				 d = deadline > now ? deadline - now : 0;

			ms = d / 1000000 >= INT_MAX ? INT_MAX
						    : (int)(d / 1000000) + 1;
		}
	}
	n = epoll_wait(clock_ep, cev, 3, ms);
	for (int i = 0; i < n; i++) {
		switch (cev[i].data.u64) {
		case CLOCK_TIMER:
			/* Expired: disarmed until set again. */
			if (read(clock_tfd, &v, sizeof(v)) == sizeof(v)) {
				clock_armed = UINT64_MAX;
				(void)ULT_ADD(&ult__io_nclock_timer, 1);
			}
			break;
		case CLOCK_KICK:
			if (read(kickfd, &v, sizeof(v)) < 0)
				(void)0; /* nothing pending */
			break;
		default: {
			int m = epoll_wait(epfd, evs, IO_EVENTS, 0);

			if (m > 0)
				handle(evs, m);
		}
		}
	}
	ULT_ST(&ult__io_polled_ns, ult__fastclock_now());
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

/* Chain locked: has an edge in dirs been counted since ref's snapshot? */
static int
seq_moved(const struct io_fd *e, const struct ult__io_ref *ref, unsigned dirs)
{
	for (int d = 0; d < 2; d++)
		if ((dirs & (1u << d)) && ULT_LD(&e->seq[d]) != ref->seq[d])
			return (1);
	return (0);
}

/* Chain locked: the wait itself; 0 from a wakeup, EBADF from ult_close,
 * ETIMEDOUT, EINTR. */
static int
sleep_on(struct io_fd *e, unsigned dirs, uint64_t deadline)
{
	struct io_waiter iw = {.dirs = dirs};
	int err;

	ult__waiter_self(&iw.w);
	for (int d = 0; d < 2; d++) {
		ult__list_init(&iw.q[d]);
		if (dirs & (1u << d))
			ult__list_insert_tail(&e->q[d], &iw.q[d]);
	}
	ult__sleepq_add(&e->chan, &iw.w, "fd");
	/* seq_cst: counted before the sleep; the idle loop's poller park
	 * (park.c) reads it to decide whether anyone waits on I/O. */
	(void)ULT_ADD_SC(&ult__io_nwaiting, 1);
	err = ult__sleepq_wait_pri(&e->chan, &iw.w, deadline,
	    PSOCK | (ULT_LD(&ult__io_boost) ? PRI_SLEEP_BOOST : 0));
	(void)ULT_SUB(&ult__io_nwaiting, 1); /* a count: relaxed */
	ult__userret();
	if (err == 0 || err == EBADF) {
		/* Whoever woke it took it off the queues first, and nobody
		 * reaches it there since. */
		MPASS(
		    !ult__list_linked(&iw.q[0]) && !ult__list_linked(&iw.q[1]));
	} else {
		/* Woken by the timer or an interrupt: an edge may have taken
		 * it off meanwhile, which is no loss (it woke the others). */
		ult__sleepq_lock(&e->chan);
		dequeue(&iw);
		ult__sleepq_release(&e->chan);
	}
	MPASS(!ult__list_linked(&iw.w.link));
	return (err);
}

static int
await(struct ult__io_ref *ref, unsigned dirs, uint64_t deadline)
{
	struct io_fd *e = ref->e;
	int added, err;

	MPASS(e != NULL && dirs != 0 && (dirs & ~(IO_RD | IO_WR)) == 0);
	/*
	 * Armed under the fd's lock, which the poller takes to report an
	 * edge: when the fd must be added while uthreads sleep on it, the
	 * registration they slept under is gone, which only the release of
	 * their file does (a plain close(), dup2 over it): the number names
	 * another file now.  They wake with EBADF before any edge of the new
	 * file can reach them, never to read its data.
	 */
	ult__sleepq_lock(&e->chan);
	fd_queues(e);
	if ((added = io_arm(ref->fd, dirs | queued_dirs(e))) < 0) {
		ult__sleepq_release(&e->chan);
		return (-added);
	}
	if (added)
		for (int d = 0; d < 2; d++)
			wake_dir(e, d, EBADF);
	/* Closed meanwhile (ult_close moves the generation as it starts and
	 * as it ends): EBADF if it is closed now; a new file under the same
	 * number is waited on afresh. */
	if (ULT_LD(&e->gen) != ref->gen) {
		ult__sleepq_release(&e->chan);
		if (fcntl(ref->fd, F_GETFD) < 0)
			return (EBADF);
		ref->gen = ULT_LD_ACQ(&e->gen);
		goto again;
	}
	if (e->closing) {
		ult__sleepq_release(&e->chan);
		ult_yield(); /* until the close is done: then look again */
		goto again;
	}
	if (seq_moved(e, ref, dirs)) {
		ult__sleepq_release(&e->chan);
		goto again;
	}
	err = sleep_on(e, dirs, deadline);
	if (err != 0)
		return (err);
again:
	snap_seq(ref);
	return (0);
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
		fd_queues(e);
		for (int d = 0; d < 2; d++) {
			wake_dir(e, d, EBADF);
			MPASS(ult__list_empty(&e->q[d]));
		}
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
	if (deadline == ULT_DEADLINE_NONE)
		deadline = 0; /* the public 0 means none here too */
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

static const struct sched_tunable io_tunables[] = {
    {"ult.io_boost", &ult__io_boost, 0, 1, NULL, NULL},
    {NULL, NULL, 0, 0, NULL, NULL},
};

/* The epoll instance is the parent's (a child's wait there would take
 * the parent's events): the child closes its copy and makes its own. */
static void
io_fork_child(void)
{
	io_close();
	for (int i = 0; i < IO_NCHUNK; i++)
		ULT_ST(&chunks[i], NULL); /* leaked: the waiters are gone */
	ULT_ST(&ult__io_nwaiting, 0);
	ult__io_park_forget();
}

const struct ult__subsys ult__io_subsys = {.name = "io",
    .init = ult__io_init,
    .fini = ult__io_fini,
    .fork_child = io_fork_child,
    .tunables = io_tunables};
