# SPDX-License-Identifier: BSD-2-Clause
# CPU share of 11 hogs at nice -20..+20 on one CPU: grouped bars, one
# group per nice value, one bar per runtime (bench/nice --data DIR).
#   gnuplot -e "datadir='DIR'; out='nice.svg'" bench/plot/nice.gp
# nice.dat columns: nice ult ult-4bsd linux model; '-' marks a runtime
# that was skipped, which leaves a gap in its bars.
if (!exists("datadir")) datadir = "."
if (!exists("out")) out = "nice.svg"

set terminal svg size 960,540 dynamic enhanced font "sans,12" background "white"
set output out
set datafile missing "-"
set title "11 CPU hogs on one CPU: share of each nice value"
set xlabel "nice"
set ylabel "CPU share (%)"
set yrange [0:*]
set grid ytics
set key top right
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9

plot datadir."/nice.dat" using 2:xtic(1) title "ult (ULE)" lc rgb "#1f77b4", \
     ''                  using 3 title "ult-4bsd" lc rgb "#ff7f0e", \
     ''                  using 4 title "linux (EEVDF)" lc rgb "#2ca02c", \
     ''                  using 5 title "ULE model" lc rgb "#7f7f7f"
