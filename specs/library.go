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
	"regexp"
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

// ByName returns the library spec called name (a matrix case by its
// case name, "base/key=value,...").
func ByName(name string) (spec.Spec, bool) {
	base, _, _ := strings.Cut(name, "/")
	for _, pattern := range []string{"*.yaml", "nvidia/*.yaml"} {
		files, complete := fileNames(pattern)
		if complete {
			// Only the file that names it is parsed: looking a trace's
			// spec up parsed the whole library (a quarter of a second,
			// several under the race detector) before a line was read.
			f, ok := files[base]
			if !ok {
				continue
			}
			data, err := library.ReadFile(f)
			if err != nil {
				continue
			}
			cases, _ := spec.ParseCases(path.Join(Dir, f), data)
			for _, s := range cases {
				if s.Name == name {
					return s, true
				}
			}
			continue
		}
		lib, _ := shared(pattern)
		for _, s := range lib {
			if s.Name == name {
				return spec.Clone(s), true
			}
		}
	}
	return spec.Spec{}, false
}

// topName is a spec file's top-level name: line, plain or quoted.
var topName = regexp.MustCompile(`(?m)^name:[ \t]*(?:"([^"\\]*)"|'([^']*)'|([^\s#'"]+))[ \t]*(?:#.*)?$`)

// fileNames maps the name each file of pattern gives its spec to the file;
// complete is false when some file's name could not be read so (the whole
// set is parsed then).
var fileNames = func() func(pattern string) (map[string]string, bool) {
	type index struct {
		files    map[string]string
		complete bool
	}
	var once sync.Map // pattern -> func() index
	return func(pattern string) (map[string]string, bool) {
		f, _ := once.LoadOrStore(pattern, sync.OnceValue(func() index {
			names, err := fs.Glob(library, pattern)
			if err != nil {
				return index{}
			}
			x := index{files: map[string]string{}, complete: true}
			for _, n := range names {
				data, err := library.ReadFile(n)
				m := topName.FindAllSubmatch(data, -1)
				if err != nil || len(m) != 1 {
					x.complete = false
					continue
				}
				x.files[string(m[0][1])+string(m[0][2])+string(m[0][3])] = n
			}
			return x
		}))
		x := f.(func() index)()
		return x.files, x.complete
	}
}()

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
