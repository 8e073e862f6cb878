/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Signals and cancels during lock and barrier waits (POSIX): a handler
 * runs while a thread waits for a mutex, an rwlock (plain or timed) or a
 * barrier, and on its return the wait goes on as if not interrupted; a
 * barrier wait's thread stays arrived meanwhile, so a round that fills
 * during the handler ends its wait.  An asynchronous cancel ends a mutex
 * wait.  A join interrupted again and again still sees its thread end.
 * glibc's default rwlock prefers readers (a read lock is granted
 * while others read, writers waiting or not); its writer-preferring
 * non-recursive kind makes new readers wait.
 */
#include "conf.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

static atomic_int handled, about_to_wait, got, released;

static void
on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

/* The waiter says it is about to wait; give it time to block, which
 * the transcript does not depend on (a signal that comes first runs its
 * handler before the wait, with the same outcome). */
static void
wait_waiting(void)
{
	while (!atomic_load(&about_to_wait))
		conf_msleep(1);
	conf_msleep(50);
}

static void
wait_handled(int n)
{
	for (int i = 0; i < 10000 && atomic_load(&handled) < n; i++)
		conf_msleep(1);
}

/* A waiter's outcome: 1 if it took the lock, and only after main let it
 * go; -1 if it took it too soon or failed. */
static void
note_got(int rc)
{
	atomic_store(&got, rc == 0 && atomic_load(&released) ? 1 : -1);
}

/* Signal the waiter th in its wait: its handler runs and it goes on
 * waiting; then main says it lets the lock go. */
static void
interrupt_wait(pthread_t th)
{
	wait_waiting();
	conf_err("pthread_kill the waiter", pthread_kill(th, SIGUSR1), 0);
	wait_handled(1);
	conf_long("its handler ran", atomic_load(&handled), 1);
	conf_msleep(20);
	conf_long("it still waits", atomic_load(&got), 0);
	atomic_store(&released, 1);
}

static void
reset(void)
{
	atomic_store(&handled, 0);
	atomic_store(&about_to_wait, 0);
	atomic_store(&got, 0);
	atomic_store(&released, 0);
}

/* Mutexes. */
static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static int timed;

static void *
mutex_waiter(void *arg)
{
	struct timespec ts = conf_deadline(CLOCK_REALTIME, 100000);
	int rc;

	(void)arg;
	atomic_store(&about_to_wait, 1);
	rc =
	    timed ? pthread_mutex_timedlock(&mx, &ts) : pthread_mutex_lock(&mx);
	note_got(rc);
	if (rc == 0)
		pthread_mutex_unlock(&mx);
	return (NULL);
}

static void
check_mutex(int t)
{
	pthread_t th;

	reset();
	timed = t;
	printf("%s:\n", t ? "pthread_mutex_timedlock" : "pthread_mutex_lock");
	conf_must("lock", pthread_mutex_lock(&mx));
	conf_create(&th, NULL, mutex_waiter, NULL);
	interrupt_wait(th);
	conf_must("unlock", pthread_mutex_unlock(&mx));
	conf_join(th);
	conf_long("it took the mutex after the unlock", atomic_load(&got), 1);
}

static void *
mutex_async(void *arg)
{
	(void)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	atomic_store(&about_to_wait, 1);
	pthread_mutex_lock(&mx);
	atomic_store(&got, 1);
	pthread_mutex_unlock(&mx);
	return (NULL);
}

static void
check_mutex_cancel(void)
{
	pthread_t th;

	reset();
	printf("asynchronous cancel of a mutex wait:\n");
	conf_must("lock", pthread_mutex_lock(&mx));
	conf_create(&th, NULL, mutex_async, NULL);
	wait_waiting();
	conf_err("pthread_cancel the waiter", pthread_cancel(th), 0);
	conf_ok("it ended cancelled", conf_join(th) == PTHREAD_CANCELED);
	conf_long("it never took the mutex", atomic_load(&got), 0);
	conf_must("unlock", pthread_mutex_unlock(&mx));
	conf_err("the mutex is free", pthread_mutex_trylock(&mx), 0);
	conf_must("unlock", pthread_mutex_unlock(&mx));
}

