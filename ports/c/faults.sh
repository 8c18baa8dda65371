#!/usr/bin/env bash
# The C port's fault matrix (docs/faults.md, "The C port's fault matrix"):
# the unmodified driver and one driver per fault, every KRS_FAULT_* switch
# of sdk/faults.h and every port-author bug of faults/*.patch, each run
# through the spec library at the full, runtime and black-box profiles. A
# fault counts as named under a rule only where the unmodified driver, run
# with the same flags, does not report that rule for that spec.
#
#   ports/c/faults.sh [REPLAYSPEC] [FLAGS]     (REPLAYSPEC: default bin/replayspec)
#
# FLAGS go to internal/cfaults: -profiles full,runtime,black-box,
# -run REGEXP (some faults), -enforce full,runtime,black-box (fail below a
# profile's aim; make port-c-check enforces all three),
# -strict (fail on a miss faults/unnamed.txt does not explain, or on a stale
# line there), -docs docs/faults.md (rewrite the matrix there). PROFILE=P
# in the environment runs one profile, as before.
set -euo pipefail
cd "$(dirname "$0")/../.."
replayspec=bin/replayspec
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
	replayspec=$1
	shift
fi
profiles=()
if [ -n "${PROFILE:-}" ]; then
	profiles=(-profiles "$PROFILE")
fi
exec go run ./internal/cfaults -replayspec "$replayspec" "${profiles[@]}" "$@"
