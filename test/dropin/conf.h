/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The conformance programs' shared helpers.  Each program is a plain
 * pthread program (no ult.h): compare.sh runs it natively and under
 * ult-run and requires the same transcript, so every line printed here
 * is deterministic: error names, counts and verdicts, never addresses,
 * timings, thread ids or anything that depends on the interleaving.
 * Only the main thread prints; worker threads record what they saw and
 * main reports it.
 */
#ifndef CONF_H
#define CONF_H

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct conf_state {
	const char *area;
	int checks;
	int failures;
	char buf[32];
};
static struct conf_state conf;

static inline void
conf_begin(const char *area)
{
	/* Line by line, so that a hang or a crash shows how far it got. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	conf.area = area;
}

static inline const char *
conf_errname(int e)
{
	switch (e) {
	case 0:
		return ("0");
	case EPERM:
		return ("EPERM");
	case ESRCH:
		return ("ESRCH");
	case EINTR:
		return ("EINTR");
	case EAGAIN:
		return ("EAGAIN");
	case ENOMEM:
		return ("ENOMEM");
	case EFAULT:
		return ("EFAULT");
	case EBUSY:
		return ("EBUSY");
	case EINVAL:
		return ("EINVAL");
	case ERANGE:
		return ("ERANGE");
	case EDEADLK:
		return ("EDEADLK");
	case ENOSYS:
		return ("ENOSYS");
	case ENOTSUP:
		return ("ENOTSUP");
	case EOVERFLOW:
		return ("EOVERFLOW");
	case ETIMEDOUT:
		return ("ETIMEDOUT");
	case ECANCELED:
		return ("ECANCELED");
	case EOWNERDEAD:
		return ("EOWNERDEAD");
	case ENOTRECOVERABLE:
		return ("ENOTRECOVERABLE");
	}
	snprintf(conf.buf, sizeof(conf.buf), "errno %d", e);
	return (conf.buf);
}

static inline void
conf_fail(const char *what, const char *detail)
{
	conf.failures++;
	printf("FAIL %s: %s: %s\n", conf.area, what, detail);
}

/* A function returning 0 or an error number. */
static inline void
conf_err(const char *what, int got, int want)
{
	char detail[64];

	conf.checks++;
	printf("%s: %s -> %s\n", conf.area, what, conf_errname(got));
	if (got != want) {
		snprintf(detail, sizeof(detail), "want %s", conf_errname(want));
		conf_fail(what, detail);
	}
}

/*
 * A function returning 0 or -1 with errno, called as the argument:
 * conf_rc_errno(sem_trywait(&s)) reads errno after the call returned.
 * The error it reports, 0 for success, -2 for any other return value.
 */
static inline int
conf_rc_errno(int rc)
{
	if (rc == 0)
		return (0);
	return (rc == -1 ? errno : -2);
}

static inline void
conf_long(const char *what, long got, long want)
{
	char detail[64];

	conf.checks++;
	printf("%s: %s -> %ld\n", conf.area, what, got);
	if (got != want) {
		snprintf(detail, sizeof(detail), "want %ld", want);
		conf_fail(what, detail);
	}
}

static inline void
conf_ok(const char *what, int ok)
{
	conf.checks++;
	printf("%s: %s -> %s\n", conf.area, what, ok ? "ok" : "no");
	if (!ok)
		conf_fail(what, "want ok");
}

static inline void
conf_str(const char *what, const char *got, const char *want)
{
	char detail[96];

	conf.checks++;
	printf("%s: %s -> %s\n", conf.area, what, got);
	if (strcmp(got, want) != 0) {
		snprintf(detail, sizeof(detail), "want %s", want);
		conf_fail(what, detail);
	}
}

static inline int
conf_end(void)
{
	printf("%s: %d checks, %s\n", conf.area, conf.checks,
	    conf.failures == 0 ? "all passed" : "FAILED");
	fflush(stdout);
	return (conf.failures == 0 ? 0 : 1);
}

/* Setup that must work for the checks to mean anything. */
static inline void
conf_must(const char *what, int rc)
{
	if (rc != 0) {
		printf("FAIL %s: %s -> %s (cannot go on)\n", conf.area, what,
		    conf_errname(rc));
		fflush(stdout);
		exit(1);
	}
}

static inline void
conf_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
    void *arg)
{
	conf_must("pthread_create", pthread_create(t, attr, fn, arg));
}

static inline void *
conf_join(pthread_t t)
{
	void *ret;

	conf_must("pthread_join", pthread_join(t, &ret));
	return (ret);
}

static inline struct timespec
conf_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (ts);
}

/* ts plus ms milliseconds (negative: earlier). */
static inline struct timespec
conf_ts_add(struct timespec ts, long ms)
{
	long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec +
	    (long long)ms * 1000000LL;

	ts.tv_sec = (time_t)(ns / 1000000000LL);
	ts.tv_nsec = (long)(ns % 1000000000LL);
	return (ts);
}

/* Now plus ms milliseconds on clk (negative: in the past). */
static inline struct timespec
conf_deadline(clockid_t clk, long ms)
{
	return (conf_ts_add(conf_now(clk), ms));
}

static inline int
conf_ts_ge(struct timespec a, struct timespec b)
{
	return (a.tv_sec > b.tv_sec ||
	    (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec));
}

static inline void
conf_msleep(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * A monotonic value guarded by a mutex and a condition: one thread
 * announces a step, another waits for it.  Used to reach a known state
 * (a thread holds the lock, is inside its loop) without sleeping.
 */
struct conf_step {
	pthread_mutex_t m;
	pthread_cond_t c;
	int v;
};
#define CONF_STEP_INIT                                                 \
	{                                                              \
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 \
	}

static inline void
conf_step_set(struct conf_step *s, int v)
{
	pthread_mutex_lock(&s->m);
	if (v > s->v)
		s->v = v;
	pthread_cond_broadcast(&s->c);
	pthread_mutex_unlock(&s->m);
}

static inline void
conf_step_wait(struct conf_step *s, int v)
{
	pthread_mutex_lock(&s->m);
	while (s->v < v)
		pthread_cond_wait(&s->c, &s->m);
	pthread_mutex_unlock(&s->m);
}

static inline void
conf_step_reset(struct conf_step *s)
{
	pthread_mutex_lock(&s->m);
	s->v = 0;
	pthread_mutex_unlock(&s->m);
}

#endif
