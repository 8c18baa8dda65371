package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocExamples runs the commands of the ```sh blocks of README.md and
// every docs/*.md, in order, each document from a fresh copy of the
// repository's tracked files (a fresh clone: no out/ or any other folder
// made for it), so that what they write stays in the sandbox: an example
// that does not run as written is a bug of the docs. Each must exit 0.
// The commands run are those of replayspec and mkdir; build steps (make,
// go, bin/..., a port's own scripts) are CI's and the reader's.
func TestDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the library several times")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	cache := t.TempDir()
	ran := 0
	for _, path := range docs {
		doc, _ := filepath.Rel(root, path)
		lines := shLines(t, path)
		if len(lines) == 0 {
			continue
		}
		box := t.TempDir()
		cloneInto(t, root, box)
		for _, l := range lines {
			ran++
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
	for _, doc := range []string{"README.md", "docs/cli.md"} {
		if len(shLines(t, filepath.Join(root, doc))) == 0 {
			t.Errorf("%s has no replayspec example in a sh block", doc)
		}
	}
	t.Logf("%d commands run", ran)
}

// cloneInto copies the repository's tracked files (git ls-files) from root
// to box: what a fresh clone holds. Without git, every file but .git, out
// and bin.
func cloneInto(t *testing.T, root, box string) {
	t.Helper()
	var files []string
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			files = append(files, f)
		}
	} else {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			rel, _ := filepath.Rel(root, p)
			if err != nil || rel == ".git" || rel == "out" || rel == "bin" {
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() {
				files = append(files, rel)
			}
			return nil
		})
	}
	for _, f := range files {
		src, dst := filepath.Join(root, f), filepath.Join(box, f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a link
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

type docLine struct {
	line int
	text string
}

// shLines lists the commands of a document's ```sh blocks that start with
// "replayspec " or "mkdir ", a line ending in \ joined with the next.
func shLines(t *testing.T, path string) []docLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docLine
	in := false
	var cur *docLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case cur != nil:
			cur.text += " " + strings.TrimSuffix(l, "\\")
			if !strings.HasSuffix(l, "\\") {
				out, cur = append(out, *cur), nil
			}
		case strings.HasPrefix(l, "```"):
			in = !in && l == "```sh"
		case in && (strings.HasPrefix(l, "replayspec ") || strings.HasPrefix(l, "mkdir ")):
			if strings.HasSuffix(l, "\\") {
				cur = &docLine{n, strings.TrimSuffix(l, "\\")}
				continue
			}
			out = append(out, docLine{n, l})
		}
	}
	return out
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

// repoPath is a file of the repository named in a document: a spec, a
// document, a golden, a feature, a Go source, a test input.
var repoPath = regexp.MustCompile("(?:^|[\\s`(\"'])((?:specs|docs|golden|features|rocprof|cmd|internal|steps|trace|check|report|runner|spec|sim|replay|hsa|cuda|target|driver|examples|rules)/[A-Za-z0-9_./=,-]*\\.(?:yaml|yml|md|ndjson|feature|go|json|txtar|txt|csv|py))\\b")

// TestDocsNameFilesThatExist: every repository file a document names
// exists (issue 25: docs/spec-format.md loaded specs/fixed_loop.yaml, and
// docs/driver-protocol.md pointed at target/exec_test.go). Placeholders in
// examples of error output are left out.
func TestDocsNameFilesThatExist(t *testing.T) {
	placeholders := map[string]bool{"specs/x.yaml": true}
	docs, _ := filepath.Glob("../../docs/*.md")
	for _, doc := range append(docs, "../../README.md") {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, "/") {
				continue // no path; the regexp, under -race, costs seconds on every line
			}
			for _, m := range repoPath.FindAllStringSubmatch(line, -1) {
				p := strings.TrimRight(m[1], ".")
				if placeholders[p] || strings.ContainsAny(p, "*") || strings.Contains(p, "NAME") {
					continue
				}
				if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
					t.Errorf("%s:%d: names %s, which does not exist", filepath.Base(doc), n+1, p)
				}
			}
		}
	}
}
