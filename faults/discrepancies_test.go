package faults

import (
	"context"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
)

// TestDiscrepancies runs the specs of testdata/discrepancies: scenarios
// whose expectations hold but which an oracle wrongly fails (each file's
// comment says which and why). It never fails; it reports, so that the
// oracles' owner can reproduce each finding with
//
//	go test ./faults -run TestDiscrepancies -v
//
// and a spec that passes cleanly is ready to move into specs/.
func TestDiscrepancies(t *testing.T) {
	specs, err := runner.Collect([]string{"testdata/discrepancies"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range Run(context.Background(), specs, nil, 0) {
		r := o.Result
		expectFailed := false
		for _, v := range r.Violations {
			expectFailed = expectFailed || v.Rule == check.ExpectRule
		}
		switch {
		case r.Err != nil:
			t.Logf("%s: target error: %v", o.Spec, r.Err)
		case expectFailed:
			t.Logf("%s: an expectation fails; the scenario itself needs review", o.Spec)
		case r.Verdict() == runner.Pass:
			t.Logf("%s: passes now; move it into specs/", o.Spec)
			continue
		}
		for _, v := range r.Violations {
			t.Logf("%s: %s", o.Spec, v.String())
		}
	}
}
