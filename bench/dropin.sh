#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Unmodified Debian programs on kernel threads and under ult-run:
#   bench/dropin.sh <build-dir> [--quick]
# Experiment dropin, runtimes pthread (the program as it is: kernel
# threads, the baseline), ult (ult-run --policy ule) and ult-4bsd
# (ult-run --policy 4bsd), on every CPU.  Cases:
#   threads_T=T   sysbench threads (1000 x lock one of 8 mutexes, yield,
#                 unlock per event), events/s
#   mutex_T=T     sysbench mutex (--mutex-num=64), events/s (one event
#                 per thread: T / total time)
#   pigz          pigz -p 8 -c of a generated text file, real_s
#   xz            xz -T4 -3 --block-size=1MiB -c of the same, real_s
#   zstd          zstd -T4 -12 -B1048576 -c of the same, real_s
#   memcached_<layout>_hogs=H
#                 memcached -t 4 under mcclient's latency mode (set+get
#                 pairs on several connections, each request timed),
#                 req/s, p50_us, p99_us, max_us, with their spread over
#                 the rounds (<metric>:min, <metric>:max, runs).
#                 Layout iso: memcached (and ult-run's workers) on the
#                 first half of the CPUs, mcclient on the rest (taskset;
#                 on 2 CPUs CPU 0 and CPU 1), H = 0 or 2 spinning
#                 processes at nice +10 on the server's CPUs; skipped on
#                 one CPU.  Layout shared: no pinning, H = 0 or one
#                 spinning process per CPU at nice 0.
# The runtimes take turns within every round (rounds: 3, quick 1) and
# each figure is the median of its rounds, so the ratios compare runs
# made side by side.  Compressed outputs are checked against the native
# ones, memcached's replies by mcclient; a failure goes to stderr and
# the exit status, and the rest still runs.
set -u
build=${1:-build/release}
quick="" && [ "${2:-}" = --quick ] && quick=1
ultrun=$build/ult-run
bw_mcclient=$build/test/programs/mcclient
bw_here=$(cd "$(dirname "$0")" && pwd)
runtimes="pthread ult ult-4bsd"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ult-dropin.XXXXXX")
bw_tmp=$tmp
. "$bw_here/lib.sh"
trap 'bw_spin_stop; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
raw=$tmp/raw
: >"$raw"
failed=""

say() { printf '%s\n' "$*" >&2; }
problem() {
	say "dropin: FAILED: $*"
	failed=1
}

if [ -n "$quick" ]; then
	rounds=1 secs=1 locks=2000 lines=500000 conns=4 reqs=1000
else
	rounds=3 secs=2 locks=10000 lines=2000000 conns=8 reqs=5000
fi

# The command prefix of a runtime, in $pre.
prefix() {
	case $1 in
	pthread) pre="" ;;
	ult) pre="$ultrun --policy ule --" ;;
	ult-4bsd) pre="$ultrun --policy 4bsd --" ;;
	esac
}

now() { date +%s.%N; }

# A program that hangs under ult-run must not stop the suite.
lim() {
	s=$1
	shift
	timeout -k 5 "$s" "$@"
}

if [ ! -x "$ultrun" ]; then
	say "skip: ult ult-4bsd (no ult-run in $build)"
	exit 0
fi
if ! "$ultrun" -- true; then
	problem "ult-run cannot run true: $ultrun -- true"
	exit 1
fi

# sysbench: the parameters of bench/run.sh's sysbench_threads.
sb() { # sb <runtime> threads|mutex <T>
	prefix "$1"
	case $2 in
	threads) set -- "$@" --thread-yields=1000 --thread-locks=8 --time=$secs ;;
	mutex) set -- "$@" --mutex-num=64 --mutex-locks=$locks ;;
	esac
	rt=$1 what=$2 t=$3
	shift 3
	# shellcheck disable=SC2086
	if ! lim 120 $pre sysbench $what --threads=$t "$@" run >"$tmp/sb" 2>&1; then
		problem "$rt: sysbench $what --threads=$t $*: $(tail -3 "$tmp/sb")"
		return
	fi
	awk -v c="${what}_T=$t" -v rt="$rt" '
		/total time:/ { tt = $3 + 0 }
		/total number of events:/ { ev = $5 }
		END {
			if (tt == 0 || ev == "") exit 1
			printf "R\tdropin\t%s\t%s\tevents/s\t%.1f\n", c, rt, ev / tt
		}' "$tmp/sb" >>"$raw" ||
	    problem "$rt: sysbench $what --threads=$t: no result"
}

