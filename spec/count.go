package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseCount reads "3", "2..5", ">=1" or "<=4".
func ParseCount(s string) (Count, error) {
	t := strings.TrimSpace(s)
	bad := fmt.Errorf("count %q: want a number (3), a range (2..5), >=N or <=N", s)
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
		return Count{Min: v, Max: math.MaxUint64, Text: t}, err
	case strings.HasPrefix(t, "<="):
		v, err := num(t[2:])
		return Count{Min: 0, Max: v, Text: t}, err
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
		return Count{Min: a, Max: b, Text: t}, nil
	default:
		v, err := num(t)
		return Count{Min: v, Max: v, Text: t}, err
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
