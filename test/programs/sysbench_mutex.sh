#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# sysbench mutex (each thread: --mutex-locks times lock one of 64 mutexes
# at random, bump a counter, unlock) natively and under ult-run, both
# policies, 2 and 4 workers, at 1, 8 and 64 threads: one event per
# thread, all of them counted.
. "$(dirname "$0")/lib.sh"
need sysbench
for cfg in native $configs; do
	for t in 1 8 64; do
		out=$tmp/$cfg-$t
		on "$cfg" sysbench mutex --threads=$t --mutex-num=64 \
		    --mutex-locks=2000 run >"$out" 2>&1 ||
		    { cat "$out"; fail "$cfg T=$t: exit status $rc"; }
		awk -v t=$t '
			/^Number of threads:/ { nt = $4 }
			/^Threads started!/ { started = 1 }
			/total time:/ { tt = $3 + 0 }
			/total number of events:/ { n = $5 }
			/events \(avg\/stddev\):/ { ev = $3 }
			END {
				if (nt != t) { print "threads: " nt; exit 1 }
				if (!started) { print "never started"; exit 1 }
				if (n != t) { print "events: " n; exit 1 }
				if (ev != "1.0000/0.00") {
					print "per thread: " ev; exit 1 }
				printf "%.3f s", tt
			}' "$out" >"$out.sum" ||
		    { cat "$out"; fail "$cfg T=$t: $(cat "$out.sum")"; }
		echo "ok: $cfg mutex T=$t: $(cat "$out.sum")"
	done
done
