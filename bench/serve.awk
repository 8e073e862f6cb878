# SPDX-License-Identifier: BSD-2-Clause
# The servers' tables and targets for report.md: the serve experiment
# (part=serve) and memcached under ult-run from the dropin experiment
# (part=memcached):
#
#   awk -f bench/figures.awk -f bench/serve.awk -v part=serve results.tsv
#
# One row per layout, case and server: the median of the runs and, for
# p99, its spread; then the targets of issue 29, which hold for the
# isolated layout (the load generator on CPUs of its own), and the same
# ratios in the shared layout for comparison.  Exit 1 on malformed
# figures (figures.awk).
BEGIN {
	lay["iso"] = "isolated"
	lay["shared"] = "shared"
	if (part == "serve") {
		part_is("serve", "", "server", "ult ult-hn pthread epoll",
		    "req/s p50_us p99_us max_us timeouts")
		name["ult"] = "ult (httpd)"
		name["ult-hn"] = "ult, ULT_HOST_NICE=1"
		name["pthread"] = "pthread (thread per connection)"
		name["epoll"] = "epoll (one thread)"
	} else if (part == "memcached") {
		part_is("dropin", "memcached_", "runtime", "pthread ult ult-4bsd",
		    "req/s p50_us p99_us max_us")
		name["pthread"] = "pthread (native)"
		name["ult"] = "ult (ult-run, ULE)"
		name["ult-4bsd"] = "ult-4bsd (ult-run, 4BSD)"
	} else {
		print "serve.awk: part must be serve or memcached" >"/dev/stderr"
		bad = 1
		exit 1
	}
}
$1 == "R" && $2 == ex && index($3, pfx) == 1 {
	cs = substr($3, length(pfx) + 1)
	if (cs !~ /^(iso|shared)_hogs=[0-9]+$/) {
		printf "serve.awk: unknown %s case %s\n", ex, $3 >"/dev/stderr"
		bad = 1
	}
	split(cs, p, "_hogs=")
	if (!((p[1], p[2]) in seen)) {
		seen[p[1], p[2]] = 1
		h = p[2] + 0
		# hogs: 0, then the layout's one count
		if (h > 0)
			hogs[p[1]] = h
	}
	any = 1
}
# part_is(e, p, who, runtimes, metrics): the part's rows are experiment
# e's cases <p><layout>_hogs=<n>, one per runtime (named in the header's
# column who), its columns the metrics; both lists space-separated.
function part_is(e, p, who, runtimes, metrics,    k) {
	ex = e
	only = "^" e "$"
	pfx = p
	nrt = split(runtimes, rts, " ")
	nm = split(metrics, m, " ")
	hdr = "| layout | hogs | " who " | runs |"
	sep = "|---|---:|---|---:|"
	for (k = 1; k <= nm; k++) {
		hdr = hdr " " (m[k] ~ /_us$/ ? substr(m[k], 1, \
		    length(m[k]) - 3) " us" : m[k]) " |"
		sep = sep "---:|"
	}
}
function v2(layout, h, rt, metric) {
	return (val(ex, pfx layout "_hogs=" h, rt, metric))
}
function c2(layout, h, rt, metric) {
	return (metric == "p99_us" ? cell(ex, pfx layout "_hogs=" h, rt, \
	    metric) : num_or_dash(v2(layout, h, rt, metric)))
}
function num_or_dash(x) {
	return (x == "" ? "-" : num(x))
}
function table(layout,    i, k, s, hh, line, hs) {
	hs[1] = 0
	hs[2] = hogs[layout]
	for (i = 1; i <= 2; i++) {
		if (hs[i] == "" || !((layout, hs[i]) in seen))
			continue
		for (s = 1; s <= nrt; s++) {
			for (k = 1; k <= nm; k++)
				if (v2(layout, hs[i], rts[s], m[k]) != "")
					break
			if (k > nm)
				continue
			hh = v2(layout, hs[i], rts[s], "runs")
			line = "| " lay[layout] " | " hs[i] " | " name[rts[s]] \
			    " | " (hh == "" ? 1 : hh) " |"
			for (k = 1; k <= nm; k++)
				line = line " " c2(layout, hs[i], rts[s], m[k]) " |"
			print line
		}
	}
}
# targets(layout, bounds): issue 29's checks, with their bounds or
# (bounds == 0) as plain ratios.
function targets(layout, bounds,    h, L) {
	h = hogs[layout]
	L = lay[layout] ": "
	if (h == "")
		return
	if (part == "serve") {
		check(L "ult p99 with hogs / without",
		    v2(layout, h, "ult", "p99_us"),
		    v2(layout, 0, "ult", "p99_us"), "<=", bounds ? 2 : "")
		check(L "ult p99 with hogs / pthread's with hogs",
		    v2(layout, h, "ult", "p99_us"),
		    v2(layout, h, "pthread", "p99_us"), "<=", bounds ? 1 : "")
		check(L "ult req/s / pthread req/s",
		    v2(layout, 0, "ult", "req/s"),
		    v2(layout, 0, "pthread", "req/s"), ">=", bounds ? 1 : "")
		check(L "ult req/s / pthread req/s, with hogs",
		    v2(layout, h, "ult", "req/s"),
		    v2(layout, h, "pthread", "req/s"), ">=", bounds ? 1 : "")
		check(L "pthread p99 with hogs / without",
		    v2(layout, h, "pthread", "p99_us"),
		    v2(layout, 0, "pthread", "p99_us"), "", "")
		check(L "epoll p99 with hogs / without",
		    v2(layout, h, "epoll", "p99_us"),
		    v2(layout, 0, "epoll", "p99_us"), "", "")
		if (v2(layout, 0, "ult-hn", "req/s") != "")
			check(L "ult-hn p99 with hogs / without",
			    v2(layout, h, "ult-hn", "p99_us"),
			    v2(layout, 0, "ult-hn", "p99_us"), "<=",
			    bounds ? 2 : "")
	} else {
		check(L "ult p99 / native p99, alone",
		    v2(layout, 0, "ult", "p99_us"),
		    v2(layout, 0, "pthread", "p99_us"), "<=", bounds ? 1 : "")
		check(L "ult p99 / native p99, beside hogs",
		    v2(layout, h, "ult", "p99_us"),
		    v2(layout, h, "pthread", "p99_us"), "<", bounds ? 1 : "")
		check(L "ult req/s / native req/s, alone",
		    v2(layout, 0, "ult", "req/s"),
		    v2(layout, 0, "pthread", "req/s"), "", "")
		check(L "ult-4bsd p99 / native p99, beside hogs",
		    v2(layout, h, "ult-4bsd", "p99_us"),
		    v2(layout, h, "pthread", "p99_us"), "", "")
	}
}
END {
	figures_or_exit(any)
	print hdr
	print sep
	table("iso")
	table("shared")
	print ""
	print "| check | value | against | ratio | bound | holds |"
	print "|---|---:|---:|---:|---:|---|"
	targets("iso", 1)
	targets("shared", 0)
}
