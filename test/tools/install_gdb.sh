#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The gdb extension as a user meets it: install into a fresh prefix, build
# a program against libult.so there, and run gdb as the README says (the
# prefix added to auto-load's safe path and scripts directory); gdb must
# load the extension by itself and list the program's uthreads.  The
# same for a pthread program under the installed libult-pthread.so,
# where the build has it.
#   install_gdb.sh BUILD_DIR
set -eu
build=$1
command -v gdb >/dev/null 2>&1 || { echo "skipped: gdb not installed"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
prefix=$out/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
fail() { echo "FAIL: $*"; sed 's/^/  /' "$out/log"; exit 1; }

# gdb <program> [gdb options...]: run it to its abort, then info uthreads.
rungdb() {
	prog=$1
	shift
	gdb -q -batch -iex "add-auto-load-safe-path $prefix" \
	    -iex "add-auto-load-scripts-directory $prefix/share/gdb/auto-load" \
	    "$@" -ex run -ex "info uthreads" "$prog" >"$out/log" 2>&1 || :
}

cat >"$out/native.c" <<'C'
#include <stdlib.h>
#include <ult.h>

static ult_sem_t sem;

static void *
waiter(void *arg)
{
	(void)arg;
	ult_sem_wait(&sem);
	return (NULL);
}

int
main(void)
{
	ult_attr_t a;
	ult_thread_t *t;

	if (ult_init(NULL) != 0 || ult_sem_init(&sem, 0) != 0)
		return (1);
	ult_attr_init(&a);
	a.name = "gdb-waiter";
	if (ult_spawn(&t, &a, waiter, NULL) != 0)
		return (1);
	ult_sleep_ns(100000000);
	abort();
}
C
cc -g -fstack-clash-protection -I"$prefix/include" "$out/native.c" \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lult -lpthread -o "$out/native"
rungdb "$out/native"
grep -q 'Undefined info command' "$out/log" &&
    fail "libult.so: gdb did not auto-load the extension"
grep -Eq '^ +[0-9]+  gdb-waiter +sleeping .*sem' "$out/log" ||
    fail "libult.so: info uthreads does not list the waiter"
echo "libult.so: the extension auto-loads, info uthreads: ok"

lib=$prefix/lib/libult-pthread.so
if [ ! -f "$lib" ]; then
	echo "no libult-pthread.so in this build: the drop-in half is skipped"
	exit 0
fi
cat >"$out/dropin.c" <<'C'
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <unistd.h>

static sem_t sem;

static void *
waiter(void *arg)
{
	(void)arg;
	sem_wait(&sem);
	return (NULL);
}

int
main(void)
{
	pthread_t t;

	sem_init(&sem, 0, 0);
	if (pthread_create(&t, NULL, waiter, NULL) != 0)
		return (1);
	usleep(100000);
	abort();
}
C
cc -g "$out/dropin.c" -lpthread -o "$out/dropin"
# Not through a shell: the preload would apply to the shell too.
rungdb "$out/dropin" -ex "set startup-with-shell off" \
    -ex "set environment LD_PRELOAD=$lib"
grep -q 'Undefined info command' "$out/log" &&
    fail "libult-pthread.so: gdb did not auto-load the extension"
grep -Eq '^[0-9]+ uthreads' "$out/log" ||
    fail "libult-pthread.so: info uthreads lists nothing"
grep -Eq ' sleeping .*sem' "$out/log" ||
    fail "libult-pthread.so: info uthreads does not show the waiter"
echo "libult-pthread.so: the extension auto-loads, info uthreads: ok"
