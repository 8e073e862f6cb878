#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# serve: an HTTP/1.1 keep-alive server under wrk on loopback, three ways.
#
#   bench/serve.sh <build-dir> [--quick]      (bench/run.sh runs it)
#
# The servers answer alike (one parser and one page, examples/http.c):
#   ult      examples/httpd, a uthread per connection, on 2 workers
#   ult-hn   the same with ULT_HOST_NICE=1: a worker running a nice +10
#            uthread is at nice +10 on the host (src/kern/host_nice.c)
#   pthread  bench/serve_pthread, a kernel thread per connection
#   epoll    bench/serve_epoll, one thread running an epoll loop
# Each is measured by `wrk -t2 -c64' for 5 s (--quick: 1 s) after a 1 s
# warm-up (none with --quick), keep-alive, one request at a time per
# connection.  Case hogs=0 is the server alone; case hogs=2 adds two
# CPU-bound threads at nice +10: for ult two uthreads inside httpd
# (--hogs 2), scheduled by ULE against the connections; for the kernel
# servers two spinning processes under `nice -n 10', scheduled by Linux.
#
# Result lines (bench/README.md), experiment serve: req/s, p50_us, p99_us
# and max_us for each case and server, from wrk's own histogram
# (bench/serve.lua prints it exactly), and timeouts: requests that had no
# answer within wrk's 2 s, which its percentiles leave out.  Checked: wrk
# saw no connect, read or write error and no status other than 2xx/3xx,
# and every run read the same number of bytes per request (within 1%); a
# run that fails a check prints why and no figures, and the script exits
# 1.
# Without wrk it prints "skip: wrk (not installed)" and exits 0.
set -u
build=${1:?usage: serve.sh <build-dir> [--quick]}
secs=${SERVE_SECS:-5} warm=1
[ "${2:-}" = --quick ] && secs=1 warm=0
conns=64
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
spid="" hogpids="" failed="" perreq=""

