package spec

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// shapeChecker walks a YAML node tree against the Go type it will decode
// into, collecting every unknown key, wrong type and missing key with its
// position, and remembering where each key path was written. yaml.v3 only
// reports the first few problems, by line, without a path; this reports
// them all.
type shapeChecker struct {
	file string
	errs Errors
	pos  positions
}

// position is where a key path was written.
type position struct{ line, col int }

// positions maps key paths (application.dispatches[2].kernel) to where
// they were written; for map entries the key's position.
type positions map[string]position

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

func (c *shapeChecker) fail(n *yaml.Node, path, msg string, allowed ...string) {
	c.errs = append(c.errs, &Error{File: c.file, Line: n.Line, Col: n.Column, Path: path, Msg: msg, Allowed: allowed})
}

func (c *shapeChecker) check(n *yaml.Node, t reflect.Type, path string) {
	if _, seen := c.pos[path]; !seen {
		c.pos[path] = position{n.Line, n.Column}
	}
	if n.Kind == yaml.AliasNode {
		c.fail(n, path, "aliases (*"+n.Value+") are not supported; write the value out")
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		c.fail(n, path, "want "+describeType(t)+", got null")
		return
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		v := reflect.New(t).Interface().(yaml.Unmarshaler)
		if err := v.UnmarshalYAML(n); err != nil {
			var ae *allowedError
			if errors.As(err, &ae) {
				c.fail(n, path, ae.msg, ae.allowed...)
			} else {
				c.fail(n, path, err.Error())
			}
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		c.checkStruct(n, t, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.fail(n, path, "want "+describeType(t)+", got "+describeNode(n))
			return
		}
		for i, item := range n.Content {
			c.check(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		c.checkMap(n, t, path)
	default:
		c.checkScalar(n, t, path)
	}
}

func (c *shapeChecker) checkStruct(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		c.fail(n, path, "want a mapping, got "+describeNode(n))
		return
	}
	fields := yamlFields(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !c.stringKey(k, path, seen) {
			continue
		}
		f, ok := fieldByKey(fields, k.Value)
		if !ok {
			c.fail(k, path, fmt.Sprintf("unknown key %q", k.Value), keyNames(fields)...)
			continue
		}
		c.check(v, f.typ, join(path, k.Value))
	}
	for _, f := range fields {
		if f.required && !seen[f.key] {
			c.fail(n, path, fmt.Sprintf("missing required key %q", f.key))
		}
	}
}

func (c *shapeChecker) checkMap(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		c.fail(n, path, "want a mapping, got "+describeNode(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !c.stringKey(k, path, seen) {
			continue
		}
		p := join(path, k.Value)
		c.pos[p] = position{k.Line, k.Column}
		c.check(v, t.Elem(), p)
	}
}

// stringKey checks one mapping key: a plain string, not repeated.
func (c *shapeChecker) stringKey(k *yaml.Node, path string, seen map[string]bool) bool {
	if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
		c.fail(k, path, "keys must be strings, got "+describeNode(k))
		return false
	}
	if seen[k.Value] {
		c.fail(k, path, fmt.Sprintf("key %q is repeated", k.Value))
		return false
	}
	seen[k.Value] = true
	return true
}

func (c *shapeChecker) checkScalar(n *yaml.Node, t reflect.Type, path string) {
	want := describeType(t)
	if n.Kind != yaml.ScalarNode {
		c.fail(n, path, "want "+want+", got "+describeNode(n))
		return
	}
	var tagOK bool
	switch t.Kind() {
	case reflect.String:
		// yaml.v3 resolves date-like plain scalars as timestamps; as a
		// string field they keep their text.
		tagOK = n.Tag == "!!str" || n.Tag == "!!timestamp"
		if tagOK && !utf8.ValidString(n.Value) {
			c.fail(n, path, "strings must be valid UTF-8")
			return
		}
	case reflect.Bool:
		tagOK = n.Tag == "!!bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		tagOK = n.Tag == "!!int"
	}
	if !tagOK {
		c.fail(n, path, "want "+want+", got "+describeNode(n))
		return
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		c.fail(n, path, "want "+want+", got "+describeNode(n)+" (out of range)")
	}
}

// field is one YAML key of a struct.
type field struct {
	key      string
	typ      reflect.Type
	required bool
}

// yamlFields lists a struct's keys in declaration order; a key without
// omitempty is required.
func yamlFields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("yaml")
		if !sf.IsExported() || tag == "-" || tag == "" {
			continue
		}
		key, opts, _ := strings.Cut(tag, ",")
		out = append(out, field{key: key, typ: sf.Type, required: !strings.Contains(opts, "omitempty")})
	}
	return out
}

func fieldByKey(fs []field, key string) (field, bool) {
	for _, f := range fs {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

func keyNames(fs []field) []string {
	if len(fs) == 0 {
		return []string{"no keys: write {}"}
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.key
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describeType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("an integer (%d bits)", t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a non-negative integer (%d bits)", t.Bits())
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	switch n.Tag {
	case "!!null":
		return "null"
	case "!!int":
		return "integer " + v
	case "!!float":
		return "number " + v
	case "!!bool":
		return v
	case "!!str":
		return fmt.Sprintf("string %q", v)
	}
	return fmt.Sprintf("%s %q", n.Tag, v)
}
