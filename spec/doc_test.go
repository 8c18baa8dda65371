package spec

import (
	"os"
	"regexp"
	"testing"
)

// The complete example in docs/spec-format.md must stay a valid spec.
func TestDocExampleIsValid(t *testing.T) {
	doc, err := os.ReadFile("../docs/spec-format.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## A complete spec\n\n```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("no complete example in docs/spec-format.md")
	}
	if _, err := Parse("docs/spec-format.md", m[1]); err != nil {
		t.Error(err)
	}
}

// The spec docs/benchmarks.md measures streamed expectations with is a
// valid spec within the default memory budget, its expectations naming
// repetitions it has.
func TestBenchmarksSpecIsValid(t *testing.T) {
	doc, err := os.ReadFile("../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no yaml block in docs/benchmarks.md")
	}
	for _, m := range blocks {
		s, err := Parse("docs/benchmarks.md", m[1])
		if err != nil {
			t.Error(err)
			continue
		}
		if err := Validate(s); err != nil {
			t.Error(err)
		}
	}
}
