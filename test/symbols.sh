#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The installed libraries define, as global symbols, the API (ult_ and a
# letter) and the libc lock interposers, and nothing else: no internal
# name (ult__*, mach_*, blocked_lock, a policy's function) may clash with
# a program's.  libult.a also has ult__static_libc, the member that
# -Wl,-u,ult__static_libc pulls into static executables.
#   symbols.sh libult.a libult.so
set -eu
api='ult_[a-z][a-z0-9_]*'
locks='pthread_(mutex|rwlock|spin)_[a-z]+|mtx_(lock|trylock|timedlock|unlock)|f(try|un)?lockfile|sigaltstack|dlm?open|pthread_create'
fail=0
check() {
	what=$1 allowed=$2
	shift 2
	syms=$(nm "$@" | awk 'NF == 3 { print $3 }' | sed 's/@.*//' | sort -u)
	if ! echo "$syms" | grep -qx 'ult_init'; then
		echo "$what: ult_init is missing"; fail=1
	fi
	extra=$(echo "$syms" | grep -Evx "$allowed" || true)
	if [ -n "$extra" ]; then
		echo "$what exports symbols outside the API:"; echo "$extra"; fail=1
	fi
}
check "$1" "$api|$locks|ult__static_libc" -g --defined-only "$1"
check "$2" "$api|$locks" -D --defined-only "$2"
[ $fail -eq 0 ] && echo "ok: only the API and the lock interposers"
exit $fail
