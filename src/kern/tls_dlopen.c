/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dlopen and dlmopen, wrapped for per-uthread TLS (DESIGN.md section 10):
 * a module that glibc gives static TLS as it loads it gets its image
 * copied only into glibc's own threads, so after the call every thread
 * block of ours gets it too (os/linux/glibc_tls.c).  Weak definitions, as
 * the lock wrappers (preempt_shim.c): a program's calls reach them, and
 * the drop-in exports them.
 *
 * glibc resolves a bare name against the DT_RUNPATH of the object that
 * called dlopen, which is now this library: when the name is not found,
 * the caller's DT_RUNPATH is tried after the rest ($ORIGIN expanded).
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "../os/linux/glibc_tls.h"
#include "runtime.h"

/* Defined by the linker when this object has a dynamic section; absent
 * in a static (non-PIE) executable, where libc.a's code is reached by
 * its internal names (preempt_static.c pulls them in). */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak));
extern void *__dlopen(const char *, int, void *) __attribute__((weak));
extern void *__dlmopen(Lmid_t, const char *, int, void *) __attribute__((weak));

/* Not in sanitizer builds: the sanitizers intercept it themselves and
 * may call it before instrumented code can run (and per-uthread TLS is
 * off there). */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
static void *_Atomic next_dlopen, *_Atomic next_dlmopen;

static void *
next(void *_Atomic *slot, const char *name)
{
	void *f = ULT_LD_ACQ(slot);

	if (f == NULL && _DYNAMIC != NULL) {
		f = dlsym(RTLD_NEXT, name);
		ULT_ST_REL(slot, f);
	}
	return (f);
}

static void
loaded(void *h)
{
	if (h != NULL && ult__rt.tls)
		ult__glibc_tls_dlopened();
}

/* The caller's DT_RUNPATH, tried for a bare name that was not found. */
static void *
runpath(const char *file, int mode, const void *caller)
{
	void *(*f)(const char *, int) = next(&next_dlopen, "dlopen");
	const ElfW(Dyn) * d;
	struct link_map *lm = NULL;
	const char *strtab = NULL, *rp = NULL, *origin_end;
	char origin[PATH_MAX], path[PATH_MAX];
	Dl_info di;
	void *h = NULL;

	if (f == NULL || file == NULL || strchr(file, '/') != NULL ||
	    dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) == 0 ||
	    lm == NULL || lm->l_ld == NULL)
		return (NULL);
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = (const char *)d->d_un.d_ptr;
		else if (d->d_tag == DT_RUNPATH)
			rp = (const char *)(uintptr_t)d->d_un.d_val;
	}
	if (strtab == NULL || rp == NULL)
		return (NULL);
	/* glibc relocates the dynamic section's addresses in place. */
	if ((uintptr_t)strtab < lm->l_addr)
		strtab += lm->l_addr;
	rp = strtab + (uintptr_t)rp;
	/* $ORIGIN: the directory of the calling object. */
	snprintf(origin, sizeof(origin), "%s",
	    lm->l_name != NULL && lm->l_name[0] != '\0' ? lm->l_name
							: di.dli_fname);
	origin_end = strrchr(origin, '/');
	if (origin_end != NULL)
		origin[origin_end - origin] = '\0';
	while (h == NULL && *rp != '\0') {
		size_t n = strcspn(rp, ":"), o = 0;

		for (size_t i = 0; i < n && o + 1 < sizeof(path); i++) {
			if (strncmp(rp + i, "$ORIGIN", 7) == 0 && i + 7 <= n) {
				o += (size_t)snprintf(path + o,
				    sizeof(path) - o, "%s", origin);
				i += 6;
			} else {
				path[o++] = rp[i];
			}
		}
		if (o > 0 && o + strlen(file) + 2 < sizeof(path)) {
			snprintf(path + o, sizeof(path) - o, "/%s", file);
			h = f(path, mode);
		}
		rp += n + (rp[n] == ':');
	}
	/* dlerror then reports the failure on the name itself. */
	if (h == NULL)
		(void)f(file, mode);
	return (h);
}

__attribute__((weak)) void *
dlopen(const char *file, int mode)
{
	void *(*f)(const char *, int) = next(&next_dlopen, "dlopen");
	void *caller = __builtin_return_address(0), *h;

	if (f != NULL) {
		h = f(file, mode);
		if (h == NULL)
			h = runpath(file, mode, caller);
	} else if (__dlopen != NULL) {
		h = __dlopen(file, mode, caller);
	} else {
		return (NULL);
	}
	loaded(h);
	return (h);
}

__attribute__((weak)) void *
dlmopen(Lmid_t lmid, const char *file, int mode)
{
	void *(*f)(Lmid_t, const char *, int) = next(&next_dlmopen, "dlmopen");
	void *h;

	if (f != NULL)
		h = f(lmid, file, mode);
	else if (__dlmopen != NULL)
		h = __dlmopen(lmid, file, mode, __builtin_return_address(0));
	else
		return (NULL);
	loaded(h);
	return (h);
}
#endif
