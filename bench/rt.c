/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One interface over uthreads and kernel threads; see rt.h.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contract.h"
#include "rt.h"
#include "ult.h"

int bw_ult;

static pthread_attr_t pattr;
static int pattr_set;

/* The contract's runtimes; policy NULL: kernel threads. */
static const struct {
	const char *name, *policy;
	int preempt; /* 0: the caller's choice */
	int tls;     /* as ult_config.tls */
} runtimes[] = {
    {"ult", "ule", 0, 0},
    {"ult-4bsd", "4bsd", 0, 0},
    {"ult-nopreempt", "ule", -1, 0},
    {"ult+hint", "ule", 0, 0},
    {"ult-tlsworker", "ule", 0, -1},
    {"pthread", NULL, 0, 0},
};

/* ULT_BENCH_SYSCTL=name=value[,name=value...]: set after ult_init, so
 * that one build can be measured under two settings of a tunable. */
static void
apply_sysctls(void)
{
	const char *s = getenv("ULT_BENCH_SYSCTL");
	char name[64];
	long v;
	int n;

	while (s != NULL && *s != '\0') {
		if (sscanf(s, "%63[^=,]=%ld%n", name, &v, &n) != 2)
			bw_die("ULT_BENCH_SYSCTL: expected name=value at '%s'",
			    s);
		bw_must(ult_sysctl(name, NULL, &v), name);
		s += n;
		if (*s == ',')
			s++;
		else if (*s != '\0')
			bw_die("ULT_BENCH_SYSCTL: expected ',' at '%s'", s);
	}
}

void
bw_rt_start(const char *rt, int ncpu, int preempt)
{
	struct ult_config cfg = {0};
	size_t k = 0;

	while (k < sizeof(runtimes) / sizeof(runtimes[0]) &&
	    strcmp(runtimes[k].name, rt) != 0)
		k++;
	if (k == sizeof(runtimes) / sizeof(runtimes[0]))
		bw_die("no runtime called %s", rt);
	bw_ult = runtimes[k].policy != NULL;
	if (!bw_ult)
		return;
	cfg.ncpu = ncpu;
	cfg.policy = runtimes[k].policy;
	cfg.preempt = runtimes[k].preempt != 0 ? runtimes[k].preempt : preempt;
	cfg.tls = runtimes[k].tls;
	bw_must(ult_init(&cfg), "ult_init");
	apply_sysctls();
}

void
bw_rt_stop(void)
{
	if (bw_ult)
		bw_must(ult_shutdown(), "ult_shutdown");
}

void
bw_pthread_stack(size_t size)
{
	if (pattr_set)
		bw_must(pthread_attr_destroy(&pattr), "pthread_attr_destroy");
	pattr_set = 0;
	if (size == 0)
		return;
	bw_must(pthread_attr_init(&pattr), "pthread_attr_init");
	bw_must(pthread_attr_setstacksize(&pattr, size),
	    "pthread_attr_setstacksize");
	pattr_set = 1;
}

int
bw_spawn(bw_thread_t *t, void *(*fn)(void *), void *arg)
{
	if (bw_ult)
		return (ult_spawn(&t->u, NULL, fn, arg));
	return (pthread_create(&t->p, pattr_set ? &pattr : NULL, fn, arg));
}

void *
bw_join(bw_thread_t *t)
{
	void *r;

	if (bw_ult)
		bw_must(ult_join(t->u, &r), "ult_join");
	else
		bw_must(pthread_join(t->p, &r), "pthread_join");
	return (r);
}

void
bw_mutex_init(bw_mutex_t *m)
{
	if (bw_ult)
		bw_must(ult_mutex_init(&m->u), "ult_mutex_init");
	else
		bw_must(pthread_mutex_init(&m->p, NULL), "pthread_mutex_init");
}

void
bw_mutex_destroy(bw_mutex_t *m)
{
	if (bw_ult)
		bw_must(ult_mutex_destroy(&m->u), "ult_mutex_destroy");
	else
		bw_must(pthread_mutex_destroy(&m->p), "pthread_mutex_destroy");
}

void
bw_cond_init(bw_cond_t *c)
{
	if (bw_ult)
		bw_must(ult_cond_init(&c->u), "ult_cond_init");
	else
		bw_must(pthread_cond_init(&c->p, NULL), "pthread_cond_init");
}

void
bw_cond_destroy(bw_cond_t *c)
{
	if (bw_ult)
		bw_must(ult_cond_destroy(&c->u), "ult_cond_destroy");
	else
		bw_must(pthread_cond_destroy(&c->p), "pthread_cond_destroy");
}

void
bw_sem_init(bw_sem_t *s, unsigned value)
{
	if (bw_ult)
		bw_must(ult_sem_init(&s->u, value), "ult_sem_init");
	else if (sem_init(&s->p, 0, value) != 0)
		bw_must(errno, "sem_init");
}

void
bw_sem_destroy(bw_sem_t *s)
{
	if (bw_ult)
		bw_must(ult_sem_destroy(&s->u), "ult_sem_destroy");
	else if (sem_destroy(&s->p) != 0)
		bw_must(errno, "sem_destroy");
}

void
bw_sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000),
	    (long)(ns % 1000000000)};

	if (bw_ult) {
		bw_must(ult_sleep_ns(ns), "ult_sleep_ns");
		return;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}
