/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fork and its relatives from a thread that is not main: the child's
 * threads (create, join, detach), mutexes, condition variables, sleeps
 * and signal masks; pthread_atfork handlers in POSIX's order (prepare
 * in reverse order of registration, parent and child in order); a
 * child's own fork; mutexes the forking thread holds across the fork
 * (an atfork prepare handler's, its own), unlocked in the child; the
 * exit statuses waitpid sees; system, popen,
 * vfork with exec and posix_spawn.  The child reports through a pipe,
 * and only main prints.
 */
#include "conf.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define NWORKERS 4
#define NINCR 1000

static char log_[32];
static int nlog;

static void
note(char c)
{
	if (nlog < (int)sizeof(log_) - 1)
		log_[nlog++] = c;
}

static void
prep1(void)
{
	note('3');
}
static void
prep2(void)
{
	note('2');
}
static void
prep3(void)
{
	note('1');
}
static void
par1(void)
{
	note('a');
}
static void
par2(void)
{
	note('b');
}
static void
par3(void)
{
	note('c');
}
static void
chl1(void)
{
	note('A');
}
static void
chl2(void)
{
	note('B');
}
static void
chl3(void)
{
	note('C');
}

/* Held across the fork: the handlers' and the forking thread's own. */
static pthread_mutex_t am = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int am_child_rc = -1;

static void
am_lock(void)
{
	pthread_mutex_lock(&am);
}
static void
am_unlock(void)
{
	pthread_mutex_unlock(&am);
}
static void
am_child(void)
{
	am_child_rc = pthread_mutex_unlock(&am);
}

/* The child's report, one line at a time, to the parent. */
static int report_fd = -1;

static void
report(const char *what, const char *how)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "%s -> %s\n", what, how);

	if (write(report_fd, line, (size_t)n) != n)
		_exit(99);
}

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cc = PTHREAD_COND_INITIALIZER;
static int go;
static long counter;

static void *
child_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cm);
	while (!go)
		pthread_cond_wait(&cc, &cm);
	pthread_mutex_unlock(&cm);
	for (int i = 0; i < NINCR; i++) {
		pthread_mutex_lock(&cm);
		counter++;
		pthread_mutex_unlock(&cm);
	}
	return (arg);
}

static void *
cancellable(void *arg)
{
	struct timespec ts = {0, 1000000};

	for (;;) {
		pthread_testcancel();
		nanosleep(&ts, NULL);
	}
	return (arg);
}

static void *
grandchild_thread(void *arg)
{
	return ((void *)((long)arg + 1));
}

/* The child of a fork from a thread: it is a whole process of its own. */
static int
child_body(void)
{
	pthread_t t[NWORKERS], d;
	struct timespec ts = {0, 5000000};
	sigset_t s, old;
	void *ret;
	int ok = 1, st;
	pid_t p;

	report("atfork order in the child", log_);
	report("atfork child handler unlocks the prepare's mutex",
	    conf_errname(am_child_rc));
	report("trylock of it then", conf_errname(pthread_mutex_trylock(&am)));
	report("unlock", conf_errname(pthread_mutex_unlock(&am)));
	report("unlock of a mutex held across the fork",
	    conf_errname(pthread_mutex_unlock(&held)));
	report("trylock of it then",
	    conf_errname(pthread_mutex_trylock(&held)));
	report("unlock", conf_errname(pthread_mutex_unlock(&held)));
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	report("sigprocmask",
	    sigprocmask(SIG_BLOCK, &s, &old) == 0 ? "0" : "error");
	report("pthread_sigmask",
	    conf_errname(pthread_sigmask(SIG_UNBLOCK, &s, NULL)));
	report("pthread_equal(self, self)",
	    pthread_equal(pthread_self(), pthread_self()) ? "yes" : "no");
	for (int i = 0; i < NWORKERS; i++)
		if (pthread_create(&t[i], NULL, child_worker,
			(void *)(long)i) != 0)
			ok = 0;
	report("pthread_create x4", ok ? "0" : "error");
	if (!ok)
		return (1);
	report("nanosleep 5 ms", nanosleep(&ts, NULL) == 0 ? "0" : "error");
	pthread_mutex_lock(&cm);
	go = 1;
	pthread_cond_broadcast(&cc);
	pthread_mutex_unlock(&cm);
	for (int i = 0; i < NWORKERS; i++)
		if (pthread_join(t[i], &ret) != 0 || ret != (void *)(long)i)
			ok = 0;
	report("pthread_join x4", ok ? "0" : "error");
	report("counter",
	    counter == (long)NWORKERS * NINCR ? "all increments" : "lost some");
	report("pthread_create detached",
	    conf_errname(pthread_create(&d, NULL, grandchild_thread, NULL)));
	report("pthread_detach", conf_errname(pthread_detach(d)));
	if (pthread_create(&d, NULL, cancellable, NULL) != 0)
		return (1);
	report("pthread_cancel", conf_errname(pthread_cancel(d)));
	report("joined a cancelled thread",
	    pthread_join(d, &ret) == 0 && ret == PTHREAD_CANCELED ? "yes"
								  : "no");
	/* The child forks in turn; its child starts a thread too. */
	if ((p = fork()) == 0) {
		pthread_t g;

		if (pthread_create(&g, NULL, grandchild_thread, (void *)41) !=
			0 ||
		    pthread_join(g, &ret) != 0)
			_exit(1);
		_exit((int)(long)ret);
	}
	report("grandchild exit status",
	    p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 42
		? "42"
		: "wrong");
	return (0);
}

