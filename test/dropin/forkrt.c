/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fork child's threads, while the parent's other threads run and hold
 * locks: from a thread, from main and, in the child, from one of its own
 * threads (a grandchild).  In each child: many threads on a mutex and a
 * condition variable, sleeps, a signal handler and sigwait, a pipe read
 * that blocks, a barrier, a signal sent to the process; the forking
 * thread's own mutex unlocked after
 * its threads exist, another thread's still held; pthread_atfork's order;
 * a child that forks before it has threads; the exit status (also of a
 * child whose forking thread returns from its
 * start routine, and of one that calls pthread_exit).  Under ult-run the
 * child's threads are uthreads: the child has fewer kernel threads than
 * threads (natively one each).  Children print (stdout is flushed before
 * each fork and the parent waits), and exit 1 on a failed check.
 */
#include "conf.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHR 32
#define NINCR 200

static int under_ult;
static char log_[64];
static int nlog;
static pthread_mutex_t held_by_other = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t atfork_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t bg_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bg_cv = PTHREAD_COND_INITIALIZER;
static int bg_stop, bg_holding;

static void
note(char c)
{
	if (nlog < (int)sizeof(log_) - 1)
		log_[nlog++] = c;
}

static void
prep1(void)
{
	note('2');
}
static void
prep2(void)
{
	note('1');
	pthread_mutex_lock(&atfork_mx);
}
static void
par1(void)
{
	note('a');
}
static void
par2(void)
{
	pthread_mutex_unlock(&atfork_mx);
	note('b');
}
static void
chl1(void)
{
	note('A');
}
static void
chl2(void)
{
	/* Before the child's first thread: the forking thread's lock. */
	conf_err("child handler unlocks the prepare handler's mutex",
	    pthread_mutex_unlock(&atfork_mx), 0);
	note('B');
}

static int
ntasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return (-1);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return (n);
}

/* The parent's background: one thread holds a mutex for good, others
 * wait on a condition variable or sleep in a loop. */
static void *
holder(void *arg)
{
	pthread_mutex_lock(&held_by_other);
	pthread_mutex_lock(&bg_mx);
	bg_holding = 1;
	pthread_cond_broadcast(&bg_cv);
	while (!bg_stop)
		pthread_cond_wait(&bg_cv, &bg_mx);
	pthread_mutex_unlock(&bg_mx);
	pthread_mutex_unlock(&held_by_other);
	return (arg);
}

static void *
sleeper(void *arg)
{
	struct timespec ts = {0, 200000};

	pthread_mutex_lock(&bg_mx);
	while (!bg_stop) {
		pthread_mutex_unlock(&bg_mx);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&bg_mx);
	}
	pthread_mutex_unlock(&bg_mx);
	return (arg);
}

/* The child's work. */
static pthread_mutex_t c_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c_cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t c_bar;
static long c_count;
static int c_gate, c_arrived;
static volatile sig_atomic_t c_handled;

static void *
worker(void *arg)
{
	struct timespec ts = {0, 100000};

	for (int i = 0; i < NINCR; i++) {
		pthread_mutex_lock(&c_mx);
		c_count++;
		pthread_mutex_unlock(&c_mx);
	}
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&c_mx);
	c_arrived++;
	pthread_cond_broadcast(&c_cv);
	while (!c_gate)
		pthread_cond_wait(&c_cv, &c_mx);
	pthread_mutex_unlock(&c_mx);
	pthread_barrier_wait(&c_bar);
	return (arg);
}

static void
on_usr1(int sig)
{
	(void)sig;
	c_handled++;
}

static void *
waiter(void *arg)
{
	sigset_t set;
	int sig = 0;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	(void)sigwait(&set, &sig);
	return ((void *)(long)sig);
}

static void *
killer(void *arg)
{
	kill(getpid(), SIGUSR1);
	return (arg);
}

/* Spin (no call that could take the signal some other way) until the
 * handler ran n times, for at most 10 s. */
static int
spin_until_handled(int n)
{
	struct timespec t0 = conf_now(CLOCK_MONOTONIC), t;

	do {
		for (volatile int i = 0; i < 100000; i++)
			;
		t = conf_now(CLOCK_MONOTONIC);
	} while (c_handled < n && t.tv_sec - t0.tv_sec < 10);
	return (c_handled >= n);
}

