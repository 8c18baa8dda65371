package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := tempFile(t, dir, "tiny.yaml", okSpec)
	badKey := tempFile(t, dir, "badkey.yaml", strings.Replace(okSpec, "    passes: 3\n", "    passes: 3\n    pases: 4\n", 1))
	badKernel := tempFile(t, dir, "badkernel.yaml", strings.Replace(okSpec, "kernel: increment", "kernel: incremnet", 1))
	malformed := tempFile(t, dir, "malformed.yaml", "version: 1\n  name: x\n: :\n")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}

	code, out, _ := cli(t, "validate", good)
	if code != exitOK || strings.TrimSpace(out) != "ok "+good {
		t.Errorf("good spec: exit %d, output %q", code, out)
	}

	for _, tc := range []struct {
		name   string
		args   []string
		stdout *regexp.Regexp
		stderr string
	}{
		{"bad key", []string{"validate", good, badKey}, regexp.MustCompile(`(?s)` + regexp.QuoteMeta(badKey) + `:13:5: .*pases`), "1 of 2 specs have errors"},
		{"unknown kernel", []string{"validate", badKernel}, regexp.MustCompile(regexp.QuoteMeta(badKernel) + `:\d+:\d+: .*incremnet.*allowed: .*increment`), "1 of 1"},
		{"malformed YAML", []string{"validate", malformed}, regexp.MustCompile(regexp.QuoteMeta(malformed) + `:\d+:\d+: `), "1 of 1"},
		{"missing file", []string{"validate", filepath.Join(dir, "nope.yaml")}, nil, "nope.yaml: no such file"},
		{"empty directory", []string{"validate", empty}, nil, "no spec files"},
		{"no argument", []string{"validate"}, nil, "no spec given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := cli(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want 2", code)
			}
			if tc.stdout != nil && !tc.stdout.MatchString(out) {
				t.Errorf("stdout does not match %s:\n%s", tc.stdout, out)
			}
			wantAll(t, "stderr", errs, tc.stderr)
		})
	}
}

func TestValidateLibrary(t *testing.T) {
	code, out, errs := cli(t, "validate", library)
	if code != exitOK {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "ok ../../specs/fixed-three-passes.yaml") {
		t.Errorf("no ok line for fixed-three-passes:\n%s", out)
	}
}
