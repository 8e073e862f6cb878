#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The report's parsing, checked on made-up figures (CTest bench_report):
#
#   sh bench/test_report.sh
#
# rounds.awk's medians and spread; serve.awk's and busy.awk's tables and
# targets from them; every malformed input (a value that is not a
# number, a short line, a median outside its spread, a case that is not
# <program>:<host>, an old case name) failing with a message rather
# than printing a table; report.sh failing and saying so on such input;
# the CPU split of the isolated layout; and spinners that leave no
# process behind.  No benchmark runs here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bw_here=$here
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ult-test-report.XXXXXX")
trap 'bw_spin_stop; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
nfail=0
say() { printf '%s\n' "$*" >&2; }
. "$here/lib.sh"

fail() {
	say "FAIL: $*"
	nfail=$((nfail + 1))
}
# has <file> <text>: the file holds the text on one line.
has() {
	grep -qF -- "$2" "$1" || fail "$1 has no line with: $2"
}
R() { # R exp case runtime metric value: one result line
	printf 'R\t%s\t%s\t%s\t%s\t%s\n' "$@"
}
# fig <table script> [awk args]: run it on $tmp/results.tsv
fig() {
	t=$1
	shift
	awk -f "$here/figures.awk" -f "$here/$t" "$@" "$tmp/results.tsv"
}
# refuses <what> <table script> [awk args]: it must fail, with a message
refuses() {
	w=$1
	shift
	if fig "$@" >"$tmp/out" 2>"$tmp/err"; then
		fail "$w: accepted (printed $(wc -l <"$tmp/out") lines)"
	elif [ ! -s "$tmp/err" ]; then
		fail "$w: failed without a message"
	fi
}

# ---- rounds.awk: median, spread, runs ----
{
	for v in 3 1 2; do R busy pipeline_thread:quiet ult s $v; done
	for v in 4 8; do R busy pipeline_thread:quiet pthread s $v; done
	R busy pipeline_thread:quiet ult s 1.5e1
	echo "a line that is not a result line"
} >"$tmp/raw"
awk -f "$here/rounds.awk" -v spread=. "$tmp/raw" >"$tmp/r" ||
    fail "rounds.awk refused good input"
has "$tmp/r" "$(R busy pipeline_thread:quiet ult s 2.5)"
has "$tmp/r" "$(R busy pipeline_thread:quiet ult s:min 1)"
has "$tmp/r" "$(R busy pipeline_thread:quiet ult s:max 1.5e1)"
has "$tmp/r" "$(R busy pipeline_thread:quiet ult runs 4)"
has "$tmp/r" "$(R busy pipeline_thread:quiet pthread s 6)"
[ "$(grep -c . "$tmp/r")" -eq 8 ] || fail "rounds.awk: not 8 lines out"
awk -f "$here/rounds.awk" "$tmp/raw" >"$tmp/r2"
[ "$(grep -c . "$tmp/r2")" -eq 2 ] ||
    fail "rounds.awk without spread: not one line per figure"
for bad in "R	busy	x:quiet	ult	s	1,5" "R	busy	x:quiet	ult	s" \
    "R	busy	x:quiet	ult	s	1	2" "R	busy	x:quiet	ult	s	fast" \
    "R	busy	x:quiet	ult	s	"; do
	if printf '%s\n' "$bad" | awk -f "$here/rounds.awk" >"$tmp/out" \
	    2>/dev/null || [ -s "$tmp/out" ]; then
		fail "rounds.awk took a malformed line: $bad"
	fi
done

# ---- busy.awk: the table and the targets ----
{
	for h in quiet spin over; do
		for v in 1.0 1.2 0.8; do
			R busy pipeline_thread:$h ult s $v
			R busy pipeline_thread:$h pthread s 2.0
			R busy httpd:$h ult req/s 900
			R busy httpd:$h pthread req/s 1000
			R busy httpd:$h ult p99_us 5000
			R busy httpd:$h pthread p99_us 2500
			R busy mutex_handoff:$h ult ns/op 200
			R busy mutex_handoff:$h pthread ns/op 8000
			R busy mutex_handoff:$h go ns/op 100
		done
	done
} | awk -f "$here/rounds.awk" -v spread=. >"$tmp/results.tsv"
fig busy.awk >"$tmp/busy.md" || fail "busy.awk refused good figures"
has "$tmp/busy.md" "Samples per figure: quiet 3, spin 3, over 3"
has "$tmp/busy.md" "| pipeline_thread | spin | s | 1.00 (0.8-1.20) | 2.00 (2.00-2.00) | - | 0.5x |  |"
has "$tmp/busy.md" "| mutex_handoff | over | ns/op | 200 (200-200) | 8000 (8000-8000) | 100 (100-100) | 0.025x | 2x |"
has "$tmp/busy.md" "| pipeline fed by a uthread, s, over | 1.00 | 2.00 | 0.5 | <= 1 | yes |"
has "$tmp/busy.md" "| httpd req/s, over | 900 | 1000 | 0.9 | >= 1 | **no** |"
# A missing peer is "not measured", not a made-up ratio.
grep -v 'pipeline_thread:over	pthread' "$tmp/results.tsv" >"$tmp/x" &&
    mv "$tmp/x" "$tmp/results.tsv"
