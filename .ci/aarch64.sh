#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The AArch64 port in CI (part of .ci/run; runs alone too): cross-build
# the aarch64 preset and run, under qemu-aarch64 -L /usr/aarch64-linux-gnu,
#  - the unit tests and the drop-in's conformance programs (-L unit),
#  - the stress harness at 1, 2 and 4 workers, both policies, preemption
#    on and off, ULT_STRESS_MS a run (default 5000),
#  - the litmus stress of the wakeup path (ULT_LITMUS_ROUNDS per pair,
#    default 20000; a real arm64 machine should run it with 200000+).
# qemu-user shows the port's correctness on an x86-64 host's memory
# order, not AArch64's weak one, nor its timing (README.md).  A unit test
# that fails is run once more: under load, qemu's timing has failed a
# test that counts events of a time window (trace_kinds: once in two
# runs); the first failure is still printed.
set -eu
cd "$(dirname "$0")/.."

step() { printf '\n== %s ==\n' "$*"; }
jobs=$(nproc 2>/dev/null || echo 2)

missing=""
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 ||
	missing="$missing gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 ||
	missing="$missing g++-aarch64-linux-gnu"
command -v qemu-aarch64 >/dev/null 2>&1 || missing="$missing qemu-user"
if [ -n "$missing" ]; then
	step "installing$missing"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get update -qq && apt-get install -y -qq $missing >/dev/null
	fi
fi

step "aarch64: cross build ($(aarch64-linux-gnu-gcc --version | head -n 1))"
cmake --preset aarch64 >/dev/null
cmake --build build/aarch64 -j "$jobs"

step "aarch64 under qemu-user: unit tests and drop-in conformance"
ctest --preset aarch64 -j 2 -L unit --repeat until-pass:2

step "aarch64 under qemu-user: stress harness, 1, 2 and 4 workers"
ULT_STRESS_MS=${ULT_STRESS_MS:-5000} ctest --preset aarch64 -j 2 \
    -R '^harness_w[124](_nopreempt)?(_4bsd)?$'

step "aarch64 under qemu-user: litmus stress of the wakeup path"
ULT_LITMUS_ROUNDS=${ULT_LITMUS_ROUNDS:-20000} ctest --preset aarch64 -j 2 \
    -L litmus

step "aarch64: all green"
