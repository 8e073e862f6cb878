/*
 * Helpers the runtime tests share: start the runtime with a worker count
 * and a preemption setting, snapshot a thread, and whether asynchronous
 * preemption can be in force in this build.
 */
#ifndef ULT_TEST_RT_TEST_H
#define ULT_TEST_RT_TEST_H

#include "test.h"
#include "ult.h"

/* preempt: 0 the default, >0 on, <0 off (as ult_config.preempt). */
static inline void
rt_init(int ncpu, int preempt)
{
	struct ult_config cfg = {0};

	cfg.ncpu = ncpu;
	cfg.preempt = preempt;
	CHECK_EQ(ult_init(&cfg), 0);
}

static inline struct ult_thread_info
rt_info(ult_thread_t *t)
{
	struct ult_thread_info in;

	CHECK_EQ(ult_thread_info(t, &in), 0);
	return (in);
}

/* The sanitizer builds run without asynchronous preemption. */
static inline int
rt_preempt_available(void)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	return (0);
#else
	return (1);
#endif
}

#endif
