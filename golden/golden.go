package golden

import (
	"embed"
	"io/fs"
	"strings"
)

// The pinned traces travel with every binary and test that imports this
// package, as the spec library does (specs.Library): nothing is read by a
// relative path. Matrix cases sit in a folder named after their spec.
//
//go:embed *.ndjson */*.ndjson
var files embed.FS

// FS holds the pinned traces: NAME.ndjson for a spec, SPEC/CASE.ndjson for
// a case of a matrix spec.
func FS() fs.FS { return files }

// Read returns the pinned NDJSON trace of the library spec or matrix case
// name ("api-surface", "counters-by-agent-kind/kind=MI300").
func Read(name string) ([]byte, error) {
	if name == "" || strings.Contains(name, "..") {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	return files.ReadFile(name + ".ndjson")
}

// Names lists the pinned traces by spec or case name, in file order.
func Names() []string {
	var out []string
	_ = fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimSuffix(path, ".ndjson"))
		}
		return nil
	})
	return out
}
