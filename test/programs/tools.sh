#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Install the Debian programs the real-program tests (test/programs) run
# under ult-run: sysbench, pigz, xz-utils, zstd, memcached, libjemalloc2,
# lbzip2, ripgrep, python3, redis-server and redis-tools, nginx, curl
# and wrk.  As root with
# apt-get; otherwise, or offline, it says what is missing and those tests
# skip.  Says what it did; always exits 0.
set -u
pkgs="sysbench pigz xz-utils zstd memcached libjemalloc2 lbzip2 ripgrep python3
    redis-server redis-tools nginx curl wrk"
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "tools: already installed:" $pkgs
	exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "tools: not root or no apt-get; missing:$missing (their tests skip)"
	exit 0
fi
echo "tools: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# A fresh image has no package lists: refresh them once if needed.
if apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 ||
    { echo "tools: apt-get update" &&
	apt-get update -qq >/dev/null 2>&1 &&
	apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; }; then
	echo "tools: installed$missing"
else
	echo "tools: apt-get could not install some of:$missing (their tests skip)"
fi
exit 0
