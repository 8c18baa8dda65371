// Package layers holds one test: the arrows between packages point one way
// (docs/architecture.md). It reads the real import graph with `go list`.
package layers

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/replayspec/replayspec/"

// forbidden maps a package to the packages it must never depend on, even
// indirectly: the two walls of DESIGN.md and the leaves of the pipeline.
var forbidden = map[string][]string{
	"check":   {"replay", "sim", "cuda", "harness", "target", "runner"}, // oracles never see the engine
	"replay":  {"sim", "cuda", "harness", "target", "check", "spec"},    // the engine speaks to hsa only
	"hsa":     {"replay", "sim", "cuda", "trace", "spec", "check"},      // the runtime model stands alone
	"trace":   {"replay", "sim", "cuda", "spec", "check", "hsa"},        // the contract stands alone
	"spec":    {"replay", "sim", "cuda", "check", "trace", "harness"},   // the data model stands alone
	"sim":     {"replay", "harness", "check", "spec"},                   // a runtime knows nothing of the SDK
	"cuda":    {"replay", "harness", "check", "spec"},
	"harness": {"sim", "cuda", "check", "target", "runner"},
	"runner":  {"cmd/replayspec", "steps", "report"},
}

func TestArrowsPointOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json", "../../...").Output()
	if err != nil {
		t.Skipf("go list is not available here: %v", err)
	}
	deps := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		deps[strings.TrimPrefix(p.ImportPath, module)] = p.Deps
	}
	for pkg, never := range forbidden {
		ds, ok := deps[pkg]
		if !ok {
			t.Errorf("package %s not found by go list", pkg)
			continue
		}
		for _, d := range ds {
			for _, n := range never {
				if d == module+n {
					t.Errorf("%s depends on %s: the arrow points the wrong way (docs/architecture.md)", pkg, n)
				}
			}
		}
	}
}
