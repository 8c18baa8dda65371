package golden

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target/sim"
)

// awaits is the first line of a spec in specs/pending: the rule oracles
// that still misjudge its run, each a known gap of the oracles.
var awaits = regexp.MustCompile(`(?m)^# AWAITS: (.+)$`)

// TestPendingSpecs: a spec in specs/pending is a complete spec whose run
// the engine gets right (its own expectations hold, the target reports no
// error) but which some rule oracles do not read yet. Exactly the oracles
// its "# AWAITS:" line names may report it, no more and no fewer: when an
// oracle learns, this test fails until the spec moves to specs/ with a
// golden, so the list can never go stale.
func TestPendingSpecs(t *testing.T) {
	files, _ := filepath.Glob("../specs/pending/*.yaml")
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m := awaits.FindSubmatch(data)
			if m == nil {
				t.Fatal(`no "# AWAITS: RULE, ..." line: a pending spec names the oracles it waits for`)
			}
			var want []string
			for _, id := range strings.Split(string(m[1]), ",") {
				want = append(want, strings.TrimSpace(id))
			}
			slices.Sort(want)
			s, err := spec.Parse(f, data) // a pending spec is one case: no matrix
			if err != nil {
				t.Fatal(err)
			}
			r := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
			if r.Err != nil {
				t.Fatalf("the target failed: %v", r.Err)
			}
			var got []string
			for _, v := range r.Violations {
				if v.Rule == check.ExpectRule {
					t.Errorf("its own expectation does not hold:\n%s", v)
					continue
				}
				got = append(got, v.Rule)
			}
			slices.Sort(got)
			got = slices.Compact(got)
			switch {
			case len(got) == 0:
				t.Errorf("every oracle now reads it right: move it to specs/ (drop the AWAITS line) and run make golden")
			case !slices.Equal(got, want):
				t.Errorf("oracles that report it: %v; its AWAITS line says %v", got, want)
			}
		})
	}
}
