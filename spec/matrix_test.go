package spec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// matrixSpec is a small spec whose plan and expectations follow a matrix.
const matrixSpec = `version: 1
name: table
description: $passes passes on $kind
matrix:
  passes: [1, 3]
  kind: [MI200, MI300]
  exclude:
    - {passes: 1, kind: MI300}
  include:
    - {policy: null, ran: 0}
    - {passes: 3, ran: 3}
    - {passes: 3, kind: MI300, policy: {stop_after: 1}, ran: 2}
    - {passes: 5, kind: consumer, ran: 5, policy: null}
agents:
  - {name: gpu0, kind: $kind}
contexts:
  - name: replay
    services: {kernel_replay: {}}
tool:
  plan: {passes: $passes, continue: $policy}
application:
  buffers:
    - {name: x, agent: gpu0, elements: 64}
  dispatches:
    - {name: inc, kernel: increment, agent: gpu0, args: [x]}
expect:
  passes: {inc: $ran}
  records: {kernel_trace: "0..${ran}"}
`

func TestMatrixExpands(t *testing.T) {
	cases, err := ParseCases("table.yaml", []byte(matrixSpec))
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Name, Desc, Kind, Passes string
		StopAfter                *uint64
		Ran, Records             string
	}
	var out []got
	for _, s := range cases {
		g := got{Name: s.Name, Desc: s.Description, Kind: s.Agents[0].Kind, Passes: string(s.Tool.Plan.Passes),
			Ran: s.Expect.Passes["inc"].Text, Records: s.Expect.Records["kernel_trace"].Text}
		if c := s.Tool.Plan.Continue; c != nil {
			g.StopAfter = c.StopAfter
		}
		if s.Case == nil || s.Case.Name() != s.Name || s.Case.Base != "table" {
			t.Errorf("%s: Case = %+v", s.Name, s.Case)
		}
		out = append(out, g)
	}
	one := uint64(1)
	want := []got{
		// The product, first parameter slowest, less the excluded case;
		// the first include reaches every case, the later ones overwrite
		// what it added where they agree.
		{Name: "table/passes=1,kind=MI200", Desc: "1 passes on MI200", Kind: "MI200", Passes: "1", Ran: "0", Records: "0..0"},
		{Name: "table/passes=3,kind=MI200", Desc: "3 passes on MI200", Kind: "MI200", Passes: "3", Ran: "3", Records: "0..3"},
		{Name: "table/passes=3,kind=MI300", Desc: "3 passes on MI300", Kind: "MI300", Passes: "3", StopAfter: &one, Ran: "2", Records: "0..2"},
		// An include that agrees with no case is a case of its own.
		{Name: "table/passes=5,kind=consumer", Desc: "5 passes on consumer", Kind: "consumer", Passes: "5", Ran: "5", Records: "0..5"},
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
}