struct forked {
	pid_t pid;
	char parent_log[32];
	int rfd;
};

static void *
fork_from_thread(void *arg)
{
	struct forked *f = arg;
	int fd[2];

	if (pipe(fd) != 0)
		return (NULL);
	nlog = 0;
	memset(log_, 0, sizeof(log_));
	pthread_mutex_lock(&held);
	f->pid = fork();
	if (f->pid == 0) {
		close(fd[0]);
		report_fd = fd[1];
		/* exit, not _exit: the child's atexit and stdio go too. */
		exit(child_body());
	}
	pthread_mutex_unlock(&held);
	close(fd[1]);
	f->rfd = fd[0];
	memcpy(f->parent_log, log_, sizeof(log_));
	return (f);
}

static void
check_fork(void)
{
	struct forked f = {0};
	pthread_t t;
	char buf[4096];
	size_t got = 0;
	ssize_t n;
	int st;

	conf_must("pthread_atfork",
	    pthread_atfork(prep1, par1, chl1) ||
		pthread_atfork(prep2, par2, chl2) ||
		pthread_atfork(prep3, par3, chl3) ||
		pthread_atfork(am_lock, am_unlock, am_child));
	conf_create(&t, NULL, fork_from_thread, &f);
	conf_ok("fork from a thread", conf_join(t) == &f && f.pid > 0);
	if (f.pid <= 0)
		return;
	conf_str("atfork order in the parent", f.parent_log, "123abc");
	while (got < sizeof(buf) - 1 &&
	    (n = read(f.rfd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(f.rfd);
	/* The child's lines, as it wrote them. */
	for (char *line = strtok(buf, "\n"); line != NULL;
	     line = strtok(NULL, "\n"))
		printf("fork: child: %s\n", line);
	conf_ok("waitpid", waitpid(f.pid, &st, 0) == f.pid);
	conf_ok("child exited", WIFEXITED(st));
	if (WIFSIGNALED(st))
		printf("fork: child killed by signal %d\n", WTERMSIG(st));
	conf_long("child exit status", WEXITSTATUS(st), 0);
}

/* A child that ends with a status and one killed by a signal. */
static void *
statuses(void *arg)
{
	long *res = arg;
	int st;
	pid_t p;

	if ((p = fork()) == 0)
		_exit(7);
	res[0] =
	    waitpid(p, &st, 0) == p && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if ((p = fork()) == 0) {
		raise(SIGTERM);
		_exit(0);
	}
	res[1] = waitpid(p, &st, 0) == p && WIFSIGNALED(st) ? WTERMSIG(st) : -1;
	return (NULL);
}

static void *
spawners(void *arg)
{
	long *res = arg;
	char line[64] = "";
	char *argv[] = {"sh", "-c", "exit 4", NULL};
	FILE *fp;
	pid_t p;
	int st;

	st = system("exit 3");
	res[0] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if ((fp = popen("echo from popen", "r")) != NULL) {
		if (fgets(line, sizeof(line), fp) == NULL)
			line[0] = '\0';
		res[1] = pclose(fp) == 0 && strcmp(line, "from popen\n") == 0;
	}
	if ((p = vfork()) == 0) {
		execl("/bin/sh", "sh", "-c", "exit 5", (char *)NULL);
		_exit(127);
	}
	res[2] = p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st)
	    ? WEXITSTATUS(st)
	    : -1;
	res[3] = posix_spawn(&p, "/bin/sh", NULL, NULL, argv, environ) == 0 &&
		waitpid(p, &st, 0) == p && WIFEXITED(st)
	    ? WEXITSTATUS(st)
	    : -1;
	return (NULL);
}

int
main(void)
{
	long st[2] = {-1, -1}, sp[4] = {-1, -1, -1, -1};
	pthread_t t;

	conf_begin("fork");
	check_fork();
	conf_create(&t, NULL, statuses, st);
	conf_join(t);
	conf_long("exit status of _exit(7)", st[0], 7);
	conf_long("signal of raise(SIGTERM)", st[1], SIGTERM);
	conf_create(&t, NULL, spawners, sp);
	conf_join(t);
	conf_long("system(\"exit 3\")", sp[0], 3);
	conf_long("popen reads its output", sp[1], 1);
	conf_long("vfork and exec, exit 5", sp[2], 5);
	conf_long("posix_spawn, exit 4", sp[3], 4);
	return (conf_end());
}
