/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libc's own functions, for the runtime inside libult-pthread.so
 * (DESIGN.md section 14).  The runtime's object is linked into the
 * drop-in with every reference to a name the drop-in interposes renamed
 * to ult__libc_<name> (rename.txt), so that the runtime's workers, clock
 * thread and I/O layer call libc and never the drop-in's stand-ins.  The
 * runtime defines some of those names itself (the lock wrappers of
 * preempt_shim.c, which find libc's code with dlsym); the rest land here
 * and go to the next definition after this library, libc's.
 */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dropin.h"

void *
ult__dropin_next(const char *name, void *_Atomic *slot)
{
	void *f = ULT_PLD_ACQ(slot);

	if (__builtin_expect(f != NULL, 1))
		return (f);
	f = dlsym(RTLD_NEXT, name);
	if (f == NULL)
		ult__dropin_fatal(name, "not found in libc");
	ULT_PST_REL(slot, f);
	return (f);
}

#define FWD(ret, name, params, args)                               \
	ret ult__libc_##name params;                               \
	ret ult__libc_##name params                                \
	{                                                          \
		static void *_Atomic slot;                         \
		ret(*f) params =                                   \
		    (ret(*) params)ult__dropin_next(#name, &slot); \
		return f args;                                     \
	}

FWD(int, pthread_create,
    (pthread_t * t, const pthread_attr_t *a, void *(*fn)(void *), void *arg),
    (t, a, fn, arg))
/* Only referenced (kern/thread_shim.c), for what it pulls into a static
 * link; its types do not matter here. */
FWD(int, thrd_create, (void *t, void *fn, void *arg), (t, fn, arg))
FWD(int, pthread_join, (pthread_t t, void **ret), (t, ret))
FWD(int, pthread_once, (pthread_once_t * o, void (*fn)(void)), (o, fn))
FWD(int, pthread_getattr_np, (pthread_t t, pthread_attr_t *a), (t, a))
FWD(pthread_t, pthread_self, (void), ())
FWD(int, pthread_setaffinity_np, (pthread_t t, size_t n, const cpu_set_t *s),
    (t, n, s))
FWD(int, sched_setaffinity, (pid_t p, size_t n, const cpu_set_t *s), (p, n, s))
FWD(int, sched_getaffinity, (pid_t p, size_t n, cpu_set_t *s), (p, n, s))
FWD(int, pthread_setname_np, (pthread_t t, const char *n), (t, n))
FWD(int, pthread_mutex_init,
    (pthread_mutex_t * m, const pthread_mutexattr_t *a), (m, a))
FWD(int, pthread_cond_init, (pthread_cond_t * c, const pthread_condattr_t *a),
    (c, a))
FWD(int, pthread_cond_wait, (pthread_cond_t * c, pthread_mutex_t *m), (c, m))
FWD(int, pthread_cond_timedwait,
    (pthread_cond_t * c, pthread_mutex_t *m, const struct timespec *ts),
    (c, m, ts))
FWD(int, pthread_cond_signal, (pthread_cond_t * c), (c))
FWD(int, pthread_cond_broadcast, (pthread_cond_t * c), (c))
FWD(ssize_t, read, (int fd, void *b, size_t n), (fd, b, n))
FWD(ssize_t, write, (int fd, const void *b, size_t n), (fd, b, n))
FWD(ssize_t, readv, (int fd, const struct iovec *v, int n), (fd, v, n))
FWD(ssize_t, writev, (int fd, const struct iovec *v, int n), (fd, v, n))
FWD(ssize_t, recv, (int fd, void *b, size_t n, int fl), (fd, b, n, fl))
FWD(ssize_t, recvfrom,
    (int fd, void *b, size_t n, int fl, struct sockaddr *sa, socklen_t *sl),
    (fd, b, n, fl, sa, sl))
FWD(ssize_t, recvmsg, (int fd, struct msghdr *m, int fl), (fd, m, fl))
FWD(ssize_t, send, (int fd, const void *b, size_t n, int fl), (fd, b, n, fl))
FWD(ssize_t, sendto,
    (int fd, const void *b, size_t n, int fl, const struct sockaddr *sa,
	socklen_t sl),
    (fd, b, n, fl, sa, sl))
FWD(ssize_t, sendmsg, (int fd, const struct msghdr *m, int fl), (fd, m, fl))
FWD(int, accept4, (int fd, struct sockaddr *sa, socklen_t *sl, int fl),
    (fd, sa, sl, fl))
FWD(int, connect, (int fd, const struct sockaddr *sa, socklen_t sl),
    (fd, sa, sl))
FWD(int, close, (int fd), (fd))
FWD(int, poll, (struct pollfd * p, nfds_t n, int ms), (p, n, ms))
FWD(int, epoll_wait, (int ep, struct epoll_event *e, int n, int ms),
    (ep, e, n, ms))
FWD(int, clock_nanosleep,
    (clockid_t c, int fl, const struct timespec *r, struct timespec *rem),
    (c, fl, r, rem))
FWD(int, sched_yield, (void), ())
FWD(int, clock_gettime, (clockid_t c, struct timespec *ts), (c, ts))
FWD(int, kill, (pid_t p, int s), (p, s))
FWD(int, sigaction, (int s, const struct sigaction *a, struct sigaction *o),
    (s, a, o))
FWD(int, sigaltstack, (const stack_t *ss, stack_t *o), (ss, o))
typedef void (*ult__sighandler)(int);
FWD(ult__sighandler, signal, (int s, ult__sighandler h), (s, h))

/* syscall() is variadic: forward six longs, all the kernel takes. */
long
ult__libc_syscall(long nr, ...)
{
	static void *_Atomic slot;
	long (*f)(long, ...) =
	    (long (*)(long, ...))ult__dropin_next("syscall", &slot);
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return (f(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}

/* pthread_exit does not return: no FWD. */
void
ult__libc_pthread_exit(void *ret)
{
	static void *_Atomic slot;
	void (*f)(void *) =
	    (void (*)(void *))ult__dropin_next("pthread_exit", &slot);

	f(ret);
	__builtin_unreachable();
}
