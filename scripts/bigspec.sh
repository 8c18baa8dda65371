#!/bin/sh
# A spec of N dispatches of three passes each on one 64-element buffer, the
# shape of BenchmarkScale's dispatches=N (target/sim/pipeline_bench_test.go),
# as YAML on stdout: the large traces of docs/benchmarks.md ("Traces of any
# size") are made from it. With --repeat the N dispatches are one dispatch
# with repeat: N (labels d#0 .. d#N-1), the shape of BenchmarkScaleStreamed's
# repeat=N: a spec of a few lines whatever N. Its memory estimate counts
# every repetition; run a large one with --memory-budget raised (a run that
# keeps no trace holds none of it).
#   scripts/bigspec.sh 10000 > /tmp/d10000.yaml
#   scripts/bigspec.sh --repeat 1000000 > /tmp/r1000000.yaml
set -e
repeat=
if [ "$1" = --repeat ]; then
	repeat=1
	shift
fi
n=${1:?usage: scripts/bigspec.sh [--repeat] N}
name=dispatches-$n
[ -n "$repeat" ] && name=repeated-$n
cat <<YAML
version: 1
name: $name
agents:
  - {name: gpu0, kind: MI300}
contexts:
  - name: replay
    services:
      kernel_replay: {}
  - name: timing
    services:
      kernel_trace: {}
tool:
  plan:
    passes: 3
application:
  buffers:
    - {name: x, agent: gpu0, elements: 64, fill: 1}
  dispatches:
YAML
if [ -n "$repeat" ]; then
	echo "    - {name: d, kernel: increment, agent: gpu0, args: [x], repeat: $n}"
	exit 0
fi
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "    - {name: d%d, kernel: increment, agent: gpu0, args: [x]}\n", i }'
