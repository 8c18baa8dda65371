package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var countForms = []string{`3`, `"2..5"`, `">=1"`, `"<=4"`}

// ParseCount reads "3", "2..5", ">=1" or "<=4". Text is kept in that
// canonical form, so a count prints the way it parses.
func ParseCount(s string) (Count, error) {
	t := strings.TrimSpace(s)
	bad := &allowedError{msg: fmt.Sprintf("count %q is not a number or range", s), allowed: countForms}
	num := func(x string) (uint64, error) {
		v, err := strconv.ParseUint(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, bad
		}
		return v, nil
	}
	switch {
	case strings.HasPrefix(t, ">="):
		v, err := num(t[2:])
		return Count{Min: v, Max: math.MaxUint64, Text: ">=" + strconv.FormatUint(v, 10)}, err
	case strings.HasPrefix(t, "<="):
		v, err := num(t[2:])
		return Count{Min: 0, Max: v, Text: "<=" + strconv.FormatUint(v, 10)}, err
	case strings.Contains(t, ".."):
		lo, hi, _ := strings.Cut(t, "..")
		a, err := num(lo)
		if err != nil {
			return Count{}, err
		}
		b, err := num(hi)
		if err != nil {
			return Count{}, err
		}
		if a > b {
			return Count{}, fmt.Errorf("count %q: the range is empty (%d > %d)", s, a, b)
		}
		return Count{Min: a, Max: b, Text: fmt.Sprintf("%d..%d", a, b)}, nil
	default:
		v, err := num(t)
		if err != nil {
			return Count{}, err
		}
		return Exactly(v), nil
	}
}

// Exactly is the count n.
func Exactly(n uint64) Count { return Count{Min: n, Max: n, Text: strconv.FormatUint(n, 10)} }

// Holds reports whether n is within the count.
func (c Count) Holds(n uint64) bool { return n >= c.Min && n <= c.Max }

func (c Count) String() string {
	if c.Text != "" {
		return c.Text
	}
	if c.Min == c.Max {
		return strconv.FormatUint(c.Min, 10)
	}
	return fmt.Sprintf("%d..%d", c.Min, c.Max)
}

// UnmarshalYAML accepts an integer or a quoted range; nothing else, so a
// mapping or list in a count's place is an error, not an empty count.
func (c *Count) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &allowedError{msg: "want a count, got " + describeNode(n), allowed: countForms}
	}
	switch n.Tag {
	case "!!int":
		var v uint64
		if err := n.Decode(&v); err != nil {
			return &allowedError{msg: fmt.Sprintf("count %s is not a non-negative integer", n.Value), allowed: countForms}
		}
		*c = Exactly(v)
		return nil
	case "!!str":
		v, err := ParseCount(n.Value)
		if err != nil {
			return err
		}
		*c = v
		return nil
	}
	return &allowedError{msg: "want a count, got " + describeNode(n), allowed: countForms}
}

// MarshalYAML writes an exact count as a number, a range as its text.
func (c Count) MarshalYAML() (any, error) {
	if c.Min == c.Max {
		return c.Min, nil
	}
	return c.String(), nil
}

// MarshalJSON writes the count's text, so drivers see what the spec said.
func (c Count) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

// UnmarshalJSON accepts a number or a string.
func (c *Count) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := ParseCount(s)
		if err != nil {
			return err
		}
		*c = v
		return nil
	}
	var n uint64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("count %s: want a non-negative integer or a string such as \"2..5\"", b)
	}
	*c = Exactly(n)
	return nil
}