fig busy.awk >"$tmp/busy.md" || fail "busy.awk refused a missing peer"
has "$tmp/busy.md" "| pipeline fed by a uthread, s, over | 1.00 | - | | <= 1 | not measured |"
cp "$tmp/results.tsv" "$tmp/good.tsv"

cp "$tmp/good.tsv" "$tmp/results.tsv"
R busy httpd:spin ult req/s 12k >>"$tmp/results.tsv"
refuses "busy.awk, a value that is not a number" busy.awk
cp "$tmp/good.tsv" "$tmp/results.tsv"
printf 'R\tbusy\thttpd:spin\tult\treq/s\n' >>"$tmp/results.tsv"
refuses "busy.awk, a line of five fields" busy.awk
cp "$tmp/good.tsv" "$tmp/results.tsv"
R busy httpd:spin ult p99_us:min 9000 >>"$tmp/results.tsv"
refuses "busy.awk, a median below its minimum" busy.awk
cp "$tmp/good.tsv" "$tmp/results.tsv"
R busy httpd ult req/s 1000 >>"$tmp/results.tsv"
refuses "busy.awk, a case without its host" busy.awk
cp "$tmp/good.tsv" "$tmp/results.tsv"
R busy httpd:busy ult req/s 1000 >>"$tmp/results.tsv"
refuses "busy.awk, an unknown host" busy.awk
cp "$tmp/good.tsv" "$tmp/results.tsv"
R busy httpd:spin ult-4bsd req/s 1000 >>"$tmp/results.tsv"
refuses "busy.awk, an unknown runtime" busy.awk

# ---- serve.awk: serve and memcached, isolated and shared ----
{
	for v in 100 300 200; do
		R serve iso_hogs=0 ult req/s 5000
		R serve iso_hogs=0 ult p99_us $v
		R serve iso_hogs=2 ult req/s 4000
		R serve iso_hogs=2 ult p99_us $((v * 3))
		R serve iso_hogs=0 pthread req/s 4000
		R serve iso_hogs=0 pthread p99_us 150
		R serve iso_hogs=2 pthread req/s 2000
		R serve iso_hogs=2 pthread p99_us 1200
		R dropin memcached_iso_hogs=0 pthread p99_us 100
		R dropin memcached_iso_hogs=0 ult p99_us 90
		R dropin memcached_iso_hogs=2 pthread p99_us 1000
		R dropin memcached_iso_hogs=2 ult p99_us 1000
	done
	R serve shared_hogs=0 ult req/s 6000
	R serve shared_hogs=0 ult p99_us 400
	R serve shared_hogs=2 ult req/s 3000
	R serve shared_hogs=2 ult p99_us 4000
	R dropin memcached_shared_hogs=0 pthread p99_us 100
	R dropin memcached_shared_hogs=0 ult p99_us 300
	R dropin memcached_shared_hogs=2 pthread p99_us 500
	R dropin memcached_shared_hogs=2 ult p99_us 900
	R dropin threads_T=2 ult events/s 5
} | awk -f "$here/rounds.awk" -v spread='^(iso|shared|memcached_)' \
    >"$tmp/results.tsv"
cp "$tmp/results.tsv" "$tmp/good.tsv"
fig serve.awk -v part=serve >"$tmp/serve.md" ||
    fail "serve.awk refused good serve figures"
has "$tmp/serve.md" "| isolated | 2 | ult (httpd) | 3 | 4000 | - | 600 (300-900) | - | - |"
has "$tmp/serve.md" "| shared | 0 | ult (httpd) | 1 | 6000 | - | 400 | - | - |"
has "$tmp/serve.md" "| isolated: ult p99 with hogs / without | 600 | 200 | 3 | <= 2 | **no** |"
has "$tmp/serve.md" "| isolated: ult p99 with hogs / pthread's with hogs | 600 | 1200 | 0.5 | <= 1 | yes |"
has "$tmp/serve.md" "| shared: ult p99 with hogs / without | 4000 | 400 | 10 | | |"
fig serve.awk -v part=memcached >"$tmp/mc.md" ||
    fail "serve.awk refused good memcached figures"
