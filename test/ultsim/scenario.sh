#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# One scenario of sim/scenarios under both policies: ultsim exits 3 when
# one of the file's expectations fails, and prints which.
#   scenario.sh ULTSIM FILE
set -u
ultsim=$1 file=$2
rc=0
# A file meant for some policies only says so on a `policies' line.
pols=$(awk '$1 == "policies" { $1 = ""; print }' "$file")
for p in ${pols:-ule 4bsd}; do
	if ! out=$("$ultsim" "$file" --policy "$p" 2>&1); then
		echo "$out"
		echo "scenario: $(basename "$file") under $p failed"
		rc=1
	fi
done
[ $rc = 0 ] && echo "scenario: $(basename "$file"): ok"
exit $rc
