#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The level rule of DESIGN.md section 1, checked on the built objects:
# a level references only symbols defined in its own level or a lower
# one.  From the bottom: base (util, arch, os), sched, kern, obs, api.
# The policy may call what src/sched/machine.h declares (the runtime
# implements that interface for it).  Every other upward reference must
# be listed, with its reason, in test/layering.allow; a listed one that
# is gone fails too, so the list stays exact.  And DESIGN.md's map
# (section 1) names every folder of src/, and the drop-in calls into the
# runtime only what src/dropin/runtime.h lists.
#   layering.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layering.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rank() {
	case $1 in
	util | arch | os) echo 0 ;;
	sched) echo 1 ;;
	kern) echo 2 ;;
	obs) echo 3 ;;
	api) echo 4 ;;
	*) echo "layering.sh: no level for src/$1" >&2; exit 2 ;;
	esac
}

# "level symbol" for every definition, "level symbol" for every use.
for o in $(find "$build/CMakeFiles/ult_core.dir/src" \
    "$build/CMakeFiles/ult_sched.dir/src" -name '*.o' | sort); do
	rel=${o#*.dir/src/}
	[ -e "$src/src/${rel%.o}" ] || continue # a stale object of a moved file
	lvl=${rel%%/*}
	r=$(rank "$lvl")
	nm --defined-only "$o" | awk -v r="$r" -v l="$lvl" \
	    '$2 ~ /^[TDBRVWC]$/ { print $3, r, l }' >>"$tmp/defs"
	nm -u "$o" | awk -v r="$r" -v l="$lvl" '{ print $2, r, l }' >>"$tmp/uses"
done
sed -n 's/^[^(]*[ *]\(mach_[a-z_0-9]*\)(.*/\1/p' "$src/src/sched/machine.h" |
    sort -u >"$tmp/machine"

# The libc names the runtime defines for programs (src/ult.map: dlopen,
# pthread_create, sigaltstack, the lock wrappers) are libc's to a caller,
# whichever level calls them, and no drop-in entry points.
sed -n '/global:/,/local:/p' "$src/src/ult.map" | tr -s ' \t;' '\n' |
    grep -v -e '^ult_' -e ':' -e '^$' >"$tmp/interposers" || true
sed 's/^/ult__libc_/' "$tmp/interposers" >>"$tmp/interposers"
awk 'NR == FNR { i[$1] = 1; next } !($1 in i)' "$tmp/interposers" \
    "$tmp/defs" | sort -u >"$tmp/defs.s"
sort -u "$tmp/uses" >"$tmp/uses.s"
# from_level to_level symbol, for each use of a higher level's symbol.
awk 'NR == FNR { dr[$1] = $2; dl[$1] = $3; next }
     ($1 in dr) && dr[$1] > $2 { print $3, dl[$1], $1 }' \
    "$tmp/defs.s" "$tmp/uses.s" | sort -u >"$tmp/up.all"
awk 'NR == FNR { m[$1] = 1; next } !($1 == "sched" && ($3 in m))' \
    "$tmp/machine" "$tmp/up.all" >"$tmp/up"
grep -v '^#' "$src/test/layering.allow" | awk 'NF >= 3 { print $1, $2, $3 }' |
    sort -u >"$tmp/allow"

status=0
# DESIGN.md section 1 maps every folder of src/.
map=$(awk '/^## 1\./ { on = 1; next } /^## / { on = 0 } on' \
    "$src/docs/DESIGN.md")
for d in "$src"/src/*/; do
	d=src/$(basename "$d")/
	if ! echo "$map" | grep -q "^$d"; then
		echo "DESIGN.md section 1 does not name $d"
		status=1
	fi
done
# The drop-in calls into the runtime only what src/dropin/runtime.h lists
# (where the drop-in is built: not with sanitizers or ucontext).
rt=$build/ult_dropin_rt.o
if [ -f "$rt" ] && [ -d "$build/CMakeFiles/ult_pthread.dir/src/dropin" ]; then
	for o in "$build"/CMakeFiles/ult_pthread.dir/src/dropin/*.o; do
		[ -e "$src/src/dropin/$(basename "${o%.o}")" ] || continue
		nm -u "$o" | awk '{ print $2 }'
	done | sort -u >"$tmp/dropin.uses"
	nm --defined-only "$rt" | awk '$2 ~ /^[TDBRVWC]$/ { print $3 }' |
	    sort -u >"$tmp/rt.defs"
	comm -12 "$tmp/dropin.uses" "$tmp/rt.defs" |
	    grep -v '^ult_[a-z]' | grep -vxF -f "$tmp/interposers" \
	    >"$tmp/dropin.calls" || true
	sed -n '1,/\*\//p' "$src/src/dropin/runtime.h" |
	    grep -o 'ult__[a-z0-9_]*' | sort -u >"$tmp/dropin.list"
	extra=$(comm -23 "$tmp/dropin.calls" "$tmp/dropin.list")
	stale=$(comm -13 "$tmp/dropin.calls" "$tmp/dropin.list")
	if [ -n "$extra" ]; then
		echo "the drop-in calls runtime symbols src/dropin/runtime.h does not list:"
		echo "$extra" | sed 's/^/  /'
		status=1
	fi
	if [ -n "$stale" ]; then
		echo "src/dropin/runtime.h lists symbols the drop-in no longer calls:"
		echo "$stale" | sed 's/^/  /'
		status=1
	fi
	# The drop-in reads the clock as the runtime does (ult__now): it
	# holds locks across its reads, and ult_now()'s vDSO code is open to
	# preemption, which would switch out a uthread holding one.
	if grep -qx 'ult_now' "$tmp/dropin.uses"; then
		echo "the drop-in calls ult_now(); it must read the clock with ult__now()"
		status=1
	fi
	echo "drop-in -> runtime entry points: $(wc -l <"$tmp/dropin.calls")"
fi
new=$(comm -23 "$tmp/up" "$tmp/allow")
gone=$(comm -13 "$tmp/up" "$tmp/allow")
if [ -n "$new" ]; then
	echo "upward references not in test/layering.allow (from to symbol):"
	echo "$new" | sed 's/^/  /'
	status=1
fi
if [ -n "$gone" ]; then
	echo "listed in test/layering.allow but no longer made (remove them):"
	echo "$gone" | sed 's/^/  /'
	status=1
fi
echo "levels: $(cut -d' ' -f3 "$tmp/defs.s" | sort -u | tr '\n' ' ')"
echo "upward references: $(wc -l <"$tmp/up") (all listed: $([ $status -eq 0 ] && echo yes || echo no));" \
    "policy -> machine.h: $(($(wc -l <"$tmp/up.all") - $(wc -l <"$tmp/up")))"
awk '{ print "  " $1 " -> " $2 }' "$tmp/up" | sort | uniq -c
exit $status
