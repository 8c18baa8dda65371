package report

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/runner"
)

// hostile is a name that tries to forge a line, hide text and reorder it.
const hostile = "x\nPASS forged (1 pass, 0.1 ms)\r\u202e\u2066\x1b[2J\u200b"

// fill sets every string of v, however deep, to hostile; slices get one
// element and pointers a value, so that every field is printed.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(hostile)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

// TestEveryNameIsEscaped fills every string field of a result (its name,
// file, labels, events, rules, reasons, today's fields and any added
// later) with a name that tries to forge a PASS line and to hide or
// reorder text, and prints it in every outcome: no line may start with
// the forged verdict, and no control, bidirectional or zero-width
// character may reach the terminal raw. Issue 25: a newline in a spec
// name forged a PASS line; bidi characters were escaped in one place and
// raw in the next.
func TestEveryNameIsEscaped(t *testing.T) {
	var base JSONResult
	fill(reflect.ValueOf(&base).Elem())
	var end End
	fill(reflect.ValueOf(&end).Elem())
	for _, c := range []struct{ verdict, outcome string }{
		{"pass", "passed"}, {"fail", "failed"}, {"error", "error"}, {"skip", "skipped"},
		{"fail", "expected failure"}, {"pass", "error"}, {"fail", "flaky"},
	} {
		r := base
		r.Verdict, r.Outcome = c.verdict, c.outcome
		var b strings.Builder
		s, err := NewStream("text", &b, Header{Target: hostile, XFailFile: hostile}, Options{Verbose: true, XFailFile: hostile})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
		if err := s.End(end); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if regexp.MustCompile(`(?m)^PASS forged`).MatchString(out) {
			t.Errorf("%s/%s: a name forged a line:\n%s", c.verdict, c.outcome, out)
		}
		for _, bad := range []string{"\r", "\u202e", "\u2066", "\x1b", "\u200b"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s/%s: %q printed raw:\n%s", c.verdict, c.outcome, bad, out)
			}
		}
		if !strings.Contains(out, `\u202e`) {
			t.Errorf("%s/%s: the name is not shown escaped:\n%s", c.verdict, c.outcome, out)
		}
	}
	// The record given is left as it was (escaping works on a copy).
	if base.Name != hostile || base.Violations[0].Events[0].Label != hostile {
		t.Error("escaping changed the caller's record")
	}
}

// TestMatrixNamesStayInTheirCell: a spec name cannot add rows to the
// Markdown matrix.
func TestMatrixNamesStayInTheirCell(t *testing.T) {
	r := runner.Result{}
	r.Spec.Name = "a|b\n| forged | passed |"
	m := BuildMatrix([]runner.Outcome{{Result: r, Status: runner.Passed}}, nil)
	var b strings.Builder
	if err := m.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\n| forged") {
		t.Errorf("a spec name added a row:\n%s", b.String())
	}
}
