# SPDX-License-Identifier: BSD-2-Clause
# The fast-path targets, checked against the peers of the same run:
#
#   awk -f bench/targets.awk results.tsv
#
# One markdown row per check: ult's figure, the figure it is held
# against, their ratio, the bound and whether it holds.  A check whose
# figures are missing (a peer not installed, a case not run) says so.
BEGIN {
	FS = "\t"
}
$1 == "R" {
	v[$2, $3, $4, $5] = $6
}
function val(ex, cs, rt, m) {
	return ((ex, cs, rt, m) in v ? v[ex, cs, rt, m] : "")
}
function num(x) {
	if (x >= 100)
		return sprintf("%.0f", x)
	if (x >= 1)
		return sprintf("%.2f", x)
	return sprintf("%.3g", x)
}
# row(what, a, b, bound, le): a/b against bound, at most (le) or at least
function row(what, a, b, bound, le,    r, ok) {
	if (a == "" || b == "" || b + 0 == 0) {
		printf "| %s | %s | %s | | %s %s | not measured |\n", what,
		    a == "" ? "-" : num(a + 0), b == "" ? "-" : num(b + 0),
		    le ? "<=" : ">=", bound
		return
	}
	r = (a + 0) / (b + 0)
	ok = le ? r <= bound : r >= bound
	printf "| %s | %s | %s | %.3g | %s %s | %s |\n", what, num(a + 0),
	    num(b + 0), r, le ? "<=" : ">=", bound, ok ? "yes" : "**no**"
}
function metric(cs) {
	return (cs == "condvar_prodcons" ? "ns/item" : cs == "skynet" ? "ms" : "ns/op")
}
END {
	print "| check | ult | against | ratio | bound | holds |"
	print "|---|---:|---:|---:|---:|---|"
	n = split("thread_ring mutex_handoff condvar_prodcons create_join", c, " ")
	for (i = 1; i <= n; i++) {
		m = metric(c[i])
		u = val("micro", c[i], "ult", m)
		row(c[i] " (all workers) / Go", u, val("micro", c[i], "go", m), 1, 1)
		row(c[i] " (all workers) / ult on one worker", u,
		    val("micro", c[i] "_w1", "ult", m), 2, 1)
	}
	for (i = 1; i <= n; i++) {
		m = metric(c[i])
		row(c[i] "_w1 / Boost.Fiber", val("micro", c[i] "_w1", "ult", m),
		    val("micro", c[i], "boost", m), 2, 1)
	}
	row("skynet / Go", val("micro", "skynet", "ult", "ms"),
	    val("micro", "skynet", "go", "ms"), 0.333, 1)
	row("skynet peak RSS (MiB) / 16 MiB",
	    val("micro", "skynet", "ult", "peak_rss_MiB"), 16, 1, 1)
	row("mutex_handoff futex calls per handoff / 1",
	    val("micro", "mutex_handoff", "ult", "futex/op"), 1, 0.05, 1)
	row("create_join_foreign: pthread / ult",
	    val("micro", "create_join_foreign", "pthread", "ns/op"),
	    val("micro", "create_join_foreign", "ult", "ns/op"), 20, 0)
	n = split("yield thread_ring mutex_handoff condvar_prodcons create_join skynet",
	    c, " ")
	for (i = 1; i <= n; i++) {
		m = metric(c[i])
		uq = val("micro", c[i], "ult", m)
		ul = val("micro_loaded", c[i], "ult", m)
		gq = val("micro", c[i], "go", m)
		gl = val("micro_loaded", c[i], "go", m)
		if (uq == "" || ul == "" || gq == "" || gl == "" ||
		    uq + 0 == 0 || gq + 0 == 0) {
			if (ul != "" || gl != "")
				row(c[i] " loaded/quiet: ult / Go", "", "", 1, 1)
			continue
		}
		row(c[i] " loaded/quiet: ult / Go", (ul + 0) / (uq + 0),
		    (gl + 0) / (gq + 0), 1, 1)
	}
	# Issue 16: ULT_TRACE on costs at most 2x.
	n = split("yield_trace mutex_handoff_trace create_join_trace", c, " ")
	for (i = 1; i <= n; i++)
		row(c[i] ": tracing on / off",
		    val("micro", c[i], "ult+trace", "ns/op"),
		    val("micro", c[i], "ult", "ns/op"), 2, 1)
}