/* Rwlocks. */
static pthread_rwlock_t rw;
static int rw_op; /* 0 rdlock, 1 wrlock, 2 timedrdlock, 3 timedwrlock */
static const char *const rw_names[] = {"pthread_rwlock_rdlock",
    "pthread_rwlock_wrlock", "pthread_rwlock_timedrdlock",
    "pthread_rwlock_timedwrlock"};

static void *
rw_waiter(void *arg)
{
	struct timespec ts = conf_deadline(CLOCK_REALTIME, 100000);
	int rc;

	(void)arg;
	atomic_store(&about_to_wait, 1);
	switch (rw_op) {
	case 0:
		rc = pthread_rwlock_rdlock(&rw);
		break;
	case 1:
		rc = pthread_rwlock_wrlock(&rw);
		break;
	case 2:
		rc = pthread_rwlock_timedrdlock(&rw, &ts);
		break;
	default:
		rc = pthread_rwlock_timedwrlock(&rw, &ts);
		break;
	}
	note_got(rc);
	if (rc == 0)
		pthread_rwlock_unlock(&rw);
	return (NULL);
}

static void
check_rwlock(int op, int main_reads)
{
	pthread_t th;

	reset();
	rw_op = op;
	printf("%s, main holding it for %s:\n", rw_names[op],
	    main_reads ? "reading" : "writing");
	conf_must("rwlock_init", pthread_rwlock_init(&rw, NULL));
	conf_must("main's lock",
	    main_reads ? pthread_rwlock_rdlock(&rw)
		       : pthread_rwlock_wrlock(&rw));
	conf_create(&th, NULL, rw_waiter, NULL);
	interrupt_wait(th);
	conf_must("unlock", pthread_rwlock_unlock(&rw));
	conf_join(th);
	conf_long("it took the lock after the unlock", atomic_load(&got), 1);
	conf_err("rwlock_destroy", pthread_rwlock_destroy(&rw), 0);
}

static void *
writer(void *arg)
{
	(void)arg;
	atomic_store(&about_to_wait, 1);
	if (pthread_rwlock_wrlock(&rw) == 0) {
		atomic_store(&got, 1);
		pthread_rwlock_unlock(&rw);
	}
	return (NULL);
}

static void *
reader_try(void *arg)
{
	int rc = pthread_rwlock_tryrdlock(&rw);

	(void)arg;
	if (rc == 0)
		pthread_rwlock_unlock(&rw);
	return ((void *)(intptr_t)rc);
}

/* Another reader's try while main reads and a writer waits: granted by
 * the default kind; refused, once the writer waits, by the writer-
 * preferring one. */
static void
check_preference(int kind)
{
	pthread_rwlockattr_t a;
	pthread_t w, r;
	int rc = -1;

	reset();
	printf("rwlock kind %s, main reading, a writer waiting:\n",
	    kind == PTHREAD_RWLOCK_PREFER_READER_NP ? "prefer reader"
						    : "prefer writer "
						      "nonrecursive");
	conf_must("rwlockattr_init", pthread_rwlockattr_init(&a));
	conf_must("setkind_np", pthread_rwlockattr_setkind_np(&a, kind));
	conf_must("rwlock_init", pthread_rwlock_init(&rw, &a));
	conf_must("main's rdlock", pthread_rwlock_rdlock(&rw));
	conf_create(&w, NULL, writer, NULL);
	wait_waiting();
	if (kind == PTHREAD_RWLOCK_PREFER_READER_NP) {
		conf_create(&r, NULL, reader_try, NULL);
		conf_err("another thread's tryrdlock",
		    (int)(intptr_t)conf_join(r), 0);
		conf_err("main's second rdlock", pthread_rwlock_rdlock(&rw), 0);
		conf_must("its unlock", pthread_rwlock_unlock(&rw));
	} else {
		for (int i = 0; i < 10000 && rc != EBUSY; i++) {
			conf_create(&r, NULL, reader_try, NULL);
			if ((rc = (int)(intptr_t)conf_join(r)) != EBUSY)
				conf_msleep(1);
		}
		conf_err("another thread's tryrdlock, once the writer waits",
		    rc, EBUSY);
	}
	conf_long("the writer still waits", atomic_load(&got), 0);
	conf_must("main's unlock", pthread_rwlock_unlock(&rw));
	conf_join(w);
	conf_long("the writer took it", atomic_load(&got), 1);
	conf_must("rwlock_destroy", pthread_rwlock_destroy(&rw));
	pthread_rwlockattr_destroy(&a);
}

