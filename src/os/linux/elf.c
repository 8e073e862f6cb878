/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PLT sections of a loaded ELF object.  When libult.a is linked into a
 * program, the runtime's calls into libc (sched_yield, syscall, memcpy,
 * the clock) jump through the program's own PLT stubs, which lie in its
 * executable segment next to the user's code.  A preemption signal that
 * lands on such a stub interrupts runtime code that may hold its locks or
 * run on a worker's scratch stack, so the preemption filter must know the
 * stubs are not user text.  Segments (what dl_iterate_phdr gives) do not
 * say where they are; the section headers of the file do.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os.h"

static int
read_at(int fd, void *buf, size_t len, off_t off)
{
	return (pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1);
}

static int
is_plt(const char *name)
{
	/* .plt, .plt.got, .plt.sec, .iplt: all stubs that jump through a
	 * GOT slot. */
	return (strncmp(name, ".plt", 4) == 0 || strcmp(name, ".iplt") == 0);
}

int
ult__os_plt_ranges(const char *path, uintptr_t bias, uintptr_t (*out)[2],
    int max)
{
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL;
	char *names = NULL;
	int fd, n = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (-1);
	if (read_at(fd, &eh, sizeof(eh), 0) != 0 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_shentsize != sizeof(*sh) || eh.e_shstrndx >= eh.e_shnum ||
	    (sh = calloc(eh.e_shnum, sizeof(*sh))) == NULL ||
	    read_at(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) != 0 ||
	    (names = calloc(1, sh[eh.e_shstrndx].sh_size + 1)) == NULL ||
	    read_at(fd, names, sh[eh.e_shstrndx].sh_size,
		(off_t)sh[eh.e_shstrndx].sh_offset) != 0) {
		n = -1;
		goto out;
	}
	for (int i = 0; i < eh.e_shnum && n < max; i++) {
		if (!(sh[i].sh_flags & SHF_EXECINSTR) ||
		    sh[i].sh_name >= sh[eh.e_shstrndx].sh_size ||
		    !is_plt(names + sh[i].sh_name))
			continue;
		out[n][0] = bias + sh[i].sh_addr;
		out[n][1] = out[n][0] + sh[i].sh_size;
		n++;
	}
out:
	free(names);
	free(sh);
	close(fd);
	return (n);
}
