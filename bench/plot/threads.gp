# SPDX-License-Identifier: BSD-2-Clause
# sysbench threads: events/s against the number of threads, one line per
# runtime.  gnuplot -e "datadir='...'; out='...svg'" threads.gp
# Data (run.sh): T ult ult-4bsd pthread sysbench; 0 where absent.
set terminal svg size 720,420 dynamic enhanced font "sans,11"
set output out
set title "sysbench threads (1000 lock+yield+unlock per event)"
set xlabel "threads (T)"
set ylabel "events/s"
set logscale xy
set key outside right
set grid
f = datadir . "/threads.dat"
plot f using 1:($2 > 0 ? $2 : 1/0) with linespoints title "ult (ULE)", \
     f using 1:($3 > 0 ? $3 : 1/0) with linespoints title "ult (4BSD)", \
     f using 1:($4 > 0 ? $4 : 1/0) with linespoints title "pthread", \
     f using 1:($5 > 0 ? $5 : 1/0) with linespoints title "sysbench"