/* Barriers. */
static pthread_barrier_t bar;
static atomic_int main_through, handler_saw_main;

static void
on_usr2_barrier(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
	/* The round fills while the handler runs: main arrives and leaves. */
	for (int i = 0; i < 10000 && !atomic_load(&main_through); i++)
		conf_msleep(1);
	atomic_store(&handler_saw_main, atomic_load(&main_through));
}

static void *
barrier_waiter(void *arg)
{
	int rc;

	(void)arg;
	atomic_store(&about_to_wait, 1);
	rc = pthread_barrier_wait(&bar);
	atomic_store(&got,
	    rc == PTHREAD_BARRIER_SERIAL_THREAD ? 2
		: rc == 0			? 1
						: -1);
	return (NULL);
}

static void
check_barrier(void)
{
	struct sigaction sa;
	pthread_t th;
	int rc;

	reset();
	printf("pthread_barrier_wait:\n");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2_barrier;
	sigemptyset(&sa.sa_mask);
	conf_must("sigaction", sigaction(SIGUSR2, &sa, NULL));
	conf_must("barrier_init", pthread_barrier_init(&bar, NULL, 2));
	conf_create(&th, NULL, barrier_waiter, NULL);
	wait_waiting();
	conf_err("pthread_kill the waiter", pthread_kill(th, SIGUSR2), 0);
	wait_handled(1);
	conf_long("its handler runs", atomic_load(&handled), 1);
	rc = pthread_barrier_wait(&bar);
	conf_ok("main's wait ends (0 or serial)",
	    rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
	atomic_store(&main_through, 1);
	conf_join(th);
	conf_long("the handler saw main through",
	    atomic_load(&handler_saw_main), 1);
	conf_long("one of the two is the serial thread",
	    (rc == PTHREAD_BARRIER_SERIAL_THREAD) + (atomic_load(&got) == 2),
	    1);
	conf_ok("the waiter's wait ended without error", atomic_load(&got) > 0);
	conf_err("barrier_destroy", pthread_barrier_destroy(&bar), 0);
}

/*
 * Stress: threads take a mutex and an rwlock in turn while another
 * thread sends them signals at random; each handler run interrupts a
 * wait somewhere.  Exclusion must hold and every lock be taken.
 */
#define NSTRESS 4
#define ITERS 3000
static pthread_mutex_t smx = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t srw = PTHREAD_RWLOCK_INITIALIZER;
static long in_mx, mx_bad, mx_taken, rw_writers, rw_bad, rw_taken;
static atomic_int stress_done;

static void *
stresser(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&smx);
		if (in_mx++ != 0)
			mx_bad++;
		mx_taken++;
		if (rand_r(&seed) % 8 == 0)
			sched_yield();
		in_mx--;
		pthread_mutex_unlock(&smx);
		if (rand_r(&seed) % 4 == 0) {
			pthread_rwlock_wrlock(&srw);
			if (__atomic_add_fetch(&rw_writers, 1,
				__ATOMIC_RELAXED) != 1)
				__atomic_add_fetch(&rw_bad, 1,
				    __ATOMIC_RELAXED);
			__atomic_add_fetch(&rw_taken, 1, __ATOMIC_RELAXED);
			sched_yield();
			__atomic_sub_fetch(&rw_writers, 1, __ATOMIC_RELAXED);
		} else {
			pthread_rwlock_rdlock(&srw);
			if (__atomic_load_n(&rw_writers, __ATOMIC_RELAXED) != 0)
				__atomic_add_fetch(&rw_bad, 1,
				    __ATOMIC_RELAXED);
			__atomic_add_fetch(&rw_taken, 1, __ATOMIC_RELAXED);
		}
		pthread_rwlock_unlock(&srw);
	}
	return (NULL);
}

