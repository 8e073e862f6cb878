/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stress harness's I/O operations (rt_harness.c calls them): a
 * socket pair whose far end a child uthread writes after a random pause
 * while the actor reads it through the poller, a wait that must time
 * out, and a call run on a helper thread.  Each returns 0 or writes what
 * went wrong into `why'.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt_harness.h"
#include "test.h"
#include "ult.h"

struct writer {
	int fd;
	unsigned seed, len;
};

static uint8_t
pattern(unsigned len, unsigned i)
{
	return ((uint8_t)(len * 31u + i));
}

static void *
writer(void *arg)
{
	struct writer *w = arg;
	uint8_t buf[4096];
	unsigned off = 0;

	ult_sleep_ns(test_rand(&w->seed) % 200000);
	while (off < w->len) {
		unsigned n = 1 + test_rand(&w->seed) % sizeof(buf);

		if (n > w->len - off)
			n = w->len - off;
		for (unsigned i = 0; i < n; i++)
			buf[i] = pattern(w->len, off + i);
		if (ult_write(w->fd, buf, n) != (ssize_t)n)
			return ((void *)1);
		off += n;
	}
	return (NULL);
}

int
harness_io_round(unsigned *seed, char *why, size_t whylen)
{
	struct writer w;
	ult_thread_t *t;
	uint8_t buf[1024];
	unsigned got = 0;
	void *ret;
	int sv[2], e, rev;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return (snprintf(why, whylen, "socketpair: %d", errno), -1);
	w.fd = sv[1];
	w.seed = test_rand(seed) | 1;
	w.len = 1 + test_rand(seed) % 16384;
	if ((e = ult_spawn(&t, NULL, writer, &w)) != 0) {
		close(sv[0]);
		close(sv[1]);
		return (snprintf(why, whylen, "io spawn: %d", e), -1);
	}
	while (got < w.len) {
		ssize_t r = ult_read(sv[0], buf, sizeof(buf));

		if (r <= 0) {
			snprintf(why, whylen, "io read: %zd errno %d", r,
			    errno);
			break;
		}
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != pattern(w.len, got + (unsigned)i)) {
				snprintf(why, whylen, "io byte %u wrong",
				    got + (unsigned)i);
				r = -1;
				break;
			}
		if (r < 0)
			break;
		got += (unsigned)r;
	}
	if ((e = ult_join(t, &ret)) != 0 || ret != NULL)
		snprintf(why, whylen, "io writer: %d %p", e, ret);
	else if (got == w.len &&
	    (e = ult_wait_fd(sv[0], ULT_IN,
		 ult_now() + test_rand(seed) % 100000, &rev)) != ETIMEDOUT)
		snprintf(why, whylen, "io wait on an empty socket: %d", e);
	ult_close(sv[0]);
	ult_close(sv[1]);
	return (why[0] != '\0' ? -1 : 0);
}

static void *
nap(void *arg)
{
	usleep((unsigned)(uintptr_t)arg);
	return ((void *)((uintptr_t)arg + 1));
}

int
harness_blocking_round(unsigned *seed, char *why, size_t whylen)
{
	uintptr_t us = test_rand(seed) % 300;
	void *ret = NULL;
	int e = ult_blocking(nap, (void *)us, &ret);

	if (e != 0 || ret != (void *)(us + 1))
		return (snprintf(why, whylen, "blocking: %d %p", e, ret), -1);
	return (0);
}
