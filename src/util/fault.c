/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fault injection (fault.h), compiled into
 * debug builds only.  ULT_FAULT is read once, at the first ult_init; the
 * counts run for the life of the process, so that a retried ult_init, or
 * anything after the failure, finds the system working again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "atomic.h"
#include "fault.h"

#ifdef ULT_INVARIANTS

static const char *const kinds[ULT__FAULT_NKINDS] = {"mmap", "malloc",
    "thread"};
static atomic_long seen[ULT__FAULT_NKINDS], fail_at[ULT__FAULT_NKINDS];
static atomic_long injected;
static pthread_once_t parse_once = PTHREAD_ONCE_INIT;
static int parse_err;

static int
parse(const char *s)
{
	while (*s != '\0') {
		size_t len = strcspn(s, ":");
		char *end;
		long n;
		int k;

		for (k = 0; k < ULT__FAULT_NKINDS; k++)
			if (strlen(kinds[k]) == len &&
			    strncmp(s, kinds[k], len) == 0)
				break;
		if (k == ULT__FAULT_NKINDS || s[len] != ':')
			return (EINVAL);
		errno = 0;
		n = strtol(s + len + 1, &end, 10);
		if (errno != 0 || end == s + len + 1 || n < 1 ||
		    (*end != ',' && *end != '\0'))
			return (EINVAL);
		ULT_ST(&fail_at[k], n);
		s = *end == ',' ? end + 1 : end;
	}
	return (0);
}

static void
parse_env(void)
{
	const char *s = getenv("ULT_FAULT");
	int e = errno;

	parse_err = s != NULL ? parse(s) : 0;
	errno = e;
}

int
ult__fault_setup(void)
{
	pthread_once(&parse_once, parse_env);
	return (parse_err);
}

int
ult__fault(int kind)
{
	long n = ULT_LD(&fail_at[kind]);

	/* Relaxed: a count, nothing else is published through it. */
	if (n == 0 || ULT_ADD(&seen[kind], 1) + 1 != n)
		return (0);
	ULT_ADD(&injected, 1);
	return (1);
}

long
ult__fault_injected(void)
{
	return (ULT_LD(&injected));
}

#else

int
ult__fault_setup(void)
{
	return (0);
}

long
ult__fault_injected(void)
{
	return (0);
}

#endif
