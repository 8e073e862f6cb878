#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Install what the benchmark suite compares against and plots with, from
# Debian's packages: sysbench, ministat, Go, Boost.Fiber (with g++),
# gnuplot, wrk (the HTTP load of bench/serve.sh), and the programs that
# bench/dropin.sh runs under ult-run: pigz, xz-utils, zstd, memcached.
# Needs root and apt-get; without them, or offline, it says so and the
# suite skips what is missing.  BENCH_NO_INSTALL=1 skips this.
set -u
pkgs="sysbench ministat golang-go libboost-fiber-dev g++ gnuplot-nox wrk
    pigz xz-utils zstd memcached"
[ "${BENCH_NO_INSTALL:-}" = 1 ] && exit 0
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "bench: not root or no apt-get; missing:$missing (skipped)" >&2
	exit 0
fi
echo "bench: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh image has no package lists; refresh them once if needed.
apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 ||
	{ apt-get update -qq >/dev/null 2>&1 &&
	    apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; } ||
	echo "bench: apt-get could not install some of:$missing (skipped)" >&2
exit 0