has "$tmp/mc.md" "| isolated: ult p99 / native p99, alone | 90.00 | 100 | 0.9 | <= 1 | yes |"
# "below native beside hogs": equal is not below.
has "$tmp/mc.md" "| isolated: ult p99 / native p99, beside hogs | 1000 | 1000 | 1 | < 1 | **no** |"
has "$tmp/mc.md" "| shared | 2 | ult (ult-run, ULE) | 1 | - | - | 900 | - |"
R dropin memcached_hogs=0 ult p99_us 90 >>"$tmp/results.tsv"
refuses "serve.awk, memcached's old case name" serve.awk -v part=memcached
cp "$tmp/good.tsv" "$tmp/results.tsv"
R serve iso_hogs=0 ult p99_us 1O0 >>"$tmp/results.tsv"
refuses "serve.awk, a letter O in a number" serve.awk -v part=serve
cp "$tmp/good.tsv" "$tmp/results.tsv"
R serve iso_hogs=2 ult p99_us:max 500 >>"$tmp/results.tsv"
refuses "serve.awk, a median above its maximum" serve.awk -v part=serve
cp "$tmp/good.tsv" "$tmp/results.tsv"
refuses "serve.awk, no part" serve.awk

# ---- report.sh: malformed figures fail the report, loudly ----
mkdir -p "$tmp/run/logs"
cp "$tmp/good.tsv" "$tmp/run/results.tsv"
if ! sh "$here/report.sh" "$tmp/run" "" "" >"$tmp/run/report.md" \
    2>"$tmp/err"; then
	fail "report.sh failed on good figures: $(cat "$tmp/err")"
fi
has "$tmp/run/report.md" "| isolated: ult p99 / native p99, alone | 90.00 | 100 | 0.9 | <= 1 | yes |"
R busy httpd:spin ult req/s lots >>"$tmp/run/results.tsv"
if sh "$here/report.sh" "$tmp/run" "" "" >"$tmp/run/report.md" \
    2>"$tmp/err"; then
	fail "report.sh succeeded on a malformed busy figure"
fi
has "$tmp/run/report.md" "**Malformed figures: no table.** line "
# The other tables, whose figures are sound, are still there.
has "$tmp/run/report.md" "| isolated: ult p99 / native p99, alone | 90.00 | 100 | 0.9 | <= 1 | yes |"
has "$tmp/err" "malformed figures for: busy.awk"
grep -q "malformed figures for: busy.awk$" "$tmp/err" ||
    fail "report.sh: a table other than busy's refused: $(cat "$tmp/err")"

# ---- the summary: the new cases' rows ----
awk -f "$here/summary.awk" "$tmp/good.tsv" >"$tmp/sum"
grep -q '^serve  *iso_hogs=2  *p99_us  *ult 600 ' "$tmp/sum" ||
    fail "summary: no serve iso_hogs=2 p99 row: $(cat "$tmp/sum")"
grep -q '^dropin  *memcached_shared_hogs=N  *p99_us  *pthread 500  *ult 900' \
    "$tmp/sum" || fail "summary: no memcached_shared_hogs=N row"

# ---- lib.sh: the isolated layout and the spinners ----
bw_split 0-3 && [ "$srv_cpus/$cli_cpus/$nsrv/$ncli" = "0,1/2,3/2/2" ] ||
    fail "bw_split 0-3: $srv_cpus/$cli_cpus/$nsrv/$ncli"
bw_split 0,2-4 && [ "$srv_cpus/$cli_cpus" = "0,2/3,4" ] ||
    fail "bw_split 0,2-4: $srv_cpus/$cli_cpus"
bw_split 5 && fail "bw_split on one CPU: a layout ($srv_cpus/$cli_cpus)"
bw_spin_start 2
bw_spin_start 1 "" 10
pgs=$bw_spin_pgs
sleep 0.2
for pg in $pgs; do
	bw_group_alive "$pg" || fail "spinner group $pg did not start"
done
bw_spin_stop || fail "bw_spin_stop reported spinners left behind"
for pg in $pgs; do
	bw_group_alive "$pg" && fail "spinner group $pg outlived bw_spin_stop"
done

if [ $nfail -gt 0 ]; then
	say "test_report: $nfail check(s) failed"
	exit 1
fi
say "test_report: all checks passed"
