# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the real-program tests: <test>.sh <ult-run> <mcclient>.
#   need TOOL          skip (exit 77) when TOOL is not installed
#   on CFG CMD...      run CMD natively (CFG "native") or under ult-run
#                      (CFG "POLICY-NCPU", e.g. "4bsd-2"), stopped after
#                      $limit seconds with the stacks of every thread
#                      printed, so that a hang is a failure with evidence
#   fail MSG           print MSG and exit 1
# The configurations every test goes through: $configs.
set -u
ultrun=$1
mcclient=${2:-}
limit=${ULT_PROGRAMS_LIMIT:-50}
configs=${ULT_PROGRAMS_CONFIGS-"ule-2 4bsd-2 ule-4 4bsd-4"}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ult-programs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "skipped: $1 not installed"
	exit 77
}

fail() {
	echo "FAIL: $*"
	exit 1
}

# The command line CFG stands for, in $cmd_prefix.
prefix() {
	case $1 in
	native) cmd_prefix="" ;;
	*-*) cmd_prefix="$ultrun --policy ${1%-*} --ncpu ${1#*-} --" ;;
	*) fail "bad configuration '$1'" ;;
	esac
}

# Print the stacks of PID and of its descendants (ult-run may fork).
stacks() {
	for p in $1 $(pgrep -P "$1" 2>/dev/null); do
		echo "--- stacks of pid $p: $(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)"
		if command -v gdb >/dev/null 2>&1; then
			gdb -q -batch -p "$p" -ex 'info threads' \
			    -ex 'thread apply all bt' 2>&1 | grep -v '^\[New LWP'
		else
			cat /proc/$p/task/*/stack 2>/dev/null
		fi
	done
}

# watch PID SECS WHY: a watchdog that, when PID still runs after SECS
# seconds, prints WHY and the stacks and kills it; unwatch ends it.  Its
# sleeps hold no output open, so CTest does not wait for them.
watch() {
	(
		i=0
		while [ $i -lt "$2" ] && kill -0 "$1" 2>/dev/null; do
			sleep 1 </dev/null >/dev/null 2>&1
			i=$((i + 1))
		done
		if kill -0 "$1" 2>/dev/null; then
			echo "HANG: $3" >&2
			stacks "$1" >&2
			pkill -KILL -P "$1" 2>/dev/null
			kill -KILL "$1" 2>/dev/null
		fi
	) &
	dog=$!
}

unwatch() {
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
}

# on CFG CMD...: the exit status of CMD in $rc (137 when the watchdog
# killed it).
on() {
	prefix "$1"
	shift
	# shellcheck disable=SC2086
	$cmd_prefix "$@" &
	pid=$!
	watch "$pid" "$limit" "still running after $limit s: $cmd_prefix $*"
	wait "$pid"
	rc=$?
	unwatch
	return $rc
}

# gen FILE: about 9 MiB of compressible, deterministic text.
gen() {
	seq 1 500000 | awk '{ print $1, $1 * 7 % 1000, "line", $1 % 97 }' >"$1"
}
