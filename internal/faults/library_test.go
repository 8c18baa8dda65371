package faults

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
)

// library loads specs/*.yaml (not specs/invalid).
func library(t *testing.T) []spec.Spec {
	t.Helper()
	specs, err := runner.Collect([]string{"../../specs"})
	if err != nil {
		t.Fatalf("loading the spec library: %v", err)
	}
	return specs
}

// TestLibrary runs every spec of the library on the reference engine with
// nothing planted: each must pass with zero violations.
func TestLibrary(t *testing.T) {
	specs := library(t)
	if len(specs) < 28 {
		t.Errorf("the library has %d specs, want at least 28", len(specs))
	}
	dump := os.Getenv("REPLAYSPEC_DUMP") // a spec name: print its trace
	for _, o := range Run(context.Background(), specs, nil, 0) {
		r := o.Result
		if o.Spec == dump {
			for _, e := range r.Trace.Events {
				t.Log(check.FormatEvent(e))
			}
		}
		if v := r.Verdict(); v != runner.Pass {
			var b strings.Builder
			for _, x := range r.Violations {
				b.WriteString("\n" + x.String())
			}
			if len(r.Unseen) > 0 {
				b.WriteString("\nexpected violations not reported: " + strings.Join(r.Unseen, ", "))
			}
			if r.Err != nil {
				b.WriteString("\nerror: " + r.Err.Error())
			}
			if r.SkipReason != "" {
				b.WriteString("\nskipped: " + r.SkipReason)
			}
			t.Errorf("spec %s (%s): %s%s", o.Spec, r.Spec.File, v, b.String())
		}
	}
}
