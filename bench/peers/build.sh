#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Build the peer benchmarks (Go goroutines, Boost.Fiber) into OUTDIR.
#   bench/peers/build.sh OUTDIR
# A peer whose toolchain or library is missing is skipped with a
# "skip: <runtime> <why>" line on stderr; the script still exits 0, so one
# missing peer never fails the whole benchmark run.  Outputs:
#   OUTDIR/go-peer      (runtime "go")
#   OUTDIR/boost-peer   (runtime "boost")
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1" || exit 0
out=$(cd "$1" && pwd)

# Go: standard library only, built from the file so no go.mod is needed and
# nothing is fetched.  The build cache defaults to $HOME/.cache; fall back to
# OUTDIR when there is none (CI sandboxes without HOME).
if ! command -v go >/dev/null 2>&1; then
	echo "skip: go no Go toolchain (apt-get install golang-go)" >&2
else
	cache=
	case $(go env GOCACHE 2>/dev/null) in
	"" | off) cache="$out/.gocache" ;;
	esac
	if (cd "$here/go" && env ${cache:+GOCACHE="$cache"} \
	    go build -o "$out/go-peer" main.go); then
		echo "built $out/go-peer ($(go version | cut -d' ' -f3))" >&2
	else
		echo "skip: go build of bench/peers/go/main.go failed" >&2
		rm -f "$out/go-peer"
	fi
fi

# Boost.Fiber: needs a C++17 compiler and libboost-fiber-dev.
cxx=${CXX:-g++}
if ! command -v "$cxx" >/dev/null 2>&1; then
	echo "skip: boost no C++ compiler ($cxx)" >&2
elif ! printf '#include <boost/fiber/all.hpp>\nint main(){boost::fibers::fiber f([]{});f.join();}\n' |
    "$cxx" -std=c++17 -x c++ - -o /dev/null -lboost_fiber -lboost_context \
    -lpthread >/dev/null 2>&1; then
	echo "skip: boost Boost.Fiber not found (apt-get install libboost-fiber-dev)" >&2
elif "$cxx" -O2 -std=c++17 -Wall -Wextra -o "$out/boost-peer" \
    "$here/boost/fiber.cpp" -lboost_fiber -lboost_context -lpthread; then
	echo "built $out/boost-peer" >&2
else
	echo "skip: boost build of bench/peers/boost/fiber.cpp failed" >&2
	rm -f "$out/boost-peer"
fi
exit 0
