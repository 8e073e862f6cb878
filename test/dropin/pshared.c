/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Process-shared mutexes, condition variables, rwlocks, barriers and
 * semaphores: within one process with more waiting threads than ult-run
 * has workers (plus its spare), and across a fork()ed child that shares
 * them through a MAP_SHARED mapping; a robust one whose owner process
 * dies.
 */
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"

#define NT 8
#define K 200

struct shared {
	pthread_mutex_t mx, em, rm, robust;
	pthread_cond_t cv;
	pthread_barrier_t bar, bar2;
	pthread_rwlock_t rw;
	sem_t sem;
	long counter, rcounter;
	int flag, waiting, woke, serial, rw_bad;
};
static struct shared *sh;
static int thread_err[NT];

static void
init_objects(void)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	pthread_barrierattr_t ba;
	pthread_rwlockattr_t ra;

	pthread_mutexattr_init(&ma);
	conf_err("mutexattr_setpshared",
	    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED), 0);
	conf_err("mutex_init pshared", pthread_mutex_init(&sh->mx, &ma), 0);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	conf_err("mutex_init pshared errorcheck",
	    pthread_mutex_init(&sh->em, &ma), 0);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	conf_err("mutex_init pshared recursive",
	    pthread_mutex_init(&sh->rm, &ma), 0);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_NORMAL);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	conf_err("mutex_init pshared robust",
	    pthread_mutex_init(&sh->robust, &ma), 0);
	pthread_mutexattr_destroy(&ma);

	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	conf_err("cond_init pshared", pthread_cond_init(&sh->cv, &ca), 0);
	pthread_condattr_destroy(&ca);

	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	conf_err("barrier_init pshared",
	    pthread_barrier_init(&sh->bar, &ba, NT + 1), 0);
	conf_err("barrier_init pshared 2",
	    pthread_barrier_init(&sh->bar2, &ba, 2), 0);
	pthread_barrierattr_destroy(&ba);

	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setpshared(&ra, PTHREAD_PROCESS_SHARED);
	conf_err("rwlock_init pshared", pthread_rwlock_init(&sh->rw, &ra), 0);
	pthread_rwlockattr_destroy(&ra);

	conf_err("sem_init pshared", conf_rc_errno(sem_init(&sh->sem, 1, 0)),
	    0);
}

/* Mutexes: every thread waits for main's lock first. */
static void *
mutex_fn(void *arg)
{
	(void)arg;
	for (int i = 0; i < K; i++) {
		pthread_mutex_lock(&sh->mx);
		sh->counter++;
		pthread_mutex_unlock(&sh->mx);
	}
	return (NULL);
}

static void
run_threads(void *(*fn)(void *), pthread_t *t)
{
	for (long i = 0; i < NT; i++)
		conf_create(&t[i], NULL, fn, (void *)i);
}

static void
join_threads(pthread_t *t)
{
	for (int i = 0; i < NT; i++)
		conf_join(t[i]);
}

static void
mutexes(void)
{
	pthread_t t[NT];

	sh->counter = 0;
	pthread_mutex_lock(&sh->mx);
	run_threads(mutex_fn, t);
	usleep(20000);
	pthread_mutex_unlock(&sh->mx);
	join_threads(t);
	conf_long("mutex: increments by 8 threads", sh->counter, NT * K);
}

static void *
trylock_fn(void *arg)
{
	pthread_mutex_t *m = arg;
	int err = pthread_mutex_trylock(m);

	if (err == 0)
		pthread_mutex_unlock(m);
	return ((void *)(long)err);
}

static void *
unlock_fn(void *arg)
{
	return ((void *)(long)pthread_mutex_unlock(arg));
}

static int
in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	conf_create(&t, NULL, fn, arg);
	return ((int)(long)conf_join(t));
}

