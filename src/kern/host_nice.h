/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef ULT_KERN_HOST_NICE_H
#define ULT_KERN_HOST_NICE_H

#include "../util/atomic.h"

struct thread;
struct ult__worker;

/* host_nice.c: ult.host_nice, a worker's host nice follows its uthread. */
extern atomic_int ult__host_nice;
int ult__host_nice_configure(int want);
void ult__host_nice_start(struct ult__worker *w);
int ult__host_nice_of(const struct thread *td);
void ult__host_nice_apply(struct ult__worker *w);
void ult__host_nice_restore(struct ult__worker *w);
long ult__host_nice_get(void);
int ult__host_nice_set(long v);

#endif
