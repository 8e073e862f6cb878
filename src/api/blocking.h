/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The helper threads of ult_blocking (blocking.c).
 */
#ifndef ULT_API_BLOCKING_H
#define ULT_API_BLOCKING_H

#include "../util/atomic.h"

/* blocking.c: stop the idle helpers (at shutdown). */
void ult__blocking_fini(void);
extern atomic_int ult__blocking_max, ult__blocking_idle_ms;
long ult__blocking_threads(void);
/* ult_blocking for a job that must not queue behind busy helpers. */
int ult__blocking_unbounded(void *(*fn)(void *), void *arg, void **ret);

struct ult__subsys;
extern const struct ult__subsys ult__blocking_subsys;

#endif
