/*
 * libult-pthread.so, the pthread drop-in (DESIGN.md section 12): a
 * program started by ult-run has its threads run as uthreads.  Internal
 * to the drop-in; nothing here is exported.
 */
#ifndef ULT_DROPIN_H
#define ULT_DROPIN_H

#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>

#include "ult.h"

/* Says what cannot go on, on stderr, and exits with status 127. */
void ult__dropin_fatal(const char *what, const char *why)
    __attribute__((noreturn));
/* The next definition of `name' after this library (libc's), cached. */
void *ult__dropin_next(const char *name, void *_Atomic *slot);
/* Start the runtime if it is not up (any interposed entry may be first). */
void ult__dropin_up(void);
extern int ult__dropin_ready; /* the runtime is up and per-uthread TLS on */

/* Absolute time on `clock' to an ult deadline (CLOCK_MONOTONIC ns):
 * 0, or EINVAL for a malformed timespec or an unsupported clock. */
int ult__dropin_deadline(clockid_t clock, const struct timespec *abs,
    uint64_t *deadline);
/* Relative time to an ult deadline; EINVAL malformed. */
int ult__dropin_after(const struct timespec *rel, uint64_t *deadline);

/* Cancellation (thread.c): act on a pending cancel if enabled. */
void ult__dropin_testcancel(void);

/* libc's functions for the runtime and the drop-in (real.c). */
int ult__rt_pthread_create(pthread_t *t, const pthread_attr_t *a,
    void *(*fn)(void *), void *arg);
void ult__rt_pthread_exit(void *ret) __attribute__((noreturn));
int ult__rt_epoll_wait(int ep, struct epoll_event *e, int n, int ms);
int ult__rt_poll(struct pollfd *p, nfds_t n, int ms);
int ult__rt_clock_nanosleep(clockid_t c, int fl, const struct timespec *r,
    struct timespec *rem);
int ult__rt_sched_yield(void);

#endif
