/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A malloc that takes a pthread mutex, as jemalloc's does: under ult-run
 * its first call (here, in the loader or libc, before main) starts the
 * runtime, whose own start allocates and so comes back into this malloc,
 * in the thread that is starting it and in the thread the start creates
 * to probe TLS.  The program must reach main and run threads as usual.
 */
#include "conf.h"

#include <stdint.h>

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long nlocked;

void *
malloc(size_t n)
{
	void *p;

	pthread_mutex_lock(&heap_lock);
	nlocked++;
	p = __libc_malloc(n);
	pthread_mutex_unlock(&heap_lock);
	return (p);
}

void *
calloc(size_t k, size_t n)
{
	void *p;

	pthread_mutex_lock(&heap_lock);
	nlocked++;
	p = __libc_calloc(k, n);
	pthread_mutex_unlock(&heap_lock);
	return (p);
}

void *
realloc(void *q, size_t n)
{
	void *p;

	pthread_mutex_lock(&heap_lock);
	nlocked++;
	p = __libc_realloc(q, n);
	pthread_mutex_unlock(&heap_lock);
	return (p);
}

void
free(void *p)
{
	pthread_mutex_lock(&heap_lock);
	__libc_free(p);
	pthread_mutex_unlock(&heap_lock);
}

static void *
churn(void *arg)
{
	for (int i = 0; i < 1000; i++)
		free(malloc((size_t)(i % 200) + 1));
	return (arg);
}

int
main(void)
{
	pthread_t t[4];
	int ok = 1;

	conf_begin("malloc_lock");
	conf_ok("main reached", 1);
	for (int i = 0; i < 4; i++)
		conf_create(&t[i], NULL, churn, &t[i]);
	for (int i = 0; i < 4; i++)
		ok &= conf_join(t[i]) == &t[i];
	conf_ok("threads allocating through the locked malloc", ok);
	conf_ok("the malloc was used", nlocked > 0);
	return (conf_end());
}
