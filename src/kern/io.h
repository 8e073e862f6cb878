/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The I/O layer: the poller (poll.c), the POSIX stand-ins (wrap.c) and
 * the helper threads for blocking calls (blocking.c).  See DESIGN.md,
 * "I/O".
 */
#ifndef ULT_IO_IO_H
#define ULT_IO_IO_H

#include <stdint.h>

#include "../util/atomic.h"

/* Directions a waiter waits for, and edges the poller has seen. */
#define IO_RD 0x1u
#define IO_WR 0x2u

/* poll.c: create the epoll instance and the clock thread's set (its kick
 * eventfd and deadline timerfd) at ult_init, and close them (at shutdown
 * or a failed start). */
int ult__io_init(void);
void ult__io_fini(void);

/* Some fd has been registered: the clock thread polls; and how many
 * uthreads sleep on an fd now: idle workers poll while there are any. */
extern atomic_int ult__io_armed, ult__io_nwaiting;
/* ult.io_boost: a uthread woken by I/O runs at PSOCK until it returns
 * from the call, under ULE too (see DESIGN.md 7.2). */
extern atomic_int ult__io_boost;
/* How many times the kernel has reported an fd ready, for the tests. */
extern atomic_ulong ult__io_nreports;
/* Deadlines the clock thread met through its timerfd (poll.c), for the
 * tests. */
extern atomic_ulong ult__io_nclock_timer;
/* When the poller's set was last looked at (fast clock), and how long a
 * worker that switches lets pass before it looks itself (ult__userret;
 * the clock thread leaves the poller to such workers, clock.c). */
extern _Atomic uint64_t ult__io_polled_ns;
#define ULT_IO_POLL_GAP_NS 20000u
/* How many times the clock thread has waited in the poller (tests). */
extern atomic_ulong ult__io_nclock_waits;

/* Take the events ready now and wake their waiters; a worker about to
 * park calls it.  Returns how many waiters it woke. */
int ult__io_poll_now(void);

/* The clock thread's sleep while I/O is armed: wait for events, a kick
 * (ult__io_kick) or the deadline (UINT64_MAX: none), handling events.
 * Clock thread only. */
void ult__io_clock_wait(uint64_t deadline_ns);
void ult__io_kick(void);

/*
 * A worker about to park while uthreads wait on descriptors may park in
 * the poller instead of on its futex (Go's last idle M blocks in netpoll),
 * so that an event wakes the worker that will run the woken uthread, not
 * the clock thread, which would then have to wake a worker: one host
 * wakeup instead of two.  One worker at a time; it waits on a set of its
 * own holding the poller's set and an eventfd that unparks it.
 *   init/fini: on the worker's kernel thread (its set; -1 on failure).
 *   begin: 1 if w becomes the poller's parker.  wait: until an event or
 *   an unpark; the caller goes back to its idle loop either way.
 *   unpark: from any thread.  busy: a worker parks in the poller now.
 */
struct ult__worker;
int ult__io_epfd(void);
void ult__io_worker_init(struct ult__worker *w);
void ult__io_worker_fini(struct ult__worker *w);
int ult__io_park_begin(struct ult__worker *w);
void ult__io_park_wait(struct ult__worker *w);
void ult__io_park_end(struct ult__worker *w);
void ult__io_park_unpark(struct ult__worker *w);
int ult__io_park_busy(void);
/* A fork child: the parent's owner is not there. */
void ult__io_park_forget(void);
extern atomic_ulong ult__io_nparks_io;

/*
 * A uthread's hold on an fd's poller state: its entry, its generation
 * (which ult_close bumps) and its edge counts, read before the caller's
 * latest try of the call (poll.c says why).
 *   ult__io_peek: before the first try; e stays NULL if the fd was never
 *   waited on, and the caller then calls ult__io_ref after its try.
 *   ult__io_ref: look it up, making the entry (0; EBADF, EINVAL fd out of
 *   range; ENOMEM); the snapshot may come after the try: the arming in
 *   ult__io_await reports the fd's state as it is then.
 *   ult__io_await: arm fd with the poller and sleep once, until an
 *   edge in one of `dirs', ult_close (EBADF) or the deadline (ETIMEDOUT;
 *   0: none); 0 means "look again" (possibly for a stale edge), with a
 *   fresh snapshot.  Any number of uthreads may wait on one fd.
 */
struct io_fd;
struct ult__io_ref {
	struct io_fd *e;
	unsigned gen;
	unsigned seq[2]; /* the fd's read and write edge counts */
	int fd;
};
void ult__io_peek(int fd, struct ult__io_ref *ref);
int ult__io_ref(int fd, struct ult__io_ref *ref);
int ult__io_await(struct ult__io_ref *ref, unsigned dirs, uint64_t deadline_ns);

/* Block the calling uthread until fd is ready for `events' (poll(2)
 * bits), the deadline passes or it is closed: ult_wait_fd's core. */
int ult__io_wait(int fd, int events, uint64_t deadline_ns, int *revents);

/* fcntl(F_GETFL) says O_NONBLOCK: 1; 0; -1 with errno (EBADF). */
int ult__io_nonblocking(int fd);

#endif
