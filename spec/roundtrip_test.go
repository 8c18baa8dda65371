package spec

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCountJSON(t *testing.T) {
	tests := []struct {
		in   string
		want Count
		out  string
	}{
		{`3`, Exactly(3), `"3"`},
		{`"3"`, Exactly(3), `"3"`},
		{`" 2 .. 5 "`, Count{Min: 2, Max: 5, Text: "2..5"}, `"2..5"`},
		{`">=1"`, Count{Min: 1, Max: math.MaxUint64, Text: ">=1"}, `">=1"`},
		{`"<=4"`, Count{Min: 0, Max: 4, Text: "<=4"}, `"<=4"`},
	}
	for _, tt := range tests {
		var c Count
		if err := json.Unmarshal([]byte(tt.in), &c); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if c != tt.want {
			t.Errorf("%s = %+v, want %+v", tt.in, c, tt.want)
		}
		// json.Marshal escapes < and > as \u003c, \u003e; compare the text.
		b, _ := json.Marshal(c)
		var got, want string
		_ = json.Unmarshal(b, &got)
		_ = json.Unmarshal([]byte(tt.out), &want)
		if got != want {
			t.Errorf("%s marshals as %s, want %s", tt.in, b, tt.out)
		}
	}
	for _, bad := range []string{`-1`, `"5..2"`, `"many"`, `{}`, `1.5`} {
		var c Count
		if err := json.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("%s: accepted as %+v", bad, c)
		}
	}
}

func TestPassesJSON(t *testing.T) {
	for in, want := range map[string]string{`3`: `3`, `0`: `0`, `"groups"`: `"groups"`, `"none"`: `"none"`} {
		var p Passes
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if b, _ := json.Marshal(p); string(b) != want {
			t.Errorf("%s marshals as %s, want %s", in, b, want)
		}
	}
	for _, bad := range []string{`-1`, `"3"`, `"some"`, `[]`} {
		var p Passes
		if err := json.Unmarshal([]byte(bad), &p); err == nil {
			t.Errorf("%s: accepted as %q", bad, p)
		}
	}
}

func TestExamplesSurviveJSON(t *testing.T) {
	for _, f := range validExamples(t) {
		cases, err := LoadCases(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range cases {
			js, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseJSON(f, js)
			if err != nil {
				t.Fatalf("%s: %v\n%s", s.Name, err, js)
			}
			// A case of a matrix travels as the plain spec it is.
			if d := cmp.Diff(s, back, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Spec{}, "Case")); d != "" {
				t.Errorf("%s: JSON round trip (-yaml +json):\n%s", s.Name, d)
			}
		}
	}
}

func TestDefaultsAreExplicit(t *testing.T) {
	s, err := Load("testdata/valid/fixed_loop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := Defaults(s)
	got := d.Application.Dispatches[0]
	if got.Queue != "q0" || got.Thread != 1 || got.Grid != 256 || got.Workgroup != 64 || got.Packets != 1 {
		t.Errorf("dispatch defaults: %+v", got)
	}
	if d.Application.Buffers[0].Kind != "device" || d.Limits.MaxPasses != 10000 || !d.Contexts[0].Started() || d.Contexts[0].Start == nil {
		t.Errorf("spec defaults: %+v", d)
	}
	if s.Application.Dispatches[0].Queue != "" || s.Contexts[0].Start != nil {
		t.Error("Defaults changed its argument")
	}
	if err := Validate(d); err != nil {
		t.Errorf("defaults are invalid: %v", err)
	}
}

func TestParseJSONHandWritten(t *testing.T) {
	js := "{\n\t\"version\": 1, \"name\": \"a\\/b \\\\/ \\u00e9\",\n\t\"agents\": [{\"name\": \"g\", \"kind\": \"MI300\"}],\n" +
		"\t\"application\": {\"buffers\": [{\"name\": \"a\", \"agent\": \"g\", \"elements\": 4}],\n" +
		"\t\t\"dispatches\": [{\"name\": \"d\", \"kernel\": \"increment\", \"agent\": \"g\", \"args\": [\"a\"]}]},\n" +
		"\t\"expect\": {\"passes\": {\"d\": 2}, \"completions\": {\"d\": \"\\u003e=1\"}}}"
	s, err := ParseJSON("x.json", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != `a/b \/ é` || s.Expect.Passes["d"] != Exactly(2) || s.Expect.Completions["d"].Text != ">=1" {
		t.Errorf("got name %q, expect %+v", s.Name, s.Expect)
	}
	if _, err := ParseJSON("x.json", []byte("{\"version\": 1,\n \"name\": }")); err == nil || !strings.Contains(err.Error(), "x.json:2:11: JSON syntax") {
		t.Errorf("syntax error: %v", err)
	}
}
