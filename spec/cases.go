package spec

import (
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"
)

// DefaultMaxCases is how many cases one spec's matrix may stand for before
// the loader refuses it. Each case is a whole spec, read, checked and held
// like one written out (some tens of KiB each, and a run's worth of time):
// ten thousand is a day of CI, not a typo.
const DefaultMaxCases = 10_000

var maxCases atomic.Int64

// MaxCases is the case budget in force (the CLI's --max-cases sets it).
func MaxCases() int64 {
	if n := maxCases.Load(); n > 0 {
		return n
	}
	return DefaultMaxCases
}

// SetMaxCases sets the case budget; 0 restores the default.
func SetMaxCases(n int64) { maxCases.Store(n) }

// maxExactExcludes bounds the excludes counted exactly (by inclusion and
// exclusion, 2^n intersections); with more, the count is the product's, an
// upper bound.
const maxExactExcludes = 16

// caseCount is how many cases a matrix stands for, worked out from the
// lengths of its axes alone, before any case is built.
type caseCount struct {
	lengths  []int
	product  *big.Int
	excluded *big.Int // nil when not counted (too many excludes)
	includes int      // each may add one case
}

// countCases counts the cases of a matrix: the product of its axes' lengths,
// less the combinations its (valid) excludes take, plus at most one case per
// include entry.
func countCases(axes []axis, excludes []entry, includes int) caseCount {
	c := caseCount{product: big.NewInt(1), includes: includes}
	for _, a := range axes {
		c.lengths = append(c.lengths, len(a.values))
		c.product.Mul(c.product, big.NewInt(int64(len(a.values))))
	}
	if len(axes) == 0 {
		c.product.SetInt64(0)
	}
	switch {
	case len(excludes) == 0:
		c.excluded = new(big.Int)
	case len(excludes) <= maxExactExcludes && len(axes) > 0:
		c.excluded = excludedCount(axes, excludes)
	}
	return c
}

// excludedCount is the size of the union of the excludes' sets of
// combinations, by inclusion and exclusion: each subset of excludes that
// agree on their shared axes takes the product of the axes none of them
// names, added for odd subsets and taken away for even ones.
func excludedCount(axes []axis, excludes []entry) *big.Int {
	total := new(big.Int)
	fixed := make(map[string]string, len(axes))
	for set := 1; set < 1<<len(excludes); set++ {
		clear(fixed)
		agree, members := true, 0
		for i, ex := range excludes {
			if set&(1<<i) == 0 {
				continue
			}
			members++
			for _, k := range ex.keys {
				v := ex.vals[k].Value
				if was, ok := fixed[k]; ok && was != v {
					agree = false
				}
				fixed[k] = v
			}
		}
		if !agree {
			continue
		}
		size := big.NewInt(1)
		for _, a := range axes {
			if _, ok := fixed[a.name]; !ok {
				size.Mul(size, big.NewInt(int64(len(a.values))))
			}
		}
		if members%2 == 1 {
			total.Add(total, size)
		} else {
			total.Sub(total, size)
		}
	}
	return total
}

// most is the largest number of cases the matrix may make.
func (c caseCount) most() *big.Int {
	n := new(big.Int).Set(c.product)
	if c.excluded != nil {
		n.Sub(n, c.excluded)
	}
	return n.Add(n, big.NewInt(int64(c.includes)))
}

// over reports whether the matrix may make more than limit cases.
func (c caseCount) over(limit int64) bool { return c.most().Cmp(big.NewInt(limit)) > 0 }

// String says how the count was made: "20 × 20 × ... = 25600000000
// combinations, less 3 excluded, and up to 2 more from include".
func (c caseCount) String() string {
	var b strings.Builder
	if len(c.lengths) > 0 {
		parts := make([]string, len(c.lengths))
		for i, n := range c.lengths {
			parts[i] = fmt.Sprint(n)
		}
		if len(parts) > 1 {
			fmt.Fprintf(&b, "%s = ", strings.Join(parts, " × "))
		}
		fmt.Fprintf(&b, "%s combinations of its parameters' values", c.product)
	}
	switch {
	case c.excluded == nil:
		b.WriteString(" (before exclude: too many entries to count what they take)")
	case c.excluded.Sign() > 0:
		fmt.Fprintf(&b, ", less %s excluded", c.excluded)
	}
	if c.includes > 0 {
		if b.Len() > 0 {
			b.WriteString(", and ")
		}
		fmt.Fprintf(&b, "up to %d from include", c.includes)
	}
	return b.String()
}
