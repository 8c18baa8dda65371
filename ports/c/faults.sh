#!/usr/bin/env bash
# The fault matrix, planted in the C port: every KRS_FAULT_* switch
# (sdk/faults.h) is built into its own driver and the spec library runs
# through the protocol; each fault must be reported as a violation of every
# rule it breaks. Usage: ports/c/faults.sh [REPLAYSPEC]  (default bin/replayspec)
# PROFILE=black-box (or runtime) runs the drivers at that profile and
# reports what is caught there, without failing: a narrower view cannot see
# every fault (docs/compliance.md says which rules need which sources).
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
SNAPSHOT_SILENTLY MEM-1
RESTORE_MISREPORTED MEM-2
SNAPSHOT_UNSAVED_KINDS MEM-4
SNAPSHOT_SKIPS_BUFFER MEM-4 MEM-2
PAYLOAD_SIZE_SHORT API-5
DISPATCH_INFO_GRID API-5
USER_DATA_WRITE_LOST UD-2
REPLAY_MULTI_PACKET ACT-6
ACTIVATE_UNSTARTED ACT-3
TOOL_DISPATCH_NOT_CANDIDATE MEM-6
REPLAY_REENTRANT MEM-6
DECLINE_NESTED MEM-6
"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A small pass budget: a fault that loops for ever shows in 100 passes; one
# that hangs a spec is cut off at 8 s (the library runs in about a second).
profile=${PROFILE:-full}
export replayspec tmp profile
awk 'NF {print $1}' <<<"$catches" | xargs -P "$(nproc)" -I{} sh -c \
	'"$replayspec" run --format json --timeout 8s --max-passes 100 --target "exec:ports/c/bin/faults/krs-driver-{} --profile $profile" specs/ >"$tmp/{}.json" 2>/dev/null || true'
missed=0
printf '%-32s %-22s %s\n' FAULT "MUST BE CAUGHT AS" "REPORTED (specs)"
while read -r fault rules; do
	[ -z "$fault" ] && continue
	# the rules of the violations the oracles reported, with how many specs
	# (the JSON report is a stream, one object a line: docs/cli.md)
	reported=$(python3 -c '
import json, sys, collections
n = collections.Counter()
ended = False
for line in open(sys.argv[1]):
    r = json.loads(line)
    ended = ended or r.get("event") == "end"
    if r.get("event") != "result":
        continue
    for rule in sorted({v["rule"] for v in r.get("violations") or []}):
        n[rule] += 1
print(" ".join(f"{k}({v})" for k, v in sorted(n.items())) + ("" if ended else " [report cut short]"))
' "$tmp/$fault.json")
	status=caught
	for r in $rules; do
		if ! grep -qw -- "$r([0-9]*)" <<<"$reported"; then
			status="MISSED $r"
			missed=1
		fi
	done
	printf '%-32s %-22s %s%s\n' "$fault" "$rules" "$reported" "$( [ "$status" = caught ] || echo " <- $status")"
done <<<"$catches"
if [ "$profile" != full ]; then
	echo "faults.sh: profile $profile: caught as listed unless marked MISSED"
	exit 0
fi
if [ "$missed" -ne 0 ]; then
	echo "faults.sh: a planted fault was not caught under its rule" >&2
	exit 1
fi
echo "faults.sh: all $(grep -c . <<<"$catches") planted faults caught, each under its rules"
