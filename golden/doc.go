// Package golden pins the canonical NDJSON trace of every spec of the
// library (specs/*.yaml) on the simulator: golden/NAME.ndjson. The tests
// compare a fresh run with each file and prove runs are byte-stable;
// `make golden` (go test ./golden -update) rewrites the files, which are
// then reviewed like code.
package golden
