#!/bin/sh
# A spec of N dispatches of three passes each on one 64-element buffer, the
# shape of BenchmarkScale's dispatches=N (target/sim/pipeline_bench_test.go),
# as YAML on stdout: the large traces of docs/benchmarks.md ("Traces of any
# size") are made from it.
#   scripts/bigspec.sh 10000 > /tmp/d10000.yaml
set -e
n=${1:?usage: scripts/bigspec.sh N}
cat <<YAML
version: 1
name: dispatches-$n
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
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "    - {name: d%d, kernel: increment, agent: gpu0, args: [x]}\n", i }'
