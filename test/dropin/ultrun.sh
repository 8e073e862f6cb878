# SPDX-License-Identifier: BSD-2-Clause
# Sourced by compare.sh and exit.sh, which set ult_run: `ultrun ARGS...'
# runs "$ult_run" ARGS... under a time limit of $tmo seconds (default 60).
#
# Under an emulator (ULT_EMU, set for a cross build's tests: qemu-user
# with the target's sysroot) the emulated ult-run parses its options,
# checks the program and refuses it as usual, but its exec of the program
# fails: without binfmt_misc the kernel cannot run a foreign executable.
# Then the program runs under the emulator with the environment ult-run
# gave it (the drop-in preloaded, ULT_NCPU, ULT_POLICY, ULT_RUN_STATS), so
# ult-run's own code and the drop-in are both what is tested.
ultrun() {
	if [ -z "${ULT_EMU:-}" ]; then
		timeout -k 5 "${tmo:-60}" "$ult_run" "$@"
		return
	fi
	ultrun_err=$(mktemp "${TMPDIR:-/tmp}/ultrun.XXXXXX") || return 2
	timeout -k 5 "${tmo:-60}" $ULT_EMU "$ult_run" "$@" 2>"$ultrun_err"
	ultrun_r=$?
	if [ $ultrun_r -ne 127 ] ||
	    ! grep -q '^ult-run: .*: Exec format error$' "$ultrun_err"; then
		cat "$ultrun_err" >&2
		rm -f "$ultrun_err"
		return $ultrun_r
	fi
	rm -f "$ultrun_err"
	ultrun_ncpu= ultrun_policy= ultrun_stats=
	while [ $# -gt 0 ]; do
		case $1 in
		--) shift; break ;;
		--stats) ultrun_stats=1; shift ;;
		--ncpu) ultrun_ncpu=$2; shift 2 ;;
		--policy) ultrun_policy=$2; shift 2 ;;
		*) break ;;
		esac
	done
	timeout -k 5 "${tmo:-60}" $ULT_EMU \
	    -E LD_PRELOAD="$(dirname "$ult_run")/libult-pthread.so${LD_PRELOAD:+:$LD_PRELOAD}" \
	    ${ultrun_ncpu:+-E ULT_NCPU=$ultrun_ncpu} \
	    ${ultrun_policy:+-E ULT_POLICY=$ultrun_policy} \
	    ${ultrun_stats:+-E ULT_RUN_STATS=1} "$@"
}
