#!/bin/sh
# The peak resident memory of one process, not of its children: runs CMD in
# the background, polls its VmHWM in /proc every 0.1 s, and writes the last
# value read (KiB) to the file $OUT_HWM. For a runner whose exec: driver
# would otherwise count in GNU time's %M (docs/benchmarks.md).
#   OUT_HWM=/tmp/runner.hwm scripts/hwm.sh replayspec run --target "exec:..." spec.yaml
set -u
"$@" &
pid=$!
hwm=0
while kill -0 "$pid" 2>/dev/null; do
	v=$(awk '/VmHWM/{print $2}' "/proc/$pid/status" 2>/dev/null)
	[ -n "$v" ] && hwm=$v
	sleep 0.1
done
wait "$pid"
rc=$?
echo "$hwm" >"${OUT_HWM:?set OUT_HWM to the file for the peak}"
exit "$rc"
