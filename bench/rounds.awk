# SPDX-License-Identifier: BSD-2-Clause
# Several rounds of the same figures made into one line each:
#
#   awk -f bench/rounds.awk [-v spread=REGEX] raw.tsv
#
# Input: result lines (bench/README.md), one per figure and round; other
# lines are ignored.  Output, in the order of first appearance: per
# (experiment, case, runtime, metric) the median of its rounds (the
# mean of the middle two for an even count) and, for cases that match
# the regular expression spread, also <metric>:min and <metric>:max
# over the rounds and, once per (case, runtime), `runs', the number of
# rounds of its first metric.  A result line that is not six fields with
# a plain decimal value fails the whole input: exit 1, nothing printed,
# so that a wrong figure cannot reach a table.
BEGIN {
	FS = "\t"
	OFS = "\t"
	bad = 0
}
$1 != "R" {
	next
}
NF != 6 || $6 !~ /^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ ||
    $2 == "" || $3 == "" || $4 == "" || $5 == "" || $3 ~ / / {
	printf "rounds.awk: line %d is not a result line: %s\n", NR, $0 \
	    >"/dev/stderr"
	bad = 1
	next
}
{
	k = $2 FS $3 FS $4 FS $5
	if (!(k in n))
		order[++nk] = k
	v[k, ++n[k]] = $6 + 0
	str[k, n[k]] = $6
}
END {
	if (bad)
		exit 1
	for (i = 1; i <= nk; i++) {
		k = order[i]
		m = n[k]
		for (a = 2; a <= m; a++) # insertion sort: m is small
			for (b = a; b > 1 && v[k, b - 1] > v[k, b]; b--) {
				x = v[k, b]
				v[k, b] = v[k, b - 1]
				v[k, b - 1] = x
				x = str[k, b]
				str[k, b] = str[k, b - 1]
				str[k, b - 1] = x
			}
		# The figures as they came, but for an even count's mean, which
		# %.10g keeps out of awk's 6-digit default and exponents.
		med = m % 2 ? str[k, (m + 1) / 2] : \
		    sprintf("%.10g", (v[k, m / 2] + v[k, m / 2 + 1]) / 2)
		split(k, f, FS)
		print "R", k, med
		if (spread == "" || f[2] !~ spread)
			continue
		print "R", f[1], f[2], f[3], f[4] ":min", str[k, 1]
		print "R", f[1], f[2], f[3], f[4] ":max", str[k, m]
		rk = f[1] FS f[2] FS f[3]
		if (!(rk in runs)) {
			runs[rk] = m
			print "R", rk, "runs", m
		}
	}
}
