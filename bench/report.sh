#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Write report.md from a suite run: report.sh <out-dir> "<plots>" "<failed>"
set -u
out=$1 plots=$2 failed=$3
here=$(cd "$(dirname "$0")" && pwd)
results="$out/results.tsv"

table() { # table <experiment> <baseline> [<cases to leave out>]
	awk -v ex="$1" -v base="$2" -v skip="${3:-}" -f "$here/report.awk" \
	    "$results"
}
# checked <table script> [awk arguments...]: a table of figures with
# their spread and targets (bench/figures.awk reads them); malformed
# figures print a loud note instead of a table, and fail the report.
malformed=""
checked() {
	t=$1
	shift
	if awk -f "$here/figures.awk" -f "$here/$t" "$@" "$results" \
	    >"$out/.table" 2>"$out/.table.err"; then
		cat "$out/.table"
	else
		printf '**Malformed figures: no table.** %s\n' \
		    "$(head -n 3 "$out/.table.err" | tr '\n' ' ')"
		malformed="$malformed $t"
	fi
	rm -f "$out/.table" "$out/.table.err"
}
plot() { # plot <name> <caption>
	case " $plots " in
	*" $1 "*) printf '\n![%s](%s.svg)\n' "$2" "$1" ;;
	esac
}
skips() { # the peers and parts an experiment skipped, from its log
	[ -f "$out/logs/$1.log" ] || return 0
	grep '^skip:' "$out/logs/$1.log" | sort -u | sed 's/^/- /'
}

cat <<EOF
# ult benchmark report

- date: $(date -u '+%Y-%m-%d %H:%M UTC'), mode: ${BENCH:-full}
- machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, kernel $(uname -r)
- ult: $(git -C "$here/.." describe --always --dirty 2>/dev/null || echo unknown)
- Figures from shared machines are noisy: the ratios within one run are the
  result, not the absolute numbers.  Ratio columns are value / baseline, so
  read them with the metric's direction (ns/op: lower is better, events/s:
  higher is better).
EOF
if [ -n "$failed" ]; then
	printf '\n**Failed in this run:**%s (see logs/).\n' "$failed"
fi

cat <<EOF

## micro: the cost of the primitives

