// Package corpus is every trace the repository holds, for the tests that
// run over all of them: the goldens (golden/) and the recorded traces of
// check/testdata, some gzipped.
package corpus

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// globs are where the traces lie, from the repository's root.
var globs = []string{"golden/*.ndjson", "golden/*/*.ndjson", "check/testdata/*.ndjson", "check/testdata/*.ndjson.gz"}

// least is fewer traces than the corpus holds: a test that finds fewer
// looks in the wrong place, and would pass on nothing.
const least = 80

// Files lists the traces' paths; root is the repository's root as the
// caller's working directory reaches it (".." from a package's test).
func Files(root string) ([]string, error) {
	var files []string
	for _, g := range globs {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	if len(files) < least {
		return nil, fmt.Errorf("found %d traces under %s and %s; the corpus has moved?",
			len(files), filepath.Join(root, "golden"), filepath.Join(root, "check/testdata"))
	}
	return files, nil
}

// Read is the NDJSON text of the trace at path, uncompressed.
func Read(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".gz") {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return io.ReadAll(zr)
}
