// Package specs is the spec library as data: the YAML specs the suite runs,
// the invalid examples the loader must refuse, and the JSON schema for
// editors. The binary carries all three (go:embed), so `replayspec run`
// with no arguments runs the library, `replayspec check` finds a trace's
// spec by name, and an installed binary needs no checkout.
package specs

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/replayspec/replayspec/spec"
)

// Dir is where the library lives in the repository; built-in specs name
// their File under it, so that messages point at the source.
const Dir = "specs"

//go:embed *.yaml nvidia/*.yaml
var library embed.FS

//go:embed invalid/*.yaml
var invalid embed.FS

// Schema is the JSON schema of the spec format (docs/spec-format.md).
//
//go:embed schema.json
var Schema []byte

// Library returns the specs of the library, in file-name order: those any
// target can run (the simulator runs them all). A spec with a matrix is
// there as its cases.
func Library() ([]spec.Spec, error) { return parsed("*.yaml") }

// NVIDIA returns the specs written for NVIDIA agents (real counters through
// CUPTI): run with --target cuda.
func NVIDIA() ([]spec.Spec, error) { return parsed("nvidia/*.yaml") }

// The embedded files never change, so each set is parsed once a process
// (a test binary asks for the library dozens of times, and YAML under the
// race detector costs a quarter of a second a time) and handed out as
// clones, which the caller may change.
var parseOnce sync.Map // pattern and budgets -> func() ([]spec.Spec, error)

// shared is the one parse of the files pattern names under the budgets in
// force (they take part in validation): never to be changed.
func shared(pattern string) ([]spec.Spec, error) {
	key := fmt.Sprintf("%s %d %d", pattern, spec.MemoryBudget(), spec.MaxCases())
	f, _ := parseOnce.LoadOrStore(key, sync.OnceValues(func() ([]spec.Spec, error) { return load(pattern) }))
	return f.(func() ([]spec.Spec, error))()
}

func parsed(pattern string) ([]spec.Spec, error) {
	lib, err := shared(pattern)
	out := make([]spec.Spec, len(lib))
	for i, s := range lib {
		out[i] = spec.Clone(s)
	}
	return out, err
}

func load(pattern string) ([]spec.Spec, error) {
	names, err := fs.Glob(library, pattern)
	if err != nil {
		return nil, err
	}
	var out []spec.Spec
	var errs []string
	for _, n := range names {
		data, err := library.ReadFile(n)
		if err != nil {
			return nil, err
		}
		cases, err := spec.ParseCases(path.Join(Dir, n), data)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, cases...)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("the built-in library does not load:\n%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// ByName returns the library spec called name.
func ByName(name string) (spec.Spec, bool) {
	for _, pattern := range []string{"*.yaml", "nvidia/*.yaml"} {
		lib, _ := shared(pattern)
		for _, s := range lib {
			if s.Name == name {
				return spec.Clone(s), true
			}
		}
	}
	return spec.Spec{}, false
}

// Invalid returns the invalid examples: file name to contents. Each must
// be refused by the loader with the error its first line announces.
func Invalid() (map[string][]byte, error) {
	names, err := fs.Glob(invalid, "invalid/*.yaml")
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(names))
	for _, n := range names {
		data, err := invalid.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out[path.Join(Dir, n)] = data
	}
	return out, nil
}
