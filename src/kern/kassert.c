/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The runtime's side of the invariant checks (util/kassert.h): who is
 * running when one fails, and the per-kernel-thread token that locks
 * record as their owner.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime.h"
#include "worker.h"
#include "uthread.h"

/* Only the address matters: one per kernel thread. */
static __thread char mtx_token __attribute__((tls_model("initial-exec")));

/*
 * A lock belongs to the kernel thread.  With per-uthread TLS every
 * uthread has a mtx_token of its own, and a lock taken in one context
 * may be released after the switch to the next on the same worker, so a
 * worker is named by its struct (ult__tls_worker is refreshed into every
 * block); other threads by their own token.
 */
const void *
ult__mtx_self(void)
{
	struct ult__worker *w = ult__tls_worker;

	return (w != NULL ? (const void *)w : &mtx_token);
}

static void
who(char *buf, size_t len)
{
	struct ult__worker *w = ult__tls_worker;
	struct ult_thread *ut;

	if (w == NULL) {
		if (ult__tls_actcpu >= 0)
			snprintf(buf, len, "the clock thread acting for cpu %d",
			    ult__tls_actcpu);
		else
			snprintf(buf, len, "a foreign thread");
		return;
	}
	ut = w->curthread;
	if (ut == &w->idle)
		snprintf(buf, len, "worker %d's idle loop", w->id);
	else
		snprintf(buf, len, "uthread %s (%llu) on worker %d",
		    ut->name[0] ? ut->name : "(unnamed)",
		    (unsigned long long)ut->id, w->id);
}

void
ult__assert_fail(const char *file, int line, const char *func, const char *expr,
    const char *msg)
{
	char whom[96], out[512];
	int n;

	who(whom, sizeof(whom));
	n = snprintf(out, sizeof(out),
	    "ult: assertion failed at %s:%d in %s(): %s%s%s%s, in %s\n", file,
	    line, func, expr, msg ? " (" : "", msg ? msg : "", msg ? ")" : "",
	    whom);
	if (n > 0 &&
	    write(STDERR_FILENO, out,
		(size_t)n < sizeof(out) ? (size_t)n : sizeof(out) - 1) < 0)
		(void)0;
	signal(SIGABRT, SIG_DFL);
	abort();
}
