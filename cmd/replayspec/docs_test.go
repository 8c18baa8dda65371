package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docExamples are the documents whose `sh` blocks are run, in order.
var docExamples = []string{"README.md", "docs/cli.md", "docs/ci.md"}

// TestDocExamples runs every `replayspec ...` line of the sh blocks of
// docExamples, in order, from a copy of the repository's
// specs (so that what they write stays in the sandbox): an example that
// does not run as written is a bug of the docs. Each must exit 0.
func TestDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the library several times")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	box := t.TempDir()
	copyDir(t, filepath.Join(root, "specs"), filepath.Join(box, "specs"))
	copyDir(t, filepath.Join(root, "docs", "examples"), filepath.Join(box, "docs", "examples"))
	copyDir(t, filepath.Join(root, "rocprof", "testdata"), filepath.Join(box, "rocprof", "testdata"))
	if err := os.Symlink(filepath.Join(root, "features"), filepath.Join(box, "features")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(box, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, doc := range docExamples {
		lines := shLines(t, filepath.Join(root, doc))
		if len(lines) == 0 {
			t.Errorf("%s has no replayspec example in a sh block", doc)
		}
		for _, l := range lines {
			t.Run(doc+":"+l.text, func(t *testing.T) {
				cmd := exec.Command("sh", "-c", l.text)
				cmd.Dir = box
				cmd.Env = append(os.Environ(), "REPLAYSPEC_CACHE="+cache, "GORACE=atexit_sleep_ms=0")
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee):
					t.Errorf("%s:%d: %s\nexit %d:\n%s", doc, l.line, l.text, ee.ExitCode(), tail(string(out)))
				case err != nil:
					t.Errorf("%s:%d: %v", doc, l.line, err)
				}
			})
		}
	}
}

type docLine struct {
	line int
	text string
}

// shLines lists the lines of a document's ```sh blocks that start with
// "replayspec ".
func shLines(t *testing.T, path string) []docLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docLine
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in && l == "```sh"
		case in && strings.HasPrefix(l, "replayspec "):
			out = append(out, docLine{n, l})
		}
	}
	return out
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}

// TestSpecFormatCompleteExample: the spec docs/spec-format.md shows as "A
// complete spec" loads and passes as written (it failed before: its
// expect.statuses matched the legitimate local_start of pass 3 as well as
// the misuse; the statuses are now scoped to their window and pass).
func TestSpecFormatCompleteExample(t *testing.T) {
	data, err := os.ReadFile("../../docs/spec-format.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, "## A complete spec")
	if i < 0 {
		t.Fatal("docs/spec-format.md has no section \"A complete spec\"")
	}
	rest := doc[i:]
	start := strings.Index(rest, "```yaml\n")
	if start < 0 {
		t.Fatal("the section has no yaml block")
	}
	rest = rest[start+len("```yaml\n"):]
	body := rest[:strings.Index(rest, "```")]
	f := tempFile(t, t.TempDir(), "complete.yaml", body)
	code, out, errs := cli(t, "run", f)
	if code != exitOK || !strings.Contains(out, "PASS ") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}