Yield (two threads on one CPU), create+join, a mutex+condvar handoff
between two threads, a bounded-queue producer/consumer, skynet (a
10-ary tree of a million threads that sums its leaves, with peak RSS) and
thread-ring (503 threads passing a token N times; its \`result\` row is
the thread holding the token at the end, (N mod 503) + 1: 498 for the
quick N = 1000, 37 for N = 10^6).  Each is the median of several
rounds.  Cases run on all workers unless named \`_w1\` (ult on one
worker).  \`create_join_foreign\` spawns and joins from the main thread,
which for ult is a foreign thread; \`futex/op\` counts the system calls
ult made per handoff (workers parked plus futex wakes sent).  Baseline:
kernel threads (pthread); Go goroutines and Boost.Fiber fibers where they
were installed.

EOF
table micro pthread
skips micro

cat <<EOF

### The fast-path targets, in this run

Handoffs on all workers against Go and against ult's own one-worker
figure; one-worker figures against Boost.Fiber (one thread, no policy);
skynet against Go; the system calls per handoff; a foreign thread's
spawn+join against pthread's; and, with \`BENCH=loaded\`, how much each
case slows down beside one spinning process per CPU, ult's slowdown
against Go's.  The last rows are the cost of \`ULT_TRACE\`: the same
cases with tracing on against off, in interleaved rounds.

EOF
awk -f "$here/targets.awk" "$results"
if grep -q "	micro_loaded	" "$results"; then
	cat <<EOF

### micro beside host load (BENCH=loaded)

The same cases while one process per CPU spins (\`micro --loaded\`; the
peers beside \`micro --load-only\`), so every worker shares its CPU with
a thread the host schedules against it.

EOF
	table micro_loaded pthread
	skips micro_loaded
fi

cat <<EOF

## preempt: what asynchronous preemption costs

A busy loop on one worker with preemption on (the default) and off
(\`ult-nopreempt\`, the baseline): with it on, every slice end signals the
worker and goes through a switch.  \`busy_loop\` is one hog (the slice
ends only), \`two_hogs\` two hogs taking turns.  Medians of alternating
rounds; the target is under 1% lost.

EOF
table preempt ult-nopreempt
skips preempt

cat <<EOF

## threads: sysbench's scheduler test

sysbench \`threads\`: T threads, each event is 1000 x (lock one of 8
mutexes, yield, unlock), so every yield goes through the scheduler's run
queues and their locks: ULE's per-CPU locks against 4BSD's global
\`sched_lock\`.  ult under both policies on all workers, kernel threads
running the same loop (pthread, the baseline) and the real \`sysbench
threads\` with the same parameters.  The \`w=W,T=T\` rows repeat the
workload at W workers (more than CPUs is allowed) with the number of
scheduler-lock acquisitions that had to wait: the FreeBSD developers
measured per-CPU locks 3.8x faster than one global lock on 8 cores.

EOF
table threads pthread
plot threads "events/s against threads"
skips threads

cat <<EOF

## nice: fair shares

Eleven CPU hogs at nice -20, -16, ..., +20 share one CPU: ult (one
worker, asynchronous preemption) under ULE and 4BSD, the same with kernel
processes under the Linux scheduler, and the share ULE's formulas predict
(the model, the baseline here).  An interactive thread (sleeps 10 ms,
runs 0.2 ms) runs beside them; its wakeup latency is the \`interactive\`
row.  ult's shares come from a run of the hogs alone, as in the model; in
the run with the interactive thread (its shares are in logs/nice.log)
each of its wakeups is an AST on the running hog, which then goes back to
its calendar position rather than the head of the current bucket, as in
FreeBSD, and the low nice values gain a few points.  4BSD decays estcpu by a factor that depends on the one-minute load
average, which starts at zero: in a run of seconds the decay is steep,
the low nice values keep priorities the high ones cannot reach, and the
high ones get nothing yet (they would after a minute or so).

EOF
table nice model
plot nice "CPU share by nice value"
skips nice

cat <<EOF

## hint: scheduler hints (Robert Love's semaphore test)

Five threads share one semaphore: busy loop, wait, busy loop (the
critical section), post.  A thread preempted inside the critical section
stalls the other four.  ult without hints, ult with
\`ult_schedctl_start/stop\` around the critical section (the Solaris
schedctl idea), and kernel threads with POSIX semaphores, on every
worker (\`all\`) and on one (\`w=1\`, pthreads pinned to one CPU).  Median
of the runs; voluntary and involuntary switches summed over the threads.
On one worker the CPU never idles: threads that run into a preempted
holder block and give the CPU back, so the hint can only save switches,
which cost ult a few hundred nanoseconds (Love's 6% came from kernel
switches); with more workers it saves a stall only when the holder is
preempted while others wait.

EOF
table hint pthread
for c in "" -w1; do
	[ -f "$out/data/hint-ministat$c.txt" ] || continue
	if ! grep -q '^x ' "$out/data/hint-ministat$c.txt"; then
		# No comparison (too few runs, or ministat failed): its one line.
		printf '\nministat, case %s: %s\n' \
		    "$([ -z "$c" ] && echo all || echo w=1)" \
		    "$(head -n 1 "$out/data/hint-ministat$c.txt")"
		continue
	fi
	printf '\nministat, case %s, run times in seconds, 95%%' \
	    "$([ -z "$c" ] && echo all || echo w=1)"
	printf ' confidence (x = ult, + = ult+hint, * = pthread):\n\n```\n'
	cat "$out/data/hint-ministat$c.txt"
	printf '```\n'
done
skips hint

cat <<EOF

## make: a parallel-make DAG

A synthetic \`make -jN\`: 50 directories x 40 files, a dependency stage,
then compile tasks with log-normal CPU time and a short sleep, an archive
per directory, one link; at most J tasks at once (a token semaphore) and
every task on a freshly created thread, as make forks a process per job.
Real, user and sys time like \`time make\`.

EOF
table make pthread
skips make

cat <<EOF

## latency: wakeup latency (schbench-like)

A message thread wakes four workers every millisecond; each records how
long after the wakeup it ran, then works 50 us.  Without CPU hogs and with
one hog per CPU.  p50/p99/p99.9/max in microseconds.

EOF
table latency pthread
plot latency "wakeup latency CDF"
skips latency

cat <<EOF

## serve: an HTTP server under wrk

A keep-alive HTTP/1.1 server answering GET / with a fixed 94-byte page, under
\`wrk -c64\` on loopback (3 s a run after a 1 s warm-up, quick 1 s):
ult's \`examples/httpd\` (a uthread per connection), the same parser
with a kernel thread per connection (pthread) and in a single-threaded
epoll loop (epoll).  Two layouts.  **Isolated**: the server on the first
half of the CPUs (httpd with one worker per CPU of it) and wrk on the
rest, both pinned with taskset (on 2 CPUs: the server on CPU 0 with one
worker, wrk -t1 on CPU 1), so that the latency is the server's and not
Linux's sharing of the CPUs between wrk and the server; the median of
the runs with the p99's spread over them.  **Shared**: nothing pinned,
httpd with 2 workers and wrk -t2 on every CPU, one run, as earlier
reports had it; ult-hn is ult's httpd with \`ULT_HOST_NICE=1\` there,
where the host allows it: a worker running a nice +10 uthread is at nice
+10 on the host too.  hogs=2 adds two CPU-bound threads at nice +10 on
the server's CPUs: uthreads inside httpd for ult, spinning processes
pinned like the server beside the kernel servers.  Latency is wrk's,
from request sent to response read.  The targets (issue 29), for the
isolated layout: hogs at nice +10 cost ult's connections at most 2x in
p99, ult's p99 beside them is at most the pthread server's beside its
hogs, and ult serves at least as many requests as the pthread server;
the shared layout's ratios are there for comparison.

EOF
checked serve.awk -v part=serve
skips serve

cat <<EOF

## scale: SIMULATED, the sysbench threads curve at 1 to 1,024 CPUs

**Simulated by ultsim, not measured.**  The runtime's own policy code on
N virtual CPUs in virtual time (docs/ULTSIM.md): sysbench threads with
T = 2N threads and 2N mutexes, every yield a trip through the policy's
switch, each scheduler-lock acquisition costing virtual time and
serialising its holders (one lock per CPU under ULE, one sched_lock
under 4BSD).  The lock costs were fitted to bench/threads on the
development machine; the \`w=W,T=T\` rows set the simulated figures
beside this run's measured ones (runtimes ult and ult-4bsd) at 1 and 2
CPUs with bench/threads' parameters (8 mutexes).  The ratio column
against ult-4bsd-sim is ULE over 4BSD; FreeBSD measured 3.8x at 8 cores.

EOF
table scale ult-4bsd-sim
plot scale "simulated: events/s and ULE / 4BSD against virtual CPUs"
skips scale

cat <<EOF

## dropin: unmodified programs under ult-run

Debian's own binaries, not rebuilt: on kernel threads as they are
(pthread, the baseline) and under \`ult-run\` (ULE, and 4BSD as
ult-4bsd), where libult-pthread.so makes every thread of the program,
main included, a uthread on one worker per CPU, and sends its socket and
pipe calls through ult's poller.  \`threads_T\` and \`mutex_T\` are
sysbench's threads test (as above) and its mutex test (64 mutexes, one
event per thread); \`pigz\` (\`-p 8\`), \`xz\` (\`-T4 -3
--block-size=1MiB\`) and \`zstd\` (\`-T4 -12 -B1048576\`) compress the same
text file (wall seconds; the outputs are checked byte for byte against
the native ones), and
\`memcached_*\` is \`memcached -t 4\` answering set+get pairs from
test/programs/mcclient on several connections (each request timed), with
no CPU hogs and with hogs beside it (its own table below).  The three
runtimes took turns within each round and each figure is the median of
its rounds.  **These are ratios measured in one run, on this machine, at
the same moment: read the ratio columns, not the absolute figures.**
With \`BENCH=quick\` every figure is a single run: on a small shared
machine two identical native runs can differ by 1.5x or more (memcached's
tails most), so only a large ratio means something there.

EOF
table dropin pthread '^memcached_'
plot dropin "sysbench events/s against threads, kernel threads and ult-run"

cat <<EOF

### memcached under ult-run, isolated and shared

\`memcached -t 4\` natively (pthread) and under \`ult-run\`, answering
mcclient's timed set+get pairs on 8 connections.  **Isolated**:
memcached (with ult-run's workers) on the first half of the CPUs and
mcclient on the rest, pinned with taskset (on 2 CPUs: CPU 0 and CPU 1);
hogs=2 is two spinning processes at nice +10 pinned to the server's CPUs
(the program is unmodified, so its hogs cannot be uthreads).
**Shared**: nothing pinned; the hogs are one spinning process per CPU at
nice 0.  The median of the rounds, with the p99's spread over them.  The
targets (issue 29), for the isolated layout: ult-run's p99 at most
native's alone, and below native's beside the hogs.

EOF
checked serve.awk -v part=memcached
skips dropin

cat <<EOF

## busy: quiet, busy and oversubscribed hosts

The same programs on three hosts, each against kernel threads (and Go
where bench/peers has the case) in the same run: **quiet**; **spin**,
beside one spinning process per CPU at nice 0; **over**, oversubscribed:
three copies of the program at once beside the spinners, every copy a
sample.  \`pipeline_main\` and \`pipeline_thread\` are bench/pipeline (4
stages x 8 threads joined by bounded mutex+condvar queues, 2x10^5
items, quick 2x10^4) fed from main or from a thread of its own runtime,
in seconds, with ult's switches, steals and migrations per item;
\`httpd\` is ult's httpd (one worker per CPU) against the pthread
server under \`wrk -t2 -c64\` for 2 s (quick 1 s), nothing pinned (a
copy that served nothing in its run counts as 0 req/s); \`memcached\`
is \`memcached -t 4\` under \`ult-run\` against native, mcclient on 8
connections; the rest are micro's all-worker cases at a twentieth of
their size (\`micro --div 20\`, quick \`--div 200\`).  Each figure is
the median of its samples with their spread; s, ns/op, ns/item and
p99_us: lower is better, req/s: higher.  On 2 CPUs, wrk and mcclient
compete for the same CPUs as the servers and the spinners, so httpd and
memcached measure the host as a whole, not the server alone.

EOF
checked busy.awk
skips busy
printf '\n---\nRaw results: results.tsv; program logs: logs/.\n'
if [ -n "$malformed" ]; then
	echo "report: malformed figures for:$malformed" >&2
	exit 1
fi
