package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// The schema and the loader describe one format; these tests hold them
// to each other on every example there is.

const schemaPath = "../specs/schema.json"

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	sch, err := c.Compile(schemaPath)
	if err != nil {
		t.Fatalf("compile %s: %v", schemaPath, err)
	}
	return sch
}

// schemaCheck validates a YAML file's data against the schema; a file
// that is not exactly one YAML document is rejected before it gets there.
func schemaCheck(sch *jsonschema.Schema, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("more than one document")
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// validExamples are the library's specs (those awaiting an oracle too)
// and this package's own examples.
func validExamples(t *testing.T) []string {
	lib, _ := filepath.Glob("../specs/*.yaml")
	pending, _ := filepath.Glob("../specs/pending/*.yaml")
	own, _ := filepath.Glob("testdata/valid/*.yaml")
	files := append(append(lib, pending...), own...)
	if len(files) == 0 {
		t.Fatal("no valid examples found")
	}
	return files
}

func TestSchemaAcceptsValidSpecs(t *testing.T) {
	sch := compileSchema(t)
	for _, f := range validExamples(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseCases(f, data); err != nil {
				t.Errorf("loader: %v", err)
			}
			docs, err := caseDocuments(f, data)
			if err != nil {
				t.Fatal(err)
			}
			for _, doc := range docs {
				if err := schemaCheck(sch, doc); err != nil {
					t.Errorf("schema: %v\n%s", err, doc)
				}
			}
		})
	}
}

var (
	wantError   = regexp.MustCompile(`(?m)^# ERROR: (.*)$`)
	schemaValid = regexp.MustCompile(`(?m)^# SCHEMA: valid$`)
)

// TestInvalidSpecs: every file in specs/invalid makes one mistake, named
// in its "# ERROR:" comment. The loader must report it; the schema must
// reject it too, unless the file says "# SCHEMA: valid" (a cross reference
// the schema cannot see), in which case the schema must accept it, so the
// mark cannot go stale.
func TestInvalidSpecs(t *testing.T) {
	sch := compileSchema(t)
	files, _ := filepath.Glob("../specs/invalid/*.yaml")
	if len(files) < 15 {
		t.Fatalf("only %d invalid examples", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m := wantError.FindSubmatch(data)
			if m == nil {
				t.Fatal(`no "# ERROR: ..." comment`)
			}
			want := strings.TrimSpace(string(m[1]))
			_, err = Parse(f, data)
			switch {
			case err == nil:
				t.Errorf("loader accepted it; want an error containing %q", want)
			case !strings.Contains(err.Error(), want):
				t.Errorf("loader error:\n%v\nwant it to contain %q", err, want)
			case !positioned(err):
				t.Errorf("loader error has no line and column: %v", err)
			}
			serr := schemaCheck(sch, data)
			if schemaValid.Match(data) {
				if serr != nil {
					t.Errorf("marked SCHEMA: valid, but the schema rejects it: %v", serr)
				}
			} else if serr == nil {
				t.Errorf("the schema accepts it; the loader says %q", want)
			}
		})
	}
}

// positioned reports whether every error names a line and column.
func positioned(err error) bool {
	var list Errors
	if !errors.As(err, &list) {
		var one *Error
		if !errors.As(err, &one) {
			return false
		}
		list = Errors{one}
	}
	for _, e := range list {
		if e.Line < 1 || e.Col < 1 {
			return false
		}
	}
	return true
}

// caseDocuments is what the schema sees of a spec file: the file itself,
// or for a spec with a matrix each case as YAML, the matrix kept beside it
// (the schema checks the matrix's shape, and each case's values in place).
func caseDocuments(name string, data []byte) ([][]byte, error) {
	root, err := parseDocument(name, data)
	if err != nil {
		return nil, err
	}
	m := takeMatrix(root)
	if m == nil {
		return [][]byte{data}, nil
	}
	combos, errs := expandMatrix(name, m)
	if len(errs) > 0 {
		return nil, errs.err()
	}
	var out [][]byte
	for _, c := range combos {
		sub := &substituter{file: name, vars: c.vars}
		tree, _ := sub.node(root)
		if len(sub.errs) > 0 {
			return nil, sub.errs.err()
		}
		tree.Content = append(tree.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: matrixKey}, m)
		doc, err := yaml.Marshal(tree)
		if err != nil {
			return nil, err
		}
		out = append(out, doc)
	}
	return out, nil
}

func TestSchemaChecksEachCase(t *testing.T) {
	// A case whose value the format refuses is refused by the schema too,
	// once the value is in place; a matrix of the wrong shape as well.
	sch := compileSchema(t)
	good, err := caseDocuments("table.yaml", []byte(matrixSpec))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range good {
		if err := schemaCheck(sch, doc); err != nil {
			t.Errorf("schema refuses a good case: %v\n%s", err, doc)
		}
	}
	docs, err := caseDocuments("table.yaml", []byte(strings.Replace(matrixSpec, "kind: consumer", "kind: MI400", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := schemaCheck(sch, docs[len(docs)-1]); err == nil {
		t.Errorf("the schema accepts a case of agent kind MI400")
	}
	for _, m := range []string{"{n: []}", "{n: [a b]}", "{n: [[1]]}", "{n: [1, 1]}", "{include: [3]}", "{2n: [1]}", "{exclude: [{n: [1]}]}"} {
		var doc, bad map[string]any
		if err := yaml.Unmarshal(good[0], &doc); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(m), &bad); err != nil {
			t.Fatal(err)
		}
		doc["matrix"] = bad
		text, _ := yaml.Marshal(doc)
		if err := schemaCheck(sch, text); err == nil {
			t.Errorf("the schema accepts matrix: %s", m)
		}
	}
}
