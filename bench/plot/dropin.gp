# SPDX-License-Identifier: BSD-2-Clause
# The real sysbench under ult-run: events/s against the number of
# threads, threads (left) and mutex (right), one line per runtime.
# gnuplot -e "datadir='...'; out='...svg'" dropin.gp
# Data (run.sh): T, then threads pthread ult ult-4bsd, then mutex the
# same; 0 where absent.
set terminal svg size 960,420 dynamic enhanced font "sans,11"
set output out
f = datadir . "/dropin.dat"
set multiplot layout 1,2 title "unmodified sysbench: kernel threads and under ult-run (one run)"
set xlabel "threads (T)"
set ylabel "events/s"
set logscale xy
set grid
set key bottom left
set title "sysbench threads"
plot f using 1:($2 > 0 ? $2 : 1/0) with linespoints title "kernel threads", \
     f using 1:($3 > 0 ? $3 : 1/0) with linespoints title "ult-run (ULE)", \
     f using 1:($4 > 0 ? $4 : 1/0) with linespoints title "ult-run (4BSD)"
set title "sysbench mutex"
plot f using 1:($5 > 0 ? $5 : 1/0) with linespoints title "kernel threads", \
     f using 1:($6 > 0 ? $6 : 1/0) with linespoints title "ult-run (ULE)", \
     f using 1:($7 > 0 ? $7 : 1/0) with linespoints title "ult-run (4BSD)"
unset multiplot
