package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/replayspec/replayspec/spec"
)

// Collect loads the specs that paths name (SpecFiles). All load errors
// are returned together.
func Collect(paths []string) ([]spec.Spec, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no spec given: name spec files or directories (e.g. specs/)")
	}
	files, err := SpecFiles(paths)
	if err != nil {
		return nil, err
	}
	var specs []spec.Spec
	var errs []string
	for _, f := range files {
		cases, err := spec.LoadCases(f) // a spec with a matrix is its cases
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		specs = append(specs, cases...)
	}
	if len(errs) > 0 {
		return specs, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return specs, nil
}

// SpecFiles expands spec paths: a file stands for itself, a directory for
// its *.yaml and *.yml files in name order (not sub-directories:
// specs/invalid holds bad examples on purpose). A path that does not exist
// or a directory without specs is an error naming it.
func SpecFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, unwrapPathError(err))
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		found, err := filepath.Glob(filepath.Join(p, "*.yaml"))
		if err != nil {
			return nil, err
		}
		more, _ := filepath.Glob(filepath.Join(p, "*.yml"))
		found = append(found, more...)
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no spec files (*.yaml) in this directory", p)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Shard keeps the specs of shard k of n (1-based), by position, so that a
// CI matrix can spread a library over runners.
func Shard(specs []spec.Spec, k, n int) ([]spec.Spec, error) {
	if n < 1 || k < 1 || k > n {
		return nil, fmt.Errorf("shard %d/%d: want k/n with 1 <= k <= n", k, n)
	}
	var out []spec.Spec
	for i, s := range specs {
		if i%n == k-1 {
			out = append(out, s)
		}
	}
	return out, nil
}
