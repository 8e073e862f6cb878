#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# ult-top against a running program (top_target): batch mode must list its
# uthreads with their state and wait channel and its workers; under tmux,
# the interactive view must show the same and quit on q.
#   ult_top.sh ULT_TOP TOP_TARGET
set -eu
top=$1 target=$2
out=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || :
	tmux kill-session -t "ulttop$$" 2>/dev/null || :
	rm -rf "$out"
}
trap cleanup EXIT
fail() { echo "ult_top: $*"; cat "$out/frame" 2>/dev/null; exit 1; }

ULT_SHM=1 "$target" > "$out/ready" &
pid=$!
for i in $(seq 100); do grep -q ready "$out/ready" && break; sleep 0.1; done
grep -q "ready $pid" "$out/ready" || fail "the target did not start"

# Batch: two frames, the second with %CPU measured between them.
"$top" -b -n 2 -d 0.5 "$pid" > "$out/frame" || fail "ult-top -b failed"
[ "$(grep -c '^ult-top  pid '"$pid" "$out/frame")" = 2 ] || fail "not 2 frames"
grep -Eq 'top-sleeper +sleep .* sem$' "$out/frame" || fail "no sleeper on sem"
grep -Eq 'top-waiter +sleep .* mutex$' "$out/frame" || fail "no waiter on mutex"
grep -Eq 'top-spinner +(run|ready) ' "$out/frame" || fail "no running spinner"
# The deadlocked pair: each waits for a mutex the other owns.
lid=$(awk '$2 == "top-left" { print $1; exit }' "$out/frame")
rid=$(awk '$2 == "top-right" { print $1; exit }' "$out/frame")
grep -Eq "top-left +sleep .* mutex 0x[0-9a-f]+ owner $rid\$" "$out/frame" ||
    fail "no owner for top-left's mutex"
grep -Eq "top-right +sleep .* mutex 0x[0-9a-f]+ owner $lid\$" "$out/frame" ||
    fail "no owner for top-right's mutex"
grep -Eq "^DEADLOCK: $lid top-left \(mutex 0x[0-9a-f]+\) -> $rid top-right \(mutex 0x[0-9a-f]+\) -> $lid\$" \
    "$out/frame" || fail "no deadlock line"
grep -Eq '^0 +[0-9]+ ' "$out/frame" || fail "no worker 0"
grep -Eq '^1 +[0-9]+ ' "$out/frame" || fail "no worker 1"
# The spinner uses most of a CPU: its %CPU in the second frame is large.
spin=$(awk '/top-spinner/ { v = $8 } END { print v + 0 }' "$out/frame")
awk -v v="$spin" 'BEGIN { exit !(v > 20) }' || fail "spinner at $spin %CPU"

# Errors are clear.
if "$top" -b -n 1 999999999 2> "$out/err"; then fail "a bad pid was accepted"; fi
grep -q "a running ult process" "$out/err" || fail "no clear message: $(cat "$out/err")"

# Interactive, under tmux, if there is one.
if command -v tmux >/dev/null 2>&1; then
	s=ulttop$$
	tmux new-session -d -s "$s" -x 160 -y 40 "$top $pid; sleep 30"
	ok=0
	for i in $(seq 50); do
		sleep 0.2
		tmux capture-pane -p -t "$s" > "$out/frame"
		if grep -q top-spinner "$out/frame" &&
		    grep -q top-sleeper "$out/frame"; then
			ok=1
			break
		fi
	done
	[ $ok = 1 ] || fail "tmux: no uthreads on the screen"
	grep -q '^WORKER' "$out/frame" || fail "tmux: no worker table"
	tmux send-keys -t "$s" q
	# After q, ult-top exits and the shell's sleep runs: no new frames,
	# and the screen keeps what it had.
	sleep 1
	tmux capture-pane -p -t "$s" > "$out/after"
	sleep 1.5
	tmux capture-pane -p -t "$s" > "$out/after2"
	cmp -s "$out/after" "$out/after2" || fail "tmux: still refreshing after q"
else
	echo "tmux not installed: interactive view not tested"
fi
# A file of the wrong size under a process's name is refused.
sleep 30 &
sp=$!
printf 'not a segment' > "/dev/shm/ult-$sp"
if "$top" -b -n 1 "$sp" 2> "$out/err"; then fail "a foreign file was read"; fi
rm -f "/dev/shm/ult-$sp"
kill "$sp"
grep -q "not a ult statistics segment" "$out/err" ||
	fail "wrong size: $(cat "$out/err")"

# The segment truncated under ult-top (its owner can): a message and exit
# status 1, not SIGBUS; and the program, which writes it with pwrite, lives
# on.
"$top" -b -n 100 -d 0.1 "$pid" > /dev/null 2> "$out/err" &
tp=$!
sleep 0.5
truncate -s 0 "/dev/shm/ult-$pid"
rc=0
wait "$tp" || rc=$?
[ "$rc" = 1 ] || fail "ult-top on a truncated segment: status $rc: $(cat "$out/err")"
grep -q "truncated" "$out/err" || fail "truncated: $(cat "$out/err")"
sleep 1.2 # two snapshots of the publisher's into the truncated file
kill -0 "$pid" || fail "the target died when its segment was truncated"

kill -TERM "$pid"
wait "$pid" || fail "the target failed at exit"
pid=
[ ! -e "/dev/shm/ult-$(cat /dev/null)$!" ] || :
echo "ult_top: ok"
