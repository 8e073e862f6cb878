#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# redis-server with io-threads 4 and io-threads-do-reads (its main thread
# hands reads and writes to three I/O threads and spins until they are
# done; they spin for work too), its bio threads and jemalloc's background
# threads, natively and under ult-run.  redis-benchmark (native) sends
# SET, GET, INCR and LPUSH on 20 connections, pipelined so that the I/O
# threads stay on (redis turns them off below 8 waiting clients) and the
# run stays short even where four spinning threads share two CPUs; every
# INCR and LPUSH must have counted.  Then a few SET/GET results, a BGSAVE
# (a fork: the child writes the dump) that must complete, with LASTSAVE
# moved and a dump redis-check-rdb accepts, and SHUTDOWN with status 0.
# Under ult-run redis's threads must be uthreads: no kernel thread of its
# own I/O threads (io_thd_*), which are kernel threads natively.
. "$(dirname "$0")/lib.sh"
for t in redis-server redis-cli redis-benchmark redis-check-rdb; do need $t; done
[ -x "$mcclient" ] || fail "no mcclient at '$mcclient'"
n=3000

cli() { redis-cli -p "$port" "$@"; }

# rd_start CFG: redis-server on a free port, in $port, its pid in $rpid,
# its files in $dir.
rd_start() {
	prefix "$1"
	dir="$tmp/$1"
	mkdir -p "$dir"
	for try in 1 2 3; do
		port=$("$mcclient" port) || fail "no free port"
		cat >"$dir/redis.conf" <<-EOC
		bind 127.0.0.1
		port $port
		dir $dir
		dbfilename dump.rdb
		logfile $dir/log
		save ""
		appendonly no
		daemonize no
		io-threads 4
		io-threads-do-reads yes
		EOC
		# shellcheck disable=SC2086
		$cmd_prefix redis-server "$dir/redis.conf" >"$dir/out" 2>&1 &
		rpid=$!
		i=0
		while [ $i -lt $((limit * 10)) ]; do
			if ! kill -0 "$rpid" 2>/dev/null; then
				wait "$rpid"
				echo "redis-server ended early ($?): $(cat "$dir/out" "$dir/log")"
				break
			fi
			[ "$(cli ping 2>/dev/null)" = PONG ] && return 0
			sleep 0.1
			i=$((i + 1))
		done
		if kill -0 "$rpid" 2>/dev/null; then
			echo "HANG: redis-server does not answer after $limit s"
			stacks "$rpid"
			kill -KILL "$rpid"
			fail "$1: redis-server never answered"
		fi
		# Someone else took the port: try another.
		grep -q 'in use' "$dir/log" || fail "$1: redis-server failed to start"
	done
	fail "$1: no port redis-server could bind"
}

# rd_stop CFG: SHUTDOWN NOSAVE, and redis-server must end with status 0.
rd_stop() {
	cli shutdown nosave >/dev/null 2>&1
	watch "$rpid" 20 "redis-server still running 20 s after SHUTDOWN"
	wait "$rpid"
	rrc=$?
	unwatch
	[ $rrc = 0 ] || { cat "$dir/log"; fail "$1: redis-server exit status $rrc after SHUTDOWN"; }
}

# bad CFG MSG: stop the server, print its log, fail.
bad() {
	kill -KILL "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	tail -20 "$dir/log"
	fail "$1: $2"
}

# threads CFG: natively three io_thd_* kernel threads; under ult-run none,
# and the runtime's NCPU workers.
threads() {
	cat /proc/"$rpid"/task/*/comm >"$dir/comm" 2>/dev/null
	io=$(grep -c '^io_thd_' "$dir/comm")
	ultw=$(grep -c '^ult-w' "$dir/comm")
	case $1 in
	native) [ "$io" = 3 ] && [ "$ultw" = 0 ] ;;
	*) [ "$io" = 0 ] && [ "$ultw" -ge "${1#*-}" ] ;;
	esac || bad "$1" "redis-server's kernel threads: $(sort "$dir/comm" | uniq -c | tr -s ' \n' ' ')"
}

for cfg in native $configs; do
	rd_start "$cfg"
	threads "$cfg"
	on native redis-benchmark -p "$port" -c 20 -P 50 -n $n \
	    -t set,get,incr,lpush -q >"$dir/bench" 2>&1 ||
	    bad "$cfg" "redis-benchmark: exit status $rc: $(tail -c 300 "$dir/bench")"
	for t in SET GET INCR LPUSH; do
		tr '\r' '\n' <"$dir/bench" | grep -q "^$t: .* requests per second" ||
		    bad "$cfg" "redis-benchmark did not finish $t: $(tail -c 300 "$dir/bench")"
	done
	[ "$(cli get counter:__rand_int__)" = $n ] ||
	    bad "$cfg" "INCR counter: $(cli get counter:__rand_int__), want $n"
	[ "$(cli llen mylist)" = $n ] || bad "$cfg" "LLEN mylist: $(cli llen mylist), want $n"
	i=1
	while [ $i -le 20 ]; do
		echo "SET key$i value$((i * i))"
		i=$((i + 1))
	done | cli >/dev/null
	[ "$(cli get key7)" = value49 ] || bad "$cfg" "GET key7: $(cli get key7)"
	[ "$(cli mget key1 key20 nokey | tr '\n' ' ')" = "value1 value400  " ] ||
	    bad "$cfg" "MGET: $(cli mget key1 key20 nokey | tr '\n' ' ')"
	[ "$(cli append key3 x)" = 7 ] || bad "$cfg" "APPEND key3"
	[ "$(cli get key3)" = value9x ] || bad "$cfg" "GET key3 after APPEND: $(cli get key3)"
	# BGSAVE forks; LASTSAVE has a resolution of a second.
	last=$(cli lastsave)
	while [ "$(date +%s)" -le "$last" ]; do sleep 0.2; done
	[ "$(cli bgsave)" = "Background saving started" ] || bad "$cfg" "BGSAVE refused"
	i=0
	while [ "$(cli lastsave)" = "$last" ]; do
		[ $i -lt $((limit * 10)) ] || { stacks "$rpid"; bad "$cfg" "BGSAVE did not complete in $limit s"; }
		sleep 0.1
		i=$((i + 1))
	done
	cli info persistence | tr -d '\r' | grep -q '^rdb_last_bgsave_status:ok' ||
	    bad "$cfg" "BGSAVE failed: $(cli info persistence | grep rdb_)"
	[ -s "$dir/dump.rdb" ] || bad "$cfg" "no dump file after BGSAVE"
	redis-check-rdb "$dir/dump.rdb" >"$dir/check" 2>&1 ||
	    bad "$cfg" "redis-check-rdb refuses the dump: $(tail -3 "$dir/check")"
	rd_stop "$cfg"
	echo "ok: $cfg redis io-threads 4: SET GET INCR LPUSH x $n on 20 connections;" \
	    "counts, GET/MGET; BGSAVE dump checked; SHUTDOWN -> 0"
done
