#!/usr/bin/env bash
# The fault matrix, planted in the C port: every KRS_FAULT_* switch
# (sdk/faults.h) is built into its own driver and the spec library runs
# through the protocol; each fault must be reported as a violation of every
# rule it breaks. Usage: ports/c/faults.sh [REPLAYSPEC]  (default bin/replayspec)
set -euo pipefail
cd "$(dirname "$0")/../.."
replayspec=${1:-bin/replayspec}
make -s -C ports/c faults >/dev/null

# fault: the rules it must be caught under (sdk/faults.h)
catches="
COMPLETION_EVERY_PASS CMP-1 CMP-2
COMPLETION_BEFORE_CONFIG_EXIT CMP-2
DISPATCH_ID_PER_PASS DID-1 DID-2 DID-3
CONTINUE_AFTER_LAST_PASS CONT-2
SKIP_RESTORE MEM-2 MEM-3
RESTORE_AFTER_LAST_PASS MEM-3
LOCAL_TOGGLE_LEAKS LCX-4
USER_DATA_NOT_RESEEDED UD-2
EXTERNAL_CORRELATION_REUSED COR-3
SNAPSHOT_WHEN_NOT_REPLAYED MEM-1
PASS_COUNT_CALLED_TWICE CB-3
SKIP_LAST_PASS_EXIT CB-2 CONT-4
INDEFINITE_TOTAL_NON_ZERO PC-5
PASS_FIELDS_IN_CONFIG API-6
IGNORE_CONTINUE PC-4
CORRELATION_PER_PASS COR-1
NO_AGENT_LOCK MEM-6
LOCAL_TOGGLE_ANYWHERE LCX-2
PC_SAMPLING_HONOURS_STOP SVC-2
REPLAY_SINGLE_PASS PC-2
ACTIVATE_WITHOUT_CONFIG ACT-3
REPLAY_ZERO_WITHOUT_CONTINUE PC-6
WARN_EVERY_TIME PC-6 ACT-6
REUSE_FIRST_PASS_TIMESTAMPS DID-4
LOCAL_START_NOT_STARTED_ALLOWED LCX-7
"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A small pass budget: a fault that loops for ever shows in 100 passes.
export replayspec tmp
awk 'NF {print $1}' <<<"$catches" | xargs -P "$(nproc)" -I{} sh -c \
	'"$replayspec" run --format json --timeout 20s --max-passes 100 --target "exec:ports/c/bin/faults/krs-driver-{}" specs/ >"$tmp/{}.json" 2>/dev/null || true'
missed=0
printf '%-32s %-22s %s\n' FAULT "MUST BE CAUGHT AS" "REPORTED (specs)"
while read -r fault rules; do
	[ -z "$fault" ] && continue
	reported=$(grep -o '"rule": "[A-Z]*-[0-9]*"' "$tmp/$fault.json" | sed 's/.*: "//; s/"//' | sort | uniq -c | awk '{printf "%s(%s) ", $2, $1}')
	status=caught
	for r in $rules; do
		if ! grep -q "\"rule\": \"$r\"" "$tmp/$fault.json"; then
			status="MISSED $r"
			missed=1
		fi
	done
	printf '%-32s %-22s %s%s\n' "$fault" "$rules" "$reported" "$( [ "$status" = caught ] || echo " <- $status")"
done <<<"$catches"
if [ "$missed" -ne 0 ]; then
	echo "faults.sh: a planted fault was not caught under its rule" >&2
	exit 1
fi
echo "faults.sh: all $(grep -c . <<<"$catches") planted faults caught, each under its rules"
