#!/bin/sh
# The scaling curves of docs/benchmarks.md: the whole pipeline (engine,
# harness, recorder, oracles) on the simulator, one point per process so
# that each point's peak RSS (peak-RSS-MiB) is its own.
#   scripts/scale.sh                 every point
#   scripts/scale.sh dispatches      the points whose name contains it
set -e
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go test -c -o "$dir/simtarget.test" ./target/sim
points="dispatches=1 dispatches=10 dispatches=100 dispatches=1000 dispatches=10000 dispatches=100000
threads=1 threads=10 threads=100 threads=1000 threads=10000
forever-passes=10 forever-passes=100 forever-passes=1000 forever-passes=10000 forever-passes=100000
buffer-KiB=4 buffer-KiB=64 buffer-KiB=1024 buffer-KiB=16384 buffer-KiB=65536
specs=1 specs=10 specs=100 specs=1000"
for p in $points; do
	case "$p" in *"${1:-}"*) ;; *) continue ;; esac
	"$dir/simtarget.test" -test.run '^$' -test.bench "^BenchmarkScale/$p\$" -test.benchtime 1x 2>&1 | grep '^BenchmarkScale/' || echo "$p: failed"
done
