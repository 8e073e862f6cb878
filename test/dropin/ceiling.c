/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Priority-ceiling mutexes: the ceiling from the attributes, its getter
 * and setter, their range checks, and mutual exclusion.  Whether a lock
 * may raise the caller to the ceiling depends on the system (glibc says
 * EINVAL where it cannot, and here at least for a thread's first lock),
 * so a lock's result is reported as "0 or EINVAL", and the count checks
 * only the locks that succeeded.
 */
#include <sched.h>

#include "conf.h"

#define NT 6
#define K 500

static pthread_mutex_t pm;
static long counter;
static int _Atomic ok_locks, einval_locks;

static void *
fn(void *arg)
{
	(void)arg;
	for (int i = 0; i < K; i++) {
		int err = pthread_mutex_lock(&pm);

		if (err != 0) {
			einval_locks += err == EINVAL;
			continue;
		}
		ok_locks++;
		counter++;
		pthread_mutex_unlock(&pm);
	}
	return (NULL);
}

int
main(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t plain;
	pthread_t t[NT];
	int c = -1, old = -1, hi = sched_get_priority_max(SCHED_FIFO), err;

	conf_begin("ceiling");
	pthread_mutexattr_init(&a);
	conf_err("mutexattr_setprotocol PRIO_PROTECT",
	    pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_PROTECT), 0);
	conf_err("mutexattr_setprioceiling max + 1",
	    pthread_mutexattr_setprioceiling(&a, hi + 1), EINVAL);
	conf_err("mutexattr_setprioceiling 10",
	    pthread_mutexattr_setprioceiling(&a, 10), 0);
	conf_err("mutex_init", pthread_mutex_init(&pm, &a), 0);
	conf_err("getprioceiling", pthread_mutex_getprioceiling(&pm, &c), 0);
	conf_long("ceiling", c, 10);
	conf_err("setprioceiling 20",
	    pthread_mutex_setprioceiling(&pm, 20, &old), 0);
	conf_long("old ceiling", old, 10);
	pthread_mutex_getprioceiling(&pm, &c);
	conf_long("ceiling", c, 20);
	conf_err("setprioceiling 0", pthread_mutex_setprioceiling(&pm, 0, &old),
	    EINVAL);
	conf_err("setprioceiling max + 1",
	    pthread_mutex_setprioceiling(&pm, hi + 1, &old), EINVAL);
	pthread_mutex_getprioceiling(&pm, &c);
	conf_long("ceiling unchanged", c, 20);
	pthread_mutexattr_destroy(&a);

	pthread_mutexattr_init(&a);
	pthread_mutex_init(&plain, &a);
	conf_err("getprioceiling, no ceiling",
	    pthread_mutex_getprioceiling(&plain, &c), EINVAL);
	conf_err("setprioceiling, no ceiling",
	    pthread_mutex_setprioceiling(&plain, 10, &old), EINVAL);
	pthread_mutexattr_destroy(&a);

	err = pthread_mutex_lock(&pm);
	conf_ok("lock: 0 or EINVAL", err == 0 || err == EINVAL);
	if (err == 0) {
		/* The holder may change it without a deadlock. */
		conf_err("setprioceiling by the holder",
		    pthread_mutex_setprioceiling(&pm, 30, &old), 0);
		pthread_mutex_unlock(&pm);
	} else {
		conf_err("setprioceiling by the holder",
		    pthread_mutex_setprioceiling(&pm, 30, &old), 0);
	}
	for (int i = 0; i < NT; i++)
		conf_create(&t[i], NULL, fn, NULL);
	for (int i = 0; i < NT; i++)
		conf_join(t[i]);
	conf_ok("locks: every one 0 or EINVAL",
	    ok_locks + einval_locks == NT * K);
	conf_ok("mutual exclusion", counter == ok_locks);
	conf_err("destroy", pthread_mutex_destroy(&pm), 0);
	return (conf_end());
}
