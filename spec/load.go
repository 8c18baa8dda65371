package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads and validates the YAML spec at path. The spec is returned as
// written; Defaults fills in what was left out.
func Load(path string) (Spec, error) {
	data, err := readSpecFile(path)
	if err != nil {
		return Spec{}, err
	}
	return Parse(path, data)
}

func readSpecFile(path string) ([]byte, error) {
	data, err := ReadFile(path, MaxBytes) // read.go: with a size cap
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return data, nil
}

// Parse reads and validates one YAML spec; name is used in errors. Every
// problem is reported, as an *Error or, when there are several, Errors.
// A spec with a matrix is several specs: ParseCases reads it.
func Parse(name string, data []byte) (s Spec, err error) {
	// yaml.v3 is a large parser; bad input must never take the caller down.
	defer func() {
		if r := recover(); r != nil {
			s, err = Spec{}, &Error{File: name, Line: 1, Col: 1, Msg: fmt.Sprintf("cannot read the spec: %v", r)}
		}
	}()
	root, err := parseDocument(name, data)
	if err != nil {
		return Spec{}, err
	}
	if k := hasMatrix(root); k != nil {
		return Spec{}, &Error{File: name, Line: k.Line, Col: k.Column, Path: matrixKey,
			Msg: "a spec with a matrix stands for several cases: read it with ParseCases or LoadCases"}
	}
	c := &shapeChecker{file: name, pos: positions{}}
	c.check(root, reflect.TypeFor[Spec](), "")
	if len(c.errs) > 0 {
		return Spec{}, c.errs.err()
	}
	// The shape is right, so the strict decoder should agree; if it does
	// not, its word is final.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Spec{}, yamlError(name, err)
	}
	s.File = name
	if err := validate(s, c.pos); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// ParseJSON reads a spec sent as JSON (json.Marshal of a Spec). JSON is
// read by the YAML reader, so its errors carry the same positions and
// paths as YAML's.
func ParseJSON(name string, data []byte) (Spec, error) {
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, se.Offset)
			return Spec{}, &Error{File: name, Line: line, Col: col, Msg: "JSON syntax: " + se.Error()}
		}
		return Spec{}, &Error{File: name, Line: 1, Col: 1, Msg: "JSON: " + err.Error()}
	}
	return Parse(name, jsonAsYAML(data))
}

// jsonAsYAML smooths the two places where valid JSON is not YAML: a raw
// tab (only ever whitespace between tokens in JSON) becomes a space, and
// the escape \/ inside strings becomes /.
func jsonAsYAML(data []byte) []byte {
	out := make([]byte, 0, len(data))
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case !inString && c == '\t':
			c = ' '
		case c == '"':
			inString = !inString
		case inString && c == '\\' && i+1 < len(data):
			i++
			if data[i] == '/' {
				out = append(out, '/')
				continue
			}
			out = append(out, c)
			c = data[i]
		}
		out = append(out, c)
	}
	return out
}

// parseDocument returns the root node of the file's only document.
func parseDocument(name string, data []byte) (*yaml.Node, error) {
	empty := &Error{File: name, Line: 1, Col: 1, Msg: "empty file: a spec is a mapping with at least the keys version, name, agents and application"}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, empty
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &Error{File: name, Line: max(extra.Line, 1), Col: max(extra.Column, 1),
			Msg: "a second YAML document: a spec file holds exactly one (remove the extra ---)"}
	case !errors.Is(err, io.EOF):
		return nil, yamlError(name, err)
	}
	if len(doc.Content) == 0 {
		return nil, empty
	}
	return doc.Content[0], nil
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// yamlError turns yaml.v3's text errors into positioned ones. yaml.v3
// reports only the line, so the column is 1.
func yamlError(name string, err error) error {
	var errs Errors
	for _, l := range strings.Split(err.Error(), "\n") {
		if m := yamlLine.FindStringSubmatch(l); m != nil {
			line, _ := strconv.Atoi(m[1])
			errs = append(errs, &Error{File: name, Line: line, Col: 1, Msg: "YAML: " + m[2]})
		}
	}
	if len(errs) == 0 {
		errs = append(errs, &Error{File: name, Line: 1, Col: 1, Msg: strings.TrimPrefix(err.Error(), "yaml: ")})
	}
	return errs.err()
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, max(col, 1)
}
