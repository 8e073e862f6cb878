#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# busy: the same programs on a quiet host, on a busy one and on an
# oversubscribed one, each against its peers in the same run.
#
#   bench/busy.sh <build-dir> [--quick] [--go GO-PEER]   (bench/run.sh)
#
# Programs (runtimes; metrics):
#   pipeline_main    bench/pipeline --feed main: stages of uthreads or
#   pipeline_thread  kernel threads joined by bounded queues, fed from
#                    main or from a thread (ult, pthread; s, and for ult
#                    switches, steals and migrations per item)
#   httpd            examples/httpd against bench/serve_pthread under
#                    wrk -t2 -c64, one worker per CPU (ult, pthread;
#                    req/s, p99_us)
#   memcached        memcached -t 4 under ult-run --policy ule and
#                    natively, bench's mcclient timing set+get pairs
#                    (ult, pthread; req/s, p99_us)
#   create_join, mutex_handoff, condvar_prodcons, thread_ring
#                    micro's all-worker cases, sizes divided (micro
#                    --div; ult, pthread, and go where the Go peer is
#                    built; ns/op, ns/item)
# Hosts:
#   quiet  nothing else of ours runs
#   spin   one spinning process per CPU at nice 0 beside the program
#   over   three copies of the program at once, beside the spinners;
#          every copy is a sample
# Every (program, host) runs BUSY_RUNS times (default 3), its runtimes
# taking turns within a run.  Result lines: experiment busy, case
# <program>:<host>, the median of the samples, and <metric>:min,
# <metric>:max and runs (bench/rounds.awk), so the report shows the
# spread.  The spinners of a host are one process group that is ended,
# and checked with ps to be gone, before the next host; a failed
# program or a spinner left behind fails the script (exit 1) and the
# rest still runs.  What is not there (the pipeline program, wrk,
# memcached, the Go peer) is a skip line.
set -u
build=${1:?usage: busy.sh <build-dir> [--quick] [--go GO-PEER]}
shift
quick="" gopeer=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--go) gopeer=${2:-} && shift ;;
	*)
		echo "usage: busy.sh <build-dir> [--quick] [--go GO-PEER]" >&2
		exit 2
		;;
	esac
	shift
done
bw_here=$(cd "$(dirname "$0")" && pwd)
bw_tmp=$(mktemp -d "${TMPDIR:-/tmp}/ult-busy.XXXXXX")
bw_mcclient=$build/test/programs/mcclient
ultrun=$build/ult-run
b=$build/bench
ncpu=$(nproc)
runs=${BUSY_RUNS:-3}
# Sizes: a quiet run of each program takes about a second (quick: a
# tenth), so that the copies of the oversubscribed host overlap.
if [ -n "$quick" ]; then
	items=${BUSY_ITEMS:-20000} wsecs=1 mreqs=500 div=200
else
	items=${BUSY_ITEMS:-200000} wsecs=2 mreqs=2000 div=20
fi
mcases="create_join mutex_handoff condvar_prodcons thread_ring"
failed="" copies="" bw_spid=""

