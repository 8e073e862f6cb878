#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# sh compare.sh ULT_RUN PROGRAM
#
# Runs a conformance program natively, under ULT_RUN with ULE on 2
# workers, and under ULT_RUN with 4BSD on 4 workers (more workers than
# this machine's CPUs on purpose).  Succeeds only if all three exit 0 and
# print the same stdout; otherwise says which run differed and how.
# With ULT_EMU set (a cross build's tests under qemu-user) every run is
# emulated (ultrun.sh); ULT_TEST_TMO, if set, replaces the 60 s limit.
# ULT_COMPARE_RUNS, if set, replaces the two ult-run runs with its list of
# POLICY:WORKERS (e.g. "ule:1 4bsd:4").
set -u

if [ $# -ne 2 ]; then
	echo "usage: sh compare.sh ULT_RUN PROGRAM" >&2
	exit 2
fi
ult_run=$1
prog=$2
tmo=${ULT_TEST_TMO:-60}
. "$(dirname "$0")/ultrun.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dropin-compare.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' HUP INT TERM

# run NAME COMMAND...: stdout, stderr and exit status into $tmp/NAME.*
run() {
	name=$1
	shift
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null
	echo $? >"$tmp/$name.rc"
}

# report NAME LABEL: 0 if the run exited 0, else say how it ended.
report() {
	rc=$(cat "$tmp/$1.rc")
	[ "$rc" -eq 0 ] && return 0
	if [ "$rc" -eq 124 ]; then
		echo "$2: timed out ($tmo s)"
	elif [ "$rc" -eq 137 ]; then
		echo "$2: killed by SIGKILL (timed out, SIGTERM ignored?)"
	elif [ "$rc" -gt 128 ]; then
		echo "$2: killed by signal $((rc - 128))"
	else
		echo "$2: exit status $rc"
	fi
	if [ "$rc" -eq 127 ] && grep -q 'ult-run:' "$tmp/$1.err"; then
		echo "$2: ult-run says:"
		grep 'ult-run:' "$tmp/$1.err" | sed 's/^/  /'
	elif [ -s "$tmp/$1.err" ]; then
		echo "$2: stderr:"
		head -n 40 "$tmp/$1.err" | sed 's/^/  /'
	fi
	if grep -q '^FAIL' "$tmp/$1.out"; then
		echo "$2: failed checks:"
		grep '^FAIL' "$tmp/$1.out" | sed 's/^/  /'
	fi
	if [ -s "$tmp/$1.out" ]; then
		echo "$2: last lines of stdout:"
		tail -n 5 "$tmp/$1.out" | sed 's/^/  /'
	fi
	return 1
}

run native timeout -k 5 "$tmo" ${ULT_EMU:-} "$prog"
# --stats: its closing line shows the drop-in was loaded and ran the
# program on the runtime asked for (a run that silently fell back to
# glibc's threads would print the same transcript).
runs=${ULT_COMPARE_RUNS:-ule:2 4bsd:4}
for r in $runs; do
	run "${r%%:*}${r#*:}" ultrun --ncpu "${r#*:}" --policy "${r%%:*}" \
	    --stats -- "$prog"
done

status=0
report native "native" || status=1
for r in $runs; do
	name=${r%%:*}${r#*:}
	label="ult-run --ncpu ${r#*:} --policy ${r%%:*}"
	report "$name" "$label" || status=1
	case ${r%%:*} in
	ule) want="ult-run: ULE, ${r#*:} worker" ;;
	*) want="ult-run: 4BSD, ${r#*:} worker" ;;
	esac
	if ! grep -q "^$want" "$tmp/$name.err"; then
		echo "$label: no '$want' line on stderr: the drop-in did not run"
		status=1
	fi
	if [ ! -s "$tmp/$name.out" ]; then
		echo "$label: no stdout at all"
		status=1
	elif ! cmp -s "$tmp/native.out" "$tmp/$name.out"; then
		echo "$label: stdout differs from the native run:"
		diff -u --label native --label "$label" "$tmp/native.out" \
		    "$tmp/$name.out"
		status=1
	fi
done
if [ $status -eq 0 ]; then
	echo "$(basename "$prog"): native and ult-run ($runs) agree" \
	    "($(wc -l <"$tmp/native.out") lines)"
fi
exit $status
