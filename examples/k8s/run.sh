#!/bin/bash
# Run the shards' Indexed Job (replayspec-shards.yaml), then, once it has
# finished whatever its pods found, the merge (replayspec-merge.yaml), then
# copy the results to ./out.
#   examples/k8s/run.sh            # kubectl's current context and namespace
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Both manifests checked against the cluster's API before anything runs.
kubectl apply --dry-run=server -f "$here/replayspec-shards.yaml" -f "$here/replayspec-merge.yaml" >/dev/null
# A fresh volume: results of an earlier run must not be merged with these.
kubectl delete job -l app=replayspec --ignore-not-found --wait
kubectl delete pod replayspec-fetch --ignore-not-found --wait
kubectl delete pvc replayspec-results --ignore-not-found --wait
kubectl apply -f "$here/replayspec-shards.yaml"
# The Job finishes Complete, or Failed when a pod broke past its retries.
kubectl wait --for=condition=Complete --timeout=2h job/replayspec-shards &
ok=$!
kubectl wait --for=condition=Failed --timeout=2h job/replayspec-shards &
failed=$!
wait -n "$ok" "$failed" || true
kill "$ok" "$failed" 2>/dev/null || true
kubectl apply -f "$here/replayspec-merge.yaml"
status=0
kubectl wait --for=condition=Complete --timeout=30m job/replayspec-merge || status=1
kubectl logs job/replayspec-merge
# Copy the results out through a pod that mounts the volume.
kubectl run replayspec-fetch --image=busybox --restart=Never \
  --overrides='{"spec":{"volumes":[{"name":"r","persistentVolumeClaim":{"claimName":"replayspec-results"}}],"containers":[{"name":"f","image":"busybox","command":["sleep","600"],"volumeMounts":[{"name":"r","mountPath":"/results"}]}]}}'
kubectl wait --for=condition=Ready pod/replayspec-fetch --timeout=5m
mkdir -p out
for f in report.html merged.json COMPLIANCE.md junit.xml; do
  kubectl cp "replayspec-fetch:/results/$f" "out/$f"
done
kubectl delete pod replayspec-fetch --wait=false
echo "results in out/ (report.html, merged.json, COMPLIANCE.md, junit.xml)"
exit "$status"