say() { printf '%s\n' "$*" >&2; }
cleanup() {
	# shellcheck disable=SC2086
	[ -n "$spid$hogpids" ] && kill $spid $hogpids 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if ! command -v wrk >/dev/null 2>&1; then
	say "skip: wrk (not installed)"
	exit 0
fi
for b in "$build/examples/httpd" "$build/bench/serve_pthread" \
    "$build/bench/serve_epoll"; do
	if [ ! -x "$b" ]; then
		say "serve: $b is not built"
		exit 1
	fi
done

# start <command...>: the server in the background; sets spid and port
# once it has written its whole "listening on 127.0.0.1:<port>" line,
# which it does after listen(), so that connections queue from then on.
# Each server writes a file of its own: a file shared between runs was
# truncated by the background shell only after the fork, so the loop
# could still read the previous server's line (a dead port) or, between
# its grep and its sed, an empty file (an empty port).  A line counts
# once its newline is there.  SERVE_START_SECS (default 30) bounds the
# wait, for a loaded machine.
nstart=0
start() {
	nstart=$((nstart + 1))
	lf="$tmp/listen.$nstart"
	: >"$lf"
	"$@" >"$lf" &
	spid=$! port=""
	limit=${SERVE_START_SECS:-30}
	t0=$(date +%s)
	while :; do
		port=$(head -n "$(wc -l <"$lf")" "$lf" |
		    sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p')
		[ -n "$port" ] && return 0
		if ! kill -0 "$spid" 2>/dev/null; then
			say "serve: $* exited before listening"
			return 1
		fi
		if [ $(($(date +%s) - t0)) -ge "$limit" ]; then
			say "serve: $* did not listen within $limit s"
			return 1
		fi
		sleep 0.1
	done
}
stop() {
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	spid=""
}
hogs_start() { # hogs_start N: N spinning processes at nice +10
	for _ in $(seq "$1"); do
		nice -n 10 sh -c 'while :; do :; done' &
		hogpids="$hogpids $!"
	done
}
hogs_stop() {
	# shellcheck disable=SC2086
	[ -n "$hogpids" ] && kill $hogpids 2>/dev/null
	for p in $hogpids; do wait "$p" 2>/dev/null; done
	hogpids=""
}

# measure <case> <runtime>: wrk against the running server, its figures
# checked and turned into result lines.
measure() {
	if [ -z "$port" ]; then
		say "serve: $2 $1: no port"
		failed=1
		return
	fi
	url="http://127.0.0.1:$port/"
	[ "$warm" -gt 0 ] && wrk -t2 -c$conns -d"${warm}s" "$url" >/dev/null 2>&1
	if ! wrk -t2 -c$conns -d"${secs}s" --latency -s "$here/serve.lua" \
	    "$url" >"$tmp/wrk" 2>&1; then
		say "serve: $2 $1: wrk failed:"
		cat "$tmp/wrk" >&2
		failed=1
		return
	fi
	sed 's/^/  /' "$tmp/wrk" >&2
	line=$(grep '^serve: ' "$tmp/wrk")
	# The reference length is the first run's; the rest must match it.
	out=$(echo "$line" | tr ' ' '\n' | awk -F= -v cs="$1" -v rt="$2" \
	    -v ref="$perreq" '
		NF == 2 { v[$1] = $2 }
		END {
			err = v["connect"] + v["read"] + v["write"] + \
			    v["status"]
			if (v["requests"] == "" || v["requests"] == 0) {
				print "fail no requests completed"
				exit
			}
			if (err > 0) {
				printf "fail errors: connect %d read %d write %d " \
				    "status %d\n", v["connect"], v["read"], \
				    v["write"], v["status"]
				exit
			}
			b = v["bytes"] / v["requests"]
			if (ref != "" && (b < ref * 0.99 || b > ref * 1.01)) {
				printf "fail %.1f bytes per request, not %.1f\n", \
				    b, ref
				exit
			}
			printf "perreq %.3f\n", b
			pre = "R\tserve\t" cs "\t" rt "\t"
			printf "%sreq/s\t%.0f\n", pre, \
			    v["requests"] / (v["duration_us"] / 1e6)
			printf "%sp50_us\t%.0f\n", pre, v["p50_us"]
			printf "%sp99_us\t%.0f\n", pre, v["p99_us"]
			printf "%smax_us\t%.0f\n", pre, v["max_us"]
			printf "%stimeouts\t%d\n", pre, v["timeout"]
		}')
	case $out in
	perreq*)
		[ -z "$perreq" ] && perreq=$(echo "$out" | sed -n 's/^perreq //p')
		echo "$out" | grep '^R'
		;;
	*)
		say "serve: $2 $1: ${out#fail }"
		failed=1
		;;
	esac
}

say "serve: wrk -t2 -c$conns, ${secs} s a run; $(nproc) CPUs"
for hogs in 0 2; do
	cs="hogs=$hogs"
	say "serve: ult $cs (httpd --workers 2 --hogs $hogs)"
	if start "$build/examples/httpd" --port 0 --workers 2 --hogs $hogs; then
		measure $cs ult
	else
		failed=1
	fi
	stop
	# The same with ult.host_nice: the workers take their uthreads' nice
	# on the host (needs CAP_SYS_NICE; skipped without it).
	say "serve: ult-hn $cs (the same, ULT_HOST_NICE=1)"
	if start env ULT_HOST_NICE=1 "$build/examples/httpd" --port 0 \
	    --workers 2 --hogs $hogs; then
		measure $cs ult-hn
	else
		say "skip: ult-hn (ULT_HOST_NICE=1 refused: no CAP_SYS_NICE?)"
	fi
	stop
	for rt in pthread epoll; do
		say "serve: $rt $cs$([ $hogs -gt 0 ] &&
		    echo " beside $hogs nice +10 spinning processes")"
		hogs_start $hogs
		if start "$build/bench/serve_$rt" --port 0; then
			measure $cs $rt
		else
			failed=1
		fi
		stop
		hogs_stop
	done
done
[ -z "$failed" ]