static void
kinds(void)
{
	conf_err("errorcheck lock", pthread_mutex_lock(&sh->em), 0);
	conf_err("errorcheck relock", pthread_mutex_lock(&sh->em), EDEADLK);
	conf_err("errorcheck trylock by another thread",
	    in_thread(trylock_fn, &sh->em), EBUSY);
	conf_err("errorcheck unlock by another thread",
	    in_thread(unlock_fn, &sh->em), EPERM);
	conf_err("errorcheck unlock", pthread_mutex_unlock(&sh->em), 0);
	conf_err("errorcheck unlock again", pthread_mutex_unlock(&sh->em),
	    EPERM);

	conf_err("recursive lock", pthread_mutex_lock(&sh->rm), 0);
	conf_err("recursive relock", pthread_mutex_lock(&sh->rm), 0);
	conf_err("recursive trylock", pthread_mutex_trylock(&sh->rm), 0);
	conf_err("recursive trylock by another thread",
	    in_thread(trylock_fn, &sh->rm), EBUSY);
	conf_err("recursive unlock 1", pthread_mutex_unlock(&sh->rm), 0);
	conf_err("recursive unlock 2", pthread_mutex_unlock(&sh->rm), 0);
	conf_err("recursive trylock by another thread, held once",
	    in_thread(trylock_fn, &sh->rm), EBUSY);
	conf_err("recursive unlock 3", pthread_mutex_unlock(&sh->rm), 0);
	conf_err("recursive trylock by another thread, free",
	    in_thread(trylock_fn, &sh->rm), 0);
	conf_err("recursive unlock, not held", pthread_mutex_unlock(&sh->rm),
	    EPERM);
}

/* Condition variables: all NT threads wait before main broadcasts. */
static void *
cond_fn(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&sh->mx);
	sh->waiting++;
	while (!sh->flag)
		pthread_cond_wait(&sh->cv, &sh->mx);
	sh->woke++;
	pthread_mutex_unlock(&sh->mx);
	return (NULL);
}

static void
wait_waiting(int n)
{
	for (;;) {
		pthread_mutex_lock(&sh->mx);
		if (sh->waiting >= n)
			break;
		pthread_mutex_unlock(&sh->mx);
		usleep(1000);
	}
}

static void
conds(void)
{
	pthread_t t[NT];
	struct timespec ts;

	sh->flag = sh->waiting = sh->woke = 0;
	run_threads(cond_fn, t);
	wait_waiting(NT);
	sh->flag = 1;
	conf_err("cond_broadcast", pthread_cond_broadcast(&sh->cv), 0);
	pthread_mutex_unlock(&sh->mx);
	join_threads(t);
	conf_long("cond: threads woken", sh->woke, NT);

	pthread_mutex_lock(&sh->mx);
	ts = conf_ts_add(conf_now(CLOCK_REALTIME), 20);
	conf_err("cond_timedwait, nobody signals",
	    pthread_cond_timedwait(&sh->cv, &sh->mx, &ts), ETIMEDOUT);
	conf_err("mutex held after the timeout", pthread_mutex_unlock(&sh->mx),
	    0);
	conf_err("cond_signal, no waiter", pthread_cond_signal(&sh->cv), 0);
}

/* More waiters than ult's helper threads (64): each holds the mutex
 * until its wait begins, so none may queue for a helper. */
#define MANY 80
static void
many_waiters(void)
{
	pthread_t t[MANY];

	sh->flag = sh->waiting = sh->woke = 0;
	for (int i = 0; i < MANY; i++)
		conf_create(&t[i], NULL, cond_fn, NULL);
	wait_waiting(MANY);
	sh->flag = 1;
	pthread_cond_broadcast(&sh->cv);
	pthread_mutex_unlock(&sh->mx);
	for (int i = 0; i < MANY; i++)
		conf_join(t[i]);
	conf_long("cond: all of many waiters woken", sh->woke, MANY);
}

/* A cancel acts during the wait, and the cleanup handler finds the
 * mutex held by the cancelled thread. */
static int cleanup_held;

static void
cancel_cleanup(void *arg)
{
	(void)arg;
	/* Nobody else holds it: main let it go before the cancel. */
	cleanup_held = pthread_mutex_trylock(&sh->mx) == EBUSY;
	pthread_mutex_unlock(&sh->mx);
}

