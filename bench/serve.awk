# SPDX-License-Identifier: BSD-2-Clause
# The serve experiment's table and targets, for report.md:
#
#   awk -f bench/serve.awk results.tsv
#
# One row per server and case (hogs=0, hogs=2): req/s and the latency
# percentiles; then the ratios the targets are about, with their bounds
# where there is one (the kernel servers' slowdown is for comparison).
BEGIN {
	FS = "\t"
	nsrv = split("ult ult-hn pthread epoll", srv, " ")
	ncs = split("0 2", hogs, " ")
	nm = split("req/s p50_us p99_us max_us timeouts", m, " ")
	name["ult"] = "ult (httpd, 2 workers)"
	name["ult-hn"] = "ult, ULT_HOST_NICE=1"
	name["pthread"] = "pthread (thread per connection)"
	name["epoll"] = "epoll (one thread)"
}
$1 == "R" && $2 == "serve" {
	v[$3, $4, $5] = $6
	any = 1
}
function val(cs, rt, metric) {
	return ((cs, rt, metric) in v ? v[cs, rt, metric] : "")
}
function num(x) {
	if (x >= 100)
		return sprintf("%.0f", x)
	if (x >= 1)
		return sprintf("%.2f", x)
	return sprintf("%.3g", x)
}
# row(what, a, b, bound, le): a/b, against the bound (at most when le,
# at least otherwise) or none when bound is ""
function row(what, a, b, bound, le,    r) {
	if (a == "" || b == "" || b + 0 == 0) {
		printf "| %s | %s | %s | | %s | not measured |\n", what,
		    a == "" ? "-" : num(a + 0), b == "" ? "-" : num(b + 0),
		    bound == "" ? "" : (le ? "<= " : ">= ") bound
		return
	}
	r = (a + 0) / (b + 0)
	if (bound == "")
		printf "| %s | %s | %s | %.3g | | |\n", what, num(a + 0),
		    num(b + 0), r
	else
		printf "| %s | %s | %s | %.3g | %s %s | %s |\n", what,
		    num(a + 0), num(b + 0), r, le ? "<=" : ">=", bound,
		    (le ? r <= bound : r >= bound) ? "yes" : "**no**"
}
END {
	if (!any) {
		print "_No results: the experiment did not run or was " \
		    "skipped (see the log)._"
		exit
	}
	print "| server | hogs | req/s | p50 us | p99 us | max us | timeouts |"
	print "|---|---:|---:|---:|---:|---:|---:|"
	for (h = 1; h <= ncs; h++)
		for (s = 1; s <= nsrv; s++) {
			cs = "hogs=" hogs[h]
			line = "| " name[srv[s]] " | " hogs[h] " |"
			for (k = 1; k <= nm; k++) {
				x = val(cs, srv[s], m[k])
				line = line " " (x == "" ? "-" : num(x + 0)) " |"
			}
			print line
		}
	print ""
	print "| check | value | against | ratio | bound | holds |"
	print "|---|---:|---:|---:|---:|---|"
	row("ult p99 with hogs / without", val("hogs=2", "ult", "p99_us"),
	    val("hogs=0", "ult", "p99_us"), 2, 1)
	row("ult req/s / pthread req/s", val("hogs=0", "ult", "req/s"),
	    val("hogs=0", "pthread", "req/s"), 1, 0)
	row("ult req/s / pthread req/s, with hogs",
	    val("hogs=2", "ult", "req/s"), val("hogs=2", "pthread", "req/s"),
	    1, 0)
	row("pthread p99 with hogs / without",
	    val("hogs=2", "pthread", "p99_us"),
	    val("hogs=0", "pthread", "p99_us"), "", 1)
	row("epoll p99 with hogs / without", val("hogs=2", "epoll", "p99_us"),
	    val("hogs=0", "epoll", "p99_us"), "", 1)
	row("ult req/s with hogs / without", val("hogs=2", "ult", "req/s"),
	    val("hogs=0", "ult", "req/s"), "", 1)
	# The same targets with ult.host_nice, where the host allowed it.
	if (val("hogs=0", "ult-hn", "req/s") == "")
		exit
	row("ult-hn p99 with hogs / without", val("hogs=2", "ult-hn", "p99_us"),
	    val("hogs=0", "ult-hn", "p99_us"), 2, 1)
	row("ult-hn req/s / pthread req/s", val("hogs=0", "ult-hn", "req/s"),
	    val("hogs=0", "pthread", "req/s"), 1, 0)
	row("ult-hn req/s / pthread req/s, with hogs",
	    val("hogs=2", "ult-hn", "req/s"),
	    val("hogs=2", "pthread", "req/s"), 1, 0)
}
