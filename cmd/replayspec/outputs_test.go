package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneOutputGuard: only outputs.go opens files for writing, so that
// every output of every command passes guardOutputs (declared, checked
// against the inputs) and is written whole or not at all. Issue 25 found
// diff --json writing over its input: the one path the guard missed.
func TestOneOutputGuard(t *testing.T) {
	writers := map[string]bool{"Create": true, "WriteFile": true, "OpenFile": true, "CreateTemp": true,
		"Rename": true, "Mkdir": true, "MkdirAll": true, "Truncate": true, "Symlink": true, "Link": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") || file == "outputs.go" {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "os" || pkg.Name == "ioutil") && writers[sel.Sel.Name] {
				t.Errorf("%s: %s.%s: write files through outputSet (outputs.go), so that the output is guarded and written whole", fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
			}
			return true
		})
	}
}

// TestUndeclaredOutputIsABug: writing a path no option declared panics
// (exit 3), rather than writing unguarded.
func TestUndeclaredOutputIsABug(t *testing.T) {
	outs, err := guardOutputs(nil, []namedPath{{"--json", filepath.Join(t.TempDir(), "a.json")}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("writing an undeclared output did not panic")
		}
	}()
	_ = outs.write(filepath.Join(t.TempDir(), "b.json"), nil)
}
