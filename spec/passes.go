package spec

import (
	"encoding/json"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Passes is what the tool's replay_pass_count returns, kept as written: a
// decimal number ("0" is an indefinite loop), "groups" (one pass per
// counter group on the dispatch's agent, AGT-1), "none" (leave
// replay_pass_count unset, PC-1), or empty, which means "none".
type Passes string

const (
	PassesGroups Passes = "groups"
	PassesNone   Passes = "none"
)

var passesForms = []string{"a non-negative integer", "groups", "none"}

// Number returns the fixed count and true when Passes is a number.
func (p Passes) Number() (uint64, bool) {
	n, err := strconv.ParseUint(string(p), 10, 64)
	return n, err == nil
}

// Unset reports whether replay_pass_count is left unset.
func (p Passes) Unset() bool { return p == "" || p == PassesNone }

// PassesOf is the fixed pass count n.
func PassesOf(n uint64) Passes { return Passes(strconv.FormatUint(n, 10)) }

func parsePasses(s string) (Passes, error) {
	switch p := Passes(s); {
	case p == PassesGroups || p == PassesNone:
		return p, nil
	default:
		if n, ok := p.Number(); ok {
			return PassesOf(n), nil
		}
	}
	return "", &allowedError{msg: fmt.Sprintf("passes %q is not a pass count", s), allowed: passesForms}
}

// UnmarshalYAML takes an integer, groups or none. A quoted "3" is refused,
// as in the schema, so that a number always looks like one.
func (p *Passes) UnmarshalYAML(n *yaml.Node) error {
	bad := &allowedError{msg: "want a pass count, got " + describeNode(n), allowed: passesForms}
	if n.Kind != yaml.ScalarNode {
		return bad
	}
	switch n.Tag {
	case "!!int":
		var v uint64
		if err := n.Decode(&v); err != nil {
			return bad
		}
		*p = PassesOf(v)
		return nil
	case "!!str":
		if n.Value == string(PassesGroups) || n.Value == string(PassesNone) {
			*p = Passes(n.Value)
			return nil
		}
	}
	return bad
}

// MarshalYAML writes a number as a number.
func (p Passes) MarshalYAML() (any, error) {
	if n, ok := p.Number(); ok {
		return n, nil
	}
	return string(p), nil
}

// MarshalJSON writes a number as a number, groups and none as strings.
func (p Passes) MarshalJSON() ([]byte, error) {
	if n, ok := p.Number(); ok {
		return json.Marshal(n)
	}
	return json.Marshal(string(p))
}

// UnmarshalJSON accepts a number or "groups"/"none".
func (p *Passes) UnmarshalJSON(b []byte) error {
	var n uint64
	if err := json.Unmarshal(b, &n); err == nil {
		*p = PassesOf(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil || (s != string(PassesGroups) && s != string(PassesNone)) {
		return &allowedError{msg: fmt.Sprintf("passes %s is not a pass count", b), allowed: passesForms}
	}
	*p = Passes(s)
	return nil
}
