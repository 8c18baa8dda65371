package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
}
