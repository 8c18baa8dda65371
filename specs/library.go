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
func Library() ([]spec.Spec, error) { return load("*.yaml") }

// NVIDIA returns the specs written for NVIDIA agents (real counters through
// CUPTI): run with --target cuda.
func NVIDIA() ([]spec.Spec, error) { return load("nvidia/*.yaml") }

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
	all, _ := Library()
	more, _ := NVIDIA()
	for _, s := range append(all, more...) {
		if s.Name == name {
			return s, true
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
