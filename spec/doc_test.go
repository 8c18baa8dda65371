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
