/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ult-run: run an unmodified, dynamically linked pthread program with its
 * threads as uthreads (DESIGN.md section 14).
 *   ult-run [--policy ule|4bsd] [--ncpu N] [--stats] [--] program args...
 * It preloads libult-pthread.so (found beside ult-run in a build tree,
 * at the installed library directory otherwise, or at $ULT_RUN_LIB), sets
 * ULT_POLICY and ULT_NCPU, and executes the program.  What the drop-in
 * cannot run is refused here with a reason, exit status 127: a program
 * that is not found, not an ELF executable of this machine, statically
 * linked, or set-user/group-ID (the loader ignores LD_PRELOAD for those).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/arch/elf.h"

#define LIBNAME "libult-pthread.so"

static void __attribute__((noreturn)) die(const char *prog, const char *why)
{
	fprintf(stderr, "ult-run: %s: %s\n", prog, why);
	exit(127);
}

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: ult-run [--policy ule|4bsd] [--ncpu N] [--stats] [--] "
	    "program [args...]\n"
	    "Runs a dynamically linked pthread program with its threads as "
	    "ult uthreads.\n");
	exit(status);
}

/* The program's path as execvp would find it. */
static int
find(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(prog, '/') != NULL) {
		if (snprintf(out, len, "%s", prog) >= (int)len)
			return (ENAMETOOLONG);
		return (access(out, X_OK) == 0 ? 0 : errno);
	}
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p != '\0'; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		int w = end == p
		    ? snprintf(out, len, "./%s", prog)
		    : snprintf(out, len, "%.*s/%s", (int)(end - p), p, prog);

		if (w < (int)len && access(out, X_OK) == 0)
			return (0);
	}
	return (ENOENT);
}

/* Refuse what the drop-in cannot honour; scripts (#!) are let through,
 * their interpreter is checked by the loader like any program. */
static void
check(const char *prog, const char *path)
{
	unsigned char id[EI_NIDENT];
	Elf64_Ehdr eh;
	struct stat st;
	int fd, interp = 0;

	if (stat(path, &st) != 0)
		die(prog, strerror(errno));
	if (st.st_mode & (S_ISUID | S_ISGID))
		die(prog,
		    "set-user-ID or set-group-ID: the loader would "
		    "ignore the drop-in; not running it");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		die(prog, strerror(errno));
	if (pread(fd, id, 2, 0) == 2 && id[0] == '#' && id[1] == '!') {
		close(fd);
		return;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		die(prog, "not an ELF executable");
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != ULT_ELF_MACHINE)
		die(prog, "not an " ULT_ARCH_NAME " executable");
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		off_t off = (off_t)eh.e_phoff + (off_t)i * eh.e_phentsize;

		if (pread(fd, &ph, sizeof(ph), off) != (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			interp = 1;
	}
	close(fd);
	if (!interp)
		die(prog,
		    "statically linked: its threads cannot be "
		    "interposed; not running it");
}

/* The library: $ULT_RUN_LIB, beside this executable, or installed. */
static void
library(char *out, size_t len)
{
	char self[PATH_MAX], *slash;
	ssize_t n;
	const char *env = getenv("ULT_RUN_LIB");

	if (env != NULL) {
		if (snprintf(out, len, "%s", env) >= (int)len ||
		    access(out, R_OK) != 0)
			die(out, "ULT_RUN_LIB names no readable library");
		return;
	}
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		die("/proc/self/exe", strerror(errno));
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if (snprintf(out, len, "%s/" LIBNAME, self) < (int)len &&
	    access(out, R_OK) == 0)
		return;
	if (snprintf(out, len, "%s/%s/" LIBNAME, self, ULT_RUN_BIN_TO_LIB) >=
		(int)len ||
	    access(out, R_OK) != 0)
		die(LIBNAME,
		    "not found beside ult-run nor in its library "
		    "directory (set ULT_RUN_LIB)");
}

int
main(int argc, char **argv)
{
	char path[PATH_MAX], lib[PATH_MAX], *pre;
	const char *old;
	int i, err;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			usage(0);
		if (strcmp(a, "--stats") == 0) {
			setenv("ULT_RUN_STATS", "1", 1);
		} else if (strcmp(a, "--policy") == 0 && i + 1 < argc) {
			const char *p = argv[++i];

			if (strcmp(p, "ule") != 0 && strcmp(p, "4bsd") != 0)
				die(p, "unknown policy (ule or 4bsd)");
			setenv("ULT_POLICY", p, 1);
		} else if (strcmp(a, "--ncpu") == 0 && i + 1 < argc) {
			char *end;
			long n = strtol(argv[++i], &end, 10);

			if (*end != '\0' || n < 1 || n > 256)
				die(argv[i], "--ncpu wants 1..256");
			setenv("ULT_NCPU", argv[i], 1);
		} else if (a[0] == '-') {
			fprintf(stderr, "ult-run: unknown option %s\n", a);
			usage(2);
		} else {
			break;
		}
	}
	if (i >= argc)
		usage(2);
	if ((err = find(argv[i], path, sizeof(path))) != 0)
		die(argv[i], strerror(err));
	check(argv[i], path);
	library(lib, sizeof(lib));
	old = getenv("LD_PRELOAD");
	if (old != NULL && *old != '\0') {
		size_t n = strlen(lib) + strlen(old) + 2;

		if ((pre = malloc(n)) == NULL)
			die("ult-run", strerror(ENOMEM));
		snprintf(pre, n, "%s:%s", lib, old);
	} else {
		pre = lib;
	}
	setenv("LD_PRELOAD", pre, 1);
	execv(path, argv + i);
	die(argv[i], strerror(errno));
}
