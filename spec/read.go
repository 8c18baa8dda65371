package spec

import (
	"fmt"
	"io"
	"os"
)

// MaxBytes caps the size of a spec file that Load reads (8 MiB: a spec of
// some 100,000 dispatches). A larger file, or one that never ends
// (/dev/zero), is refused before it is parsed: the YAML reader needs many
// times a file's size in memory.
var MaxBytes int64 = 8 << 20

// ReadFile reads at most limit bytes of path, and fails, saying so, when
// the file holds more.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d MiB: a spec this big would need many times its size in memory; split it, or raise the cap (--max-input-mib)", limit>>20)
	}
	return data, nil
}
