#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scale: SIMULATED.  sysbench threads on 1 to 1,024 virtual CPUs (up to
# 64 with --quick), both policies, from ultsim (sim/), which runs
# the runtime's own policy code in virtual time with the lock-cost model of
# docs/ULTSIM.md.  Not a measurement of this machine.
#
#   bench/scale.sh <build-dir> [--quick] [<results.tsv>]
#
# Case N=<cpus>: T = 2N threads, each event 1000 x (lock one of 2N
# mutexes, yield, unlock), so that user mutexes do not collide much and
# what scales or not is the scheduler's own locking; runtimes ult-sim
# (ULE) and ult-4bsd-sim; metrics events/s (yields / 1000, so that an
# event in progress counts its part) and lockwait% (CPU time spent
# waiting for a scheduler lock).  Case w=W,T=T: the validation, bench/
# threads' own parameters (8 mutexes) at 1 and 2 CPUs, beside the real
# runtime's figures from the same run's results.tsv when given (runtimes
# ult and ult-4bsd, copied from experiment threads).
set -u
build=${1:?usage: scale.sh <build-dir> [--quick] [<results.tsv>]}
shift
quick="" results=""
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	*) results=$a ;;
	esac
done
ultsim=$build/ultsim
[ -x "$ultsim" ] || { echo "scale: no $ultsim" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# sb <cpus> <threads> <locks> <ms> <policy>: events/s and lockwait%.
sb() {
	cat > "$tmp/sb.scn" <<S
scenario sysbench-threads
cpus $1
duration $4ms
warmup $(($4 / 5))ms
group sb kind=yielder count=$2 yields=1000 locks=$3
S
	"$ultsim" "$tmp/sb.scn" --policy "$5" > "$tmp/out" || return 1
	# Events as yields / 1000: at 256 CPUs a 4BSD event outlasts the
	# window, and a count of whole events would read 0.
	awk '/^sb: / { ev = $4 / 1000 } /^machine:/ { for (i = 1; i <= NF; i++)
		if ($i == "of" && $(i + 1) == "CPU") lw = $(i - 1) }
	    END { if (ev == "") exit 1; sub("%", "", lw)
		printf "%.0f %s\n", ev, lw }' "$tmp/out"
}

emit() { # emit <case> <policy> <events> <lockwait>
	rt=ult-sim
	[ "$2" = 4bsd ] && rt=ult-4bsd-sim
	printf 'R\tscale\t%s\t%s\tevents/s\t%s\n' "$1" "$rt" "$3"
	printf 'R\tscale\t%s\t%s\tlockwait%%\t%s\n' "$1" "$rt" "$4"
}

cpus="1 2 4 8 16 64 256 1024"
[ -n "$quick" ] && cpus="1 2 8 64"
for n in $cpus; do
	# Fewer virtual milliseconds where there are more CPUs to step.
	ms=60
	[ "$n" -ge 64 ] && ms=30
	[ "$n" -ge 256 ] && ms=15
	[ "$n" -ge 1024 ] && ms=8
	for p in ule 4bsd; do
		set -- $(sb "$n" $((2 * n)) $((2 * n)) $ms $p) ||
		    { echo "scale: N=$n $p failed" >&2; exit 1; }
		emit "N=$n" $p "$1" "$2"
		echo "scale: N=$n $p: $1 events/s, $2% waiting on locks" >&2
	done
done

for w in 1 2; do
	for t in 1 2 8 64; do
		for p in ule 4bsd; do
			set -- $(sb $w $t 8 200 $p) ||
			    { echo "scale: w=$w,T=$t $p failed" >&2; exit 1; }
			emit "w=$w,T=$t" $p "$1" "$2"
		done
		[ -n "$results" ] && [ -f "$results" ] &&
		    awk -F'\t' -v c="w=$w,T=$t" -v OFS='\t' '$1 == "R" &&
			$2 == "threads" && $3 == c && $5 == "events/s" &&
			($4 == "ult" || $4 == "ult-4bsd") { $2 = "scale"; print }' \
			"$results"
	done
done
exit 0
