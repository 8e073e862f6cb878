#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# make install puts the manual pages where man finds them: install into a
# fresh prefix, then `man <name>' with that prefix's share/man must show
# every page and every function a group page names (through its .so
# link), and each section 1 page must be its tool's.
#   install_man.sh BUILD_DIR
set -u
build=$1
man --version 2>/dev/null | grep -q man || { echo "skipped: man not installed"; exit 77; }
command -v groff >/dev/null 2>&1 || command -v nroff >/dev/null 2>&1 ||
    { echo "skipped: no groff for man to format with"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cmake --install "$build" --prefix "$out/prefix" >/dev/null || exit 1
MANPATH=$out/prefix/share/man MANWIDTH=80 LC_ALL=C.UTF-8
export MANPATH MANWIDTH LC_ALL
fail=0 n=0
for sec in 1 3; do
	for f in "$out/prefix/share/man/man$sec"/*."$sec"; do
		[ -f "$f" ] || continue
		name=$(basename "$f" ".$sec")
		n=$((n + 1))
		if ! man "$sec" "$name" 2>"$out/err" | grep -q -- "$name"; then
			echo "FAIL man $sec $name: not found or not about $name"
			sed 's/^/  /' "$out/err"
			fail=1
		fi
	done
done
for tool in ult-run ult-top ultsim ult-trace-summary; do
	[ -f "$out/prefix/share/man/man1/$tool.1" ] ||
	    { echo "FAIL no $tool(1) installed"; fail=1; }
done
for page in ult ult_init ult_spawn ult_mutex_lock ult_sleep ult_read \
    ult_wait_fd ult_sysctl ult_setclass ult_join ult_once; do
	[ -f "$out/prefix/share/man/man3/$page.3" ] ||
	    { echo "FAIL no $page(3) installed"; fail=1; }
done
[ $fail = 0 ] && echo "$n installed pages and links: man finds each"
exit $fail