say() { printf 'busy: %s\n' "$*" >&2; }
. "$bw_here/lib.sh"
cleanup() {
	# shellcheck disable=SC2086
	[ -n "$copies" ] && kill $copies 2>/dev/null
	wait 2>/dev/null
	bw_spin_stop
	rm -rf "$bw_tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
raw=$bw_tmp/raw
: >"$raw"

# What runs, and who: "program:runner,runner".
progs=""
if [ -x "$b/pipeline" ]; then
	progs="pipeline_main:ult,pthread pipeline_thread:ult,pthread"
else
	echo "skip: pipeline (bench/pipeline is not built)" >&2
fi
if command -v wrk >/dev/null 2>&1; then
	progs="$progs httpd:ult,pthread"
else
	echo "skip: httpd (wrk not installed)" >&2
fi
if ! command -v memcached >/dev/null 2>&1; then
	echo "skip: memcached (not installed)" >&2
elif [ ! -x "$ultrun" ] || [ ! -x "$bw_mcclient" ]; then
	echo "skip: memcached (no ult-run or mcclient in $build)" >&2
else
	progs="$progs memcached:ult,pthread"
fi
if [ -n "$gopeer" ] && [ -x "$gopeer" ]; then
	progs="$progs micro:micro,go"
else
	echo "skip: go (no Go peer built)" >&2
	progs="$progs micro:micro"
fi

# A server's life is bounded, should this script be killed mid-run.
life="timeout -s KILL 900"
# A server that answers nothing for a whole run is a figure (0 req/s).
BW_WRK_ZERO_OK=1

# sample <program> <runner> <copy>: one copy's result lines, experiment
# busy, case <program>.
sample() {
	trap 'bw_stop; exit 1' TERM
	case $1 in
	pipeline_*)
		"$b/pipeline" --impl "$2" --feed "${1#pipeline_}" \
		    --items "$items" >"$bw_tmp/pl.$3" || return 1
		# One line: pipeline impl=.. feed=.. items=N seconds=S
		# switches=.. steals=.. migrations=..
		tr ' ' '\n' <"$bw_tmp/pl.$3" | awk -F= -v cs="$1" -v rt="$2" '
			NF == 2 { v[$1] = $2 }
			END {
				if (v["seconds"] == "" || v["items"] + 0 <= 0) {
					print "busy: no seconds= or items= in " \
					    "the pipeline line" >"/dev/stderr"
					exit 1
				}
				pre = "R\tbusy\t" cs "\t" rt "\t"
				print pre "s\t" v["seconds"]
				if (rt != "ult")
					exit
				split("switches steals migrations", m, " ")
				for (i = 1; i <= 3; i++)
					if (v[m[i]] ~ /^[0-9]+$/)
						printf "%s%s/item\t%.3f\n", pre, m[i],
						    v[m[i]] / v["items"]
			}'
		;;
	httpd)
		srv="$build/bench/serve_pthread"
		[ "$2" = ult ] && srv="$build/examples/httpd --workers $ncpu"
		# shellcheck disable=SC2086
		bw_start "httpd.$2.$3" $life $srv --port 0 || return 1
		bw_wrk busy httpd "$2" "" 2 64 "$wsecs" 0 >"$bw_tmp/w.$3"
		rc=$?
		bw_stop
		[ $rc -eq 0 ] || return 1
		awk -F'\t' '$5 == "req/s" || $5 == "p99_us"' "$bw_tmp/w.$3"
		;;
	memcached)
		pre="" && [ "$2" = ult ] && pre="$ultrun --policy ule --"
		bw_mc busy memcached "$2" "$pre" "" "" 8 "$mreqs" \
		    >"$bw_tmp/m.$3" || return 1
		awk -F'\t' '$5 == "req/s" || $5 == "p99_us"' "$bw_tmp/m.$3"
		;;
	micro)
		# shellcheck disable=SC2086
		case $2 in
		micro) "$b/micro" --rounds 1 --div "$div" $mcases ;;
		go) "$gopeer" -exp micro -rounds 1 -div "$div" \
		    -cases "$(echo $mcases | tr ' ' ,)" ;;
		esac >"$bw_tmp/u.$3" || return 1
		# The all-worker figures only: not _w1, result or futex/op.
		awk -F'\t' -v OFS='\t' -v want=" $mcases " '
			$1 == "R" && index(want, " " $3 " ") &&
			    $5 ~ /^ns\// { $2 = "busy"; print }' "$bw_tmp/u.$3"
		;;
	esac
}

# batch <program> <runner> <host> <copies>: the copies at once, their
# lines into raw with the host in the case.
batch() {
	copies=""
	for c in $(seq "$4"); do
		sample "$1" "$2" "$c" >"$bw_tmp/out.$c" 2>"$bw_tmp/err.$c" &
		copies="$copies $!"
	done
	c=0
	for p in $copies; do
		c=$((c + 1))
		if wait "$p"; then
			awk -F'\t' -v OFS='\t' -v h="$3" \
			    '$1 == "R" { $3 = $3 ":" h; print }' \
			    "$bw_tmp/out.$c" >>"$raw"
		else
			say "FAILED: $1 $2 on the $3 host, copy $c:"
			failed=1
		fi
		sed 's/^/  /' "$bw_tmp/err.$c" >&2
	done
	copies=""
}

say "$runs run(s) per host; $ncpu CPUs; programs:$(echo " $progs" |
    sed 's/:[^ ]*//g')"
for host in quiet spin over; do
	n=1
	[ $host = over ] && n=3
	[ $host != quiet ] && bw_spin_start "$ncpu"
	for pr in $progs; do
		prog=${pr%%:*}
		for r in $(seq "$runs"); do
			for rn in $(echo "${pr#*:}" | tr , ' '); do
				t0=$(date +%s)
				batch "$prog" "$rn" $host $n
				say "$host: $prog $rn, run $r of $runs, $n" \
				    "cop$([ $n -gt 1 ] && echo ies || echo y):" \
				    "$(($(date +%s) - t0)) s"
			done
		done
	done
	bw_spin_stop || failed=1
done
bw_rounds '.' <"$raw" || failed=1
[ -z "$failed" ]
