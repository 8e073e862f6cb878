#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# sysbench threads (each event: --thread-yields times lock one of 8
# mutexes, yield, unlock) natively and under ult-run, both policies, 2
# and 4 workers, at 1, 8 and 64 threads: a fixed number of events, so
# the report must count exactly that many, spread over T threads.  The
# native runs do a quarter of the events: with 64 kernel threads yielding
# on two CPUs they run at tens of events a second, and took most of the
# test's time limit when other tests shared the machine.
. "$(dirname "$0")/lib.sh"
need sysbench
for cfg in native $configs; do
	events=2000
	[ "$cfg" = native ] && events=500
	for t in 1 8 64; do
		out=$tmp/$cfg-$t
		on "$cfg" sysbench threads --threads=$t --thread-yields=100 \
		    --thread-locks=8 --events=$events --time=0 run >"$out" 2>&1 ||
		    { cat "$out"; fail "$cfg T=$t: exit status $rc"; }
		awk -v t=$t -v ev=$events '
			/^Number of threads:/ { nt = $4 }
			/^Threads started!/ { started = 1 }
			/total time:/ { tt = $3 + 0 }
			/total number of events:/ { n = $5 }
			/events \(avg\/stddev\):/ { split($3, a, "/"); avg = a[1] }
			END {
				if (nt != t) { print "threads: " nt; exit 1 }
				if (!started) { print "never started"; exit 1 }
				if (n != ev) { print "events: " n; exit 1 }
				# avg is printed with 4 decimals.
				d = avg * t - ev
				if (d < -0.01 * t || d > 0.01 * t) {
					print "per-thread average " avg; exit 1 }
				printf "%.0f events/s", n / tt
			}' "$out" >"$out.sum" ||
		    { cat "$out"; fail "$cfg T=$t: $(cat "$out.sum")"; }
		echo "ok: $cfg threads T=$t: $(cat "$out.sum")"
	done
done
