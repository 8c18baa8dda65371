package spec

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadValidExamples(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no valid examples")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestErrorsCarryPositions(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // substrings, one per expected error, in order
	}{
		{"empty", "", []string{"x.yaml:1:1: empty file"}},
		{"comment only", "# nothing\n", []string{"x.yaml:1:1: empty file"}},
		{"two documents", "version: 1\n---\nversion: 1\n", []string{"x.yaml:2:1: a second YAML document"}},
		{"syntax", "version: 1\nname: [\n", []string{"x.yaml:"}},
		{"top scalar", "3\n", []string{"x.yaml:1:1: want a mapping, got integer 3"}},
		{"all at once", "version: 1\nname: n\nagents: [{name: g, kind: MI300, colour: red}]\napplication: {dispatches: [{name: d, kernel: increment, agent: g, args: [a], grid: -1}]}\nbogus: 1\n",
			[]string{
				`x.yaml:3:33: agents[0]: unknown key "colour" (allowed: name, kind, snapshot_limit, restore_fails_at)`,
				`x.yaml:4:84: application.dispatches[0].grid: want a non-negative integer (32 bits), got integer -1`,
				`x.yaml:5:1: unknown key "bogus"`,
			}},
		{"semantic", "version: 2\nname: n\nagents: [{name: g, kind: MI400}]\napplication: {dispatches: [{name: d, kernel: increment, agent: g, args: [a]}]}\n",
			[]string{
				`x.yaml:1:10: version: version 2 is not supported (allowed: 1)`,
				`x.yaml:3:26: agents[0].kind: unknown agent kind "MI400" (allowed: MI200, MI300, consumer, nvidia)`,
				`x.yaml:4:74: application.dispatches[0].args[0]: no buffer named "a"`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			var list Errors
			if !errors.As(err, &list) {
				var one *Error
				if !errors.As(err, &one) {
					t.Fatalf("error %T is neither *Error nor Errors", err)
				}
				list = Errors{one}
			}
			if len(list) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(list), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.Contains(list[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, list[i].Error(), w)
				}
			}
		})
	}
}
