package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/spec"
)

// library is the spec library, relative to this package.
const library = "../../specs"

// okSpec is a small spec that holds: three passes of a non-idempotent
// kernel.
const okSpec = `version: 1
name: tiny
rules: [PC-3, CMP-1]
agents:
  - {name: gpu0, kind: MI300}
contexts:
  - name: replay
    services:
      kernel_replay: {}
tool:
  plan:
    passes: 3
application:
  buffers:
    - {name: x, agent: gpu0, elements: 16, fill: 5}
  dispatches:
    - {name: inc, kernel: increment, agent: gpu0, args: [x]}
expect:
  passes: {inc: 3}
  completions: {inc: 1}
  memory: {x: {all: 6}}
`

// cli runs the command line in-process.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = mainWith(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// libraryUnderShort is the spec library for a test that runs it through
// the CLI: the whole of it, or under -short (make test, with -race) a
// spread of its files, evenly from first to last. TestRunLibrary runs the
// whole library in every mode; make test-heavy runs these tests on all
// of it too.
func libraryUnderShort(t *testing.T) []string {
	t.Helper()
	if !testing.Short() {
		return []string{library}
	}
	files, err := filepath.Glob(filepath.Join(library, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no spec in %s: %v", library, err)
	}
	return spreadOf(files, 12)
}

// spreadOf picks about n of xs, evenly from first to last, so that a
// short run still meets every part of the library.
func spreadOf[T any](xs []T, n int) []T {
	if len(xs) <= n {
		return xs
	}
	out := make([]T, 0, n)
	for i := range n {
		out = append(out, xs[i*(len(xs)-1)/(n-1)])
	}
	return out
}

// tempFile writes content to dir/name and returns the path.
func tempFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantAll fails unless s contains every part.
func wantAll(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%s lacks %q:\n%s", what, p, s)
		}
	}
}

func TestHelpForEveryCommand(t *testing.T) {
	for _, name := range []string{"run", "validate", "check", "list", "rules"} {
		t.Run(name, func(t *testing.T) {
			code, out, _ := cli(t, name, "--help")
			if code != exitOK {
				t.Errorf("exit %d, want 0", code)
			}
			wantAll(t, "help", out, "Usage: replayspec "+name, "Examples:", "replayspec "+name+" ", "Exit status")
			code2, out2, _ := cli(t, "help", name)
			if code2 != exitOK || out2 != out {
				t.Errorf("'help %s' differs from '%s --help' (exit %d)", name, name, code2)
			}
		})
	}
}

func TestUnknownFlag(t *testing.T) {
	for _, name := range []string{"run", "validate", "check", "list", "rules"} {
		code, _, errs := cli(t, name, "--no-such-flag")
		if code != exitUsage {
			t.Errorf("%s: exit %d, want 2", name, code)
		}
		wantAll(t, name+" stderr", errs, "no-such-flag", "replayspec "+name+" --help")
	}
}

func TestParseFlagsInterspersed(t *testing.T) {
	fs := newFlags("x")
	f := fs.String("format", "text", "")
	q := fs.Bool("quiet", false, "")
	var out, errb bytes.Buffer
	rest, _, ok := parseFlags(fs, help{name: "x"}, []string{"a", "--format", "json", "b", "--quiet", "--", "--c"}, &out, &errb)
	if !ok || *f != "json" || !*q || strings.Join(rest, " ") != "a b --c" {
		t.Errorf("got rest %q format %q quiet %v ok %v", rest, *f, *q, ok)
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{"a-b_c.1": "a-b_c.1", "../x/y": ".._x_y", "": "unnamed", "a b": "a_b"} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
	// A long name is cut to the budget; two long names that differ only
	// at the end stay apart.
	a, b := strings.Repeat("n", 5000)+"a", strings.Repeat("n", 5000)+"b"
	if fa, fb := fileName(a), fileName(b); len(fa) > maxFileNameBytes || fa == fb {
		t.Errorf("fileName of 5001 bytes: %d bytes, distinct %v", len(fa), fa != fb)
	}
}

func TestColourWanted(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		mode     string
		terminal bool
		env      func(string) string
		want     bool
	}{
		{"auto", true, env(), true},
		{"auto", false, env(), false},
		{"auto", true, env("NO_COLOR", "1"), false}, // no-color.org: any value
		{"auto", true, env("TERM", "dumb"), false},
		{"always", false, env("NO_COLOR", "1"), true}, // asked for in so many words
		{"never", true, env(), false},
	} {
		got, err := colourWanted(c.mode, c.terminal, c.env)
		if err != nil || got != c.want {
			t.Errorf("%s terminal=%v: %v %v, want %v", c.mode, c.terminal, got, err, c.want)
		}
	}
}

// TestProgressShowsPasses: on a terminal, long runs show the spec running
// now and its passes, rewritten in place, and clear the line after.
func TestProgressShowsPasses(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, true)
	p.start(1, 3, spec.Spec{Name: "long\x1b[2J"})
	p.pass(spec.Spec{Name: "long"}, 57)
	p.tick() // passes are drawn at most every 100 ms; a tick draws the latest
	// Judging a long trace is a phase of its own, and the line moves on
	// while nothing else happens (issue 25: it froze, with no phase).
	if got := b.String(); !strings.Contains(got, "\r\033[K[2/3] long\\x1b[2J: starting (") || !strings.Contains(got, "[2/3] long\\x1b[2J: pass 57 (") {
		t.Errorf("progress lacks the start or the passes: %q", got)
	}
	p.judge(spec.Spec{Name: "long"})
	b.Reset()
	p.tick()
	if got := b.String(); !strings.Contains(got, "[2/3] long\\x1b[2J: judging (") {
		t.Errorf("a tick while judging draws %q", got)
	}
	p.clear()
	out := b.String()
	for _, want := range []string{"\r\033[K[2/3] long\\x1b[2J: judging (", "\r\033[K"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q: %q", want, out)
		}
	}
	var off bytes.Buffer
	q := newProgress(&off, false)
	q.start(0, 1, spec.Spec{Name: "x"})
	q.pass(spec.Spec{Name: "x"}, 1)
	q.clear()
	if off.Len() != 0 {
		t.Errorf("progress off a terminal: %q", off.String())
	}
}
