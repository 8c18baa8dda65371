// Package layers holds one test: the arrows between packages point one way
// (docs/architecture.md). It reads the real import graph with `go list`.
package layers

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/replayspec/replayspec/"

// contract is the public contract: what a port author, a tool author or a
// CI script may import. None of it may depend on an implementation.
var contract = []string{"spec", "trace", "rules", "check", "target", "runner", "report", "driver"}

// implementations are public too, for a different reason: they are what the
// contract judges, and a Go port author may build on them (a runtime under
// hsa, a port run on sim, the reference engine read as the rules). The
// contract never imports one of them (docs/architecture.md).
var implementations = []string{
	"hsa", "sim", "cuda", "replay", "rocprof",
	"target/sim", "target/cuda", "target/exec",
}

// forbidden maps a package to the packages it must never depend on, even
// indirectly: the two walls of DESIGN.md and the leaves of the pipeline.
// Every contract package is also kept away from every implementation and
// from internal/ (see below).
var forbidden = map[string][]string{
	"check":            {"target", "runner", "report"},                                             // oracles judge traces, nothing else
	"replay":           {"sim", "cuda", "internal/harness", "check", "spec", "target/", "rocprof"}, // the engine speaks to hsa only
	"hsa":              {"replay", "sim", "cuda", "spec", "check"},                                 // the runtime model stands alone (trace: its vocabulary only)
	"trace":            {"spec", "check", "rules"},                                                 // the wire format stands alone
	"spec":             {"check", "target", "runner"},                                              // the data model needs only the vocabularies of trace and rules
	"rules":            {"spec", "trace", "check"},                                                 // the catalogue stands alone
	"target":           {"check", "runner", "report"},                                              // the interface is a leaf
	"sim":              {"replay", "cuda", "internal/harness", "check", "spec", "runner"},          // a runtime knows nothing of the SDK
	"cuda":             {"replay", "sim", "internal/harness", "check", "spec", "runner"},           // nor does this one
	"internal/harness": {"sim", "cuda", "check", "target", "runner"},                               // the harness runs on any runtime
	"runner":           {"report", "steps"},                                                        // the pipeline knows no report format
	"target/sim":       {"cuda", "target/cuda", "target/exec", "check", "runner"},                  // targets produce traces, never judge
	"target/cuda":      {"sim", "target/sim", "target/exec", "check", "runner"},                    // nor does this one
	"target/exec":      {"replay", "sim", "cuda", "internal/harness", "runner", "target/sim"},      // a port is reached only through its driver
	"rocprof":          {"check", "runner", "cuda", "target/"},                                     // the front end runs the engine; it is not a target
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
		if !strings.HasPrefix(p.ImportPath, module) {
			continue
		}
		var ours []string
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module) {
				ours = append(ours, strings.TrimPrefix(d, module))
			}
		}
		deps[strings.TrimPrefix(p.ImportPath, module)] = ours
	}
	never := map[string][]string{}
	for pkg, list := range forbidden {
		never[pkg] = append(never[pkg], list...)
	}
	for _, pkg := range contract {
		never[pkg] = append(never[pkg], "internal/")
		for _, impl := range implementations {
			if impl != pkg {
				never[pkg] = append(never[pkg], impl)
			}
		}
	}
	for pkg, list := range never {
		ds, ok := deps[pkg]
		if !ok {
			t.Errorf("package %s not found by go list: update this test with the layout", pkg)
			continue
		}
		for _, d := range ds {
			for _, n := range list {
				if d == n || (strings.HasSuffix(n, "/") && strings.HasPrefix(d, n)) {
					t.Errorf("%s depends on %s: the arrow points the wrong way (docs/architecture.md)", pkg, d)
				}
			}
		}
	}
	// Everything public must be named here, with its reason in
	// docs/architecture.md: a new public package is a decision.
	for pkg := range deps {
		public := !strings.HasPrefix(pkg, "internal/") && !strings.HasPrefix(pkg, "cmd/")
		if public && !slices.Contains(contract, pkg) && !slices.Contains(implementations, pkg) && !slices.Contains(corpus, pkg) {
			t.Errorf("package %s is public but neither contract nor implementation: move it under internal/ or name it here (and in docs/architecture.md)", pkg)
		}
	}
}

// corpus are public packages that hold data or tests, not code a user
// calls: the spec library, the Gherkin steps and the golden traces.
var corpus = []string{"specs", "steps", "golden"}
