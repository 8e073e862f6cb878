#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# ultsim as a tool: the same seed gives the same bytes, another seed other
# ones; the SVG timeline; 1,024 CPUs; and bad input gets a clear message
# and exit status 1.
#   tool.sh ULTSIM SCENARIO_DIR
set -eu
ultsim=$1 dir=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "ultsim: $*"; exit 1; }

# Determinism, with a random workload of every kind but yielders.
cat > "$out/mix.scn" <<'S'
scenario mix
cpus 4
topology smt=2,l3=2
duration 3s
warmup 500ms
group hogs kind=hog count=3 nice=5
group inter kind=sleeper count=4 run=exp:1ms sleep=uniform:2ms..9ms
group tree kind=forkjoin depth=3 fanout=3 run=exp:4ms start=1s
group make kind=dag jobs=60 deps=2 run=exp:8ms start=1200ms
group lk kind=locker count=3 run=2ms cs=1ms sleep=exp:2ms
S
"$ultsim" "$out/mix.scn" --seed 7 --svg "$out/a.svg" > "$out/a.txt"
"$ultsim" "$out/mix.scn" --seed 7 --svg "$out/b.svg" > "$out/b.txt"
"$ultsim" "$out/mix.scn" --seed 8 > "$out/c.txt"
cmp -s "$out/a.txt" "$out/b.txt" || fail "same seed, different reports"
cmp -s "$out/a.svg" "$out/b.svg" || fail "same seed, different timelines"
cmp -s "$out/a.txt" "$out/c.txt" && fail "another seed, the same report"
for g in hogs inter tree make lk; do
	grep -Eq "^$g +" "$out/a.txt" || fail "no row for $g"
done
grep -q '^tree: makespan [0-9]' "$out/a.txt" || fail "the tree did not finish"
grep -q '^make: makespan [0-9]' "$out/a.txt" || fail "the DAG did not finish"

# The timeline: one SVG document with rectangles and the legend.
head -c 4 "$out/a.svg" | grep -q '<svg' || fail "not an SVG"
tail -n 1 "$out/a.svg" | grep -q '</svg>' || fail "SVG not closed"
[ "$(grep -c '<rect' "$out/a.svg")" -gt 20 ] || fail "an empty timeline"
grep -q '>inter</text>' "$out/a.svg" || fail "no legend"

# --threads: a row per thread, shares summing to the group's.
"$ultsim" "$out/mix.scn" --seed 7 --threads > "$out/t.txt"
[ "$(awk '$2 == "hogs" && $1 ~ /^[0-9]+$/' "$out/t.txt" | wc -l)" = 3 ] ||
    fail "--threads: not one row per hog"
[ "$(awk '$2 == "inter" && $1 ~ /^[0-9]+$/' "$out/t.txt" | wc -l)" = 4 ] ||
    fail "--threads: not one row per sleeper"

# 1,024 CPUs: 1,100 hogs all run, none starves.
printf 'cpus 1024\nduration 400ms\nwarmup 100ms\ngroup h kind=hog count=1100\nexpect h.cpu > 99\nexpect h.share_min > 0\n' \
    > "$out/big.scn"
"$ultsim" "$out/big.scn" > "$out/big.txt" || fail "1,024 CPUs: $(cat "$out/big.txt")"
grep -q 'on 1024 CPUs' "$out/big.txt" || fail "not 1,024 CPUs"

# Classes: a realtime sleeper gets what it asks for, an idle hog nothing
# beside a timeshare one.
printf 'cpus 1\nduration 5s\nwarmup 1s\ngroup rt kind=sleeper class=realtime rtprio=5 run=3ms sleep=1ms\ngroup ts kind=hog\ngroup id kind=hog class=idle\nexpect rt.cpu > 70\nexpect id.cpu < 0.5\nexpect ts.cpu > 20\n' \
    > "$out/cls.scn"
for p in ule 4bsd; do
	"$ultsim" "$out/cls.scn" --policy $p > "$out/cls.txt" ||
	    fail "classes under $p: $(cat "$out/cls.txt")"
done

# Bad input.
bad() { # bad <what> <message part> <ultsim args...>
	what=$1 msg=$2
	shift 2
	if "$ultsim" "$@" > /dev/null 2> "$out/err"; then
		fail "$what: accepted"
	fi
	grep -q -- "$msg" "$out/err" || fail "$what: no clear message: $(cat "$out/err")"
}
printf 'cpus 2\ngroup g kind=sleeper run=2ms\n' > "$out/e1.scn"
bad "missing sleep" "e1.scn:2: this kind of group needs sleep=" "$out/e1.scn"
printf 'cpus 2\nfrobnicate 3\n' > "$out/e2.scn"
bad "unknown keyword" "e2.scn:2: unknown keyword" "$out/e2.scn"
printf 'cpus 2000\n' > "$out/e3.scn"
bad "too many CPUs" "cpus: 1 to 1024" "$out/e3.scn"
bad "no such file" "No such file" "$out/none.scn"
bad "bad --ncpu" "--ncpu" "$out/mix.scn" --ncpu 0
printf 'cpus 2\ngroup g kind=hog class=batch\n' > "$out/e7.scn"
bad "unknown class" "bad group setting 'class=batch'" "$out/e7.scn"
bad "unknown tunable" "has no tunable kern.sched.nosuch" "$out/mix.scn" --set nosuch=1
bad "tunable out of range" "out of range" "$out/mix.scn" --set steal_idle=7
bad "read-only tunable" "read-only" "$out/mix.scn" --set preemption=0
printf 'cpus 2\nwarmup nan\ngroup g kind=hog\n' > "$out/e8.scn"
bad "not a number" "e8.scn:2: bad time 'nan'" "$out/e8.scn"
printf 'cpus 2\nseed abc\ngroup g kind=hog\n' > "$out/e9.scn"
bad "bad seed" "e9.scn:2: seed: a number" "$out/e9.scn"
printf 'cpus 2\ngroup g kind=hog\nexpect g.cpu > ten\n' > "$out/e10.scn"
bad "bad expectation" "e10.scn:3: not a number" "$out/e10.scn"
printf 'cpus 2\ngroup t kind=forkjoin depth=10 fanout=10 run=1ms\n' > "$out/e11.scn"
bad "too many threads" "more than 100000 threads" "$out/e11.scn"
printf 'cpus 2\r\nduration 1s\r\ngroup g kind=hog\r\n' > "$out/crlf.scn"
"$ultsim" "$out/crlf.scn" > /dev/null || fail "a CRLF file was refused"
bad "bad --duration" "usage" "$out/mix.scn" --duration inf
bad "huge --ncpu" "--ncpu" "$out/mix.scn" --ncpu 4294967298
printf 'cpus 2\ngroup g kind=hog cpu=5\n' > "$out/e4.scn"
bad "bound past the CPUs" "cpu 5 of 2" "$out/e4.scn"
printf 'cpus 2\ngroup g kind=hog\nexpect g.nosuch < 3\n' > "$out/e5.scn"
"$ultsim" "$out/e5.scn" > "$out/e5.txt" && fail "unknown metric: accepted"
grep -q "no metric g.nosuch" "$out/e5.txt" || fail "unknown metric: no message"
printf 'cpus 2\ngroup g kind=hog\nexpect g.cpu > 101\n' > "$out/e6.scn"
set +e
"$ultsim" "$out/e6.scn" > "$out/e6.txt"
rc=$?
set -e
[ $rc = 3 ] || fail "a failed expectation: exit $rc, not 3"
grep -q "expect g.cpu > 101: .* FAILED" "$out/e6.txt" || fail "no FAILED line"
echo "ultsim tool: ok"
