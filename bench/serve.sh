#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# serve: an HTTP/1.1 keep-alive server under wrk on loopback, three ways.
#
#   bench/serve.sh <build-dir> [--quick]      (bench/run.sh runs it)
#
# The servers answer alike (one parser and one page, examples/http.c):
#   ult      examples/httpd, a uthread per connection
#   ult-hn   the same with ULT_HOST_NICE=1: a worker running a nice +10
#            uthread is at nice +10 on the host (src/kern/host_nice.c)
#   pthread  bench/serve_pthread, a kernel thread per connection
#   epoll    bench/serve_epoll, one thread running an epoll loop
# Two layouts:
#   iso      the server on the first half of the CPUs (httpd with one
#            worker per CPU of it; on 2 CPUs: CPU 0, one worker) and wrk
#            on the rest (-t one thread per CPU), both with taskset, so
#            that the figures are the server's and not Linux's sharing
#            of the CPUs between wrk and the server.  Skipped on one CPU.
#   shared   no pinning: httpd --workers 2 and wrk -t2 share every CPU,
#            the layout of earlier reports (ult-hn runs only here: alone
#            on its CPUs a worker has no one to yield to).
# Each run is `wrk -c64' for SERVE_SECS (default 3 s; --quick 1 s)
# after a 1 s warm-up (none with --quick), keep-alive, one request at a
# time per connection.  Case <layout>_hogs=0 is the server alone;
# <layout>_hogs=2 adds two CPU-bound threads at nice +10 on the server's
# CPUs: for ult two uthreads inside httpd (--hogs 2), scheduled by ULE
# against the connections; for the kernel servers two spinning processes
# under `nice -n 10', pinned like the server, scheduled by Linux.
# The iso layout runs SERVE_ROUNDS rounds (default 3; --quick 1), the
# servers taking turns within each, the shared one a single round.
#
# Result lines (bench/README.md), experiment serve: req/s, p50_us, p99_us
# and max_us for each case and server, from wrk's own histogram
# (bench/serve.lua prints it exactly), and timeouts: requests that had no
# answer within wrk's 2 s, which its percentiles leave out; the median of
# the rounds, with <metric>:min, <metric>:max and runs (bench/rounds.awk).
# Checked: wrk saw no connect, read or write error and no status other
# than 2xx/3xx, and every run read the same number of bytes per request
# (within 1%); a run that fails a check prints why and no figures, and
# the script exits 1.  Without wrk it prints "skip: wrk (not installed)"
# and exits 0.
set -u
build=${1:?usage: serve.sh <build-dir> [--quick]}
secs=${SERVE_SECS:-3} warm=1 rounds=${SERVE_ROUNDS:-3}
[ "${2:-}" = --quick ] && secs=1 warm=0 rounds=${SERVE_ROUNDS:-1}
conns=64 hogs=2
bw_here=$(cd "$(dirname "$0")" && pwd)
bw_tmp=$(mktemp -d)
failed="" bw_spid="" bw_perreq=""

say() { printf 'serve: %s\n' "$*" >&2; }
. "$bw_here/lib.sh"
cleanup() {
	bw_stop
	bw_spin_stop
	rm -rf "$bw_tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! command -v wrk >/dev/null 2>&1; then
	echo "skip: wrk (not installed)" >&2
	exit 0
fi
for b in "$build/examples/httpd" "$build/bench/serve_pthread" \
    "$build/bench/serve_epoll"; do
	if [ ! -x "$b" ]; then
		say "$b is not built"
		exit 1
	fi
done
raw=$bw_tmp/raw
: >"$raw"

# run <layout> <hogs> <runtime> <server cpus> <client cpus> <wrk threads>
# <httpd workers>: one server, measured once.
run() {
	cs="$1_hogs=$2" pin=$(bw_pin "$4")
	case $3 in
	ult | ult-hn)
		env=""
		[ "$3" = ult-hn ] && env="env ULT_HOST_NICE=1"
		say "$3 $cs (httpd --workers $7 --hogs $2${4:+ on CPU $4})"
		# shellcheck disable=SC2086
		if bw_start "$3" $pin $env "$build/examples/httpd" --port 0 \
		    --workers "$7" --hogs "$2"; then
			bw_wrk serve "$cs" "$3" "$5" "$6" $conns "$secs" "$warm" ||
			    failed=1
		elif [ "$3" = ult-hn ]; then
			echo "skip: ult-hn (ULT_HOST_NICE=1 refused: no" \
			    "CAP_SYS_NICE?)" >&2
		else
			failed=1
		fi
		bw_stop
		;;
	*)
		say "$3 $cs${4:+ on CPU $4}$([ "$2" -gt 0 ] &&
		    echo " beside $2 nice +10 spinning processes")"
		[ "$2" -gt 0 ] && bw_spin_start "$2" "$4" 10
		# shellcheck disable=SC2086
		if bw_start "$3" $pin "$build/bench/serve_$3" --port 0; then
			bw_wrk serve "$cs" "$3" "$5" "$6" $conns "$secs" "$warm" ||
			    failed=1
		else
			failed=1
		fi
		bw_stop
		bw_spin_stop || failed=1
		;;
	esac
}

say "wrk -c$conns, ${secs} s a run; $(nproc) CPUs"
if bw_split; then
	say "iso: server on CPU $srv_cpus, wrk -t$ncli on CPU $cli_cpus;" \
	    "$rounds round(s)"
	for h in 0 $hogs; do
		for r in $(seq "$rounds"); do
			for rt in ult pthread epoll; do
				run iso $h $rt "$srv_cpus" "$cli_cpus" "$ncli" \
				    "$nsrv" >>"$raw"
			done
		done
	done
else
	echo "skip: iso layout (one CPU: no CPU of its own for wrk)" >&2
fi
for h in 0 $hogs; do
	for rt in ult ult-hn pthread epoll; do
		run shared $h $rt "" "" 2 2 >>"$raw"
	done
done
bw_rounds '.' <"$raw" || failed=1
[ -z "$failed" ]
