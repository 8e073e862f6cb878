# SPDX-License-Identifier: BSD-2-Clause
# What the suite's scripts share (sourced: . bench/lib.sh): the CPUs and
# their split between a server and its load generator, spinning
# processes that are sure to end, servers that print their port, and
# wrk's and mcclient's figures.  The caller sets bw_tmp (a directory of
# its own) and say().  Functions return non-zero after saying why on
# stderr; none exits.
# The variables named above, and those the functions set, are shared
# with the caller:
# shellcheck disable=SC2034,SC2154

# bw_cpus [LIST]: the CPUs of a list such as 0-3,6 (default: those this
# process may run on), one a line.
bw_cpus() {
	{ if [ $# -gt 0 ]; then echo "$1"; else
		sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status
	fi; } | tr ',' '\n' | awk -F- 'NF == 1 && $1 != "" { print $1 }
		NF == 2 { for (i = $1; i <= $2; i++) print i }'
}

# bw_split [LIST]: the isolated layout of a server and its load
# generator: the first half of the CPUs (at least one) for the server,
# the rest for the client.  Sets srv_cpus and cli_cpus (taskset lists),
# nsrv and ncli; fails on a single CPU, where there is nothing to
# isolate.
bw_split() {
	# shellcheck disable=SC2046
	set -- $(bw_cpus "$@")
	[ $# -ge 2 ] || return 1
	nsrv=$(($# / 2)) ncli=$(($# - $# / 2))
	srv_cpus="" cli_cpus="" i=0
	for c; do
		i=$((i + 1))
		if [ $i -le $nsrv ]; then
			srv_cpus=${srv_cpus:+$srv_cpus,}$c
		else
			cli_cpus=${cli_cpus:+$cli_cpus,}$c
		fi
	done
}

# bw_pin CPUS: the command prefix that runs on CPUS ("" for any CPU).
bw_pin() {
	[ -n "$1" ] && echo "taskset -c $1"
}

# Spinning processes.  Each set is one process group under timeout(1),
# which makes the group and ends it after BW_SPIN_LIMIT seconds (default
# 3600) should this script be killed before it can; bw_spin_stop ends
# the groups and checks with ps that nothing of them is left.
bw_spin_pgs=""
# bw_spin_start N [CPUS [NICE]]: N spinners, on CPUS, at NICE.
bw_spin_start() {
	# shellcheck disable=SC2046,SC2016
	timeout -s KILL "${BW_SPIN_LIMIT:-3600}" $(bw_pin "${2:-}") \
	    nice -n "${3:-0}" sh -c 'i=0
		while [ $i -lt '"$1"' ]; do
			i=$((i + 1))
			(while :; do :; done) &
		done
		wait' &
	bw_spin_pgs="$bw_spin_pgs $!"
}
# bw_group_alive PGID: whether a live (not zombie) process is in it.
bw_group_alive() {
	ps -eo pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { f = 1 }
	    END { exit !f }'
}
bw_spin_stop() {
	[ -n "$bw_spin_pgs" ] || return 0
	for pg in $bw_spin_pgs; do
		kill -TERM -"$pg" 2>/dev/null
	done
	for pg in $bw_spin_pgs; do
		wait "$pg" 2>/dev/null
	done
	left=""
	for pg in $bw_spin_pgs; do
		n=0
		while bw_group_alive "$pg" && [ $n -lt 20 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		if bw_group_alive "$pg"; then
			kill -KILL -"$pg" 2>/dev/null
			left="$left $pg"
		fi
	done
	bw_spin_pgs=""
	if [ -n "$left" ]; then
		say "spinners of process group(s)$left outlived SIGTERM (killed)"
		return 1
	fi
}

# bw_start TAG COMMAND...: a server in the background that writes
# "listening on 127.0.0.1:<port>" after listen(); sets bw_spid and
# bw_port once the whole line is there.  Each TAG has its own file: a
# shared one could still hold the previous server's line (a dead port)
# or, between two reads, be empty.  BW_START_SECS (default 30) bounds
# the wait, for a loaded machine.
bw_start() {
	lf="$bw_tmp/listen.$1"
	shift
	: >"$lf"
	"$@" >"$lf" &
	bw_spid=$! bw_port=""
	t0=$(date +%s)
	while :; do
		bw_port=$(head -n "$(wc -l <"$lf")" "$lf" |
		    sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p')
		[ -n "$bw_port" ] && return 0
		if ! kill -0 "$bw_spid" 2>/dev/null; then
			say "$*: exited before listening"
			return 1
		fi
		if [ $(($(date +%s) - t0)) -ge "${BW_START_SECS:-30}" ]; then
			say "$*: did not listen within ${BW_START_SECS:-30} s"
			return 1
		fi
		sleep 0.1
	done
}
bw_stop() {
	[ -n "${bw_spid:-}" ] || return 0
	kill "$bw_spid" 2>/dev/null
	wait "$bw_spid" 2>/dev/null
	bw_spid=""
}

# bw_wrk EXP CASE RUNTIME CPUS THREADS CONNS SECS WARM: wrk against the
# server on bw_port (pinned to CPUS unless ""), its figures checked and
# printed as result lines: req/s, p50_us, p99_us, max_us, timeouts.
# Checked: no connect, read or write error, no status other than
# 2xx/3xx, and as many bytes per request as bw_perreq, the first
# measurement's, within 1%.  bench/serve.lua prints wrk's exact figures.
# A run that completed no request fails, unless BW_WRK_ZERO_OK=1: then
# it is 0 req/s, without percentiles (an oversubscribed host can starve
# a server for a whole run, and that is the figure).
bw_wrk() {
	# shellcheck disable=SC2046
	pin=$(bw_pin "$4")
	url="http://127.0.0.1:$bw_port/"
	wout="$bw_tmp/wrk.$bw_port"
	# shellcheck disable=SC2086
	[ "$8" -gt 0 ] && $pin wrk -t"$5" -c"$6" -d"$8s" "$url" >/dev/null 2>&1
	# shellcheck disable=SC2086
	if ! $pin wrk -t"$5" -c"$6" -d"$7s" --latency \
	    -s "$bw_here/serve.lua" "$url" >"$wout" 2>&1; then
		say "$3 $2: wrk failed:"
		cat "$wout" >&2
		return 1
	fi
	sed 's/^/  /' "$wout" >&2
	fig=$(grep '^serve: ' "$wout" | tr ' ' '\n' | awk -F= -v ex="$1" \
	    -v cs="$2" -v rt="$3" -v ref="${bw_perreq:-}" \
	    -v zero="${BW_WRK_ZERO_OK:-}" '
		NF == 2 { v[$1] = $2 }
		END {
			err = v["connect"] + v["read"] + v["write"] + v["status"]
			pre = "R\t" ex "\t" cs "\t" rt "\t"
			if (v["requests"] == 0 && v["duration_us"] > 0 &&
			    err == 0 && zero == 1) {
				print "perreq "
				printf "%sreq/s\t0\n", pre
				printf "%stimeouts\t%d\n", pre, v["timeout"]
				exit
			}
			if (v["requests"] == "" || v["requests"] == 0) {
				print "fail no requests completed"
				exit
			}
			if (err > 0) {
				printf "fail errors: connect %d read %d write %d " \
				    "status %d\n", v["connect"], v["read"], \
				    v["write"], v["status"]
				exit
			}
			b = v["bytes"] / v["requests"]
			if (ref != "" && (b < ref * 0.99 || b > ref * 1.01)) {
				printf "fail %.1f bytes per request, not %.1f\n", \
				    b, ref
				exit
			}
			printf "perreq %.3f\n", b
			printf "%sreq/s\t%.0f\n", pre, \
			    v["requests"] / (v["duration_us"] / 1e6)
			printf "%sp50_us\t%.0f\n", pre, v["p50_us"]
			printf "%sp99_us\t%.0f\n", pre, v["p99_us"]
			printf "%smax_us\t%.0f\n", pre, v["max_us"]
			printf "%stimeouts\t%d\n", pre, v["timeout"]
		}')
	case $fig in
	perreq*)
		[ -z "${bw_perreq:-}" ] &&
		    bw_perreq=$(echo "$fig" | sed -n 's/^perreq //p')
		echo "$fig" | grep -q '^R.*req/s	0$' &&
		    say "$3 $2: no request completed: 0 req/s"
		echo "$fig" | grep '^R'
		;;
	*)
		say "$3 $2: ${fig#fail }"
		return 1
		;;
	esac
}

# bw_mc EXP CASE RUNTIME PREFIX SRVCPUS CLICPUS CONNS REQS: memcached -t 4
# (under PREFIX, e.g. ult-run; pinned to SRVCPUS unless "") answering
# mcclient's timed set+get pairs (pinned to CLICPUS unless ""); result
# lines req/s, p50_us, p99_us, max_us.  Needs bw_mcclient.  memcached must
# end on SIGTERM: a hang is a failure, not a stuck suite.
bw_mc() {
	user="" && [ "$(id -u)" = 0 ] && user="-u root"
	spin=$(bw_pin "$5") cpin=$(bw_pin "$6")
	tries=0
	while :; do
		tries=$((tries + 1))
		port=$("$bw_mcclient" port)
		mlog="$bw_tmp/mc.$port.log"
		# shellcheck disable=SC2086
		$spin $4 memcached -l 127.0.0.1 -p "$port" -U 0 -t 4 -c 1024 \
		    $user >"$mlog" 2>&1 &
		mpid=$!
		i=0
		until "$bw_mcclient" ready "$port"; do
			i=$((i + 1))
			if ! kill -0 "$mpid" 2>/dev/null || [ $i -gt 200 ]; then
				break
			fi
			sleep 0.1
		done
		kill -0 "$mpid" 2>/dev/null && break
		wait "$mpid" 2>/dev/null
		# Another copy may have taken the port between mcclient's
		# choice and memcached's bind: once more on another.
		if [ $tries -ge 2 ] || ! grep -q 'in use' "$mlog"; then
			say "$3 $2: memcached did not start: $(cat "$mlog")"
			return 1
		fi
	done
	if ! "$bw_mcclient" ready "$port"; then
		kill -KILL "$mpid" 2>/dev/null
		wait "$mpid" 2>/dev/null
		say "$3 $2: memcached did not answer: $(cat "$mlog")"
		return 1
	fi
	rc=0
	# shellcheck disable=SC2086
	timeout -k 5 120 $cpin "$bw_mcclient" lat "$port" "$7" "$8" "$2" "$3" |
	    awk -F'\t' -v OFS='\t' -v ex="$1" '$1 == "R" { $2 = ex } { print }' \
	    >"$bw_tmp/mcout.$port"
	# mcclient prints req/s, p50_us, p99_us and max_us, or fails.
	if [ "$(grep -c '^R' "$bw_tmp/mcout.$port")" -ne 4 ]; then
		say "$3 $2: mcclient lat $port $7 $8 failed"
		rc=1
	else
		cat "$bw_tmp/mcout.$port"
	fi
	kill -TERM "$mpid"
	(sleep 10 && kill -KILL "$mpid" 2>/dev/null) </dev/null \
	    >/dev/null 2>&1 &
	dog=$!
	if ! wait "$mpid"; then
		say "$3 $2: memcached exit status $? after SIGTERM"
		rc=1
	fi
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
	return $rc
}

# bw_rounds [SPREAD]: result lines with one figure per round in, one
# line per (experiment, case, runtime, metric) out, in the order of
# first appearance: the median of the rounds and, for cases matching the
# regular expression SPREAD, <metric>:min, <metric>:max and runs.
bw_rounds() {
	awk -f "$bw_here/rounds.awk" -v spread="${1:-}"
}
