#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# nginx serving static files through a thread pool (thread_pool, aio
# threads: its workers' reads go to four threads of the pool), natively
# and under ult-run, in two layouts:
#   daemon: the default one, master and two workers, daemon on; nginx
#     forks into the background, and the master forks its workers.  A
#     child forked without exec runs as a plain glibc process with the
#     drop-in loaded (DESIGN section 14, "fork"), so this checks that nginx
#     lives with that, not uthreads.
#   single: master_process off, daemon off: one process whose pool
#     threads are uthreads under ult-run.
# Each: every file fetched with curl must be the file, wrk (if installed;
# else a curl loop) must see no error and no non-2xx status, then
# `nginx -s quit` (daemon) or SIGQUIT (single) must end the server.
. "$(dirname "$0")/lib.sh"
need nginx
need curl
[ -x "$mcclient" ] || fail "no mcclient at '$mcclient'"
www="$tmp/www"
mkdir -p "$www"
head -c 1000 "$0" >"$www/small.txt"
gen "$tmp/big"
head -c 300000 "$tmp/big" >"$www/mid.txt"
head -c 3000000 "$tmp/big" >"$www/big.txt"
user="" && [ "$(id -u)" = 0 ] && user="user root;"

# ng_start CFG LAYOUT: nginx on a free port, in $port; the pid of the
# process that serves (the master, or the single process) in $npid.
ng_start() {
	prefix "$1"
	dir="$tmp/$1-$2"
	mkdir -p "$dir"
	case $2 in
	daemon) mode="daemon on; master_process on; worker_processes 2;" ;;
	single) mode="daemon off; master_process off;" ;;
	esac
	for try in 1 2 3; do
		port=$("$mcclient" port) || fail "no free port"
		cat >"$dir/nginx.conf" <<-EOC
		$user
		$mode
		pid $dir/nginx.pid;
		error_log $dir/error.log;
		thread_pool pool threads=4;
		events { worker_connections 256; }
		http {
			access_log off;
			client_body_temp_path $dir/body;
			proxy_temp_path $dir/proxy;
			fastcgi_temp_path $dir/fastcgi;
			uwsgi_temp_path $dir/uwsgi;
			scgi_temp_path $dir/scgi;
			sendfile off;
			server {
				listen 127.0.0.1:$port;
				root $www;
				location / { aio threads=pool; }
			}
		}
		EOC
		rm -f "$dir/nginx.pid"
		# shellcheck disable=SC2086
		$cmd_prefix nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" \
		    >"$dir/out" 2>&1 &
		npid=$!
		if [ "$2" = daemon ]; then
			# The foreground nginx ends once the master is in the
			# background.
			watch "$npid" "$limit" "nginx did not go to the background"
			wait "$npid"
			rc=$?
			unwatch
			[ $rc = 0 ] || { grep -q 'in use' "$dir/error.log" && continue
				fail "$1 $2: nginx exit status $rc: $(cat "$dir/out" "$dir/error.log")"; }
			npid=$(cat "$dir/nginx.pid" 2>/dev/null) ||
			    fail "$1 $2: no pid file"
		fi
		i=0
		while [ $i -lt $((limit * 10)) ]; do
			kill -0 "$npid" 2>/dev/null || break
			curl -s -o /dev/null "http://127.0.0.1:$port/small.txt" && return 0
			sleep 0.1
			i=$((i + 1))
		done
		if kill -0 "$npid" 2>/dev/null; then
			echo "HANG: nginx does not answer after $limit s"
			stacks "$npid"
			kill -KILL "$npid"
			fail "$1 $2: nginx never answered"
		fi
		# Someone else took the port: try another.
		grep -q 'in use' "$dir/error.log" ||
		    fail "$1 $2: nginx failed to start: $(cat "$dir/out" "$dir/error.log")"
	done
	fail "$1 $2: no port nginx could bind"
}

# bad CFG LAYOUT MSG: kill the server, print its log, fail.
bad() {
	pkill -KILL -P "$npid" 2>/dev/null
	kill -KILL "$npid" 2>/dev/null
	tail -20 "$dir/error.log"
	fail "$1 $2: $3"
}

# ng_stop CFG LAYOUT: a graceful stop, and the server must be gone.
ng_stop() {
	if [ "$2" = daemon ]; then
		on "$1" nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -s quit ||
		    bad "$1" "$2" "nginx -s quit: exit status $rc"
		i=0
		while kill -0 "$npid" 2>/dev/null; do
			[ $i -lt $((limit * 10)) ] || { stacks "$npid"; bad "$1" "$2" "the master still runs $limit s after quit"; }
			sleep 0.1
			i=$((i + 1))
		done
	else
		kill -QUIT "$npid"
		watch "$npid" "$limit" "nginx still running $limit s after SIGQUIT"
		wait "$npid"
		rc=$?
		unwatch
		[ $rc = 0 ] || bad "$1" "$2" "exit status $rc after SIGQUIT"
	fi
	! grep -E '\[(alert|emerg|crit)\]' "$dir/error.log" ||
	    fail "$1 $2: nginx logged the above"
}

for layout in daemon single; do
	for cfg in native $configs; do
		ng_start "$cfg" $layout
		for f in small mid big; do
			curl -sf -o "$dir/$f" "http://127.0.0.1:$port/$f.txt" ||
			    bad "$cfg" $layout "curl $f.txt failed"
			cmp -s "$dir/$f" "$www/$f.txt" ||
			    bad "$cfg" $layout "$f.txt: the body differs from the file"
		done
		if command -v wrk >/dev/null 2>&1; then
			on native wrk -t 2 -c 16 -d 2 "http://127.0.0.1:$port/mid.txt" \
			    >"$dir/wrk" 2>&1 || bad "$cfg" $layout "wrk: exit status $rc"
			grep -q 'requests in' "$dir/wrk" &&
			    ! grep -Eq 'Non-2xx|Socket errors' "$dir/wrk" ||
			    bad "$cfg" $layout "wrk: $(cat "$dir/wrk")"
			load="wrk -c 16 2 s: $(awk '/requests in/ { print $1 }' "$dir/wrk") requests"
		else
			i=0
			while [ $i -lt 50 ]; do
				curl -sf -o "$dir/loop" "http://127.0.0.1:$port/big.txt" &&
				    cmp -s "$dir/loop" "$www/big.txt" ||
				    bad "$cfg" $layout "curl loop: big.txt differs"
				i=$((i + 1))
			done
			load="50 curl GETs of big.txt"
		fi
		ng_stop "$cfg" $layout
		echo "ok: $cfg nginx $layout, aio threads: bodies as the files; $load; quit"
	done
done