func TestMatrixCasesAreValidated(t *testing.T) {
	// Each case is read and validated as the spec it is: a value the
	// format refuses in one case names that case; a problem of the
	// template is told once.
	const text = `version: 1
name: kinds
matrix:
  kind: [MI300, MI400, MI500]
  n: [1, 2]
  exclude:
    - {kind: MI500, n: 2}
agents:
  - {name: gpu0, kind: $kind}
application:
  dispatches:
    - {name: d, kernel: increment, agent: gpu0, args: [nope]}
`
	_, err := ParseCases("kinds.yaml", []byte(text))
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	for _, want := range []string{
		`kinds.yaml:9:24: agents[0].kind: cases kind=MI400,n=1 and 1 more: unknown agent kind "MI400"`,
		`kinds.yaml:9:24: agents[0].kind: case kind=MI500,n=1: unknown agent kind "MI500"`,
		`kinds.yaml:12:56: application.dispatches[0].args[0]: no buffer named "nope"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors:\n%s\nwant a line containing %q", msg, want)
		}
	}
	if strings.Count(msg, `no buffer named "nope"`) != 1 {
		t.Errorf("a problem of every case is told once:\n%s", msg)
	}
}

func TestMatrixErrors(t *testing.T) {
	const body = `
agents:
  - {name: gpu0, kind: MI300}
application:
  buffers:
    - {name: x, agent: gpu0, elements: 64}
  dispatches:
    - {name: d, kernel: increment, agent: gpu0, args: [x], plan: {passes: $n}}
`
	tests := []struct {
		name, matrix, want string
	}{
		{"not a mapping", "matrix: [1, 2]", "3:9: matrix: want a mapping of parameters"},
		{"empty axis", "matrix: {n: []}", "3:13: matrix.n: want a non-empty list of values, got an empty one"},
		{"value with a slash", "matrix: {n: [1, a/b]}", `matrix.n[1]: value "a/b": use letters`},
		{"value not a word", "matrix: {n: [1, {a: 1}]}", "matrix.n[1]: a parameter's values name its cases"},
		{"value twice", "matrix: {n: [1, 1]}", `matrix.n[1]: value "1" is listed twice`},
		{"bad parameter name", "matrix: {n: [1], 2x: [1]}", `matrix.2x: parameter name "2x"`},
		{"exclude unknown parameter", "matrix: {n: [1, 2], exclude: [{m: 1}]}", `matrix.exclude[0].m: no parameter "m" to exclude (allowed: n)`},
		{"exclude unknown value", "matrix: {n: [1, 2], exclude: [{n: 3}]}", `matrix.exclude[0].n: parameter n has no value "3" (allowed: 1, 2)`},
		{"exclude everything", "matrix: {n: [1], exclude: [{n: 1}]}", "matrix: the matrix has no case left"},
		{"include not a mapping", "matrix: {n: [1], include: [3]}", "matrix.include[0]: want a mapping"},
		{"unknown placeholder", "matrix: {m: [1]}", `$n: this case has no parameter "n" (allowed: m)`},
		{"same name twice", "matrix: {n: [1], include: [{n: 2}, {n: 2}]}", `two cases are both named "m/n=2"`},
		{"list inside text", "matrix: {n: [1], include: [{l: [1]}]}\ndescription: a ${l}s", "$l is a list; only a number"},
		{"alias in include", "matrix: {n: [1], include: [{l: &a [1]}, {k: *a}]}", "aliases are not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "version: 1\nname: m\n" + tt.matrix + body
			_, err := ParseCases("m.yaml", []byte(text))
			if err == nil {
				t.Fatalf("accepted; want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestMatrixKeepsTheReadersStrictness(t *testing.T) {
	// A null the spec writes is still refused; only a parameter's null
	// leaves a key out.
	const text = `version: 1
name: nulls
matrix:
  n: [2]
agents:
  - {name: gpu0, kind: MI300}
application:
  buffers:
    - {name: x, agent: gpu0, elements: 64, fill: null}
  dispatches:
    - {name: d, kernel: increment, agent: gpu0, args: [x], plan: {passes: $n}}
`
	_, err := ParseCases("nulls.yaml", []byte(text))
	if err == nil || !strings.Contains(err.Error(), "nulls.yaml:9:50: application.buffers[0].fill: want an integer (64 bits), got null") {
		t.Errorf("error: %v", err)
	}
}

func TestParseRefusesAMatrix(t *testing.T) {
	// Parse returns one spec; a matrix is several, and Parse says where to
	// read them rather than pick one.
	_, err := Parse("table.yaml", []byte(matrixSpec))
	if err == nil || !strings.Contains(err.Error(), "table.yaml:4:1: matrix: a spec with a matrix stands for several cases: read it with ParseCases") {
		t.Errorf("error: %v", err)
	}
	// Without a matrix ParseCases is Parse.
	const plain = "version: 1\nname: p\nagents: [{name: g, kind: MI300}]\napplication: {dispatches: [{name: d, kernel: increment, agent: g, args: []}]}\n"
	_, perr := Parse("p.yaml", []byte(plain))
	_, cerr := ParseCases("p.yaml", []byte(plain))
	if perr == nil || cerr == nil || perr.Error() != cerr.Error() {
		t.Errorf("Parse: %v\nParseCases: %v", perr, cerr)
	}
}

func TestMatrixEscape(t *testing.T) {
	text := strings.Replace(matrixSpec, "description: $passes passes on $kind", "description: costs $$passes", 1)
	cases, err := ParseCases("table.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if got := cases[0].Description; got != "costs $passes" {
		t.Errorf("description %q", got)
	}
}

// bigMatrix is a spec whose matrix stands for 20^8 cases in a few lines.
func bigMatrix(extra string) string {
	var b strings.Builder
	b.WriteString("version: 1\nname: huge\nmatrix:\n")
	for _, p := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		b.WriteString("  " + p + ": [")
		for i := range 20 {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("v" + string(rune('a'+i)))
		}
		b.WriteString("]\n")
	}
	b.WriteString(extra)
	b.WriteString(`agents:
  - {name: gpu0, kind: MI300}
application:
  buffers:
    - {name: x, agent: gpu0, elements: 64}
  dispatches:
    - {name: d, kernel: increment, agent: gpu0, args: [x]}
`)
	return b.String()
}

func TestMatrixCountedBeforeExpanded(t *testing.T) {
	// 20^8 cases would take the machine's memory: refused from the
	// axes' lengths, naming the budget and the flag, before one is built
	// (a test that built them would not finish).
	_, err := ParseCases("huge.yaml", []byte(bigMatrix("")))
	if err == nil {
		t.Fatal("a matrix of 20^8 cases was accepted")
	}
	for _, want := range []string{"huge.yaml:4:3: matrix: this matrix stands for 20 × 20 × 20 × 20 × 20 × 20 × 20 × 20 = 25600000000 combinations",
		"over the budget of 10000 cases a spec", "--max-cases"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nwant it to contain %q", err, want)
		}
	}
	// Excludes are counted exactly (inclusion and exclusion), so a
	// matrix that excludes its way under the budget is expanded.
	text := `version: 1
name: t
matrix:
  n: [1, 2, 3, 4]
  m: [1, 2, 3]
  exclude:
    - {n: 1}
    - {m: 1}
    - {n: 1, m: 1}
  include:
    - {n: 9, m: 9}
agents:
  - {name: gpu0, kind: MI300}
application:
  buffers:
    - {name: x, agent: gpu0, elements: 64}
  dispatches:
    - {name: d, kernel: increment, agent: gpu0, args: [x]}
`
	// 12 combinations, less 3 + 4 - 1 = 6 excluded, and one include of
	// its own: 7 cases. The third exclude takes nothing the first two
	// left, which is an error of its own; so the count is checked on
	// the budget: 7 passes a budget of 7 and is refused at 6.
	text2 := strings.Replace(text, "    - {n: 1, m: 1}\n", "", 1)
	defer SetMaxCases(0)
	SetMaxCases(7)
	cases, err := ParseCases("t.yaml", []byte(text2))
	if err != nil || len(cases) != 7 {
		t.Fatalf("budget 7: %d cases, %v; want 7", len(cases), err)
	}
	SetMaxCases(6)
	if _, err := ParseCases("t.yaml", []byte(text2)); err == nil || !strings.Contains(err.Error(), "4 × 3 = 12 combinations of its parameters' values, less 6 excluded, and up to 1 from include, over the budget of 6") {
		t.Errorf("budget 6: %v", err)
	}
	SetMaxCases(0)
	if _, err := ParseCases("t.yaml", []byte(text)); err == nil || !strings.Contains(err.Error(), "matrix.exclude[2]: excludes no case") {
		t.Errorf("an exclude that takes nothing: %v", err)
	}
}

func BenchmarkMatrixRefused(b *testing.B) {
	data := []byte(bigMatrix(""))
	for b.Loop() {
		if _, err := ParseCases("huge.yaml", data); err == nil {
			b.Fatal("accepted")
		}
	}
}
