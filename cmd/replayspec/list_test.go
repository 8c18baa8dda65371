package main

import (
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	code, out, errs := cli(t, "list", library)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "fixed-three-passes ") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no line for fixed-three-passes:\n%s", out)
	}
	wantAll(t, "line", line, "PC-3,", "../../specs/fixed-three-passes.yaml")

	code, _, errs = cli(t, "list", t.TempDir())
	if code != exitUsage || !strings.Contains(errs, "no spec files") {
		t.Errorf("empty directory: exit %d, stderr %q", code, errs)
	}
}
