#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# memcached -t 4 (four worker threads, each with its own event loop,
# plus its listener and maintenance threads) under ult-run, both
# policies, 2 and 4 workers, where its kernel threads must be ult's
# workers only: mcclient runs set/get/incr/delete on 8
# connections at once and checks every reply, including one counter all
# connections bump; then SIGTERM must end memcached with status 0.  Last,
# mcclient itself (a pthread program) runs under ult-run against a native
# memcached.
. "$(dirname "$0")/lib.sh"
need memcached
[ -x "$mcclient" ] || fail "no mcclient at '$mcclient'"
user="" && [ "$(id -u)" = 0 ] && user="-u root"

# mc_start CFG: memcached on a free port, in $port, its pid in $mpid.
mc_start() {
	prefix "$1"
	for try in 1 2 3; do
		port=$("$mcclient" port) || fail "no free port"
		# shellcheck disable=SC2086
		$cmd_prefix memcached -l 127.0.0.1 -p "$port" -U 0 -t 4 -c 256 \
		    $user >"$tmp/mc.log" 2>&1 &
		mpid=$!
		i=0
		while [ $i -lt $((limit * 10)) ]; do
			if ! kill -0 "$mpid" 2>/dev/null; then
				wait "$mpid"
				echo "memcached ended early ($?): $(cat "$tmp/mc.log")"
				break
			fi
			"$mcclient" ready "$port" && return 0
			sleep 0.1
			i=$((i + 1))
		done
		if kill -0 "$mpid" 2>/dev/null; then
			echo "HANG: memcached does not accept after $limit s"
			stacks "$mpid"
			kill -KILL "$mpid"
			fail "$1: memcached never accepted"
		fi
		# Someone else took the port: try another.
		grep -q 'in use' "$tmp/mc.log" || fail "$1: memcached failed to start"
	done
	fail "$1: no port memcached could bind"
}

# mc_stop CFG: SIGTERM, and memcached must end with status 0.
mc_stop() {
	kill -TERM "$mpid"
	watch "$mpid" 10 "memcached still running 10 s after SIGTERM"
	wait "$mpid"
	mrc=$?
	unwatch
	[ $mrc = 0 ] || { cat "$tmp/mc.log"; fail "$1: memcached exit status $mrc after SIGTERM"; }
}

# threads CFG: memcached's kernel threads must be what CFG says: its
# four named workers natively; under ult-run the runtime's NCPU workers
# (ult-w*) and its spare (ult-spare), and none of memcached's own, which
# are uthreads there.
threads() {
	cat /proc/"$mpid"/task/*/comm >"$tmp/comm" 2>/dev/null
	mcw=$(grep -c '^mc-worker' "$tmp/comm")
	ultw=$(grep -c '^ult-w' "$tmp/comm")
	spare=$(grep -c '^ult-spare' "$tmp/comm")
	case $1 in
	native) [ "$mcw" = 4 ] && [ "$ultw" = 0 ] && [ "$spare" = 0 ] ;;
	*) [ "$mcw" = 0 ] && [ "$ultw" = "${1#*-}" ] && [ "$spare" = 1 ] ;;
	esac || { mc_stop "$1"; fail "$1: memcached's kernel threads:" \
	    "$(sort "$tmp/comm" | uniq -c | tr -s ' \n' ' ')"; }
}

for cfg in native $configs; do
	mc_start "$cfg"
	threads "$cfg"
	on native "$mcclient" check "$port" 8 300 ||
	    { mc_stop "$cfg"; fail "$cfg: the client's checks failed ($rc)"; }
	mc_stop "$cfg"
	echo "ok: $cfg memcached -t 4: 8 connections x 300 rounds checked; SIGTERM -> 0"
done
if [ -n "$configs" ]; then
	cfg=${configs%% *}
	mc_start native
	on "$cfg" "$mcclient" check "$port" 8 300 ||
	    { mc_stop native; fail "mcclient under ult-run ($cfg) failed ($rc)"; }
	mc_stop native
	echo "ok: mcclient under ult-run ($cfg) against native memcached"
fi
