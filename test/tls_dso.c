/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A library with thread-local data that rt_tls.c loads with dlopen after
 * uthreads exist: its TLS is dynamic (general-dynamic model), allocated
 * in each thread the first time that thread touches it.  Built a second
 * time with TLS descriptors (-mtls-dialect=gnu2) and a small buffer,
 * which glibc places in the static TLS surplus instead.
 */
#ifndef TLS_DSO_BUF
#define TLS_DSO_BUF 4096
#endif

int *tls_dso_value_addr(void);
char *tls_dso_buf_addr(void);

__thread int tls_dso_value = 5;
__thread char tls_dso_buf[TLS_DSO_BUF];

int *
tls_dso_value_addr(void)
{
	return (&tls_dso_value);
}

char *
tls_dso_buf_addr(void)
{
	return (tls_dso_buf);
}
