#!/usr/bin/env bash
# Builds cmd/cudabench without cgo and runs it, then the cuda package's
# tests, on a machine with an NVIDIA GPU and driver. Without a Go toolchain
# on that machine, cross-build here and carry the binaries:
#   scripts/gpu-check.sh --build-only   # writes .device/cudabench and .device/cuda.test
#   scripts/gpu-check.sh --prebuilt     # on the GPU machine: runs them
# Arguments after the mode go to cudabench (-reps, -pass-reps, -mib). Where
# $OUT names a folder (the device tool's), cudabench's table and the test log
# are also written there.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device
mode=${1:-all}

build() {
	mkdir -p "$out"
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o "$out/cudabench" ./cmd/cudabench
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -o "$out/cuda.test" ./internal/cuda
}

run() {
	local save=/dev/null tests=/dev/null
	if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then
		save=$OUT/cudabench.md tests=$OUT/cuda-test.log
	fi
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
	"$out/cudabench" "$@" | tee "$save"
	# The test binary runs in the package directory, as go test would.
	(cd internal/cuda && "../../$out/cuda.test" -test.v -test.count=1) 2>&1 | tee "$tests"
}

[ $# -gt 0 ] && shift # the rest goes to cudabench
case "$mode" in
--build-only) build ;;
--prebuilt) run "$@" ;;
all) build && run "$@" ;;
*) echo "usage: $0 [--build-only|--prebuilt] [cudabench flags]" >&2; exit 2 ;;
esac
