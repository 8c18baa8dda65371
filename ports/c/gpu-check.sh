#!/usr/bin/env bash
# The C port on an NVIDIA GPU: the spec library through the driver protocol
# with the CUDA runtime (the driver API through dlopen, the Go CUDA target's
# PTX), at the full and black-box profiles, plus one run of the sanitizer
# build. The CUDA machine has gcc and make but maybe no Go: build the runner
# here and carry it.
#
#   ports/c/gpu-check.sh --build-only   # here: .device/replayspec (static, no cgo)
#   ports/c/gpu-check.sh --prebuilt     # on the GPU machine: builds the C driver there, runs
#   ports/c/gpu-check.sh                # both, on a GPU machine with Go
#
# Where $OUT names a folder, the compliance matrices and the run logs are
# written there (docs/compliance.md records them).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-all}
runner=.device/replayspec

build() {
	mkdir -p .device
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o "$runner" ./cmd/replayspec
}

run() {
	local out=${OUT:-.device/gpu-c}
	mkdir -p "$out"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
	cc --version | head -1
	make -C ports/c all asan
	local status=0
	for profile in full black-box; do
		local driver="ports/c/bin/krs-driver --runtime cuda --profile $profile"
		echo "== exec:$driver"
		"$runner" run --target "exec:$driver" --xfail "ports/c/known-failures-cuda-$profile.txt" \
			--matrix "$out/compliance-cuda-$profile.md" specs/ 2>&1 | tee "$out/run-cuda-$profile.log" || status=1
	done
	echo "== sanitizers: exec:ports/c/bin/krs-driver-asan --runtime cuda"
	# The CUDA driver's own allocations are not ours to judge: leaks off.
	ASAN_OPTIONS=detect_leaks=0:protect_shadow_gap=0 "$runner" run --quiet \
		--target "exec:ports/c/bin/krs-driver-asan --runtime cuda" --xfail ports/c/known-failures-cuda-full.txt \
		specs/ 2>&1 | tee "$out/run-cuda-asan.log" || status=1
	return $status
}

case "$mode" in
--build-only) build ;;
--prebuilt) run ;;
all) build && run ;;
*) echo "usage: $0 [--build-only|--prebuilt]" >&2; exit 2 ;;
esac
