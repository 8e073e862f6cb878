/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The drop-in's own short locks under contention, with more threads than
 * CPUs or workers: twelve threads each run a random mix of sigaction
 * (the action table's lock), pthread_create and join with a CPU clock of
 * the child read meanwhile (the thread pool's and the clock slots'
 * locks), pthread_sigmask (the signal counts' lock) and queued realtime
 * signals to themselves, three at a time behind a blocked mask (the
 * realtime queue's lock).  Every result is checked as it comes; main
 * prints the totals, which the seeds fix.  A lock that lost an update
 * shows as a torn action or a lost signal; one whose sleeper is never
 * woken, as a hang.
 */
#include "conf.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#define NTHR 12
#define NITER 2000
#define NOPS 5

static atomic_long done[NOPS];
static atomic_long bad[NOPS];
static _Thread_local volatile int nrt; /* SIGRTMIN handler runs */

static void
on_rt(int sig)
{
	(void)sig;
	nrt++;
}

/* SIGUSR2's two actions, never run: each always set with its flags, so
 * an old action read back mixes the two only if the table tore. */
static void
act_a(int sig)
{
	(void)sig;
}

static void
act_b(int sig)
{
	(void)sig;
}

static int
set_action(int b, struct sigaction *old)
{
	struct sigaction a;

	memset(&a, 0, sizeof(a));
	a.sa_handler = b ? act_b : act_a;
	a.sa_flags = SA_RESTART | (b ? SA_NODEFER : 0);
	sigemptyset(&a.sa_mask);
	if (b)
		sigaddset(&a.sa_mask, SIGUSR1);
	return (sigaction(SIGUSR2, &a, old));
}

static int
action_whole(const struct sigaction *o)
{
	if (o->sa_handler == act_a)
		return (!(o->sa_flags & SA_NODEFER) &&
		    !sigismember(&o->sa_mask, SIGUSR1));
	if (o->sa_handler == act_b)
		return ((o->sa_flags & SA_NODEFER) &&
		    sigismember(&o->sa_mask, SIGUSR1));
	return (0);
}

struct child_arg {
	pthread_mutex_t hold; /* the child lives on until its clock is read */
	uintptr_t n;
};

static void *
child(void *arg)
{
	struct child_arg *c = arg;

	pthread_mutex_lock(&c->hold);
	pthread_mutex_unlock(&c->hold);
	return ((void *)(c->n + 1));
}

static int
op_thread(uintptr_t n)
{
	struct child_arg c = {PTHREAD_MUTEX_INITIALIZER, n};
	struct timespec ts;
	clockid_t cid;
	pthread_t t;
	void *ret;
	int ok;

	pthread_mutex_lock(&c.hold);
	if (pthread_create(&t, NULL, child, &c) != 0) {
		pthread_mutex_unlock(&c.hold);
		return (0);
	}
	ok = pthread_getcpuclockid(t, &cid) == 0 &&
	    clock_gettime(cid, &ts) == 0 && ts.tv_nsec >= 0;
	pthread_mutex_unlock(&c.hold);
	return (pthread_join(t, &ret) == 0 && ret == (void *)(n + 1) && ok);
}

static int
op_mask(void)
{
	sigset_t one, cur, old;

	sigemptyset(&one);
	sigaddset(&one, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &one, &old) != 0 ||
	    sigismember(&old, SIGUSR1) ||
	    pthread_sigmask(SIG_UNBLOCK, &one, &cur) != 0 ||
	    !sigismember(&cur, SIGUSR1) ||
	    pthread_sigmask(SIG_SETMASK, NULL, &cur) != 0)
		return (0);
	return (!sigismember(&cur, SIGUSR1));
}

static int
op_rt(int k)
{
	sigset_t one;
	int before = nrt;

	sigemptyset(&one);
	sigaddset(&one, SIGRTMIN);
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	for (int i = 0; i < 3; i++)
		if (pthread_sigqueue(pthread_self(), SIGRTMIN,
			(union sigval){.sival_int = k + i}) != 0)
			return (0);
	if (nrt != before)
		return (0); /* ran while blocked */
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	return (nrt == before + 3);
}

static void *
worker(void *arg)
{
	uint32_t x = 2463534242u * ((uint32_t)(uintptr_t)arg + 1);
	struct timespec last = {0, 0}, now;
	clockid_t self;

	if (pthread_getcpuclockid(pthread_self(), &self) != 0)
		atomic_fetch_add(&bad[2], 1);
	for (int i = 0; i < NITER; i++) {
		struct sigaction o;
		int op, ok;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		op = (int)(x % NOPS);
		switch (op) {
		case 0:
			ok = set_action((int)(x >> 8) & 1, &o) == 0 &&
			    action_whole(&o);
			break;
		case 1:
			ok = op_thread((uintptr_t)i);
			break;
		case 2:
			ok = clock_gettime(self, &now) == 0 &&
			    (now.tv_sec > last.tv_sec ||
				(now.tv_sec == last.tv_sec &&
				    now.tv_nsec >= last.tv_nsec));
			last = now;
			break;
		case 3:
			ok = op_mask();
			break;
		default:
			ok = op_rt(i);
			break;
		}
		atomic_fetch_add(&done[op], 1);
		if (!ok)
			atomic_fetch_add(&bad[op], 1);
	}
	return (arg);
}

int
main(void)
{
	static const char *name[NOPS] = {"sigaction", "create, clock, join",
	    "own cpu clock", "pthread_sigmask", "rt signals queued"};
	pthread_t t[NTHR];
	struct sigaction a;
	char what[96];

	conf_begin("shortlocks");
	memset(&a, 0, sizeof(a));
	a.sa_handler = on_rt;
	sigemptyset(&a.sa_mask);
	conf_must("sigaction SIGRTMIN", sigaction(SIGRTMIN, &a, NULL));
	conf_must("sigaction SIGUSR2", set_action(0, NULL));
	for (int i = 0; i < NTHR; i++)
		conf_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < NTHR; i++)
		conf_join(t[i]);
	for (int op = 0; op < NOPS; op++) {
		snprintf(what, sizeof(what), "%s: calls", name[op]);
		printf("%s: %s -> %ld\n", conf.area, what,
		    atomic_load(&done[op]));
		snprintf(what, sizeof(what), "%s: wrong results", name[op]);
		conf_long(what, atomic_load(&bad[op]), 0);
	}
	return (conf_end());
}
