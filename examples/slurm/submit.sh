#!/bin/bash
# Submit replayspec to Slurm: N shards as a job array, then the merge,
# which waits for all of them. Arguments after N go to `replayspec run`
# (specs or directories; none: the built-in library).
#
#   examples/slurm/submit.sh 8
#   TARGET=exec:$PWD/build/my-driver examples/slurm/submit.sh 8 specs/
#
# Results land in $OUT (default out/): report.html, merged.json,
# COMPLIANCE.md, junit.xml, and each task's log. Pass sbatch options
# (partition, account) with SBATCH_PARTITION, SBATCH_ACCOUNT and the like.
set -euo pipefail
n=${1:?usage: submit.sh SHARDS [SPEC|DIR...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-out} TARGET=${TARGET:-sim}
mkdir -p "$OUT" # Slurm does not make the directories of --output
array=$(sbatch --parsable --array="1-$n" --export=ALL "$here/replayspec-array.sbatch" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterany:$array" --kill-on-invalid-dep=no \
  --export=ALL,SHARDS="$n" "$here/replayspec-merge.sbatch")
merge=${merge%%;*}
echo "replayspec: shards in job $array, merge in job $merge; results in $OUT/"
echo "$array $merge" > "$OUT/slurm-jobs"