static void *
cancel_fn(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&sh->mx);
	sh->waiting++;
	pthread_cleanup_push(cancel_cleanup, NULL);
	while (!sh->flag)
		pthread_cond_wait(&sh->cv, &sh->mx);
	pthread_cleanup_pop(0);
	pthread_mutex_unlock(&sh->mx);
	return (NULL);
}

static void
cancelled_waiter(void)
{
	pthread_t t;

	sh->flag = sh->waiting = 0;
	conf_create(&t, NULL, cancel_fn, NULL);
	wait_waiting(1);
	pthread_mutex_unlock(&sh->mx);
	conf_err("pthread_cancel a cond waiter", pthread_cancel(t), 0);
	conf_ok("it ended cancelled", conf_join(t) == PTHREAD_CANCELED);
	conf_long("its cleanup held the mutex", cleanup_held, 1);
	conf_err("the mutex is free", pthread_mutex_trylock(&sh->mx), 0);
	pthread_mutex_unlock(&sh->mx);
}

/* Barriers: NT threads and main, three rounds. */
static void *
barrier_fn(void *arg)
{
	(void)arg;
	for (int r = 0; r < 3; r++) {
		int err = pthread_barrier_wait(&sh->bar);

		if (err == PTHREAD_BARRIER_SERIAL_THREAD)
			__atomic_add_fetch(&sh->serial, 1, __ATOMIC_RELAXED);
		else if (err != 0)
			thread_err[0] = err;
	}
	return (NULL);
}

static void
barriers(void)
{
	pthread_t t[NT];

	sh->serial = 0;
	run_threads(barrier_fn, t);
	barrier_fn(NULL);
	join_threads(t);
	conf_long("barrier: serial threads in 3 rounds", sh->serial, 3);
	conf_err("barrier: errors", thread_err[0], 0);
}

/* Rwlocks: writers count, readers check no writer is inside. */
static void *
rw_fn(void *arg)
{
	(void)arg;
	for (int i = 0; i < K / 4; i++) {
		pthread_rwlock_wrlock(&sh->rw);
		if (sh->flag++ != 0)
			sh->rw_bad++;
		sh->rcounter++;
		sh->flag--;
		pthread_rwlock_unlock(&sh->rw);
		pthread_rwlock_rdlock(&sh->rw);
		if (sh->flag != 0)
			sh->rw_bad++;
		pthread_rwlock_unlock(&sh->rw);
	}
	return (NULL);
}

static void
rwlocks(void)
{
	pthread_t t[NT];

	sh->flag = 0;
	sh->rcounter = 0;
	conf_err("rwlock wrlock", pthread_rwlock_wrlock(&sh->rw), 0);
	conf_err("rwlock wrlock again", pthread_rwlock_wrlock(&sh->rw),
	    EDEADLK);
	run_threads(rw_fn, t);
	usleep(20000);
	conf_err("rwlock unlock", pthread_rwlock_unlock(&sh->rw), 0);
	join_threads(t);
	conf_long("rwlock: writes", sh->rcounter, NT * (K / 4));
	conf_long("rwlock: exclusion broken", sh->rw_bad, 0);
	conf_err("rwlock rdlock", pthread_rwlock_rdlock(&sh->rw), 0);
	conf_err("rwlock tryrdlock", pthread_rwlock_tryrdlock(&sh->rw), 0);
	conf_err("rwlock trywrlock", pthread_rwlock_trywrlock(&sh->rw), EBUSY);
	pthread_rwlock_unlock(&sh->rw);
	pthread_rwlock_unlock(&sh->rw);
}

/* Semaphores: NT threads wait, main posts. */
static void *
sem_fn(void *arg)
{
	(void)arg;
	return ((void *)(long)conf_rc_errno(sem_wait(&sh->sem)));
}

