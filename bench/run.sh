#!/bin/sh
# Run the benchmark suite from a release build and write a report.
#   bench/run.sh <build-dir> <out-dir>      BENCH=quick for a short run
set -eu
build=${1:-build/release}
out=${2:-build/bench}
mkdir -p "$out"
mode=""
[ "${BENCH:-}" = quick ] && mode="--quick"
report="$out/report.md"
{
	echo "# ult benchmark report"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, kernel $(uname -r)"
	echo "- figures from shared machines are noisy: the ratios within one run are the result"
	echo
	echo "## micro"
	echo
	echo '```'
	"$build/bench/micro" $mode
	echo '```'
	echo
	echo "## sync"
	echo
	echo '```'
	"$build/bench/sync" $mode
	echo '```'
	echo
	echo "## threads (sysbench threads, sched_ule vs sched_4bsd)"
	echo
	echo '```'
	"$build/bench/threads" $mode
	echo '```'
} | tee "$report"
echo "report: $report"
