# SPDX-License-Identifier: BSD-2-Clause
# Turn the suite's result lines into one markdown table per experiment.
#
#   awk -v ex=micro -v base=pthread [-v skip=REGEX] -f bench/report.awk \
#       results.tsv
#
# Input: "R<TAB>experiment<TAB>case<TAB>runtime<TAB>metric<TAB>value"
# lines (bench/README.md).  Rows are (case, metric) in order of first
# appearance, columns the runtimes in that order, then one ratio column
# per runtime against `base' (value / base value), except for metrics
# that are answers rather than measurements.  A missing cell is "-".
# Cases matching the regular expression skip are left out (they have a
# table of their own).
BEGIN {
	FS = "\t"
	nrow = 0
	ncol = 0
}
$1 == "R" && $2 == ex && (skip == "" || $3 !~ skip) {
	key = $3 SUBSEP $5
	if (!(key in seen)) {
		seen[key] = 1
		rows[++nrow] = key
	}
	if (!($4 in colidx)) {
		colidx[$4] = ++ncol
		cols[ncol] = $4
	}
	val[key, $4] = $6
}
function fmt(v) {
	if (v == "")
		return "-"
	v += 0
	if (v >= 1000)
		return sprintf("%.0f", v)
	if (v >= 100)
		return sprintf("%.1f", v)
	if (v >= 1)
		return sprintf("%.2f", v)
	return sprintf("%.3g", v)
}
END {
	if (nrow == 0) {
		print "_No results: the program did not run or was skipped " \
		    "(see the log)._"
		exit
	}
	hasbase = (base in colidx)
	line = "| case | metric |"
	sep = "|---|---|"
	for (c = 1; c <= ncol; c++) {
		line = line " " cols[c] " |"
		sep = sep "---:|"
	}
	if (hasbase)
		for (c = 1; c <= ncol; c++)
			if (cols[c] != base) {
				line = line " " cols[c] "/" base " |"
				sep = sep "---:|"
			}
	print line
	print sep
	for (r = 1; r <= nrow; r++) {
		split(rows[r], kv, SUBSEP)
		line = "| " kv[1] " | " kv[2] " |"
		for (c = 1; c <= ncol; c++)
			line = line " " fmt(val[rows[r], cols[c]]) " |"
		if (hasbase) {
			b = val[rows[r], base]
			for (c = 1; c <= ncol; c++) {
				if (cols[c] == base)
					continue
				v = val[rows[r], cols[c]]
				if (kv[2] == "result" || v == "" || b == "" ||
				    b + 0 == 0)
					line = line " |"
				else
					line = line sprintf(" %.3gx |", v / b)
			}
		}
		print line
	}
}