static void *
reader(void *arg)
{
	int fd = *(int *)arg;
	char c = 0;

	return ((void *)(long)(read(fd, &c, 1) == 1 ? c : -1));
}

static void *
raiser(void *arg)
{
	raise(SIGUSR1);
	return (arg);
}

/* What every child checks; its exit status says whether all held. */
static int
child_work(const char *who)
{
	pthread_t t[NTHR], w, r, s, k;
	struct timespec ts = {0, 2000000};
	sigset_t set;
	int fds[2], tasks;
	void *ret;

	printf("%s: in the child\n", who);
	c_count = 0;
	c_gate = c_arrived = 0;
	c_handled = 0;
	conf_must("barrier", pthread_barrier_init(&c_bar, NULL, NTHR + 1));
	for (int i = 0; i < NTHR; i++)
		conf_must("create", pthread_create(&t[i], NULL, worker, NULL));
	pthread_mutex_lock(&c_mx);
	while (c_arrived < NTHR)
		pthread_cond_wait(&c_cv, &c_mx);
	/* Every thread is alive and waiting. */
	tasks = ntasks();
	c_gate = 1;
	pthread_cond_broadcast(&c_cv);
	pthread_mutex_unlock(&c_mx);
	pthread_barrier_wait(&c_bar);
	for (int i = 0; i < NTHR; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&c_bar);
	conf_long("child mutex count", c_count, (long)NTHR * NINCR);
	conf_ok("child threads are uthreads under ult-run",
	    under_ult ? tasks > 0 && tasks < NTHR : tasks == NTHR + 1);
	conf_err("the forking thread's own mutex", pthread_mutex_unlock(&own),
	    0);
	conf_err("another thread's mutex stays held",
	    pthread_mutex_trylock(&held_by_other), EBUSY);
	conf_err("child sleep", nanosleep(&ts, NULL) == 0 ? 0 : errno, 0);

	/* A handler, and a signal taken by sigwait. */
	signal(SIGUSR1, on_usr1);
	conf_must("raiser", pthread_create(&s, NULL, raiser, NULL));
	pthread_join(s, NULL);
	conf_long("child handler ran", (long)c_handled, 1);
	/* One sent to the process: the child's own catcher's, under ult-run. */
	conf_err("kill the child", kill(getpid(), SIGUSR1) == 0 ? 0 : errno, 0);
	for (int i = 0; i < 10000 && c_handled < 2; i++)
		nanosleep(&(struct timespec){0, 100000}, NULL);
	conf_long("child handler ran for the process", (long)c_handled, 2);
	/* Sent while this thread runs and is the only one to accept it:
	 * the kernel gives it to the kernel thread that runs this one. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	conf_must("killer", pthread_create(&k, NULL, killer, NULL));
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	conf_ok("child handler ran while it computed", spin_until_handled(3));
	pthread_join(k, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	conf_must("waiter", pthread_create(&w, NULL, waiter, NULL));
	nanosleep(&ts, NULL);
	conf_err("pthread_kill", pthread_kill(w, SIGUSR2), 0);
	ret = conf_join(w);
	conf_long("child sigwait", (long)ret, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);

	/* A read that blocks until the child's main writes. */
	conf_must("pipe", pipe(fds));
	conf_must("reader", pthread_create(&r, NULL, reader, &fds[0]));
	nanosleep(&ts, NULL);
	conf_long("write", (long)write(fds[1], "x", 1), 1);
	ret = conf_join(r);
	conf_long("child read", (long)ret, 'x');
	close(fds[0]);
	close(fds[1]);
	fflush(stdout);
	return (conf.failures != 0);
}

