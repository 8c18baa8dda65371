package specgen

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/replayspec/replayspec/spec"
)

// YAML writes s as a spec file that spec.Load reads back equal, with
// comment lines (say what it shows, or why it was written) at the top.
func YAML(s spec.Spec, comment ...string) ([]byte, error) {
	var b bytes.Buffer
	for _, c := range comment {
		for _, line := range strings.Split(strings.TrimRight(c, "\n"), "\n") {
			b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
		}
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
