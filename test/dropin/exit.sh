#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# How programs end under ult-run (exit.c), and what ult-run refuses.
#   sh exit.sh ULT_RUN EXIT_PROGRAM
# With ULT_EMU set (a cross build under qemu-user) the programs run
# emulated (ultrun.sh), and the cases that need the kernel's view of the
# emulated program (its stack limit, its address-space limit) are skipped.
set -u
ult_run=$1 prog=$2
tmo=60
. "$(dirname "$0")/ultrun.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dropin-exit.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
status=0

# same <args>: status and stdout under ult-run are the native ones.
same() {
	timeout 60 ${ULT_EMU:-} "$prog" "$@" >"$tmp/n.out" 2>&1
	n=$?
	ultrun -- "$prog" "$@" >"$tmp/u.out" 2>&1
	u=$?
	if [ $n != $u ] || ! cmp -s "$tmp/n.out" "$tmp/u.out"; then
		echo "FAIL $*: native status $n '$(cat "$tmp/n.out")'," \
		    "ult-run status $u '$(cat "$tmp/u.out")'"
		status=1
	else
		echo "ok $*: status $u, '$(cat "$tmp/u.out")'"
	fi
}

# same_limited <args>: as same, under ulimit -s $ulimit_s.
same_limited() {
	sh -c "ulimit -s $ulimit_s && exec timeout 60 '$prog' $*" \
	    >"$tmp/n.out" 2>&1
	n=$?
	sh -c "ulimit -s $ulimit_s && exec timeout 60 '$ult_run' -- '$prog' $*" \
	    >"$tmp/u.out" 2>&1
	u=$?
	if [ $n != 0 ] || [ $n != $u ] || ! cmp -s "$tmp/n.out" "$tmp/u.out"; then
		echo "FAIL ulimit -s $ulimit_s, $*: native status $n" \
		    "'$(cat "$tmp/n.out")', ult-run status $u '$(cat "$tmp/u.out")'"
		status=1
	else
		echo "ok ulimit -s $ulimit_s, $*: '$(cat "$tmp/u.out")'"
	fi
}

# refused <what> <command...>: status 127 and a reason naming it.
refused() {
	what=$1
	shift
	"$@" >"$tmp/r.out" 2>&1
	r=$?
	if [ $r != 127 ] || ! grep -q "^ult-run: .*$what" "$tmp/r.out"; then
		echo "FAIL refused $what: status $r, '$(cat "$tmp/r.out")'"
		status=1
	else
		echo "ok refused ($what): $(cat "$tmp/r.out")"
	fi
}

same return 0
same return 3
same return 255
same thread 7
same atexit
same term

# main's stack follows RLIMIT_STACK (64 MiB deep needs more than 8).
if [ -n "${ULT_EMU:-}" ]; then
	echo "stack limit cases skipped: qemu-user sizes the guest's stack itself"
elif sh -c 'ulimit -s unlimited' 2>/dev/null; then
	for lim in unlimited 131072; do
		ulimit_s=$lim
		same_limited deep 64
	done
fi

# A runtime that cannot start ends ult-run with its reason and status
# 127, never a hang.
with() (
	export "$1"
	shift
	ultrun -- "$prog" return 0
)
refused "cannot start the runtime" with ULT_STATS=2
refused "cannot start the runtime" with ULT_STACK_GUARD=0
refused "per-uthread TLS is off" with ULT_TLS=worker
# (Which of the two depends on what the limit lets through first.)
if [ -n "${ULT_EMU:-}" ]; then
	echo "address-space limit case skipped: it would limit qemu-user"
else
	refused "cannot start the runtime\\|per-uthread TLS is off" sh -c "ulimit -v 100000 &&
	    exec timeout 30 '$ult_run' -- '$prog' return 0"
fi

refused "No such file" ultrun -- "$tmp/nonexistent"
printf 'not a program' >"$tmp/text"
chmod +x "$tmp/text"
refused "not an ELF" ultrun -- "$tmp/text"
# A program of another machine (e_machine, at byte 18, made RISC-V's).
cp "$prog" "$tmp/foreign"
printf '\363\000' | dd of="$tmp/foreign" bs=1 seek=18 conv=notrunc 2>/dev/null
refused "not an .* executable" ultrun -- "$tmp/foreign"
refused "unknown policy" ultrun --policy cfs -- "$prog" return 0
refused "1..256" ultrun --ncpu 0 -- "$prog" return 0
cp "$prog" "$tmp/suid"
if chmod u+s "$tmp/suid" 2>/dev/null && [ -u "$tmp/suid" ]; then
	refused "set-user-ID" ultrun -- "$tmp/suid" return 0
fi
# A static executable, where the compiler can make one.
cc=${CC:-cc}
printf 'int main(void) { return 0; }\n' >"$tmp/s.c"
if "$cc" -static -o "$tmp/static" "$tmp/s.c" 2>/dev/null; then
	refused "statically linked" ultrun -- "$tmp/static"
else
	echo "static case skipped: no static libc here"
fi
[ $status = 0 ] && echo "all exit and refusal cases as expected"
exit $status
