/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Walking the subsystem descriptors (subsys.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../util/kassert.h"
#include "subsys.h"

int
ult__subsys_configure(const struct ult__subsys *const *s, int n,
    const struct ult_config *cfg)
{
	int err;

	for (int i = 0; i < n; i++)
		if (s[i]->configure != NULL &&
		    (err = s[i]->configure(cfg)) != 0)
			return (err);
	return (0);
}

void
ult__subsys_stop(const struct ult__subsys *const *s, int n)
{
	while (n-- > 0)
		if (s[n]->fini != NULL)
			s[n]->fini();
}

void
ult__subsys_fork_child(const struct ult__subsys *const *s, int n)
{
	while (n-- > 0)
		if (s[n]->fork_child != NULL)
			s[n]->fork_child();
}

int
ult__subsys_start(const struct ult__subsys *const *s, int n)
{
	int err;

	for (int i = 0; i < n; i++) {
		ULT_KASSERT(s[i]->name != NULL, "ult__subsys_start: unnamed");
		if (s[i]->init != NULL && (err = s[i]->init()) != 0) {
			ult__subsys_stop(s, i);
			return (err);
		}
	}
	return (0);
}

const struct sched_tunable *
ult__tunable_find(const struct sched_tunable *t, const char *name)
{
	for (; t != NULL && t->name != NULL; t++)
		if (strcmp(t->name, name) == 0)
			return (t);
	return (NULL);
}

const struct sched_tunable *
ult__subsys_tunable(const struct ult__subsys *const *s, int n, const char *name)
{
	const struct sched_tunable *t;

	for (int i = 0; i < n; i++)
		if ((t = ult__tunable_find(s[i]->tunables, name)) != NULL)
			return (t);
	return (NULL);
}

int
ult__env_long(const char *var, long *out)
{
	const char *s = getenv(var);
	char *end;

	if (s == NULL || *s == '\0')
		return (1);
	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	return (0);
}
