# SPDX-License-Identifier: BSD-2-Clause
# One-screen console summary of a suite run: the headline row of each
# experiment, every runtime that produced it.  Input: results.tsv.
BEGIN {
	FS = "\t"
	n = split("preempt|busy_loop|loss% preempt|two_hogs|loss% " \
	    "micro|yield|ns/op micro|create_join|ns/op micro|create_join_w1|ns/op " \
	    "micro|create_join_foreign|ns/op " \
	    "micro|mutex_handoff|ns/op micro|mutex_handoff|futex/op " \
	    "micro|condvar_prodcons|ns/item " \
	    "micro|skynet|ms micro|thread_ring|ns/op " \
	    "threads|T=2|events/s threads|T=64|events/s " \
	    "nice|nice=0|share% nice|interactive|p99_us " \
	    "hint|all|s hint|w=1|s make|j4|real_s make|j16|real_s " \
	    "latency|hogs=0|p99_us latency|hogs=N|p99_us " \
	    "serve|iso_hogs=0|req/s serve|iso_hogs=0|p99_us " \
	    "serve|iso_hogs=2|p99_us serve|shared_hogs=2|p99_us " \
	    "scale|N=8|events/s scale|N=256|events/s " \
	    "dropin|threads_T=64|events/s dropin|mutex_T=64|events/s " \
	    "dropin|memcached_iso_hogs=0|p99_us " \
	    "dropin|memcached_iso_hogs=2|p99_us " \
	    "dropin|memcached_shared_hogs=N|p99_us " \
	    "busy|pipeline_thread:quiet|s busy|pipeline_thread:spin|s " \
	    "busy|pipeline_thread:over|s busy|httpd:spin|req/s " \
	    "busy|httpd:over|req/s busy|mutex_handoff:over|ns/op",
	    want, " ")
}
$1 == "R" {
	c = $3
	if ($2 == "latency" && c ~ /^hogs=[1-9]/)
		c = "hogs=N" # one hog per CPU: the count is the machine's
	if ($2 == "dropin" && c ~ /^memcached_shared_hogs=[1-9]/)
		c = "memcached_shared_hogs=N"
	k = $2 "|" c "|" $5
	if (!((k, $4) in v))
		line[k] = line[k] sprintf("  %s %s", $4, $6)
	v[k, $4] = 1
}
END {
	printf "%-8s %-23s %-9s %s\n", "exp", "case", "metric", "runtime value ..."
	for (i = 1; i <= n; i++) {
		split(want[i], p, "|")
		if (want[i] in line)
			printf "%-8s %-23s %-9s%s\n", p[1], p[2], p[3], line[want[i]]
	}
}
