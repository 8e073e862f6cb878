/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The table of preemptible text: the address ranges where the preemption
 * handler may switch a uthread out (DESIGN.md section 6.1).  They are the
 * executable segments of the main program and of the libraries named by
 * ult_preempt_allow_library(), less their PLT stubs (the runtime, linked
 * into the program, calls libc through them), and the vDSO.  Built with
 * dl_iterate_phdr and the ELF section headers (elf.c); read lock-free by
 * the handler.
 */
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/lock.h"
#include "../../util/mem.h"
#include "os.h"

enum range_kind {
	RANGE_USER, /* the program's or an allowed library's text */
	RANGE_VDSO, /* clock_gettime and friends: safe unless the runtime's */
	RANGE_PLT,  /* call stubs the runtime goes through too: never */
};

struct range {
	uintptr_t lo, hi;
	enum range_kind kind;
};

struct ranges {
	struct ranges *retired; /* older tables, freed at shutdown */
	int n;
	struct range r[];
};

static struct ranges *_Atomic allowed;
static struct mtx ranges_lock = MTX_INITIALIZER("preempt ranges");
static char *allow_names[16];
static int nallow;

#define NRANGES 256

struct build {
	struct range r[NRANGES];
	int n, first, err;
};

/*
 * The runtime linked statically into the program calls libc through the
 * program's PLT stubs (see os/linux/elf.c): they are not user text.  If
 * the file cannot be read, its stubs cannot be told apart, so the whole
 * build fails rather than allow preemption inside the runtime.
 */
static int
plt_exclude(struct build *b, const char *path, uintptr_t bias)
{
	uintptr_t plt[8][2];
	int n = ult__os_plt_ranges(path, bias, plt, 8);

	if (n < 0) {
		b->err = ENOEXEC;
		return (1); /* stop iterating */
	}
	for (int i = 0; i < n && b->n < NRANGES; i++) {
		b->r[b->n].lo = plt[i][0];
		b->r[b->n].hi = plt[i][1];
		b->r[b->n].kind = RANGE_PLT;
		b->n++;
	}
	return (0);
}

static int
lib_allowed(const char *name)
{
	for (int i = 0; i < nallow; i++)
		if (strstr(name, allow_names[i]) != NULL)
			return (1);
	return (0);
}

static int
phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct build *b = arg;
	int main_prog = b->first, vdso;

	(void)size;
	b->first = 0;
	vdso = info->dlpi_name != NULL &&
	    strstr(info->dlpi_name, "linux-vdso") != NULL;
	if (!main_prog && !vdso &&
	    (info->dlpi_name == NULL || !lib_allowed(info->dlpi_name)))
		return (0);
	for (int i = 0; i < info->dlpi_phnum && b->n < NRANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		b->r[b->n].lo = info->dlpi_addr + ph->p_vaddr;
		b->r[b->n].hi = b->r[b->n].lo + ph->p_memsz;
		b->r[b->n].kind = vdso ? RANGE_VDSO : RANGE_USER;
		b->n++;
	}
	if (!vdso)
		return (plt_exclude(b,
		    main_prog ? "/proc/self/exe" : info->dlpi_name,
		    info->dlpi_addr));
	return (0);
}

/* Rebuild the table.  A handler may be reading the old one, so it is
 * retired, not freed, until ult__text_free(). */
int
ult__text_build(void)
{
	struct build *b = ult__calloc(1, sizeof(*b));
	struct ranges *t;

	if (b == NULL)
		return (ENOMEM);
	b->first = 1;
	dl_iterate_phdr(phdr_cb, b);
	if (b->err != 0 || b->n == NRANGES) {
		int err = b->err != 0 ? b->err : E2BIG;

		free(b);
		return (err);
	}
	t = ult__malloc(sizeof(*t) + (size_t)b->n * sizeof(t->r[0]));
	if (t == NULL) {
		free(b);
		return (ENOMEM);
	}
	t->n = b->n;
	memcpy(t->r, b->r, (size_t)b->n * sizeof(t->r[0]));
	free(b);
	mtx_lock_spin(&ranges_lock);
	t->retired = ULT_LD(&allowed);
	ULT_ST_REL(&allowed, t);
	mtx_unlock_spin(&ranges_lock);
	return (0);
}

int
ult__text_preemptible(uintptr_t pc)
{
	struct ranges *t = ULT_LD_ACQ(&allowed);
	int ok = 0;

	if (t == NULL)
		return (0);
	/* A PLT range lies inside its object's text range: look at all. */
	for (int i = 0; i < t->n; i++) {
		if (pc < t->r[i].lo || t->r[i].hi <= pc)
			continue;
		if (t->r[i].kind == RANGE_PLT)
			return (0);
		if (t->r[i].kind == RANGE_VDSO && ult__tls_in_vdso != 0)
			return (0);
		ok = 1;
	}
	return (ok);
}

int
ult__text_allow(const char *name)
{
	char *copy;
	int err = 0;

	mtx_lock_spin(&ranges_lock);
	if (nallow == (int)(sizeof(allow_names) / sizeof(allow_names[0])))
		err = ENOMEM;
	else if ((copy = ult__strdup(name)) == NULL)
		err = ENOMEM;
	else
		allow_names[nallow++] = copy;
	mtx_unlock_spin(&ranges_lock);
	return (err);
}

void
ult__text_free(void)
{
	/* seq_cst: the last reader is gone (the runtime has stopped);
	 * the exchange only takes the list. */
	struct ranges *t = ULT_XCHG_SC(&allowed, NULL);

	while (t != NULL) {
		struct ranges *next = t->retired;

		free(t);
		t = next;
	}
}
