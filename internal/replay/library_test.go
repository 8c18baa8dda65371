package replay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/internal/simtarget"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/specs"
)

// TestLibraryHolds runs the whole spec library through the engine and the
// rule oracles: every spec must pass. Here, beside the engine, so that the
// mutation run (make mutation) judges each mutant of this package by the
// oracles and expectations that name the rules it breaks, not only by the
// unit tests.
func TestLibraryHolds(t *testing.T) {
	lib, err := specs.Library()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range lib {
		r := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
		if v := r.Verdict(); v != runner.Pass {
			var why []string
			for _, vi := range r.Violations {
				why = append(why, vi.Rule+": "+vi.Message)
			}
			for _, id := range r.Unexercised {
				why = append(why, id+": named but not exercised")
			}
			if r.Err != nil {
				why = append(why, r.Err.Error())
			}
			t.Errorf("%s: %s\n  %s", s.Name, v, strings.Join(why, "\n  "))
		}
	}
}
