/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Forks at random points of other threads' work: four threads hammer a
 * mutex and a condition variable (broadcasts, timed waits) while four
 * others fork again and again; each child makes four threads that count
 * under a mutex of their own and exits with the count's verdict.  Every
 * child must end with status 0 (a lock or queue of the runtime that the
 * fork caught mid-update would hang or crash it).
 */
#include "conf.h"

#include <sys/wait.h>
#include <unistd.h>

#define NHAMMER 4
#define NFORKER 4
#define NFORKS 15
#define NCHILD 4
#define NINCR 500

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int stop;
static long shared;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static long ccount;

static void *
hammer(void *arg)
{
	pthread_mutex_lock(&m);
	while (!stop) {
		shared++;
		if (shared % 7 == 0) {
			pthread_cond_broadcast(&c);
		} else if (shared % 11 == 0) {
			struct timespec ts =
			    conf_ts_add(conf_now(CLOCK_REALTIME), 1);

			pthread_cond_timedwait(&c, &m, &ts);
		}
		pthread_mutex_unlock(&m);
		pthread_mutex_lock(&m);
	}
	pthread_mutex_unlock(&m);
	return (arg);
}

static void *
count(void *arg)
{
	for (int i = 0; i < NINCR; i++) {
		pthread_mutex_lock(&cm);
		ccount++;
		pthread_mutex_unlock(&cm);
	}
	return (arg);
}

static void *
forker(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int k = 0; k < NFORKS; k++) {
		pthread_t t[NCHILD];
		int st = 0;
		pid_t p = fork();

		if (p == 0) {
			for (int i = 0; i < NCHILD; i++)
				if (pthread_create(&t[i], NULL, count, NULL) !=
				    0)
					_exit(2);
			for (int i = 0; i < NCHILD; i++)
				pthread_join(t[i], NULL);
			_exit(ccount == (long)NCHILD * NINCR ? 0 : 3);
		}
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			bad++;
	}
	return ((void *)bad);
}

int
main(void)
{
	pthread_t h[NHAMMER], f[NFORKER];
	long bad = 0;

	conf_begin("forkstress");
	for (int i = 0; i < NHAMMER; i++)
		conf_must("hammer", pthread_create(&h[i], NULL, hammer, NULL));
	for (int i = 0; i < NFORKER; i++)
		conf_must("forker", pthread_create(&f[i], NULL, forker, NULL));
	for (int i = 0; i < NFORKER; i++)
		bad += (long)conf_join(f[i]);
	pthread_mutex_lock(&m);
	stop = 1;
	pthread_cond_broadcast(&c);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < NHAMMER; i++)
		pthread_join(h[i], NULL);
	conf_long("children that failed", bad, 0);
	conf_ok("the hammers ran", shared > 0);
	return (conf_end());
}
