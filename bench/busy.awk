# SPDX-License-Identifier: BSD-2-Clause
# The busy-host experiment's table and targets, for report.md:
#
#   awk -f bench/figures.awk -f bench/busy.awk results.tsv
#
# One row per program, host and metric: each runtime's median with its
# spread over the samples "(min-max)", then ult against pthread and
# against go (median over median).  Then issue 29's targets for the pipeline fed by
# a uthread and the HTTP server.  Exit 1 on malformed figures
# (figures.awk) or a case that is not <program>:<host>.
BEGIN {
	only = "^busy$"
	nh = split("quiet spin over", hosts, " ")
	# The programs in this order, then any other in order of appearance.
	np = split("pipeline_main pipeline_thread httpd memcached " \
	    "create_join mutex_handoff condvar_prodcons thread_ring", prog, " ")
	for (i = 1; i <= np; i++)
		known[prog[i]] = 1
	nr = split("ult pthread go", rts, " ")
}
$1 == "R" && $2 == "busy" {
	if ($3 !~ /^[a-z0-9_]+:(quiet|spin|over)$/) {
		printf "busy.awk: case %s is not <program>:<host>\n", $3 \
		    >"/dev/stderr"
		bad = 1
		next
	}
	split($3, p, ":")
	if (!(p[1] in known)) {
		known[p[1]] = 1
		prog[++np] = p[1]
	}
	if ($4 != "ult" && $4 != "pthread" && $4 != "go") {
		printf "busy.awk: unknown runtime %s\n", $4 >"/dev/stderr"
		bad = 1
	}
	if ($5 == "runs") {
		if ($6 + 0 > samples[p[2]])
			samples[p[2]] = $6 + 0
	} else if ($5 !~ /:(min|max)$/ && !((p[1], $5) in hasm)) {
		hasm[p[1], $5] = 1
		metrics[p[1]] = metrics[p[1]] " " $5
	}
	has[p[1]] = 1
	hasrt[p[1], $4] = 1
	any = 1
}
function ratio(cs, rt, against, m,    a, b) {
	a = val("busy", cs, rt, m)
	b = val("busy", cs, against, m)
	if (a == "" || b == "" || b + 0 == 0)
		return ""
	return sprintf("%.3gx", a / b)
}
function t(what, pg, host, m, op, bound) {
	check(what ", " host, val("busy", pg ":" host, "ult", m),
	    val("busy", pg ":" host, "pthread", m), op, bound)
}
END {
	figures_or_exit(any)
	printf "Samples per figure:"
	for (h = 1; h <= nh; h++)
		if (samples[hosts[h]] != "")
			printf " %s %d%s", hosts[h], samples[hosts[h]],
			    h < nh ? "," : ""
	print ""
	print ""
	print "| program | host | metric | ult | pthread | go | ult/pthread |" \
	    " ult/go |"
	print "|---|---|---|---:|---:|---:|---:|---:|"
	for (i = 1; i <= np; i++) {
		if (!(prog[i] in has))
			continue
		nm = split(metrics[prog[i]], m, " ")
		for (h = 1; h <= nh; h++)
			for (k = 1; k <= nm; k++) {
				cs = prog[i] ":" hosts[h]
				if (val("busy", cs, "ult", m[k]) == "" &&
				    val("busy", cs, "pthread", m[k]) == "" &&
				    val("busy", cs, "go", m[k]) == "")
					continue
				line = "| " prog[i] " | " hosts[h] " | " m[k] " |"
				for (r = 1; r <= nr; r++)
					line = line " " cell("busy", cs, rts[r],
					    m[k]) " |"
				line = line " " ratio(cs, "ult", "pthread", m[k]) \
				    " | " ratio(cs, "ult", "go", m[k]) " |"
				print line
			}
	}
	print ""
	print "| check | ult | pthread | ratio | bound | holds |"
	print "|---|---:|---:|---:|---:|---|"
	for (h = 1; h <= nh; h++)
		t("pipeline fed by a uthread, s", "pipeline_thread", hosts[h],
		    "s", "<=", 1)
	t("httpd req/s", "httpd", "spin", "req/s", ">=", 1)
	t("httpd req/s", "httpd", "over", "req/s", ">=", 1)
	for (h = 1; h <= nh; h++)
		t("pipeline fed from main, s", "pipeline_main", hosts[h], "s",
		    "", "")
	t("httpd req/s", "httpd", "quiet", "req/s", "", "")
	for (h = 1; h <= nh; h++)
		t("memcached p99", "memcached", hosts[h], "p99_us", "", "")
}
