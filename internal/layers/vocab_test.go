package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// fields are the trace.Event fields whose values are a closed set.
var fields = []string{"Op", "Phase", "Status", "Service", "Code", "Call", "Domain", "MemKind", "OpName", "Family"}

// No package but trace/ spells the trace's vocabulary: every comparison
// with, case on, or assignment to a typed field uses trace's constants, so
// that a name changes in one place and comparisons cannot drift.
func TestNoTraceVocabularyLiterals(t *testing.T) {
	vocab := trace.Vocabulary()
	fset := token.NewFileSet()
	var bad []string
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "trace", "testdata", ".git", "ports", "examples":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		literal := func(e ast.Expr) (string, bool) {
			lit, ok := e.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return "", false
			}
			v, _ := strconv.Unquote(lit.Value)
			return v, slices.Contains(vocab, v)
		}
		isField := func(e ast.Expr) bool {
			sel, ok := e.(*ast.SelectorExpr)
			return ok && slices.Contains(fields, sel.Sel.Name)
		}
		report := func(n ast.Node, v string) {
			bad = append(bad, fset.Position(n.Pos()).String()+": "+strconv.Quote(v))
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					if v, ok := literal(n.Y); ok && isField(n.X) {
						report(n, v)
					}
					if v, ok := literal(n.X); ok && isField(n.Y) {
						report(n, v)
					}
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && slices.Contains(fields, k.Name) {
					if v, ok := literal(n.Value); ok {
						report(n, v)
					}
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && isField(n.Tag) {
					for _, s := range n.Body.List {
						for _, e := range s.(*ast.CaseClause).List {
							if v, ok := literal(e); ok {
								report(e, v)
							}
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: use the constant from trace/vocab.go", b)
	}
}

// The packages that read or build traces without owning the wire format
// (the step definitions and the spec model) spell no operation, phase,
// status or warning code at all, not even in a call's arguments: every
// such literal there is a name that could drift from trace/vocab.go.
func TestNoWireNamesInStepsAndSpec(t *testing.T) {
	var names []string
	for op := range trace.OpIDs {
		names = append(names, string(op))
	}
	names = append(names, string(trace.PhaseEnter), string(trace.PhaseExit))
	for _, s := range trace.StatusEnum {
		names = append(names, string(s), strings.TrimPrefix(string(s), "ROCPROFILER_STATUS_"))
	}
	names = append(names, string(trace.WarnPassCountZeroWithoutContinue), string(trace.WarnMultiPacketSubmission),
		string(trace.WarnGraphLaunch), string(trace.WarnSnapshotIncomplete), string(trace.WarnServiceConflict))
	fset := token.NewFileSet()
	var bad []string
	for _, dir := range []string{"../../steps", "../../spec"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if v, _ := strconv.Unquote(lit.Value); slices.Contains(names, v) {
					bad = append(bad, fset.Position(lit.Pos()).String()+": "+lit.Value)
				}
				return true
			})
		}
	}
	for _, b := range bad {
		t.Errorf("%s: a wire name spelled out; use trace's typed constant (trace/vocab.go)", b)
	}
}