static void
wait_child(pid_t p, const char *what)
{
	int st = 0;

	conf_long(what, (long)waitpid(p, &st, 0) == p, 1);
	printf("%s: status %d\n", what,
	    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	if (!WIFEXITED(st) || WEXITSTATUS(st) > 5)
		conf_fail(what, "ended badly");
}

static void *
grand(void *arg)
{
	pid_t p;

	(void)arg;
	fflush(stdout);
	pthread_mutex_lock(&own);
	if ((p = fork()) == 0)
		_exit(child_work("grandchild") ? 1 : 5);
	pthread_mutex_unlock(&own);
	wait_child(p, "grandchild");
	return (NULL);
}

/* The first child: its work, then a grandchild from one of its threads. */
static int
first_child(void)
{
	pthread_t g;

	conf_str("atfork order in the child", log_, "12AB");
	if (child_work("child"))
		return (1);
	conf_must("grand", pthread_create(&g, NULL, grand, NULL));
	pthread_join(g, NULL);
	return (conf.failures != 0 ? 1 : 3);
}

/* A child of main forks before it has threads, then works itself. */
static int
child_of_main(void)
{
	pid_t p;

	fflush(stdout);
	if ((p = fork()) == 0)
		_exit(child_work("grandchild of a child without threads") ? 1
									  : 6);
	wait_child(p, "grandchild of a child without threads");
	return (child_work("child of main") ? 1 : 4);
}

static void *
forker(void *arg)
{
	pid_t p;

	(void)arg;
	nlog = 0;
	memset(log_, 0, sizeof(log_));
	fflush(stdout);
	pthread_mutex_lock(&own);
	if ((p = fork()) == 0) {
		log_[nlog] = '\0';
		_exit(first_child());
	}
	pthread_mutex_unlock(&own);
	log_[nlog] = '\0';
	wait_child(p, "child of a thread");
	conf_str("atfork order in the parent", log_, "12ab");
	return (NULL);
}

/* A child whose forking thread returns from its start routine, and one
 * that calls pthread_exit: both end with status 0 once their threads do. */
static void *
quick(void *arg)
{
	struct timespec ts = {0, 1000000};

	nanosleep(&ts, NULL);
	return (arg);
}

static void *
ends_in_child(void *arg)
{
	pid_t p;
	pthread_t t;

	fflush(stdout);
	if ((p = fork()) == 0) {
		if (pthread_create(&t, NULL, quick, NULL) != 0)
			_exit(9);
		if (arg != NULL)
			pthread_exit(NULL); /* t still runs */
		pthread_join(t, NULL);
		return (NULL);
	}
	wait_child(p,
	    arg != NULL ? "child that calls pthread_exit"
			: "child whose thread returns");
	return (NULL);
}

int
main(void)
{
	pthread_t bg[3], f;
	const char *pre = getenv("LD_PRELOAD");
	pid_t p;

	conf_begin("forkrt");
	under_ult = pre != NULL && strstr(pre, "ult-pthread") != NULL;
	conf_must("atfork", pthread_atfork(prep1, par1, chl1));
	conf_must("atfork", pthread_atfork(prep2, par2, chl2));
	conf_must("holder", pthread_create(&bg[0], NULL, holder, NULL));
	conf_must("sleeper", pthread_create(&bg[1], NULL, sleeper, NULL));
	conf_must("sleeper", pthread_create(&bg[2], NULL, sleeper, NULL));
	pthread_mutex_lock(&bg_mx);
	while (!bg_holding)
		pthread_cond_wait(&bg_cv, &bg_mx);
	pthread_mutex_unlock(&bg_mx);

	/* From a thread, then from main, while the others run. */
	conf_must("forker", pthread_create(&f, NULL, forker, NULL));
	pthread_join(f, NULL);
	nlog = 0;
	fflush(stdout);
	pthread_mutex_lock(&own);
	if ((p = fork()) == 0)
		_exit(child_of_main());
	pthread_mutex_unlock(&own);
	wait_child(p, "child of main");
	conf_must("ends", pthread_create(&f, NULL, ends_in_child, NULL));
	pthread_join(f, NULL);
	conf_must("ends", pthread_create(&f, NULL, ends_in_child, &under_ult));
	pthread_join(f, NULL);

	pthread_mutex_lock(&bg_mx);
	bg_stop = 1;
	pthread_cond_broadcast(&bg_cv);
	pthread_mutex_unlock(&bg_mx);
	for (int i = 0; i < 3; i++)
		pthread_join(bg[i], NULL);
	return (conf_end());
}
