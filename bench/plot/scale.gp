# SPDX-License-Identifier: BSD-2-Clause
# SIMULATED (ultsim): sysbench threads on N virtual CPUs, T = 2N.  Left:
# events/s for both policies; right: ULE / 4BSD, with FreeBSD's measured
# 3.8x at 8 cores as a point.
#   gnuplot -e "datadir='...'; out='...svg'" scale.gp
# Data (run.sh): N ule 4bsd ratio.
set terminal svg size 900,400 dynamic enhanced font "sans,11"
set output out
f = datadir . "/scale.dat"
set multiplot layout 1,2 title "SIMULATED by ultsim (not measured): sysbench threads, T = 2N, 2N mutexes"
set logscale xy
set grid
set xlabel "virtual CPUs (N)"
set ylabel "events/s"
set key top left
plot f using 1:($2 > 0 ? $2 : 1/0) with linespoints title "ULE (per-CPU locks)", \
     f using 1:($3 > 0 ? $3 : 1/0) with linespoints title "4BSD (one sched\\_lock)"
set ylabel "ULE / 4BSD"
set key top left
plot f using 1:($4 > 0 ? $4 : 1/0) with linespoints title "simulated", \
     "-" using 1:2 with points pt 7 ps 1.5 title "FreeBSD, measured: 3.8x at 8 cores"
8 3.8
e
unset multiplot
