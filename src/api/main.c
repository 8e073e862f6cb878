/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult_main: a program's main() in one call.  A newcomer otherwise writes
 * ult_init, ult_spawn, ult_join and ult_shutdown, and forgets one of them,
 * or does the work on main's own thread, a foreign thread that blocks its
 * kernel thread wherever a uthread would have slept.
 */
#include <errno.h>

#include "ult.h"

#include "../kern/runtime.h"

int
ult_main(void *(*fn)(void *), void *arg, void **ret)
{
	struct ult_attr a;
	ult_thread_t *t;
	int started = 0, err, err2;

	if (fn == NULL)
		return (EINVAL);
	if (ult_self() != NULL)
		return (EDEADLK);
	if (!ult__running()) {
		if ((err = ult_init(NULL)) != 0)
			return (err);
		started = 1;
	}
	ult_attr_init(&a);
	a.name = "main";
	err = ult_spawn(&t, &a, fn, arg);
	if (err == 0)
		err = ult_join(t, ret);
	if (started && (err2 = ult_shutdown()) != 0 && err == 0)
		err = err2;
	return (err);
}
