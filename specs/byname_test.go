package specs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/replayspec/replayspec/spec"
)

// TestByNameParsesOneFile: every spec of the library, matrix cases
// included, is found by name through the index of the files' top-level
// names (complete for the library, so nothing else is parsed), and is the
// spec the whole library holds (under -short, a spread of the library:
// the index is still checked whole).
func TestByNameParsesOneFile(t *testing.T) {
	for _, pattern := range []string{"*.yaml", "nvidia/*.yaml"} {
		if _, complete := fileNames(pattern); !complete {
			t.Errorf("%s: some file's top-level name: line was not read; ByName parses the whole set", pattern)
		}
		all, err := parsed(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if testing.Short() && len(all) > 12 {
			// make test (-race): every fourth spec, from first to last
			// (each ByName parses its file again); all in make test-heavy.
			var spread []spec.Spec
			for i := 0; i < len(all); i += 4 {
				spread = append(spread, all[i])
			}
			all = append(spread, all[len(all)-1])
		}
		for _, want := range all {
			got, ok := ByName(want.Name)
			if !ok {
				t.Errorf("ByName(%q): not found", want.Name)
				continue
			}
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("ByName(%q) differs from the library's (-library +ByName):\n%s", want.Name, d)
			}
		}
	}
	for _, name := range []string{"no-such-spec", "fixed-three-passes/x=1", ""} {
		if _, ok := ByName(name); ok {
			t.Errorf("ByName(%q) found a spec", name)
		}
	}
}
