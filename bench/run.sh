#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The benchmark suite: run every experiment, its peers, and write a report.
#   bench/run.sh <build-dir> <out-dir>          (make bench)
# BENCH picks the mode, words separated by spaces or commas: quick (smoke
# sizes), loaded (micro once more beside one spinning process per CPU,
# for ult and its peers: experiment micro_loaded), e.g. BENCH=quick,loaded.
# Each program prints contract lines (bench/README.md) that are gathered
# in <out-dir>/results.tsv; its stderr goes to <out-dir>/logs/.  A program
# that fails is reported as failed in the report and on the console, and
# the run goes on; the exit status says whether everything ran.
set -u
build=${1:-build/release}
out=${2:-build/bench}
here=$(cd "$(dirname "$0")" && pwd)
mode="" loaded=""
for w in $(echo "${BENCH:-}" | tr ',' ' '); do
	case $w in
	quick) mode="--quick" ;;
	loaded) loaded=1 ;;
	full) ;;
	*)
		echo "bench: unknown BENCH word '$w' (quick, loaded, full)" >&2
		exit 2
		;;
	esac
done
# A fresh run: no plot data or logs of an earlier one may leak into it.
rm -rf "$out/data" "$out/logs" "$out"/*.svg "$out/report.md"
mkdir -p "$out/data" "$out/logs" "$out/peers"
results="$out/results.tsv"
: >"$results"
failed=""
start=$(date +%s)

elapsed() { echo $(($(date +%s) - start)); }
say() { printf '%s\n' "$*" >&2; }

# run <experiment> <label> <command...>: results to results.tsv, stderr to
# the experiment's log, a progress line on the console.
run() {
	exp=$1 label=$2
	shift 2
	printf '[%4ss] %-8s %-24s ' "$(elapsed)" "$exp" "$label" >&2
	t0=$(date +%s)
	if "$@" >>"$results" 2>>"$out/logs/$exp.log"; then
		say "ok ($(($(date +%s) - t0)) s)"
	else
		say "FAILED (see $out/logs/$exp.log)"
		failed="$failed $exp:$label"
	fi
}

# Peers: built here from bench/peers; a missing toolchain is a skip line.
sh "$here/peers/build.sh" "$out/peers" 2>>"$out/logs/peers.log"
peer() { # peer <experiment> <name> <binary> [args...]
	exp=$1 name=$2 bin=$3
	shift 3
	if [ -x "$bin" ]; then
		run "$exp" "$name" "$bin" "$@"
	else
		say "skip: $name peer for $exp (not built: see $out/logs/peers.log)"
		echo "skip: $name (not built)" >>"$out/logs/$exp.log"
	fi
}
gopeer="$out/peers/go-peer"
boostpeer="$out/peers/boost-peer"

# sysbench itself, converted to contract lines (events/time and its own
# latency summary), with the same parameters as bench/threads.c.
sysbench_threads() {
	secs=2 && [ -n "$mode" ] && secs=1
	for t in 1 2 8 64; do
		sysbench threads --threads=$t --thread-yields=1000 \
		    --thread-locks=8 --time=$secs run |
		    awk -v t=$t '
			/total time:/ { tt = $3 + 0 }
			/total number of events:/ { ev = $5 }
			/avg:/ { avg = $2 } /max:/ { mx = $2 }
			/95th percentile:/ { p95 = $3 }
			END {
				if (tt == 0 || ev == "") exit 1
				c = "T=" t
				printf "R\tthreads\t%s\tsysbench\tevents/s\t%.1f\n", c, ev / tt
				printf "R\tthreads\t%s\tsysbench\tavg_ms\t%s\n", c, avg
				printf "R\tthreads\t%s\tsysbench\tp95_ms\t%s\n", c, p95
				printf "R\tthreads\t%s\tsysbench\tmax_ms\t%s\n", c, mx
			}' || return 1
	done
}

# under_load <command...>: run a peer beside the host load of micro's
# loaded mode, its micro rows renamed micro_loaded.
under_load() {
	"$b/micro" --load-only &
	lp=$!
	tmp="$out/logs/under_load.tmp"
	"$@" >"$tmp"
	rc=$?
	kill "$lp" 2>/dev/null
	wait "$lp" 2>/dev/null
	awk -F'\t' -v OFS='\t' '$1 == "R" && $2 == "micro" { $2 = "micro_loaded" }
	    { print }' "$tmp"
	rm -f "$tmp"
	return $rc
}

b="$build/bench"
d="$out/data"
say "ult benchmark suite (${BENCH:-full}): $(nproc) CPUs; logs in $out/logs"
run micro ult+pthread "$b/micro" $mode --data "$d"
peer micro go "$gopeer" --exp micro $mode --data "$d"
peer micro boost "$boostpeer" --exp micro $mode --data "$d"
if [ -n "$loaded" ]; then
	run micro_loaded ult+pthread "$b/micro" $mode --loaded
	for p in go:"$gopeer" boost:"$boostpeer"; do
		if [ -x "${p#*:}" ]; then
			run micro_loaded "${p%%:*}" under_load "${p#*:}" \
			    --exp micro $mode
		else
			say "skip: ${p%%:*} peer for micro_loaded (not built)"
		fi
	done
fi
run preempt on+off "$b/preempt" $mode
run threads ult+pthread "$b/threads" $mode
if command -v sysbench >/dev/null 2>&1; then
	run threads sysbench sysbench_threads
else
	say "skip: sysbench (not installed)"
fi
run nice ult+linux+model "$b/nice" $mode --data "$d"
run hint ult+pthread "$b/hint" $mode --data "$d"
run make ult+pthread "$b/make" $mode --data "$d"
peer make go "$gopeer" --exp make $mode --data "$d"
peer make boost "$boostpeer" --exp make $mode --data "$d"
run latency ult+pthread "$b/latency" $mode --data "$d"
peer latency go "$gopeer" --exp latency $mode --data "$d"
peer latency boost "$boostpeer" --exp latency $mode --data "$d"
if command -v wrk >/dev/null 2>&1; then
	run serve ult+pthread+epoll sh "$here/serve.sh" "$build" $mode
else
	say "skip: serve (wrk not installed)"
	echo "skip: wrk (not installed)" >>"$out/logs/serve.log"
fi

# SIMULATED: the sysbench threads curve from ultsim, with its validation
# against this run's threads figures.
run scale ultsim sh "$here/scale.sh" "$build" $mode "$results"

# Unmodified programs (sysbench, pigz, xz, zstd, memcached) under ult-run.
if [ -x "$build/ult-run" ]; then
	run dropin ult-run sh "$here/dropin.sh" "$build" $mode
else
	say "skip: dropin (no ult-run in $build)"
	echo "skip: ult ult-4bsd (no ult-run in $build)" >>"$out/logs/dropin.log"
fi

# The busy host: the pipeline, httpd, memcached and micro's cross-worker
# cases quiet, beside one spinner per CPU and three copies at once.
run busy ult+pthread+go sh "$here/busy.sh" "$build" $mode --go "$gopeer"

# ministat compares the hint variants' run times at 95% confidence.  It
# refuses a variant of fewer than 3 runs (quick mode makes 2): then the
# report says so instead of quoting its complaint; any other failure
# goes to the log, not the report.
if command -v ministat >/dev/null 2>&1; then
	for c in "" -w1; do
		set --
		few=""
		for v in ult ult+hint pthread; do
			f="$d/hint-$v$c.txt"
			[ -f "$f" ] || continue
			set -- "$@" "$f"
			n=$(grep -c '^[0-9.]' "$f")
			[ "$n" -lt 3 ] && few="$few $v:$n"
		done
		[ $# -gt 1 ] || continue
		m="$d/hint-ministat$c.txt"
		if [ -n "$few" ]; then
			echo "too few runs for a confidence interval" \
			    "(runs per variant:$few; ministat needs 3)" >"$m"
		elif ! ministat -c 95 -w 74 "$@" >"$m" 2>>"$out/logs/hint.log"
		then
			echo "ministat failed (see logs/hint.log)" >"$m"
		fi
	done
else
	say "skip: ministat (not installed)"
fi

# Plots: one SVG per experiment where a picture says more.
awk -F'\t' '$1 == "R" && $2 == "threads" && $3 ~ /^T=/ && $5 == "events/s" {
	t = substr($3, 3); v[t, $4] = $6; ts[t] = 1 }
    END { for (t in ts) printf "%s %s %s %s %s\n", t, v[t, "ult"] + 0,
	v[t, "ult-4bsd"] + 0, v[t, "pthread"] + 0, v[t, "sysbench"] + 0 }' \
    "$results" | sort -n >"$d/threads.dat"
# T, then sysbench threads and mutex events/s: pthread ult ult-4bsd each.
awk -F'\t' '$1 == "R" && $2 == "dropin" && $3 ~ /^(threads|mutex)_T=/ &&
    $5 == "events/s" {
	split($3, p, "_T="); v[p[2], p[1], $4] = $6; ts[p[2]] = 1 }
    END { for (t in ts) printf "%s %s %s %s %s %s %s\n", t,
	v[t, "threads", "pthread"] + 0, v[t, "threads", "ult"] + 0,
	v[t, "threads", "ult-4bsd"] + 0, v[t, "mutex", "pthread"] + 0,
	v[t, "mutex", "ult"] + 0, v[t, "mutex", "ult-4bsd"] + 0 }' \
    "$results" | sort -n >"$d/dropin.dat"
# N, then simulated events/s: ULE 4BSD, and ULE / 4BSD.
awk -F'\t' '$1 == "R" && $2 == "scale" && $3 ~ /^N=/ && $5 == "events/s" {
	n = substr($3, 3); v[n, $4] = $6; ns[n] = 1 }
    END { for (n in ns) { u = v[n, "ult-sim"] + 0; b = v[n, "ult-4bsd-sim"] + 0
	printf "%s %s %s %s\n", n, u, b, (b > 0 ? u / b : 0) } }' \
    "$results" | sort -n >"$d/scale.dat"
plots=""
if command -v gnuplot >/dev/null 2>&1; then
	for p in threads nice latency dropin scale; do
		[ -f "$here/plot/$p.gp" ] || continue
		if gnuplot -e "datadir='$d'; out='$out/$p.svg'" \
		    "$here/plot/$p.gp" 2>>"$out/logs/plots.log"; then
			plots="$plots $p"
		fi
	done
else
	say "skip: plots (gnuplot not installed)"
fi

# A report with malformed figures names them and fails the run.
sh "$here/report.sh" "$out" "$plots" "$failed" >"$out/report.md" ||
    failed="$failed report"
say ""
awk -F'\t' -f "$here/summary.awk" "$results" >&2
say ""
say "report: $out/report.md ($(elapsed) s)"
if [ -n "$failed" ]; then
	say "failed:$failed"
	exit 1
fi