static void *
killer(void *arg)
{
	pthread_t *t = arg;
	unsigned seed = 7;

	while (!atomic_load(&stress_done)) {
		pthread_kill(t[rand_r(&seed) % NSTRESS], SIGUSR1);
		sched_yield();
	}
	return (NULL);
}

static void
check_stress(void)
{
	pthread_t t[NSTRESS], k;

	reset();
	printf("stress: %d threads, a mutex and an rwlock, signals at "
	       "random:\n",
	    NSTRESS);
	for (int i = 0; i < NSTRESS; i++)
		conf_create(&t[i], NULL, stresser, (void *)(uintptr_t)(i + 1));
	conf_create(&k, NULL, killer, t);
	for (int i = 0; i < NSTRESS; i++)
		conf_join(t[i]);
	atomic_store(&stress_done, 1);
	conf_join(k);
	conf_long("mutex: overlaps", mx_bad, 0);
	conf_long("mutex: taken", mx_taken, NSTRESS * ITERS);
	conf_long("rwlock: writer overlaps", rw_bad, 0);
	conf_long("rwlock: taken", rw_taken, NSTRESS * ITERS);
	conf_ok("handlers ran", atomic_load(&handled) > 0);
}

/* A join interrupted by a handler during which the thread joined ends
 * (its end is the handler's doing): on its return the join sees the
 * end, and does not wait for a wakeup that has come and gone. */
#define NJOINS 20
static pthread_t joiner_t;
static atomic_int joinee_go, joinee_ended, joiner_waiting, joins_done;

/* Busy for about us microseconds (clock_gettime is async-signal-safe). */
static void
spin_us(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while (
	    (b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 <
	    us);
}

static void
on_usr2(int sig)
{
	(void)sig;
	atomic_store(&joinee_go, 1);
	while (!atomic_load(&joinee_ended))
		spin_us(100);
	spin_us(20000); /* its end is through meanwhile */
}

static void *
joinee(void *arg)
{
	while (!atomic_load(&joinee_go))
		conf_msleep(1);
	atomic_store(&joinee_ended, 1);
	return (arg);
}

static void *
joiner(void *arg)
{
	(void)arg;
	for (uintptr_t i = 0; i < NJOINS; i++) {
		pthread_t t;
		void *ret = NULL;

		atomic_store(&joinee_go, 0);
		atomic_store(&joinee_ended, 0);
		if (pthread_create(&t, NULL, joinee, (void *)i) != 0)
			break;
		atomic_store(&joiner_waiting, 1);
		if (pthread_join(t, &ret) != 0 || ret != (void *)i)
			break;
		atomic_store(&joiner_waiting, 0);
		atomic_fetch_add(&joins_done, 1);
	}
	return (NULL);
}

static void
check_join_interrupted(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigemptyset(&sa.sa_mask);
	conf_must("sigaction", sigaction(SIGUSR2, &sa, NULL));
	atomic_store(&joins_done, 0);
	atomic_store(&joiner_waiting, 0);
	conf_create(&joiner_t, NULL, joiner, NULL);
	for (int i = 0; i < NJOINS; i++) {
		while (!atomic_load(&joiner_waiting))
			conf_msleep(1);
		conf_msleep(20); /* in the join's wait by now */
		pthread_kill(joiner_t, SIGUSR2);
		while (atomic_load(&joins_done) == i)
			conf_msleep(1);
	}
	conf_join(joiner_t);
	conf_long("join: the thread ended during a handler: joins",
	    atomic_load(&joins_done), NJOINS);
}

int
main(void)
{
	struct sigaction sa;

	conf_begin("lockwait");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	conf_must("sigaction", sigaction(SIGUSR1, &sa, NULL));
	check_mutex(0);
	check_mutex(1);
	check_mutex_cancel();
	for (int op = 0; op < 4; op++)
		check_rwlock(op, (op & 1) != 0);
	check_rwlock(1, 0);
	check_preference(PTHREAD_RWLOCK_PREFER_READER_NP);
	check_preference(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	check_barrier();
	check_stress();
	check_join_interrupted();
	return (conf_end());
}
