#!/usr/bin/env bash
# Issue 22's speed probe on a machine with an NVIDIA GPU: the ways CUPTI
# can program a counter pass when the application replays the kernel,
# timed (TestGPUCUPTIProbe's strategies, cuda/probe*_gpu_test.go), and the
# CUPTI samples of the toolkit timed by an LD_PRELOAD shim (interpose.c)
# that prints every profiler call's time.
#   scripts/cupti-probe/run.sh BIN [STRATEGY...]
# BIN holds cuda.test (go test -c ./cuda, CGO_ENABLED=0). Logs go to $OUT
# (the device tool's folder) or BIN/out. Environment: DISPATCHES (6);
# REPLAYSPEC_PROBE_METRICS (a comma list, or @FILE); NO_SAMPLES=1 skips
# the samples; SAMPLES (which); SAMPLE_ARGS, or SAMPLE_ARGS_<sample>, are
# argument lists to run each sample with, separated by spaces, '@' for a
# space inside one list ("" runs it without arguments).
set -u
bin=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$bin/out}
mkdir -p "$out"
strategies=${*:-union-app union-user kernel-replay repeat-one legacy-user legacy-kernel}
lib=/usr/local/cuda/targets/x86_64-linux/lib
export LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-}
{
	uname -r
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	ls "$lib" | grep -E 'cupti|nvperf'
	ls /usr/local/cuda/extras/CUPTI/samples
	nm -D "$lib/libcupti.so.13" | grep -E 'cuptiProfiler(BeginSession|BeginPass|EnableProfiling)|cuptiRangeProfiler(Start|SetConfig)'
} >"$out/recon.txt" 2>&1
cat "$out/recon.txt"
work=$(mktemp -d)
for s in $strategies; do
	echo "== probe $s" | tee -a "$out/probe.jsonl"
	(cd "$work" && REPLAYSPEC_PROBE=$s REPLAYSPEC_PROBE_RANGE=auto REPLAYSPEC_PROBE_DISPATCHES=${DISPATCHES:-6} \
		timeout 120 "$bin/cuda.test" -test.run TestGPUCUPTIProbe -test.v -test.count=1 >>"$out/probe.jsonl" 2>&1)
	echo "== probe $s: exit $?" | tee -a "$out/probe.jsonl"
done
[ -n "${NO_SAMPLES:-}" ] && exit 0
# The samples: built with their own Makefiles, run under the shim.
gcc -shared -fPIC -O2 -o "$work/interpose.so" "$here/interpose.c" -ldl
cp -r /usr/local/cuda/extras/CUPTI/samples "$work/samples"
for s in ${SAMPLES:-range_profiling userrange_profiling autorange_profiling}; do
	d=$work/samples/$s
	[ -d "$d" ] || { echo "== sample $s: none" >>"$out/samples.txt"; continue; }
	{
		echo "== sample $s"
		grep -n -i -E 'usage|argv|replay|metric' "$d"/*.cu "$d"/*.h 2>/dev/null | head -n 60
		(cd "$d" && timeout 180 make CUDA_INSTALL_PATH=/usr/local/cuda 2>&1 | tail -n 5)
		exe=$(find "$d" -maxdepth 1 -type f -executable -name "$s*" | head -n 1)
		[ -n "$exe" ] || exe=$(find "$d" -maxdepth 1 -type f -executable | head -n 1)
		echo "== run $exe"
		var=SAMPLE_ARGS_$s
		for args in ${!var:-"" ${SAMPLE_ARGS:-}}; do
			echo "== args: ${args//,/ }"
			(cd "$d" && LD_PRELOAD=$work/interpose.so timeout 60 "$exe" ${args//@/ } 2>&1 | grep -v '^\[cupti-time\] cuptiProfilerHost' | tail -n 80)
		done
	} >>"$out/samples.txt" 2>&1
done
rm -rf "$work"
