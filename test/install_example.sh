#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Install the build tree into a fresh prefix, as a user would, and build
# the README's example against it twice: with pkg-config, following the
# README's line for a prefix the dynamic loader does not search, and with
# CMake's find_package(ult).  Each must print the right sum.  Also the
# static archive both ways, where libc.a is there to link statically.
#   install_example.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1 build=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
prefix=$out/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
awk '/^## Example/ { e = 1 } e && /^```c/ { c = 1; next } c && /^```/ { exit } c' \
    "$src/README.md" > "$out/example.c"
grep -q 'ult_init' "$out/example.c" || { echo "no example in README.md"; exit 1; }
want='sum of squares: 285'
static_ok=0
libc_a=$(cc -print-file-name=libc.a)
case $libc_a in /*) [ -f "$libc_a" ] && static_ok=1 ;; esac

if command -v pkg-config >/dev/null 2>&1; then
	PKG_CONFIG_PATH=$prefix/lib/pkgconfig
	export PKG_CONFIG_PATH
	libdir=$(pkg-config --variable=libdir ult)
	# shellcheck disable=SC2046
	cc -fstack-clash-protection "$out/example.c" $(pkg-config --cflags --libs ult) \
	    -Wl,-rpath,"$libdir" -lpthread -o "$out/ex_pc"
	"$out/ex_pc" | grep -qx "$want"
	echo "pkg-config, libult.so: ok"
	if [ $static_ok = 1 ]; then
		# shellcheck disable=SC2046
		cc -static -fstack-clash-protection "$out/example.c" \
		    $(pkg-config --cflags --static --libs ult) -o "$out/ex_pc_static"
		"$out/ex_pc_static" 2>/dev/null | grep -qx "$want"
		echo "pkg-config --static, libult.a: ok"
	fi
else
	echo "pkg-config is not installed: the pkg-config half is skipped"
fi

mkdir "$out/proj"
cp "$out/example.c" "$out/proj/"
cat > "$out/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.21)
project(example C)
find_package(ult 0.1 REQUIRED)
add_executable(example example.c)
target_compile_options(example PRIVATE -fstack-clash-protection)
target_link_libraries(example PRIVATE ult::ult)
add_executable(example_static example.c)
target_link_libraries(example_static PRIVATE ult::ult_static)
CM
cmake -S "$out/proj" -B "$out/proj/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$out/proj/build" >/dev/null
"$out/proj/build/example" | grep -qx "$want"
"$out/proj/build/example_static" | grep -qx "$want"
echo "find_package(ult), ult::ult and ult::ult_static: ok"