static void
sems(void)
{
	pthread_t t[NT];
	struct timespec ts;
	int v = -1, bad = 0;

	run_threads(sem_fn, t);
	usleep(20000);
	for (int i = 0; i < NT; i++)
		sem_post(&sh->sem);
	for (int i = 0; i < NT; i++)
		bad += conf_join(t[i]) != NULL;
	conf_long("sem: waits that failed", bad, 0);
	sem_getvalue(&sh->sem, &v);
	conf_long("sem_getvalue", v, 0);
	conf_err("sem_trywait", conf_rc_errno(sem_trywait(&sh->sem)), EAGAIN);
	ts = conf_ts_add(conf_now(CLOCK_REALTIME), 20);
	conf_err("sem_timedwait", conf_rc_errno(sem_timedwait(&sh->sem, &ts)),
	    ETIMEDOUT);
}

/* A thread that ends holding the robust one. */
static void *
robust_fn(void *arg)
{
	(void)arg;
	return ((void *)(long)pthread_mutex_lock(&sh->robust));
}

static void
robust_thread(void)
{
	conf_err("robust lock by a thread that ends",
	    in_thread(robust_fn, NULL), 0);
	conf_err("robust lock after the owner thread ended",
	    pthread_mutex_lock(&sh->robust), EOWNERDEAD);
	conf_err("robust consistent", pthread_mutex_consistent(&sh->robust), 0);
	conf_err("robust unlock", pthread_mutex_unlock(&sh->robust), 0);
}

/* Across processes: the child increments, posts, signals, and dies
 * holding the robust mutex. */
static void
child(void)
{
	pthread_barrier_wait(&sh->bar2);
	for (int i = 0; i < K; i++) {
		pthread_mutex_lock(&sh->mx);
		sh->counter++;
		pthread_mutex_unlock(&sh->mx);
	}
	for (int i = 0; i < NT; i++)
		sem_post(&sh->sem);
	pthread_mutex_lock(&sh->mx);
	sh->flag = 1;
	pthread_cond_broadcast(&sh->cv);
	pthread_mutex_unlock(&sh->mx);
	pthread_mutex_lock(&sh->robust);
	pthread_barrier_wait(&sh->bar2);
	_exit(0);
}

static void *
cross_fn(void *arg)
{
	(void)arg;
	mutex_fn(NULL);
	if (sem_wait(&sh->sem) != 0)
		return ((void *)1);
	return (cond_fn(NULL));
}

static void
processes(void)
{
	pthread_t t[NT];
	pid_t pid;
	int st = -1;

	sh->counter = 0;
	sh->flag = sh->waiting = sh->woke = 0;
	fflush(stdout);
	if ((pid = fork()) == 0)
		child();
	conf_ok("fork", pid > 0);
	run_threads(cross_fn, t);
	conf_err("barrier with the child", pthread_barrier_wait(&sh->bar2) > 0,
	    0);
	join_threads(t);
	conf_long("across processes: increments", sh->counter, (NT + 1) * K);
	conf_long("across processes: cond waiters woken", sh->woke, NT);
	pthread_barrier_wait(&sh->bar2);
	waitpid(pid, &st, 0);
	conf_ok("child exited 0", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	conf_err("robust lock after the owner process died",
	    pthread_mutex_lock(&sh->robust), EOWNERDEAD);
	conf_err("robust consistent", pthread_mutex_consistent(&sh->robust), 0);
	conf_err("robust unlock", pthread_mutex_unlock(&sh->robust), 0);
	conf_err("robust lock", pthread_mutex_lock(&sh->robust), 0);
	conf_err("robust unlock again", pthread_mutex_unlock(&sh->robust), 0);
}

int
main(void)
{
	conf_begin("pshared");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		conf_fail("mmap", "failed");
		return (1);
	}
	init_objects();
	mutexes();
	kinds();
	conds();
	many_waiters();
	cancelled_waiter();
	barriers();
	rwlocks();
	sems();
	robust_thread();
	processes();
	conf_err("mutex_destroy", pthread_mutex_destroy(&sh->mx), 0);
	conf_err("cond_destroy", pthread_cond_destroy(&sh->cv), 0);
	conf_err("barrier_destroy", pthread_barrier_destroy(&sh->bar), 0);
	conf_err("rwlock_destroy", pthread_rwlock_destroy(&sh->rw), 0);
	conf_err("sem_destroy", conf_rc_errno(sem_destroy(&sh->sem)), 0);
	return (conf_end());
}
