#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The USDT probes: every one is in the library's notes (provider "ult");
# where perf is installed and may attach (root), a traced run of a ult
# program records the switch probe's hits with their arguments.
#   usdt.sh LIBULT_SO HAVE_SDT_H PROGRAM
set -eu
lib=$1 have=$2 prog=$3
if [ "$have" != 1 ]; then
	echo "skipped: built without <sys/sdt.h> (Debian: systemtap-sdt-dev)"
	exit 77
fi
notes=$(readelf -n "$lib")
for p in switch wakeup spawn exit sleep migrate steal push preempt_sent \
    preempt preempt_owed preempt_deferred preempt_forced lock_contended \
    handoff; do
	printf '%s\n' "$notes" | grep -q "Name: $p\$" || {
		echo "usdt: no probe ult:$p in $lib"; exit 1; }
done
printf '%s\n' "$notes" | grep -q "Provider: ult" || { echo "usdt: no provider ult"; exit 1; }
if ! command -v perf >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
	echo "usdt: notes ok; perf not installed or not root: attach not tested"
	exit 0
fi
out=$(mktemp -d)
cleanup() { perf probe -d 'sdt_ult:*' >/dev/null 2>&1 || :; rm -rf "$out"; }
trap cleanup EXIT
real=$(readlink -f "$lib")
if ! perf buildid-cache --add "$real" >/dev/null 2>&1 ||
    ! perf probe -x "$real" -a sdt_ult:switch >/dev/null 2>&1; then
	echo "usdt: notes ok; perf could not place the probe here: attach not tested"
	exit 0
fi
perf record -q -e sdt_ult:switch -o "$out/data" "$prog" quick >/dev/null 2>&1 || {
	echo "usdt: notes ok; perf record refused here: attach not tested"; exit 0; }
perf script -i "$out/data" > "$out/script" 2>/dev/null || :
hits=$(grep -c 'sdt_ult:switch: .* arg1=' "$out/script" || :)
# The program's three uthreads each start with a switch to them: their
# ids are 1, 2 and 3 (arg2, the thread switched to).
[ "$hits" -ge 3 ] || { echo "usdt: only $hits switch hits recorded"; exit 1; }
for id in 1 2 3; do
	grep -q "sdt_ult:switch: .* arg2=$id " "$out/script" || {
		echo "usdt: no switch to uthread $id recorded"; exit 1; }
done
echo "usdt: ok ($hits switch hits)"
