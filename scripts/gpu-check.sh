#!/usr/bin/env bash
# Checks and measures the CUDA target on a machine with an NVIDIA GPU:
#   1. the cuda package's tests (real counters, the Nsight Compute
#      cross-check on the same launch);
#   2. Nsight Compute's kernel replay of cudabench -ncu-target with
#      --set basic, --set full and one metric (gpu__time_duration.sum, one
#      pass: the base of the per-extra-pass figures); caches flushed
#      (--cache-control all, ncu's default, as ours); the application
#      times the profiled launch; ncu's CSV gives the metric sets and values;
#   3. cudabench: kernel checks, copies and restores, restore patterns,
#      host path, and the same kernel replayed by our engine with the same
#      metric sets (-ncu), one CUPTI group a pass;
#   4. the spec library on the cuda target, and its test against the
#      simulator's verdicts.
# Without a Go toolchain on that machine, cross-build here and carry DIR:
#   scripts/gpu-check.sh --build-only [DIR]   # default DIR .device
#   DIR/gpu-check.sh --prebuilt [DIR] [cudabench flags]
# Where $OUT names a folder (the device tool's), the logs go there too.
set -uo pipefail
mode=${1:-all}
dir=${2:-.device}

build() {
	set -e
	cd "$(dirname "$0")/.."
	mkdir -p "$dir"
	export CGO_ENABLED=0 GOOS=linux GOARCH=amd64
	go build -o "$dir/cudabench" ./cmd/cudabench
	go build -o "$dir/replayspec" ./cmd/replayspec
	go test -c -o "$dir/cuda.test" ./cuda
	go test -c -o "$dir/target.test" ./target/cuda
	rm -rf "$dir/specs" && cp -r specs "$dir/specs"
	cp scripts/gpu-check.sh "$dir/gpu-check.sh"
}

# step NAME SECONDS CMD...: runs CMD with a time limit, output to $log/NAME.
step() {
	local name=$1 limit=$2
	shift 2
	echo "== $name: $*" | tee -a "$log/summary.txt"
	local began=$SECONDS
	timeout "$limit" "$@" >"$log/$name" 2>&1
	local rc=$?
	echo "== $name: exit $rc after $((SECONDS - began)) s" | tee -a "$log/summary.txt"
	tail -n 5 "$log/$name"
	return 0
}

run() {
	bin=$(cd "$dir" && pwd)
	shift
	[ $# -gt 0 ] && shift
	log=${OUT:-$bin/out}
	mkdir -p "$log"
	local ncu
	ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -n 1)
	{
		nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
		echo "ncu: ${ncu:-none}"
		ls /usr/local/cuda/targets/x86_64-linux/lib/ | grep -E 'cupti|nvperf' || true
	} >"$log/summary.txt" 2>&1
	cat "$log/summary.txt"
	# Tests run in a tree of their own: the package folders and specs/.
	work=$(mktemp -d)
	mkdir -p "$work/cuda" "$work/target/cuda" "$work/ncu"
	cp -r "$bin/specs" "$work/specs"
	(cd "$work/cuda" && step cuda-test.log 240 "$bin/cuda.test" -test.v -test.count=1)
	for set in one basic full; do
		what=(--set "$set")
		[ "$set" = one ] && what=(--metrics gpu__time_duration.sum)
		(cd "$work/ncu" && REPLAYSPEC_CUPTI=off timeout 100 "$ncu" --replay-mode kernel --clock-control none --cache-control all \
			-k increment -c 1 "${what[@]}" --csv --page raw --log-file "$set.csv" \
			"$bin/cudabench" -ncu-target >"$set.app" 2>"$set.log"
		echo "== ncu $set: exit $? $(grep -h -o '[0-9]* passes' "$set.csv" "$set.log" | head -n 1); $(cat "$set.app")" | tee -a "$log/summary.txt")
	done
	tar -C "$work" -czf "$log/ncu.tgz" ncu
	step cudabench.md 300 "$bin/cudabench" -ncu "$work/ncu" "$@"
	cat "$log/cudabench.md"
	step specs.log 60 "$bin/replayspec" run --target cuda "$work/specs" "$work/specs/nvidia"
	(cd "$work/target/cuda" && step target-test.log 90 "$bin/target.test" -test.v -test.count=1 -test.run TestCUDALibrary)
	rm -rf "$work"
}

case "$mode" in
--build-only) build ;;
--prebuilt) run "$@" ;;
all) (build) && run "$@" ;;
*) echo "usage: $0 [--build-only|--prebuilt] [DIR] [cudabench flags]" >&2; exit 2 ;;
esac
