/* SPDX-License-Identifier: BSD-2-Clause */
// ult.h from C++: it must compile with -Wall -Wextra -pedantic -Werror,
// and the structs whose names are also functions' must be nameable
// through their typedefs.  Built only where a C++ compiler exists.
#include <ult.h>

#include <cerrno>
#include <cstdio>

int
main()
{
	ult_cpu_info_t ci;
	ult_thread_info_t ti;
	ult_attr_t a;
	ult_config_t c = {};
	ult_mutex_t m = ULT_MUTEX_INITIALIZER;
	ult_cond_t cv = ULT_COND_INITIALIZER;
	ult_rwlock_t rw = ULT_RWLOCK_INITIALIZER;
	ult_once_t o = ULT_ONCE_INIT;

	ult_attr_init(&a);
	c.ncpu = 1;
	(void)cv;
	(void)rw;
	(void)o;
	if (ult_cpu_info(0, &ci) != ENXIO || ult_thread_info(NULL, &ti) != ENXIO)
		return (1);
	if (ult_mutex_lock(&m) != 0 || ult_mutex_unlock(&m) != 0)
		return (2);
	if (ult_init(&c) != 0 || ult_cpu_info(0, &ci) != 0 || ci.cpu != 0)
		return (3);
	if (ult_shutdown() != 0)
		return (4);
	std::puts("ok cxx_header");
	return (0);
}
