# SPDX-License-Identifier: BSD-2-Clause
# Wakeup-latency CDFs written by `latency --data DIR': one line per
# runtime and case, log x axis.
#
#   gnuplot -e "datadir='DIR'; out='latency.svg'" bench/plot/latency.gp
#
# Plots every DIR/latency-*.dat.  Instead of datadir, files may be given
# as a space-separated list: -e "files='a.dat b.dat'; out='x.svg'".
# Each file: lines "<latency_us> <fraction>" (comment lines start with #);
# a line's title is the file name without "latency-" and ".dat",
# i.e. "<runtime>-<case>".

if (!exists("out")) {
	out = "latency.svg"
}
if (!exists("files")) {
	if (!exists("datadir")) {
		datadir = "."
	}
	files = system("ls " . datadir . "/latency-*.dat 2>/dev/null")
}
if (words(files) == 0) {
	print "latency.gp: no latency-*.dat files"
	exit status 1
}

# The index of the last "/" in s at or before i (0: none).
lastslash(s, i) = (i < 1) ? 0 : (s[i:i] eq "/" ? i : lastslash(s, i - 1))
label(f) = f[lastslash(f, strlen(f)) + 9 : strlen(f) - 4]

set terminal svg size 900,560 dynamic noenhanced font "sans,12"
set output out
set title "Wakeup latency CDF (1 message thread, 4 workers, 1 ms period)"
set xlabel "wakeup latency (us)"
set ylabel "fraction of wakeups at or below"
set logscale x
set format x "%g"
set yrange [0:1.001]
set grid xtics ytics mxtics
set key bottom right
# Runtimes keep a colour, cases a dash pattern: hogs=0 solid, else dashed.
colour(f) = strstrt(f, "ult-4bsd") ? 2 : (strstrt(f, "ult") ? 1 : \
	(strstrt(f, "pthread") ? 3 : (strstrt(f, "go") ? 4 : 6)))
dash(f) = strstrt(f, "hogs=0") ? 1 : 2
# Every 4th point of the 8000-sample CDFs keeps the SVG small and the
# shape (and its tail) intact.
plot for [f in files] f every 4 using 1:2 with steps \
	lc colour(label(f)) dt dash(label(f)) lw 2 title label(f)