# zip <runtime> pigz|xz|zstd: wall time of one compression, output checked.
zip() {
	prefix "$1"
	case $2 in
	pigz) set -- "$1" pigz -p 8 -c ;;
	xz) set -- "$1" xz -T4 -3 --block-size=1MiB -c ;;
	zstd) set -- "$1" zstd -q -T4 -12 -B1048576 -c ;;
	esac
	rt=$1 prog=$2
	shift
	t0=$(now)
	# shellcheck disable=SC2086
	if ! lim 300 $pre "$@" "$tmp/in" >"$tmp/out.$prog"; then
		problem "$rt: $* <file>: exit status"
		return
	fi
	t1=$(now)
	if [ "$rt" = pthread ] && [ ! -f "$tmp/ref.$prog" ]; then
		mv "$tmp/out.$prog" "$tmp/ref.$prog"
	elif ! cmp -s "$tmp/out.$prog" "$tmp/ref.$prog"; then
		problem "$rt: $*: output differs from the native one"
		return
	fi
	echo "$t0 $t1" | awk -v rt="$rt" -v c="$prog" \
	    '{ printf "R\tdropin\t%s\t%s\treal_s\t%.3f\n", c, rt, $2 - $1 }' >>"$raw"
}

# mc <runtime> <case> [<server cpus> <client cpus>]: memcached -t 4
# under the runtime, mcclient native (bw_mc).
mc() {
	prefix "$1"
	bw_mc dropin "$2" "$1" "$pre" "${3:-}" "${4:-}" $conns $reqs >>"$raw" ||
	    problem "$1: memcached $2"
}

have() {
	command -v "$1" >/dev/null 2>&1 && return 0
	say "skip: $1 (not installed)"
	return 1
}

ncpu=$(nproc)
say "dropin: $rounds round(s), runtimes $runtimes taking turns, $ncpu CPUs"
if have sysbench; then
	for r in $(seq $rounds); do
		for what in threads mutex; do
			for t in 1 2 8 64; do
				for rt in $runtimes; do
					sb $rt $what $t
				done
			done
		done
	done
fi
seq 1 $lines | awk '{ print $1, $1 * 7 % 1000, "line", $1 % 97 }' >"$tmp/in"
say "dropin: compressing $(($(wc -c <"$tmp/in") / 1048576)) MiB of text"
for prog in pigz xz zstd; do
	have $prog || continue
	for r in $(seq $rounds); do
		for rt in $runtimes; do
			zip $rt $prog
		done
	done
done
if have memcached && [ -x "$bw_mcclient" ]; then
	if bw_split; then
		say "dropin: memcached on CPU $srv_cpus, mcclient on CPU" \
		    "$cli_cpus"
		for h in 0 2; do
			[ $h -gt 0 ] && bw_spin_start $h "$srv_cpus" 10
			for r in $(seq $rounds); do
				for rt in $runtimes; do
					mc $rt "memcached_iso_hogs=$h" \
					    "$srv_cpus" "$cli_cpus"
				done
			done
			bw_spin_stop || problem "spinners left behind"
		done
	else
		say "skip: memcached iso layout (one CPU: none for mcclient)"
	fi
	for h in 0 $ncpu; do
		[ $h -gt 0 ] && bw_spin_start $h
		for r in $(seq $rounds); do
			for rt in $runtimes; do
				mc $rt "memcached_shared_hogs=$h"
			done
		done
		bw_spin_stop || problem "spinners left behind"
	done
elif [ ! -x "$bw_mcclient" ]; then
	say "skip: memcached (no mcclient in $build/test/programs)"
fi

# The median of each figure's rounds, in the order of first appearance;
# memcached's with their spread.
bw_rounds '^memcached_' <"$raw" || problem "malformed figures"
[ -z "$failed" ]
