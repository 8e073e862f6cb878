# SPDX-License-Identifier: BSD-2-Clause
# Reading checked figures, for the report's scripts that put runs with
# their spread and targets into tables: always given first,
#
#   awk -f bench/figures.awk -f bench/<table>.awk results.tsv
#
# It keeps every result line's value in v[experiment, case, runtime,
# metric]; a result line of the experiments the table script names in
# only (a regular expression its BEGIN sets) that is not six fields with
# a plain decimal value sets bad (with a message on stderr) and is left
# out.  The table script calls figures_ok() first in its END and exits 1
# when it fails (figures_or_exit does both): a malformed input must fail
# loudly, not print a wrong table.
BEGIN {
	FS = "\t"
	bad = 0
}
$1 == "R" && $2 !~ only {
	next
}
$1 == "R" && (NF != 6 ||
    $6 !~ /^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) {
	printf "line %d is not a result line: %s\n", NR, $0 >"/dev/stderr"
	bad = 1
	next
}
$1 == "R" {
	v[$2, $3, $4, $5] = $6
}
function val(ex, cs, rt, m) {
	return ((ex, cs, rt, m) in v ? v[ex, cs, rt, m] : "")
}
# figures_ok(): no malformed line, and every median within its spread.
function figures_ok(    k, f, base, lo, hi) {
	for (k in v) {
		split(k, f, SUBSEP)
		if (f[4] !~ /:min$/)
			continue
		base = substr(f[4], 1, length(f[4]) - 4)
		lo = v[k] + 0
		hi = val(f[1], f[2], f[3], base ":max")
		if (!((f[1], f[2], f[3], base) in v) || hi == "" ||
		    lo > v[f[1], f[2], f[3], base] + 0 ||
		    hi + 0 < v[f[1], f[2], f[3], base] + 0) {
			printf "%s %s %s %s: median %s outside its spread " \
			    "%s..%s\n", f[1], f[2], f[3], base,
			    val(f[1], f[2], f[3], base), v[k], hi \
			    >"/dev/stderr"
			bad = 1
		}
	}
	return (!bad)
}
# figures_or_exit(any): the start of a table script's END.  Exit 1 on
# malformed figures; with none at all (any unset), say so and exit 0.
function figures_or_exit(any) {
	if (!figures_ok() || bad)
		exit 1
	if (!any) {
		print "_No results: the experiment did not run or was " \
		    "skipped (see the log)._"
		exit
	}
}
function num(x) {
	x += 0
	if (x >= 100 || x <= -100)
		return sprintf("%.0f", x)
	if (x >= 1 || x <= -1)
		return sprintf("%.2f", x)
	return sprintf("%.3g", x)
}
# cell(ex, cs, rt, m): the median, with its spread "(min-max)" when it
# came from more than one run; "-" when it is missing.
function cell(ex, cs, rt, m,    a, lo, hi) {
	a = val(ex, cs, rt, m)
	if (a == "")
		return "-"
	lo = val(ex, cs, rt, m ":min")
	hi = val(ex, cs, rt, m ":max")
	if (lo == "" || hi == "" || val(ex, cs, rt, "runs") + 0 < 2)
		return num(a)
	return num(a) " (" num(lo) "-" num(hi) ")"
}
# check(what, a, b, op, bound): a markdown row, a/b held against bound
# with op ("<=", "<" or ">="); with no bound ("") the ratio alone.
function check(what, a, b, op, bound,    r, ok) {
	if (a == "" || b == "" || b + 0 == 0) {
		printf "| %s | %s | %s | | %s | not measured |\n", what,
		    a == "" ? "-" : num(a), b == "" ? "-" : num(b),
		    bound == "" ? "" : op " " bound
		return
	}
	r = (a + 0) / (b + 0)
	if (bound == "") {
		printf "| %s | %s | %s | %.3g | | |\n", what, num(a), num(b), r
		return
	}
	ok = op == "<=" ? r <= bound : op == "<" ? r < bound : r >= bound
	printf "| %s | %s | %s | %.3g | %s %s | %s |\n", what, num(a), num(b),
	    r, op, bound, ok ? "yes" : "**no**"
}
